// Fetcher tests over https against RawHttpServer speaking TLS with a test CA made at test time
// (testing/TestPki): built into fetch_test (libcurl) and http1_fetch_test (HttpFetcher, whose
// https requests run on the own client), so both clients are held to the same results.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fetch/fetch.h"
#include "fetch/testing/fetcher_fixture.h"
#include "fetch/testing/test_pki.h"

namespace harvest::fetch {
namespace {

using namespace std::chrono_literals;
using testing::FetcherTest;
using testing::FetcherUnderTest;
using testing::MakeResponse;
using testing::RawHttpServer;
using testing::RawReply;
using testing::RawRequest;
using testing::TestPki;

class HttpsTest : public FetcherTest {
 protected:
  void SetUp() override {
    pki_ = TestPki::Make({"a.test"}, {"127.0.0.1"});
    ASSERT_NE(pki_, nullptr);
  }
  void ServeTls(RawHttpServer::Handler handler) {
    server_ = std::make_unique<RawHttpServer>(std::move(handler));
    server_->UseTls(pki_->server_ctx());
    ASSERT_TRUE(server_->Start());
  }
  std::string HttpsUrl(const std::string& path, const std::string& host = "127.0.0.1") const {
    return "https://" + host + ":" + std::to_string(server_->port()) + path;
  }
  FetchOptions TlsOptions() const {
    FetchOptions o = TestOptions();
    o.ca_file = pki_->ca_file();
    return o;
  }
  void ServeOk() {
    ServeTls([](const RawRequest& req) {
      return RawReply{.bytes = MakeResponse(200, "OK", {{"Content-Type", "text/plain"}},
                                            "secure" + req.target)};
    });
  }

  std::unique_ptr<TestPki> pki_;
};

TEST_F(HttpsTest, FetchesWithTheTestCaAndCapturesAsOverHttp) {
  const std::string reply =
      MakeResponse(200, "OK", {{"Content-Type", "text/html"}, {"Transfer-Encoding", "chunked"}},
                   "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
  ServeTls([&](const RawRequest&) { return RawReply{.bytes = reply}; });
  FetcherUnderTest f(TlsOptions());
  ASSERT_TRUE(f.status().ok()) << f.status().ToString();
  const FetchResult r = FetchOne(f, {.id = 3, .url = HttpsUrl("/p?q=1")});
  ASSERT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.id, 3u);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.http_version, "1.1");
  EXPECT_EQ(r.body, "hello world");
  EXPECT_EQ(r.ip, "127.0.0.1");
  EXPECT_EQ(r.effective_url, HttpsUrl("/p?q=1"));
  EXPECT_EQ(r.response_head, reply.substr(0, reply.find("\r\n\r\n") + 4));
  const auto log = server_->requests();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(r.request_head, log[0].head);
  EXPECT_TRUE(r.request_head.starts_with("GET /p?q=1 HTTP/1.1\r\nHost: 127.0.0.1:"));
  EXPECT_GT(r.ttfb.count(), 0);
  EXPECT_GE(r.total_time, r.ttfb);
  EXPECT_EQ(server_->handshakes(), 1);
}

TEST_F(HttpsTest, AHostNameIsSentAsSniAndChecked) {
  ServeOk();
  FetcherUnderTest f(TlsOptions());
  // The crawl's way: the URL keeps its name, the address comes with the request.
  FetchResult r = FetchOne(f, {.url = HttpsUrl("/n", "a.test"), .connect_address = "127.0.0.1"});
  ASSERT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.body, "secure/n");
  EXPECT_EQ(server_->requests().at(0).Header("Host"), "a.test:" + std::to_string(server_->port()));
  // A name the certificate does not carry.
  r = FetchOne(f, {.url = HttpsUrl("/n", "b.test"), .connect_address = "127.0.0.1"});
  EXPECT_EQ(r.outcome, FetchOutcome::kTlsError) << r.error;
  EXPECT_EQ(r.status, 0);
  EXPECT_FALSE(r.error.empty());
}

