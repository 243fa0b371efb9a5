// Digests (sha256/sha1 via OpenSSL), RFC 4648 base32 and random record ids.
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <random>

#include "store/internal.h"
#include "store/store.h"

namespace harvest::store {
namespace internal {

void AppendBase32(std::string_view bytes, std::string* out) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const size_t start = out->size();
  out->reserve(start + (bytes.size() + 4) / 5 * 8);
  uint64_t buffer = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 5) {
      out->push_back(kAlphabet[(buffer >> (bits - 5)) & 31]);
      bits -= 5;
    }
  }
  if (bits > 0) out->push_back(kAlphabet[(buffer << (5 - bits)) & 31]);
  while ((out->size() - start) % 8 != 0) out->push_back('=');
}

std::string Base32Encode(std::string_view bytes) {
  std::string out;
  AppendBase32(bytes, &out);
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

Digester::Digester(DigestAlgorithm algo) : algo_(algo) {
  md_ = EVP_MD_fetch(nullptr, algo == DigestAlgorithm::kSha1 ? "SHA1" : "SHA256", nullptr);
  ctx_ = EVP_MD_CTX_new();
}

Digester::~Digester() {
  EVP_MD_CTX_free(ctx_);
  EVP_MD_free(md_);
}

void Digester::Start() {
  started_ = true;
  // EVP_* fail only on allocation failure; the digest is then empty, as RawDigest's, so
  // that it fails verification loudly rather than silently.
  failed_ = md_ == nullptr || ctx_ == nullptr || EVP_DigestInit_ex2(ctx_, md_, nullptr) != 1;
}

void Digester::Update(std::string_view data) {
  if (!started_) Start();
  if (!failed_ && EVP_DigestUpdate(ctx_, data.data(), data.size()) != 1) failed_ = true;
}

void Digester::AppendLabelAndReset(std::string* out) {
  if (!started_) Start();
  started_ = false;
  out->append(DigestPrefix(algo_));
  out->push_back(':');
  std::array<unsigned char, EVP_MAX_MD_SIZE> raw{};
  unsigned int len = 0;
  if (failed_ || EVP_DigestFinal_ex(ctx_, raw.data(), &len) != 1) len = 0;
  AppendBase32(std::string_view(reinterpret_cast<const char*>(raw.data()), len), out);
}

std::string NewRecordId() {
  // 256 ids per RAND_bytes call: each call costs microseconds of locking and provider
  // lookup, far more than its bytes.
  thread_local std::array<unsigned char, 16 * 256> pool{};
  thread_local size_t used = pool.size();
  if (used == pool.size()) {
    if (RAND_bytes(pool.data(), static_cast<int>(pool.size())) != 1) {
      // OpenSSL's CSPRNG failing is near impossible; fall back to the OS entropy source.
      std::random_device rd;
      for (auto& x : pool) x = static_cast<unsigned char>(rd());
    }
    used = 0;
  }
  unsigned char* b = pool.data() + used;
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);  // variant 10
  static constexpr char kHex[] = "0123456789abcdef";
  static constexpr std::string_view kTemplate = "<urn:uuid:00000000-0000-0000-0000-000000000000>";
  std::string id(kTemplate);
  size_t at = 10;  // after "<urn:uuid:"
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) ++at;  // a '-'
    id[at++] = kHex[b[i] >> 4];
    id[at++] = kHex[b[i] & 0x0f];
  }
  std::fill(b, b + 16, 0);  // used once only
  used += 16;
  return id;
}

}  // namespace internal

std::string PayloadDigest(std::string_view payload, DigestAlgorithm algo) {
  // One reused context per thread and algorithm (the process threads digest every page).
  thread_local internal::Digester sha256(DigestAlgorithm::kSha256);
  thread_local internal::Digester sha1(DigestAlgorithm::kSha1);
  internal::Digester& d = algo == DigestAlgorithm::kSha1 ? sha1 : sha256;
  std::string out;
  out.reserve(64);
  d.Update(payload);
  d.AppendLabelAndReset(&out);
  return out;
}

}  // namespace harvest::store
