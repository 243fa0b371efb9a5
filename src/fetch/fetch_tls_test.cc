// Fetcher tests over TLS: an in-process cpp-httplib SSLServer with a throw-away self-signed
// certificate made at test time (no files, no network). Built only when pkg-config finds
// cpp-httplib (its library is compiled with CPPHTTPLIB_OPENSSL_SUPPORT).
#include <gtest/gtest.h>
#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "fetch/fetch.h"
#include "fetch/testing/fetcher_fixture.h"

namespace harvest::fetch {
namespace {

using namespace std::chrono_literals;
using testing::FetcherUnderTest;
using Clock = std::chrono::steady_clock;

struct KeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertDeleter {
  void operator()(X509* x) const { X509_free(x); }
};

class TlsServer {
 public:
  TlsServer() {
    key_.reset(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
    cert_.reset(X509_new());
    if (!key_ || !cert_) return;
    X509_set_version(cert_.get(), 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert_.get()), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert_.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert_.get()), 3600);
    X509_set_pubkey(cert_.get(), key_.get());
    X509_NAME* name = X509_get_subject_name(cert_.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
    X509_set_issuer_name(cert_.get(), name);
    if (X509_sign(cert_.get(), key_.get(), EVP_sha256()) == 0) return;
    server_ = std::make_unique<httplib::SSLServer>(cert_.get(), key_.get());
    server_->Get("/secure", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("over tls", "text/plain");
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    if (port_ > 0) thread_ = std::thread([this] { server_->listen_after_bind(); });
  }
  ~TlsServer() {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  bool ok() const { return server_ && server_->is_valid() && port_ > 0; }
  std::string Url() const { return "https://127.0.0.1:" + std::to_string(port_) + "/secure"; }

 private:
  std::unique_ptr<EVP_PKEY, KeyDeleter> key_;
  std::unique_ptr<X509, CertDeleter> cert_;
  std::unique_ptr<httplib::SSLServer> server_;
  int port_ = -1;
  std::thread thread_;
};

FetchResult FetchOne(FetchOptions options, const std::string& url) {
  options.connect_timeout = 2s;
  options.total_timeout = 5s;
  FetcherUnderTest f(options);
  std::optional<FetchResult> out;
  f.Start({.url = url}, [&out](FetchResult&& r) { out = std::move(r); });
  const auto deadline = Clock::now() + 6s;
  while (!out && Clock::now() < deadline) f.Poll(50ms);
  EXPECT_TRUE(out.has_value());
  return out ? std::move(*out) : FetchResult{};
}

TEST(FetcherTls, SelfSignedCertificateRejectedByDefault) {
  TlsServer server;
  ASSERT_TRUE(server.ok());
  const FetchResult r = FetchOne(FetchOptions{}, server.Url());
  EXPECT_EQ(r.outcome, FetchOutcome::kTlsError) << r.error;
  EXPECT_EQ(r.status, 0);
}

TEST(FetcherTls, VerificationOffFetchesOverTls) {
  TlsServer server;
  ASSERT_TRUE(server.ok());
  FetchOptions o;
  o.verify_tls = false;
  o.accept_encoding = "";  // else cpp-httplib answers with a (kept raw) brotli body
  const FetchResult r = FetchOne(o, server.Url());
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "over tls");
  EXPECT_EQ(r.http_version, "1.1");  // HTTP/2 offered by ALPN, the server only speaks 1.1
  EXPECT_TRUE(r.request_head.starts_with("GET /secure HTTP/1.1\r\n")) << r.request_head;
  EXPECT_EQ(r.request_head.find("Accept-Encoding"), std::string::npos);
  EXPECT_TRUE(r.response_head.starts_with("HTTP/1.1 200 OK\r\n")) << r.response_head;
  EXPECT_EQ(r.ContentType(), "text/plain");
}

}  // namespace
}  // namespace harvest::fetch
