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

namespace harvest::fetch {
namespace {

using namespace std::chrono_literals;
using internal::ConnectToRule;
using internal::ParseConnectTo;
using internal::PlainHttpTarget;
using testing::FetcherTest;
using testing::MakeResponse;
using testing::RawReply;
using testing::RawRequest;

TEST(PlainHttpTarget, TakesPlainHttpWithANumericAddressOnly) {
  const std::vector<ConnectToRule> none;
  // An address literal: no lookup needed.
  auto t = PlainHttpTarget({.url = "http://127.0.0.1:8080/a/b?c=1#frag"}, none);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->address, "127.0.0.1");
  EXPECT_EQ(t->port, 8080);
  EXPECT_EQ(t->authority, "127.0.0.1:8080");
  EXPECT_EQ(t->request_target, "/a/b?c=1");
  t = PlainHttpTarget({.url = "http://[::1]/"}, none);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->address, "::1");
  EXPECT_EQ(t->port, 80);
  t = PlainHttpTarget({.url = "http://10.0.0.1?q"}, none);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->request_target, "/?q");

  // A name: only with the crawl's address, or a connect_to rule to a numeric address.
  EXPECT_FALSE(PlainHttpTarget({.url = "http://a.test/"}, none));
  t = PlainHttpTarget({.url = "http://a.test/x", .connect_address = "10.1.2.3"}, none);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->address, "10.1.2.3");
  EXPECT_EQ(t->port, 80);
  EXPECT_EQ(t->authority, "a.test");
  t = PlainHttpTarget({.url = "http://a.test:81/", .connect_address = "::2", .connect_port = 9},
                      none);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->address, "::2");
  EXPECT_EQ(t->port, 9);

  // What needs libcurl.
  EXPECT_FALSE(PlainHttpTarget({.url = "https://127.0.0.1/"}, none));
  EXPECT_FALSE(PlainHttpTarget({.url = "http://127.0.0.1/", .max_redirects = 5}, none));
  EXPECT_FALSE(PlainHttpTarget({.url = "http://u:p@127.0.0.1/"}, none));
  EXPECT_FALSE(PlainHttpTarget({.url = "http://127.0.0.1/a b"}, none));
  EXPECT_FALSE(PlainHttpTarget({.url = "http://a.test/", .connect_address = "a.test"}, none));
  EXPECT_FALSE(PlainHttpTarget({.url = "http://127.0.0.1:99999/"}, none));
  EXPECT_FALSE(PlainHttpTarget({.url = "HTTP://127.0.0.1/"}, none));
}

TEST(PlainHttpTarget, ConnectToRulesFirstMatchWins) {
  const std::vector<ConnectToRule> rules =
      ParseConnectTo({"b.test:80:[::1]:8081", "::127.0.0.1:8080", "c.test::name.test:1"});
  ASSERT_EQ(rules.size(), 3u);
  auto t = PlainHttpTarget({.url = "http://B.test/"}, rules);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->address, "::1");
  EXPECT_EQ(t->port, 8081);
  t = PlainHttpTarget({.url = "http://b.test:81/"}, rules);  // port differs: the next rule
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->address, "127.0.0.1");
  EXPECT_EQ(t->port, 8080);
  EXPECT_EQ(t->authority, "b.test:81");
  // The catch-all rule comes first for c.test; a rule to a name would need curl.
  const std::vector<ConnectToRule> to_name = ParseConnectTo({"c.test::name.test:1"});
  EXPECT_FALSE(PlainHttpTarget({.url = "http://c.test/"}, to_name));
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
