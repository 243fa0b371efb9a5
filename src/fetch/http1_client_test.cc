// Tests of what only Harvest's own HTTP/1.1 client does (the behaviour it shares with
// CurlFetcher is tested by http1_fetch_test, the fetch tests built against HttpFetcher):
// which requests it takes, the request head it writes, and when a connection is kept,
// retried or closed.
#include "fetch/http1_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "fetch/fetch.h"
#include "fetch/testing/fetcher_fixture.h"
#include "fetch/testing/test_pki.h"

namespace harvest::fetch {
namespace {

using namespace std::chrono_literals;
using internal::ConnectToRule;
using internal::OwnClientTarget;
using internal::ParseConnectTo;
using testing::FetcherTest;
using testing::MakeResponse;
using testing::RawReply;
using testing::RawRequest;

TEST(PlainHttpTarget, TakesPlainHttpWithANumericAddressOnly) {
  const std::vector<ConnectToRule> none;
  // An address literal: no lookup needed.
  auto t = OwnClientTarget({.url = "http://127.0.0.1:8080/a/b?c=1#frag"}, none, true, false);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->address, "127.0.0.1");
  EXPECT_EQ(t->port, 8080);
  EXPECT_EQ(t->authority, "127.0.0.1:8080");
  EXPECT_EQ(t->request_target, "/a/b?c=1");
  t = OwnClientTarget({.url = "http://[::1]/"}, none, true, false);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->address, "::1");
  EXPECT_EQ(t->port, 80);
  t = OwnClientTarget({.url = "http://10.0.0.1?q"}, none, true, false);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->request_target, "/?q");

  // A name: only with the crawl's address, or a connect_to rule to a numeric address.
  EXPECT_FALSE(OwnClientTarget({.url = "http://a.test/"}, none, true, false));
  t = OwnClientTarget({.url = "http://a.test/x", .connect_address = "10.1.2.3"}, none, true, false);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->address, "10.1.2.3");
  EXPECT_EQ(t->port, 80);
  EXPECT_EQ(t->authority, "a.test");
  t = OwnClientTarget({.url = "http://a.test:81/", .connect_address = "::2", .connect_port = 9},
                      none, true, false);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->address, "::2");
  EXPECT_EQ(t->port, 9);

  // What needs libcurl.
  EXPECT_FALSE(OwnClientTarget({.url = "https://127.0.0.1/"}, none, true, false));
  EXPECT_FALSE(
      OwnClientTarget({.url = "http://127.0.0.1/", .max_redirects = 5}, none, true, false));
  EXPECT_FALSE(OwnClientTarget({.url = "http://u:p@127.0.0.1/"}, none, true, false));
  EXPECT_FALSE(OwnClientTarget({.url = "http://127.0.0.1/a b"}, none, true, false));
  EXPECT_FALSE(
      OwnClientTarget({.url = "http://a.test/", .connect_address = "a.test"}, none, true, false));
  EXPECT_FALSE(OwnClientTarget({.url = "http://127.0.0.1:99999/"}, none, true, false));
  EXPECT_FALSE(OwnClientTarget({.url = "HTTP://127.0.0.1/"}, none, true, false));
}

TEST(OwnClientTarget, HttpsWhenAllowed) {
  const std::vector<ConnectToRule> none;
  auto t = OwnClientTarget({.url = "https://a.test/x?y", .connect_address = "10.1.2.3"}, none);
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->tls);
  EXPECT_EQ(t->port, 443);
  EXPECT_EQ(t->host, "a.test");
  EXPECT_EQ(t->authority, "a.test");
  EXPECT_EQ(t->request_target, "/x?y");
  t = OwnClientTarget({.url = "https://[::1]:8443/"}, none);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->address, "::1");
  EXPECT_EQ(t->host, "::1");  // an IP literal: checked against the certificate, no SNI
  EXPECT_EQ(t->port, 8443);
  t = OwnClientTarget({.url = "http://127.0.0.1/"}, none);
  ASSERT_TRUE(t.has_value());
  EXPECT_FALSE(t->tls);
  EXPECT_TRUE(t->host.empty());
  // Each scheme only when allowed (FetchOptions::native_http, native_https).
  EXPECT_FALSE(OwnClientTarget({.url = "https://127.0.0.1/"}, none, true, false));
  EXPECT_FALSE(OwnClientTarget({.url = "http://127.0.0.1/"}, none, false, true));
  EXPECT_TRUE(OwnClientTarget({.url = "https://127.0.0.1/"}, none, false, true));
  // A connect_to rule matches https by its port, 443 by default.
  const std::vector<ConnectToRule> rules = ParseConnectTo({"a.test:443:127.0.0.1:8443"});
  t = OwnClientTarget({.url = "https://a.test/"}, rules);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->port, 8443);
  EXPECT_FALSE(OwnClientTarget({.url = "http://a.test/"}, rules));
}

