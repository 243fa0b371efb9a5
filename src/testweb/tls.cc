#include "testweb/tls.h"

#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <utility>
#include <vector>

#include "base/ascii.h"
#include "testweb/testweb.h"

namespace harvest::testweb {

void OpenSslFree::operator()(SSL_CTX* p) const { SSL_CTX_free(p); }
void OpenSslFree::operator()(SSL* p) const { SSL_free(p); }
void OpenSslFree::operator()(X509* p) const { X509_free(p); }
void OpenSslFree::operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }

namespace {

constexpr long kDaySeconds = 86400;
// Long enough that a CA kept beside a test setup never expires under it.
constexpr long kCaValidityDays = 3652;
constexpr long kLeafValidityDays = 365;
// Leaves cached at most; a client inventing names cannot grow the cache past it (it is then
// emptied and refilled: a leaf is made in well under a millisecond).
constexpr size_t kMaxCachedLeaves = 100000;
// A DNS name's longest presentation form (RFC 1035 §2.3.4).
constexpr size_t kMaxNameLength = 253;
// X.509's upper bound of a common name (RFC 5280 ub-common-name).
constexpr size_t kMaxCommonName = 64;
// ALPN protocols in wire format, in the server's order of preference.
constexpr unsigned char kAlpn[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

std::string OpenSslError() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

// Names a leaf may be made for: lower-case letters, digits, '-', '_' and '.', as the test
// web's hosts are spelled. Anything else gets the default leaf (and fails verification).
bool IsCertName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (char c : name) {
    if (!IsAsciiLower(c) && !(c >= '0' && c <= '9') && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

OpenSslPtr<EVP_PKEY> NewEcKey() {
  return OpenSslPtr<EVP_PKEY>(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
}

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX v3;
  X509V3_set_ctx(&v3, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &v3, nid, value.c_str());
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

struct CertSpec {
  std::string common_name;  // empty: none
  long validity_days = 0;
  std::vector<std::pair<int, std::string>> extensions;  // (NID, OpenSSL config value)
};

// A certificate for `key`, signed by `issuer_key`; `issuer` null makes it self-signed.
OpenSslPtr<X509> MakeCert(const CertSpec& spec, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key) {
  OpenSslPtr<X509> cert(X509_new());
  if (!cert) return nullptr;
  X509* c = cert.get();
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof(serial)) != 1) return nullptr;
  serial[0] &= 0x7f;  // a positive serial number (RFC 5280 §4.1.2.2)
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  const bool serial_ok = bn != nullptr && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(c));
  BN_free(bn);
  // Valid from a day ago: a client whose clock is a little behind still accepts it.
  if (!serial_ok || X509_set_version(c, 2) != 1 ||
      X509_gmtime_adj(X509_getm_notBefore(c), -kDaySeconds) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(c), spec.validity_days * kDaySeconds) == nullptr) {
    return nullptr;
  }
  X509_NAME* name = X509_get_subject_name(c);
  auto add_name = [name](const char* field, const std::string& value) {
    return X509_NAME_add_entry_by_txt(name, field, MBSTRING_ASC,
                                      reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                      0) == 1;
  };
  if (!add_name("O", "harvest testweb")) return nullptr;
  if (!spec.common_name.empty() && !add_name("CN", spec.common_name)) return nullptr;
  if (X509_set_issuer_name(c, issuer ? X509_get_subject_name(issuer) : name) != 1 ||
      X509_set_pubkey(c, key) != 1) {
    return nullptr;
  }
  for (const auto& [nid, value] : spec.extensions) {
    if (!AddExtension(c, issuer ? issuer : c, nid, value)) return nullptr;
  }
  if (X509_sign(c, issuer_key, EVP_sha256()) <= 0) return nullptr;
  return cert;
}

// Writes a PEM file through a temporary beside it, renamed into place, created with `mode`
// (0600 for a key: it is a CA's).
Status WritePem(const std::string& path, mode_t mode, const std::function<bool(FILE*)>& write) {
  const std::string tmp = path + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Status::IOError("tls: " + tmp + ": " + std::strerror(errno));
  FILE* f = fdopen(fd, "w");
  if (f == nullptr) {
    close(fd);
    return Status::IOError("tls: " + tmp + ": " + std::strerror(errno));
  }
  const bool written = write(f);
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IOError("tls: cannot write " + path);
  }
  return Status::Ok();
}

