// URL fingerprints: MurmurHash3_x64_128 (Austin Appleby's public-domain reference algorithm,
// reimplemented here), reading blocks little-endian so results are identical on every host.
#include <cstdint>

#include "base/hash.h"
#include "url/url.h"

namespace harvest::url {
namespace {

inline uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t Load64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

constexpr uint64_t kC1 = 0x87c37b91114253d5ULL;
constexpr uint64_t kC2 = 0x4cf5ad432745937fULL;

}  // namespace

Fingerprint128Value MurmurHash3x64_128(std::string_view data, uint32_t seed) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const size_t len = data.size();
  const size_t nblocks = len / 16;
  uint64_t h1 = seed, h2 = seed;
  for (size_t i = 0; i < nblocks; ++i) {
    uint64_t k1 = Load64(p + i * 16);
    uint64_t k2 = Load64(p + i * 16 + 8);
    k1 *= kC1;
    k1 = Rotl(k1, 31);
    k1 *= kC2;
    h1 ^= k1;
    h1 = Rotl(h1, 27);
    h1 += h2;
    h1 = h1 * 5 + 0x52dce729;
    k2 *= kC2;
    k2 = Rotl(k2, 33);
    k2 *= kC1;
    h2 ^= k2;
    h2 = Rotl(h2, 31);
    h2 += h1;
    h2 = h2 * 5 + 0x38495ab5;
  }
  const unsigned char* tail = p + nblocks * 16;
  const size_t rest = len & 15;
  uint64_t k1 = 0, k2 = 0;
  for (size_t i = rest; i > 8; --i) k2 ^= static_cast<uint64_t>(tail[i - 1]) << (8 * (i - 9));
  if (rest > 8) {
    k2 *= kC2;
    k2 = Rotl(k2, 33);
    k2 *= kC1;
    h2 ^= k2;
  }
  for (size_t i = rest < 8 ? rest : 8; i > 0; --i) {
    k1 ^= static_cast<uint64_t>(tail[i - 1]) << (8 * (i - 1));
  }
  if (rest > 0) {
    k1 *= kC1;
    k1 = Rotl(k1, 31);
    k1 *= kC2;
    h1 ^= k1;
  }
  h1 ^= len;
  h2 ^= len;
  h1 += h2;
  h2 += h1;
  h1 = Mix64(h1);
  h2 = Mix64(h2);
  h1 += h2;
  h2 += h1;
  return {h1, h2};
}

uint64_t Fingerprint64(std::string_view canonical_href) {
  return MurmurHash3x64_128(canonical_href, 0).hi;
}

Fingerprint128Value Fingerprint128(std::string_view canonical_href) {
  return MurmurHash3x64_128(canonical_href, 0);
}

}  // namespace harvest::url