TEST(PlainHttpTarget, ConnectToRulesFirstMatchWins) {
  const std::vector<ConnectToRule> rules =
      ParseConnectTo({"b.test:80:[::1]:8081", "::127.0.0.1:8080", "c.test::name.test:1"});
  ASSERT_EQ(rules.size(), 3u);
  auto t = OwnClientTarget({.url = "http://B.test/"}, rules, true, false);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->address, "::1");
  EXPECT_EQ(t->port, 8081);
  t = OwnClientTarget({.url = "http://b.test:81/"}, rules, true,
                      false);  // port differs: the next rule
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->address, "127.0.0.1");
  EXPECT_EQ(t->port, 8080);
  EXPECT_EQ(t->authority, "b.test:81");
  // The catch-all rule comes first for c.test; a rule to a name would need curl.
  const std::vector<ConnectToRule> to_name = ParseConnectTo({"c.test::name.test:1"});
  EXPECT_FALSE(OwnClientTarget({.url = "http://c.test/"}, to_name, true, false));
}

TEST_F(FetcherTest, RequestHeadIsTheOneCurlWrites) {
  Serve([](const RawRequest&) { return RawReply{.bytes = MakeResponse(200, "OK", {}, "x")}; });
  const FetchRequest req{.url = Url("/p/q?r=1#f"),
                         .headers = {{"If-None-Match", "\"v1\""}, {"X-Empty", ""}}};
  {
    CurlFetcher curl(TestOptions());
    const FetchResult r = FetchOne(curl, req);
    ASSERT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  }
  HttpFetcher own(TestOptions());
  const FetchResult r = FetchOne(own, req);
  ASSERT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  const std::vector<RawRequest> log = server_->requests();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1].head, log[0].head);
  EXPECT_EQ(r.request_head, log[1].head);
  EXPECT_EQ(server_->connections(), 2);  // one per fetcher: proves the second was not curl's
}

// What the client offered by ALPN, recorded by the server (wire format).
int RecordAlpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
               unsigned int inlen, void* arg) {
  static_cast<std::vector<std::string>*>(arg)->emplace_back(reinterpret_cast<const char*>(in),
                                                            inlen);
  (void)out;
  (void)outlen;
  return SSL_TLSEXT_ERR_NOACK;  // HTTP/1.1 without ALPN
}

TEST_F(FetcherTest, HttpsRunsOnTheOwnClientOfferingOnlyHttp11) {
  std::unique_ptr<testing::TestPki> pki = testing::TestPki::Make({"a.test"}, {"127.0.0.1"});
  ASSERT_NE(pki, nullptr);
  std::vector<std::string> offered;  // written by the server's handshakes, one at a time
  SSL_CTX_set_alpn_select_cb(pki->server_ctx(), &RecordAlpn, &offered);
  server_ = std::make_unique<testing::RawHttpServer>(
      [](const RawRequest&) { return RawReply{.bytes = MakeResponse(200, "OK", {}, "x")}; });
  server_->UseTls(pki->server_ctx());
  ASSERT_TRUE(server_->Start());
  const std::string url = "https://a.test:" + std::to_string(server_->port()) + "/";
  FetchOptions o = TestOptions();
  o.ca_file = pki->ca_file();
  {
    HttpFetcher own(o);
    const FetchResult r = FetchOne(own, {.url = url, .connect_address = "127.0.0.1"});
    ASSERT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  }
  o.native_https = false;  // libcurl, offering HTTP/2
  {
    HttpFetcher curl(o);
    const FetchResult r = FetchOne(curl, {.url = url, .connect_address = "127.0.0.1"});
    ASSERT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  }
  server_->Stop();
  ASSERT_EQ(offered.size(), 2u);
  EXPECT_EQ(offered[0], std::string("\x08http/1.1"));
  EXPECT_EQ(offered[1], std::string("\x02h2\x08http/1.1"));
  const std::vector<RawRequest> log = server_->requests();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].head, log[1].head) << "the same request head on both clients";
}

