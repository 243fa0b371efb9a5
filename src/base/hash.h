// Hash building blocks shared by the components that hash 64-bit values (URL fingerprints,
// the Bloom filter, the exact fingerprint set, SimHash) and short strings (host names).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace harvest {

// The 64-bit finaliser of MurmurHash3 (fmix64, Austin Appleby's public-domain reference):
// a bijection that spreads every input bit over every output bit. Its values must never
// change: the URL fingerprints built on it are persisted in crawl state.
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3) of a short string.
// Its values must never change: host hashes built on it are persisted in crawl state
// (frontier::Admission::HostHash) and place hosts in cluster partitions.
inline uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Lemire's multiply-shift range reduction: the upper 64 bits of h x n, which maps a hash h
// spread evenly over 64 bits onto [0, n) as evenly, without a division (the Bloom filter's
// block, a count-min column, the page of a sorted run a fingerprint falls on). Keeps the
// order of h, so it also says where h sits in a sorted, evenly spread array of n.
inline uint64_t RangeReduce(uint64_t h, uint64_t n) {
  __extension__ using Uint128 = unsigned __int128;
  return static_cast<uint64_t>((static_cast<Uint128>(h) * n) >> 64);
}

}  // namespace harvest