TEST_F(HttpsTest, UnknownCaIsATlsError) {
  ServeOk();
  FetcherUnderTest f(TestOptions());  // the system store only
  const FetchResult r = FetchOne(f, {.url = HttpsUrl("/")});
  EXPECT_EQ(r.outcome, FetchOutcome::kTlsError) << r.error;
  EXPECT_NE(r.error.find("certificate"), std::string::npos) << r.error;
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(server_->requests().empty());
}

TEST_F(HttpsTest, AnotherCaIsATlsError) {
  ServeOk();
  std::unique_ptr<TestPki> other = TestPki::Make({"a.test"}, {"127.0.0.1"});
  ASSERT_NE(other, nullptr);
  FetchOptions o = TestOptions();
  o.ca_file = other->ca_file();
  FetcherUnderTest f(o);
  const FetchResult r = FetchOne(f, {.url = HttpsUrl("/")});
  EXPECT_EQ(r.outcome, FetchOutcome::kTlsError) << r.error;
}

TEST_F(HttpsTest, VerificationOffAcceptsAnyCertificateAndName) {
  ServeOk();
  FetchOptions o = TestOptions();
  o.verify_tls = false;
  FetcherUnderTest f(o);
  FetchResult r = FetchOne(f, {.url = HttpsUrl("/off")});
  ASSERT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.body, "secure/off");
  r = FetchOne(f, {.url = HttpsUrl("/off", "b.test"), .connect_address = "127.0.0.1"});
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
}

TEST_F(HttpsTest, UnreadableCaFileIsASetupErrorNamingIt) {
  FetchOptions o = TestOptions();
  o.ca_file = "/nonexistent/ca.pem";
  FetcherUnderTest f(o);
  EXPECT_FALSE(f.status().ok());
  EXPECT_NE(f.status().ToString().find("/nonexistent/ca.pem"), std::string::npos);
}

TEST_F(HttpsTest, OneConnectionCarriesSeveralRequests) {
  ServeOk();
  FetcherUnderTest f(TlsOptions());
  for (int i = 0; i < 5; ++i) {
    const FetchResult r = FetchOne(f, {.url = HttpsUrl("/" + std::to_string(i))});
    ASSERT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
    EXPECT_EQ(r.body, "secure/" + std::to_string(i));
  }
  EXPECT_EQ(server_->connections(), 1);
  EXPECT_EQ(server_->handshakes(), 1);
}

TEST_F(HttpsTest, TheNextConnectionResumesTheSession) {
  for (const int version : {TLS1_3_VERSION, TLS1_2_VERSION}) {
    SCOPED_TRACE(version == TLS1_3_VERSION ? "TLS 1.3" : "TLS 1.2");
    SetUp();
    SSL_CTX_set_max_proto_version(pki_->server_ctx(), version);
    ServeOk();
    FetcherUnderTest f(TlsOptions());
    for (int i = 0; i < 3; ++i) {
      // Not kept: each request opens a connection.
      const FetchResult r = FetchOne(f, {.url = HttpsUrl("/r"), .reuse_connection = false});
      ASSERT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
    }
    EXPECT_EQ(server_->connections(), 3);
    EXPECT_EQ(server_->handshakes(), 3);
    EXPECT_EQ(server_->resumed(), 2);
    server_.reset();
  }
}

TEST_F(HttpsTest, KeptConnectionClosedUnansweredIsRetriedOnANewOne) {
  std::atomic<int> seen{0};
  ServeTls([&](const RawRequest& req) {
    if (req.connection == 1 && seen.fetch_add(1) == 1) return RawReply{.close = true};
    return RawReply{.bytes = MakeResponse(200, "OK", {}, "ok" + req.target)};
  });
  FetcherUnderTest f(TlsOptions());
  EXPECT_EQ(FetchOne(f, {.url = HttpsUrl("/1")}).body, "ok/1");
  const FetchResult r = FetchOne(f, {.url = HttpsUrl("/2")});
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.body, "ok/2");
  EXPECT_EQ(server_->connections(), 2);
  EXPECT_EQ(server_->requests().size(), 3u);
}

