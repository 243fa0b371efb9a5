// Hash building blocks shared by the components that hash 64-bit values (URL fingerprints,
// the Bloom filter, the exact fingerprint set, SimHash).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

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

}  // namespace harvest