int SelectAlpn(SSL* /*ssl*/, const unsigned char** out, unsigned char* out_len,
               const unsigned char* in, unsigned int in_len, void* /*arg*/) {
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, out_len, kAlpn, sizeof(kAlpn), in, in_len) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;  // no common protocol: HTTP/1.1 without ALPN
  }
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

Result<std::unique_ptr<TlsContext>> TlsContext::Create(const std::string& dir) {
  std::unique_ptr<TlsContext> tls(new TlsContext());
  Status s = tls->LoadOrMakeCa(dir);
  if (!s.ok()) return s;
  s = tls->MakeContext();
  if (!s.ok()) return s;
  return tls;
}

TlsContext::~TlsContext() = default;

Status TlsContext::LoadOrMakeCa(const std::string& dir) {
  namespace fs = std::filesystem;
  ca_path_ = (fs::path(dir) / "ca.pem").string();
  const std::string key_path = (fs::path(dir) / "ca.key").string();
  std::error_code ec;
  const bool have_cert = fs::exists(ca_path_, ec);
  const bool have_key = fs::exists(key_path, ec);
  if (have_cert != have_key) {
    return Status::IOError("tls: " + (have_cert ? key_path : ca_path_) +
                           ": missing (a CA needs both ca.pem and ca.key; remove the other "
                           "file to have a new CA made)");
  }
  if (have_cert) {
    FILE* f = std::fopen(ca_path_.c_str(), "r");
    if (f == nullptr) return Status::IOError("tls: " + ca_path_ + ": " + std::strerror(errno));
    ca_cert_.reset(PEM_read_X509(f, nullptr, nullptr, nullptr));
    std::fclose(f);
    if (!ca_cert_) {
      return Status::IOError("tls: " + ca_path_ + ": not a PEM certificate: " + OpenSslError());
    }
    f = std::fopen(key_path.c_str(), "r");
    if (f == nullptr) return Status::IOError("tls: " + key_path + ": " + std::strerror(errno));
    ca_key_.reset(PEM_read_PrivateKey(f, nullptr, nullptr, nullptr));
    std::fclose(f);
    if (!ca_key_) {
      return Status::IOError("tls: " + key_path + ": not a PEM private key: " + OpenSslError());
    }
    if (X509_check_private_key(ca_cert_.get(), ca_key_.get()) != 1) {
      ERR_clear_error();
      return Status::IOError("tls: " + key_path + ": does not match " + ca_path_);
    }
    return Status::Ok();
  }
  fs::create_directories(dir, ec);
  if (ec) return Status::IOError("tls: cannot create directory " + dir + ": " + ec.message());
  ca_key_ = NewEcKey();
  if (!ca_key_) return Status::Internal("tls: cannot make the CA key: " + OpenSslError());
  CertSpec spec;
  spec.common_name = "harvest testweb CA";
  spec.validity_days = kCaValidityDays;
  spec.extensions = {{NID_basic_constraints, "critical,CA:TRUE"},
                     {NID_key_usage, "critical,keyCertSign,cRLSign"},
                     {NID_subject_key_identifier, "hash"},
                     {NID_authority_key_identifier, "keyid:always"}};
  ca_cert_ = MakeCert(spec, ca_key_.get(), nullptr, ca_key_.get());
  if (!ca_cert_) return Status::Internal("tls: cannot make the CA certificate: " + OpenSslError());
  // The key first: a ca.pem in place means both are.
  Status s = WritePem(key_path, 0600, [this](FILE* f) {
    return PEM_write_PrivateKey(f, ca_key_.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  });
  if (!s.ok()) return s;
  return WritePem(ca_path_, 0644,
                  [this](FILE* f) { return PEM_write_X509(f, ca_cert_.get()) == 1; });
}

OpenSslPtr<X509> TlsContext::MakeLeaf(const std::string& common_name,
                                      const std::string& san) const {
  CertSpec spec;
  if (common_name.size() <= kMaxCommonName) spec.common_name = common_name;
  spec.validity_days = kLeafValidityDays;
  spec.extensions = {{NID_basic_constraints, "critical,CA:FALSE"},
                     {NID_key_usage, "critical,digitalSignature"},
                     {NID_ext_key_usage, "serverAuth"},
                     {NID_subject_alt_name, san},
                     {NID_subject_key_identifier, "hash"},
                     {NID_authority_key_identifier, "keyid"}};
  return MakeCert(spec, leaf_key_.get(), ca_cert_.get(), ca_key_.get());
}

Status TlsContext::MakeContext() {
  leaf_key_ = NewEcKey();
  if (!leaf_key_) return Status::Internal("tls: cannot make the leaf key: " + OpenSslError());
  default_leaf_ = MakeLeaf("localhost", "IP:127.0.0.1,DNS:localhost");
  if (!default_leaf_) return Status::Internal("tls: cannot make a certificate: " + OpenSslError());
  ctx_.reset(SSL_CTX_new(TLS_server_method()));
  if (!ctx_) return Status::Internal("tls: SSL_CTX_new: " + OpenSslError());
  SSL_CTX* ctx = ctx_.get();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_use_certificate(ctx, default_leaf_.get()) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, leaf_key_.get()) != 1) {
    return Status::Internal("tls: cannot use the certificate: " + OpenSslError());
  }
  SSL_CTX_set_tlsext_servername_callback(ctx, OnServerName);
  SSL_CTX_set_tlsext_servername_arg(ctx, this);
  SSL_CTX_set_alpn_select_cb(ctx, SelectAlpn, nullptr);
  return Status::Ok();
}

