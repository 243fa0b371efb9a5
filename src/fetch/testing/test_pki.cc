#include "fetch/testing/test_pki.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

namespace harvest::fetch::testing {
namespace {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* x) const { X509_free(x); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

Cert MakeCert(EVP_PKEY* key, const char* cn, long serial, X509* issuer) {
  Cert cert(X509_new());
  if (!cert) return nullptr;
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), issuer != nullptr ? X509_get_subject_name(issuer) : name);
  return cert;
}

}  // namespace

std::unique_ptr<TestPki> TestPki::Make(const std::vector<std::string>& dns_names,
                                       const std::vector<std::string>& ips) {
  Key ca_key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  Key key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!ca_key || !key) return nullptr;
  Cert ca = MakeCert(ca_key.get(), "Harvest test CA", 1, nullptr);
  if (!ca || !AddExtension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !AddExtension(ca.get(), ca.get(), NID_subject_key_identifier, "hash") ||
      X509_sign(ca.get(), ca_key.get(), EVP_sha256()) == 0) {
    return nullptr;
  }
  Cert leaf = MakeCert(key.get(), dns_names.empty() ? "server" : dns_names[0].c_str(), 2, ca.get());
  std::string san;
  for (const std::string& n : dns_names) san += (san.empty() ? "" : ",") + ("DNS:" + n);
  for (const std::string& ip : ips) san += (san.empty() ? "" : ",") + ("IP:" + ip);
  if (!leaf || !AddExtension(leaf.get(), ca.get(), NID_basic_constraints, "CA:FALSE") ||
      (!san.empty() && !AddExtension(leaf.get(), ca.get(), NID_subject_alt_name, san)) ||
      !AddExtension(leaf.get(), ca.get(), NID_authority_key_identifier, "keyid") ||
      X509_sign(leaf.get(), ca_key.get(), EVP_sha256()) == 0) {
    return nullptr;
  }
  std::unique_ptr<TestPki> pki(new TestPki());
  pki->ctx_ = SSL_CTX_new(TLS_server_method());
  if (pki->ctx_ == nullptr || SSL_CTX_use_certificate(pki->ctx_, leaf.get()) != 1 ||
      SSL_CTX_use_PrivateKey(pki->ctx_, key.get()) != 1) {
    return nullptr;
  }
  SSL_CTX_set_min_proto_version(pki->ctx_, TLS1_2_VERSION);
  char path[] = "/tmp/harvest-test-ca-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return nullptr;
  pki->ca_file_ = path;
  FILE* f = fdopen(fd, "w");
  if (f == nullptr) {
    close(fd);
    return nullptr;
  }
  const bool written = PEM_write_X509(f, ca.get()) == 1;
  fclose(f);
  if (!written) return nullptr;
  return pki;
}

TestPki::~TestPki() {
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
  if (!ca_file_.empty()) unlink(ca_file_.c_str());
}

}  // namespace harvest::fetch::testing