TEST_F(FetcherTest, HttpsErrorsSayWhy) {
  std::unique_ptr<testing::TestPki> pki = testing::TestPki::Make({"a.test"}, {"127.0.0.1"});
  ASSERT_NE(pki, nullptr);
  server_ = std::make_unique<testing::RawHttpServer>(
      [](const RawRequest&) { return RawReply{.bytes = MakeResponse(200, "OK", {}, "x")}; });
  server_->UseTls(pki->server_ctx());
  ASSERT_TRUE(server_->Start());
  const std::string port = std::to_string(server_->port());
  FetchOptions o = TestOptions();
  HttpFetcher no_ca(o);
  FetchResult r = FetchOne(no_ca, {.url = "https://127.0.0.1:" + port + "/"});
  EXPECT_EQ(r.outcome, FetchOutcome::kTlsError);
  EXPECT_EQ(r.error, "SSL certificate problem: unable to get local issuer certificate");
  o.ca_file = pki->ca_file();
  HttpFetcher with_ca(o);
  r = FetchOne(with_ca, {.url = "https://b.test:" + port + "/", .connect_address = "127.0.0.1"});
  EXPECT_EQ(r.outcome, FetchOutcome::kTlsError);
  EXPECT_EQ(r.error, "SSL certificate problem: hostname mismatch");
  r = FetchOne(with_ca, {.url = "https://[::1]:" + port + "/", .connect_address = "127.0.0.1"});
  EXPECT_EQ(r.outcome, FetchOutcome::kTlsError);
  EXPECT_EQ(r.error, "SSL certificate problem: IP address mismatch");
}

TEST_F(FetcherTest, KeptConnectionClosedUnansweredIsRetriedOnceOnANewOne) {
  std::atomic<int> seen{0};
  Serve([&](const RawRequest& req) {
    // The first connection's second request is dropped unanswered, as by a server whose
    // keep-alive timeout ran out just as the request arrived.
    if (req.connection == 1 && seen.fetch_add(1) == 1) return RawReply{.close = true};
    return RawReply{.bytes = MakeResponse(200, "OK", {}, "ok" + req.target)};
  });
  HttpFetcher f(TestOptions());
  EXPECT_EQ(FetchOne(f, {.url = Url("/1")}).body, "ok/1");
  const FetchResult r = FetchOne(f, {.url = Url("/2")});
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.body, "ok/2");
  EXPECT_EQ(server_->connections(), 2);
  EXPECT_EQ(server_->requests().size(), 3u);
}

TEST_F(FetcherTest, NotRetriedOnceTheResponseBegan) {
  Serve([&](const RawRequest& req) {
    if (req.connection == 1 && req.target == "/2") {
      return RawReply{.bytes = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial",
                      .close = true};
    }
    return RawReply{.bytes = MakeResponse(200, "OK", {}, "ok")};
  });
  HttpFetcher f(TestOptions());
  EXPECT_EQ(FetchOne(f, {.url = Url("/1")}).outcome, FetchOutcome::kOk);
  const FetchResult r = FetchOne(f, {.url = Url("/2")});
  EXPECT_EQ(r.outcome, FetchOutcome::kProtocolError);
  EXPECT_EQ(r.truncated, "disconnect");
  EXPECT_EQ(r.body, "partial");
  EXPECT_EQ(server_->connections(), 1);
  EXPECT_EQ(server_->requests().size(), 2u);
}

TEST_F(FetcherTest, NewConnectionClosedUnansweredIsEmptyReply) {
  Serve([](const RawRequest&) { return RawReply{.close = true}; });
  HttpFetcher f(TestOptions());
  const FetchResult r = FetchOne(f, {.url = Url("/")});
  EXPECT_EQ(r.outcome, FetchOutcome::kProtocolError);
  EXPECT_EQ(r.error, "Empty reply from server");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(server_->requests().size(), 1u);  // a fresh connection is not retried
}