Status TlsContext::WriteLeaf(const std::string& common_name, const std::string& san,
                             const std::string& cert_path, const std::string& key_path) const {
  OpenSslPtr<X509> leaf = MakeLeaf(common_name, san);
  if (!leaf)
    return Status::Internal("tls: cannot make a certificate for " + san + ": " + OpenSslError());
  Status s = WritePem(key_path, 0600, [this](FILE* f) {
    return PEM_write_PrivateKey(f, leaf_key_.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  });
  if (!s.ok()) return s;
  return WritePem(cert_path, 0644, [&leaf](FILE* f) { return PEM_write_X509(f, leaf.get()) == 1; });
}

Status WriteServerCertificate(const std::string& tls_dir, const std::vector<std::string>& dns_names,
                              const std::string& cert_path, const std::string& key_path) {
  if (dns_names.empty()) return Status::InvalidArgument("tls: a certificate needs a name");
  std::string san;
  for (const std::string& name : dns_names) {
    if (name.empty() || name.find_first_of(", ") != std::string::npos) {
      return Status::InvalidArgument("tls: bad certificate name '" + name + "'");
    }
    san += (san.empty() ? "DNS:" : ",DNS:") + name;
  }
  Result<std::unique_ptr<TlsContext>> tls = TlsContext::Create(tls_dir);
  if (!tls.ok()) return tls.status();
  return (*tls)->WriteLeaf(dns_names.front(), san, cert_path, key_path);
}

OpenSslPtr<SSL> TlsContext::NewSsl() const { return OpenSslPtr<SSL>(SSL_new(ctx_.get())); }

OpenSslPtr<X509> TlsContext::LeafFor(const std::string& name) {
  MutexLock lock(&mu_);
  auto it = leaves_.find(name);
  if (it == leaves_.end()) {
    OpenSslPtr<X509> leaf = MakeLeaf(name, "DNS:" + name);
    if (!leaf) return nullptr;
    if (leaves_.size() >= kMaxCachedLeaves) leaves_.clear();
    it = leaves_.emplace(name, std::move(leaf)).first;
  }
  X509_up_ref(it->second.get());
  return OpenSslPtr<X509>(it->second.get());
}

// Runs in the handshake, on the ClientHello: picks the leaf for the name the client asked
// for. Without SNI the context's default leaf stays.
int TlsContext::OnServerName(SSL* ssl, int* /*alert*/, void* arg) {
  const char* sent = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  if (sent == nullptr) return SSL_TLSEXT_ERR_OK;
  std::string name = ToLowerAscii(sent);
  if (!name.empty() && name.back() == '.') name.pop_back();
  if (!IsCertName(name)) return SSL_TLSEXT_ERR_OK;
  auto* self = static_cast<TlsContext*>(arg);
  OpenSslPtr<X509> leaf = self->LeafFor(name);
  // SSL_use_cert_and_key takes its own references.
  if (leaf && SSL_use_cert_and_key(ssl, leaf.get(), self->leaf_key_.get(), nullptr, 1) != 1) {
    ERR_clear_error();
  }
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace harvest::testweb
