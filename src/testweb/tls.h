// TlsContext: the test web's TLS side (docs/testweb.md "HTTPS"): a private certificate
// authority kept in a directory, leaf certificates made on demand for the names clients ask
// for (SNI), and the OpenSSL server context that offers HTTP/2 and HTTP/1.1 by ALPN
// (RFC 7301; "h2" preferred, RFC 9113 §3.2).
//
// The CA (DIR/ca.pem, DIR/ca.key, EC P-256, about 10 years) is made once and reused, so a
// client configured with DIR/ca.pem keeps trusting restarted servers. Leaves (SAN DNS:<name>,
// EKU serverAuth, valid from a day ago for a year) all share one key made at start: they are
// never stored, only cached in memory. A client that sends no SNI (it connected by IP) gets a
// default leaf for IP:127.0.0.1 and DNS:localhost.
//
// Thread-safety: after Create() the context may be used from any thread; the leaf cache is
// locked.
#pragma once

#include <openssl/types.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "base/status.h"

namespace harvest::testweb {

// Deleters for the OpenSSL objects the test web owns.
struct OpenSslFree {
  void operator()(SSL_CTX* p) const;
  void operator()(SSL* p) const;
  void operator()(X509* p) const;
  void operator()(EVP_PKEY* p) const;
};
template <typename T>
using OpenSslPtr = std::unique_ptr<T, OpenSslFree>;

class TlsContext {
 public:
  // Loads the CA from `dir` (ca.pem and ca.key), or makes both (and the directory) when
  // neither exists. Errors name the file.
  static Result<std::unique_ptr<TlsContext>> Create(const std::string& dir);
  ~TlsContext();

  // A new server-side SSL for one connection (no BIOs attached yet); null on failure.
  OpenSslPtr<SSL> NewSsl() const;
  // The CA certificate file clients should trust.
  const std::string& ca_path() const { return ca_path_; }
  // Writes a leaf for `san` ("DNS:*.peers.test,DNS:peers.test"), signed by the CA, to
  // `cert_path` and the leaves' key to `key_path` (mode 0600): a certificate for another
  // server (WriteServerCertificate). Errors name the file.
  Status WriteLeaf(const std::string& common_name, const std::string& san,
                   const std::string& cert_path, const std::string& key_path) const;

 private:
  TlsContext() = default;
  Status LoadOrMakeCa(const std::string& dir);
  Status MakeContext();
  // A new reference to the leaf for `name` (lower case), made and cached on first use; null
  // when it cannot be made.
  OpenSslPtr<X509> LeafFor(const std::string& name) EXCLUDES(mu_);
  OpenSslPtr<X509> MakeLeaf(const std::string& common_name, const std::string& san) const;
  static int OnServerName(SSL* ssl, int* alert, void* arg);

  std::string ca_path_;
  OpenSslPtr<EVP_PKEY> ca_key_;
  OpenSslPtr<X509> ca_cert_;
  OpenSslPtr<EVP_PKEY> leaf_key_;
  OpenSslPtr<X509> default_leaf_;
  OpenSslPtr<SSL_CTX> ctx_;
  Mutex mu_;
  std::map<std::string, OpenSslPtr<X509>, std::less<>> leaves_ GUARDED_BY(mu_);
};

}  // namespace harvest::testweb