int64_t WallMicros() { return SystemClock::Default()->WallMicros(); }

TEST_F(FetcherTest, LastByteIsStampedWhenItArrivedNotWhenItWasRead) {
  Serve([](const RawRequest&) {
    return RawReply{.bytes = MakeResponse(200, "OK", {}, "ok"), .delay = 20ms};
  });
  HttpFetcher f(TestOptions());
  std::optional<FetchResult> out;
  const int64_t before = WallMicros();
  f.Start({.url = Url("/")}, [&out](FetchResult&& r) { out = std::move(r); });
  // Poll until the request is out, then leave the answer (20 ms later) in the socket.
  for (int i = 0; i < 500 && server_->requests().empty(); ++i) f.Poll(2ms);
  ASSERT_EQ(server_->requests().size(), 1u);
  ASSERT_FALSE(out.has_value());
  std::this_thread::sleep_for(200ms);
  const int64_t unread_since = WallMicros() - 150'000;
  while (!out) f.Poll(50ms);
  const int64_t read_at = WallMicros();
  ASSERT_EQ(out->outcome, FetchOutcome::kOk) << out->error;
  EXPECT_GE(out->last_byte_wall_us, before);
  EXPECT_LT(out->last_byte_wall_us, unread_since) << "stamped when read, not when it arrived";
  EXPECT_GE(out->SinceLastByte(read_at), 150ms);
}

TEST_F(FetcherTest, AResponseCutShortHasNoLastByteStamp) {
  Serve([](const RawRequest&) {
    return RawReply{.bytes = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart", .hang = true};
  });
  FetchOptions o = TestOptions();
  o.total_timeout = 300ms;
  HttpFetcher f(o);
  const FetchResult r = FetchOne(f, {.url = Url("/stall")});
  EXPECT_EQ(r.truncated, "time");
  EXPECT_EQ(r.last_byte_wall_us, 0) << "its end is the close, not the last byte";
}

TEST_F(FetcherTest, BytesBeyondTheResponseCloseTheConnection) {
  Serve([](const RawRequest& req) {
    std::string bytes = MakeResponse(200, "OK", {}, "body" + req.target);
    if (req.target == "/1") bytes += "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nextra";
    return RawReply{.bytes = bytes};
  });
  HttpFetcher f(TestOptions());
  const FetchResult first = FetchOne(f, {.url = Url("/1")});
  EXPECT_EQ(first.outcome, FetchOutcome::kOk) << first.error;
  EXPECT_EQ(first.body, "body/1");
  // The unasked-for response must not be taken as the answer to the next request.
  const FetchResult second = FetchOne(f, {.url = Url("/2")});
  EXPECT_EQ(second.outcome, FetchOutcome::kOk) << second.error;
  EXPECT_EQ(second.body, "body/2");
  EXPECT_EQ(server_->connections(), 2);
}

TEST_F(FetcherTest, OneHostNeverHasACurlAndAnOwnTransferAtOnce) {
  std::atomic<int> active{0}, most{0};
  Serve([&](const RawRequest&) {
    const int now = ++active;
    int prev = most.load();
    while (now > prev && !most.compare_exchange_weak(prev, now)) {
    }
    std::this_thread::sleep_for(50ms);
    --active;
    return RawReply{.bytes = MakeResponse(200, "OK", {}, "x")};
  });
  FetchOptions o = TestOptions();
  o.max_host_connections = 1;
  HttpFetcher f(o);
  int done = 0;
  for (int i = 0; i < 6; ++i) {
    // Even ones follow redirects (libcurl), odd ones do not (the own client).
    f.Start({.url = Url("/" + std::to_string(i)), .max_redirects = i % 2 == 0 ? 3 : 0},
            [&done](FetchResult&& r) {
              EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
              ++done;
            });
  }
  const auto deadline = testing::Clock::now() + 5s;
  while (done < 6 && testing::Clock::now() < deadline) f.Poll(20ms);
  EXPECT_EQ(done, 6);
  EXPECT_EQ(most.load(), 1);
  EXPECT_EQ(f.in_flight(), 0u);
}

}  // namespace
}  // namespace harvest::fetch
