// Digests (sha256/sha1 via OpenSSL), RFC 4648 base32 and random record ids.
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <cstdio>
#include <random>

#include "store/internal.h"
#include "store/store.h"

namespace harvest::store {
namespace internal {

std::string Base32Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  std::string out;
  out.reserve((bytes.size() + 4) / 5 * 8);
  uint64_t buffer = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 5) {
      out.push_back(kAlphabet[(buffer >> (bits - 5)) & 31]);
      bits -= 5;
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(buffer << (5 - bits)) & 31]);
  while (out.size() % 8 != 0) out.push_back('=');
  return out;
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string RawDigest(std::string_view data, DigestAlgorithm algo) {
  const EVP_MD* md = algo == DigestAlgorithm::kSha1 ? EVP_sha1() : EVP_sha256();
  std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
  unsigned int len = 0;
  // EVP_Digest only fails on allocation failure; an empty digest then fails verification
  // loudly rather than silently.
  if (EVP_Digest(data.data(), data.size(), out.data(), &len, md, nullptr) != 1) return {};
  return std::string(reinterpret_cast<const char*>(out.data()), len);
}

std::string_view DigestPrefix(DigestAlgorithm algo) {
  return algo == DigestAlgorithm::kSha1 ? "sha1" : "sha256";
}

std::string NewRecordId() {
  std::array<unsigned char, 16> b{};
  if (RAND_bytes(b.data(), static_cast<int>(b.size())) != 1) {
    // OpenSSL's CSPRNG failing is near impossible; fall back to the OS entropy source.
    std::random_device rd;
    for (auto& x : b) x = static_cast<unsigned char>(rd());
  }
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);  // variant 10
  std::string hex = HexEncode(std::string_view(reinterpret_cast<const char*>(b.data()), 16));
  return "<urn:uuid:" + hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20) + ">";
}

}  // namespace internal

std::string PayloadDigest(std::string_view payload, DigestAlgorithm algo) {
  return std::string(internal::DigestPrefix(algo)) + ":" +
         internal::Base32Encode(internal::RawDigest(payload, algo));
}

}  // namespace harvest::store
