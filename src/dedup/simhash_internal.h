// Private to src/dedup: the building blocks of SimHash version 2 (simhash_v2.cc), shared with
// its tests, which check the vectorised word finder against the portable one and both against
// a plain reference.
#pragma once

#include <cstdint>
#include <string_view>

namespace harvest::dedup::internal {

// SimHash64V2 with the portable (scalar) word finder, the one non-x86 builds use. Same
// values as SimHash64V2 on every input.
uint64_t SimHash64V2Portable(std::string_view text);

// The v2 constants (dedup.h "SimHash versions"). Persisted through the hashes: never change.
inline constexpr uint64_t kV2WordSeed = 0x452821e638d01377ULL;
inline constexpr uint64_t kV2LengthMul = 0x9e3779b97f4a7c15ULL;
inline constexpr uint64_t kV2ChunkMul = 0xa0761d6478bd642fULL;
inline constexpr uint64_t kV2ShingleSeed = 0xbe5466cf34e90c6cULL;
inline constexpr int kV2Rotate1 = 21;
inline constexpr int kV2Rotate2 = 42;

// Lower half xor upper half of the 128-bit product: one multiply that spreads every bit of
// both operands over the result (wyhash's "mum").
inline uint64_t MulFold(uint64_t a, uint64_t b) {
  __extension__ using U128 = unsigned __int128;
  const U128 p = static_cast<U128>(a) * b;
  return static_cast<uint64_t>(p) ^ static_cast<uint64_t>(p >> 64);
}

}  // namespace harvest::dedup::internal