TEST_F(HttpsTest, KeptConnectionClosedWhileIdleIsNotUsed) {
  ServeTls([&](const RawRequest& req) {
    return RawReply{.bytes = MakeResponse(200, "OK", {}, "ok" + req.target),
                    .close = req.target == "/1"};  // close_notify after the response
  });
  FetcherUnderTest f(TlsOptions());
  EXPECT_EQ(FetchOne(f, {.url = HttpsUrl("/1")}).body, "ok/1");
  std::this_thread::sleep_for(50ms);
  const FetchResult r = FetchOne(f, {.url = HttpsUrl("/2")});
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.body, "ok/2");
  EXPECT_EQ(server_->connections(), 2);
  EXPECT_EQ(server_->requests().size(), 2u);
}

TEST_F(HttpsTest, BytesBeyondTheResponseCloseTheConnection) {
  ServeTls([](const RawRequest& req) {
    std::string bytes = MakeResponse(200, "OK", {}, "body" + req.target);
    if (req.target == "/1") bytes += "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nextra";
    return RawReply{.bytes = bytes};
  });
  FetcherUnderTest f(TlsOptions());
  EXPECT_EQ(FetchOne(f, {.url = HttpsUrl("/1")}).body, "body/1");
  const FetchResult second = FetchOne(f, {.url = HttpsUrl("/2")});
  EXPECT_EQ(second.outcome, FetchOutcome::kOk) << second.error;
  EXPECT_EQ(second.body, "body/2");
}

TEST_F(HttpsTest, BodyCutShortIsADisconnect) {
  ServeTls([](const RawRequest&) {
    return RawReply{.bytes = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial",
                    .close = true};
  });
  FetcherUnderTest f(TlsOptions());
  const FetchResult r = FetchOne(f, {.url = HttpsUrl("/")});
  EXPECT_EQ(r.outcome, FetchOutcome::kProtocolError) << r.error;
  EXPECT_EQ(r.truncated, "disconnect");
  EXPECT_EQ(r.body, "partial");
}

TEST_F(HttpsTest, UnframedBodyEndsAtTheClose) {
  ServeTls([](const RawRequest&) {
    return RawReply{.bytes = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nto the end",
                    .close = true};
  });
  FetcherUnderTest f(TlsOptions());
  const FetchResult r = FetchOne(f, {.url = HttpsUrl("/")});
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.body, "to the end");
}

TEST_F(HttpsTest, GarbageInTheTlsStreamIsAnErrorNotACrash) {
  ServeTls([](const RawRequest&) {
    return RawReply{.bytes = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart",
                    .raw_after = std::string("\x17\x03\x03\x00\x40garbage-garbage", 20)};
  });
  FetcherUnderTest f(TlsOptions());
  const FetchResult r = FetchOne(f, {.url = HttpsUrl("/")});
  EXPECT_TRUE(r.outcome == FetchOutcome::kProtocolError || r.outcome == FetchOutcome::kTlsError)
      << OutcomeName(r.outcome) << ": " << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "part");
}

// A server that is not TLS at all: it answers the ClientHello with plain HTTP and closes.
TEST_F(HttpsTest, APlainHttpServerIsATlsError) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 8), 0);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  std::thread server([listener] {
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    char buf[4096];
    (void)recv(fd, buf, sizeof(buf), 0);
    const std::string reply = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    (void)send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
    close(fd);
  });
  FetcherUnderTest f(TlsOptions());
  const FetchResult r =
      FetchOne(f, {.url = "https://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/"});
  server.join();
  close(listener);
  EXPECT_EQ(r.outcome, FetchOutcome::kTlsError) << r.error;
  EXPECT_EQ(r.status, 0);
}

// A server whose kernel accepts the connection but which never speaks: the handshake is
// bounded by connect_timeout.
TEST_F(HttpsTest, ASilentServerTimesOutInTheHandshake) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 8), 0);  // never accepted: the kernel completes TCP's handshake
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  FetchOptions o = TlsOptions();
  o.connect_timeout = 300ms;
  FetcherUnderTest f(o);
  const auto start = std::chrono::steady_clock::now();
  const FetchResult r =
      FetchOne(f, {.url = "https://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/"});
  const auto took = std::chrono::steady_clock::now() - start;
  close(listener);
  EXPECT_EQ(r.outcome, FetchOutcome::kTimeout) << r.error;
  EXPECT_EQ(r.truncated, "");
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 3s);
}

}  // namespace
}  // namespace harvest::fetch
