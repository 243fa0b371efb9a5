// TestPki: a throw-away certificate authority and a server certificate signed by it, made at
// test time (no files in the tree, no network), for the TLS tests of the fetcher and its
// benchmark.
//
// Thread-safety: immutable after Make(); server_ctx() may be shared by server threads.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <vector>

namespace harvest::fetch::testing {

class TestPki {
 public:
  // A CA, and a server certificate for `dns_names` and `ips` (subjectAltName) signed by it.
  // nullptr when OpenSSL fails.
  static std::unique_ptr<TestPki> Make(const std::vector<std::string>& dns_names,
                                       const std::vector<std::string>& ips);
  ~TestPki();
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  // A server SSL_CTX with the certificate (TLS 1.2 and 1.3, the server session cache on),
  // owned by this object.
  SSL_CTX* server_ctx() const { return ctx_; }
  // A PEM file holding the CA's certificate (FetchOptions::ca_file); removed with this object.
  const std::string& ca_file() const { return ca_file_; }

 private:
  TestPki() = default;
  SSL_CTX* ctx_ = nullptr;
  std::string ca_file_;
};

}  // namespace harvest::fetch::testing
