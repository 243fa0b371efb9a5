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

}  // namespace harvest
