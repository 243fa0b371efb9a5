// Fetcher tests: what one transfer captures and how each outcome is reported.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/version.h"
#include "fetch/fetch.h"
#include "fetch/testing/fetcher_fixture.h"

namespace harvest::fetch {
namespace {

using namespace std::chrono_literals;
using testing::Clock;
using testing::FetcherTest;
using testing::FetcherUnderTest;
using testing::Gzip;
using testing::MakeResponse;
using testing::RawReply;
using testing::RawRequest;
using testing::UnusedPort;

TEST_F(FetcherTest, Ok200CapturesHeadsBodyAndMetadata) {
  const std::string reply =
      MakeResponse(200, "OK", {{"Content-Type", "text/html"}, {"X-Test", "a"}}, "hello world");
  Serve([&](const RawRequest&) { return RawReply{.bytes = reply}; });
  const int64_t before = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  const FetchResult r = FetchPath("/hello?x=1");
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.id, 7u);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello world");
  EXPECT_EQ(r.http_version, "1.1");
  EXPECT_EQ(r.ip, "127.0.0.1");
  EXPECT_EQ(r.url, Url("/hello?x=1"));
  EXPECT_EQ(r.effective_url, Url("/hello?x=1"));
  EXPECT_EQ(r.truncated, "");
  EXPECT_EQ(r.redirects_followed, 0);
  // The response head is exactly the bytes the server wrote before the body.
  EXPECT_EQ(r.response_head, reply.substr(0, reply.find("\r\n\r\n") + 4));
  // The request head is exactly the bytes the server received.
  const auto log = server_->requests();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(r.request_head, log[0].head);
  EXPECT_TRUE(r.request_head.starts_with("GET /hello?x=1 HTTP/1.1\r\n"));
  EXPECT_EQ(log[0].Header("User-Agent"), DefaultUserAgent());
  EXPECT_EQ(log[0].Header("Accept-Encoding"), "gzip, br, zstd");
  EXPECT_EQ(r.Header("x-test"), "a");
  EXPECT_EQ(r.ContentType(), "text/html");
  ASSERT_EQ(r.headers.size(), 3u);
  EXPECT_GE(r.start_wall_us, before);
  EXPECT_LT(r.start_wall_us, before + 5'000'000);
  EXPECT_GT(r.ttfb.count(), 0);
  EXPECT_GE(r.total_time, r.ttfb);
}

TEST_F(FetcherTest, Status404IsAResultNotAnError) {
  Serve([](const RawRequest&) {
    return RawReply{.bytes = MakeResponse(404, "Not Found", {}, "no")};
  });
  const FetchResult r = FetchPath("/missing");
  EXPECT_EQ(r.outcome, FetchOutcome::kOk);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, "no");
}

TEST_F(FetcherTest, Http10ResponseWithoutLength) {
  Serve([](const RawRequest&) {
    return RawReply{.bytes = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close",
                    .close = true};
  });
  const FetchResult r = FetchPath("/old");
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.http_version, "1.0");
  EXPECT_EQ(r.body, "until close");
}

TEST_F(FetcherTest, RedirectNotFollowedByDefault) {
  Serve([](const RawRequest&) {
    return RawReply{.bytes = MakeResponse(301, "Moved", {{"Location", "/b?q=%20"}}, "moved")};
  });
  const FetchResult r = FetchPath("/a");
  EXPECT_EQ(r.outcome, FetchOutcome::kOk);
  EXPECT_EQ(r.status, 301);
  EXPECT_EQ(r.Header("location"), "/b?q=%20");  // raw, not resolved
  EXPECT_EQ(r.body, "moved");
  EXPECT_EQ(r.redirects_followed, 0);
  EXPECT_EQ(server_->requests().size(), 1u);
}

RawReply RedirectChain(const RawRequest& req) {
  if (req.target == "/a") return {.bytes = MakeResponse(301, "Moved", {{"Location", "/b"}}, "")};
  if (req.target == "/b") return {.bytes = MakeResponse(302, "Found", {{"Location", "/c"}}, "x")};
  if (req.target == "/c") return {.bytes = MakeResponse(200, "OK", {{"X-Final", "1"}}, "final")};
  return {.bytes = MakeResponse(302, "Found", {{"Location", "/loop"}}, "")};
}

TEST_F(FetcherTest, RedirectsFollowedWhenRequestAllows) {
  Serve(RedirectChain);
  FetcherUnderTest f(TestOptions());
  const FetchResult r = FetchOne(f, {.url = Url("/a"), .max_redirects = 5});
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "final");
  EXPECT_EQ(r.redirects_followed, 2);
  EXPECT_EQ(r.effective_url, Url("/c"));
  // Only the final exchange is kept.
  EXPECT_TRUE(r.response_head.starts_with("HTTP/1.1 200 OK\r\n")) << r.response_head;
  EXPECT_EQ(r.response_head.find("Location"), std::string::npos);
  EXPECT_TRUE(r.request_head.starts_with("GET /c HTTP/1.1\r\n")) << r.request_head;
  EXPECT_EQ(r.request_head.find("GET /a"), std::string::npos);
  EXPECT_EQ(r.Header("X-Final"), "1");
}

TEST_F(FetcherTest, TooManyRedirects) {
  Serve(RedirectChain);
  FetcherUnderTest f(TestOptions());
  const FetchResult r = FetchOne(f, {.url = Url("/loop"), .max_redirects = 2});
  EXPECT_EQ(r.outcome, FetchOutcome::kTooManyRedirects);
  EXPECT_FALSE(r.error.empty());
}

TEST_F(FetcherTest, GzipBodyKeptRaw) {
  const std::string plain(5000, 'a');
  const std::string gz = Gzip(plain);
  Serve([&](const RawRequest&) {
    return RawReply{.bytes = MakeResponse(200, "OK", {{"Content-Encoding", "gzip"}}, gz)};
  });
  const FetchResult r = FetchPath("/gz");
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.ContentEncoding(), "gzip");
  EXPECT_EQ(r.body, gz);
  EXPECT_NE(r.body, plain);
}

TEST_F(FetcherTest, ChunkedBodyDechunkedAndTrailersKeptOutOfHead) {
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  Serve([&](const RawRequest&) {
    return RawReply{.bytes = head + "5\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"};
  });
  const FetchResult r = FetchPath("/chunked");
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.body, "hello world");
  EXPECT_EQ(r.response_head, head);
}

TEST_F(FetcherTest, InformationalResponseNotMixedIntoHead) {
  const std::string final_head = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n";
  Serve([&](const RawRequest&) {
    return RawReply{.bytes =
                        "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n" + final_head + "ok"};
  });
  const FetchResult r = FetchPath("/hints");
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.response_head, final_head);
  EXPECT_FALSE(r.Header("Link").has_value());
  EXPECT_EQ(r.body, "ok");
}

TEST_F(FetcherTest, BodyOverCapIsTruncatedAtTheCap) {
  std::string big(100000, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  Serve([&](const RawRequest&) { return RawReply{.bytes = MakeResponse(200, "OK", {}, big)}; });
  FetchOptions o = TestOptions();
  o.max_body_bytes = 1000;
  const FetchResult r = FetchPath("/big", o);
  EXPECT_EQ(r.outcome, FetchOutcome::kTruncated);
  EXPECT_EQ(r.truncated, "length");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, big.substr(0, 1000));
}

// A request's own cap (the crawl's sitemaps) replaces the fetcher's for that request only.
TEST_F(FetcherTest, RequestBodyCapOverridesTheFetchers) {
  const std::string big(100000, 'x');
  Serve([&](const RawRequest&) { return RawReply{.bytes = MakeResponse(200, "OK", {}, big)}; });
  FetchOptions o = TestOptions();
  o.max_body_bytes = 1000;
  FetcherUnderTest f(o);
  const FetchResult raised = FetchOne(f, {.id = 1, .url = Url("/a"), .max_body_bytes = 200000});
  EXPECT_EQ(raised.outcome, FetchOutcome::kOk) << raised.error;
  EXPECT_EQ(raised.body.size(), big.size());
  const FetchResult lowered = FetchOne(f, {.id = 2, .url = Url("/b"), .max_body_bytes = 10});
  EXPECT_EQ(lowered.outcome, FetchOutcome::kTruncated);
  EXPECT_EQ(lowered.body, big.substr(0, 10));
  const FetchResult plain = FetchOne(f, {.id = 3, .url = Url("/c")});
  EXPECT_EQ(plain.outcome, FetchOutcome::kTruncated);
  EXPECT_EQ(plain.body.size(), 1000u);
}

// curl reads into a 24 KiB buffer (transfer.cc): bodies of several fills, with a length, chunked
// with chunks across the fills' edges, and a cap inside the second fill, arrive byte for byte.
TEST_F(FetcherTest, BodiesOfSeveralReceiveBuffersArriveWhole) {
  std::string big(200000, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 131 + i / 977) % 251);
  std::string chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (size_t at = 0, n = 1; at < big.size(); at += n, n = n * 3 + 7) {
    const size_t len = std::min(n, big.size() - at);
    char size_line[32];
    std::snprintf(size_line, sizeof(size_line), "%zx\r\n", len);
    chunked += size_line + big.substr(at, len) + "\r\n";
  }
  chunked += "0\r\n\r\n";
  Serve([&](const RawRequest& req) {
    if (req.target == "/chunked") return RawReply{.bytes = chunked};
    return RawReply{.bytes = MakeResponse(200, "OK", {}, big)};
  });
  const FetchResult fixed = FetchPath("/fixed");
  EXPECT_EQ(fixed.outcome, FetchOutcome::kOk) << fixed.error;
  EXPECT_TRUE(fixed.body == big) << "fixed-length body differs, " << fixed.body.size() << " bytes";
  const FetchResult dechunked = FetchPath("/chunked");
  EXPECT_EQ(dechunked.outcome, FetchOutcome::kOk) << dechunked.error;
  EXPECT_TRUE(dechunked.body == big)
      << "chunked body differs, " << dechunked.body.size() << " bytes";
  FetchOptions o = TestOptions();
  o.max_body_bytes = 30000;
  const FetchResult capped = FetchPath("/fixed", o);
  EXPECT_EQ(capped.outcome, FetchOutcome::kTruncated);
  EXPECT_TRUE(capped.body == big.substr(0, 30000)) << capped.body.size() << " bytes";
}

TEST_F(FetcherTest, OversizedResponseHeadIsProtocolError) {
  Serve([](const RawRequest&) {
    return RawReply{.bytes = MakeResponse(200, "OK", {{"X-Big", std::string(4000, 'b')}}, "x")};
  });
  FetchOptions o = TestOptions();
  o.max_header_bytes = 1024;
  const FetchResult r = FetchPath("/bighead", o);
  EXPECT_EQ(r.outcome, FetchOutcome::kProtocolError);
  EXPECT_NE(r.error.find("max_header_bytes"), std::string::npos) << r.error;
}

TEST_F(FetcherTest, SilentServerTimesOut) {
  Serve([](const RawRequest&) { return RawReply{.hang = true}; });
  FetchOptions o = TestOptions();
  o.total_timeout = 300ms;
  const auto t0 = Clock::now();
  const FetchResult r = FetchPath("/silent", o);
  const auto elapsed = Clock::now() - t0;
  EXPECT_EQ(r.outcome, FetchOutcome::kTimeout);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.truncated, "");
  EXPECT_GE(elapsed, 280ms);
  EXPECT_LT(elapsed, 2s);
}

TEST_F(FetcherTest, StalledBodyTimesOutAsTruncatedTime) {
  Serve([](const RawRequest&) {
    return RawReply{.bytes = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart", .hang = true};
  });
  FetchOptions o = TestOptions();
  o.total_timeout = 300ms;
  const FetchResult r = FetchPath("/stall", o);
  EXPECT_EQ(r.outcome, FetchOutcome::kTimeout);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.truncated, "time");
  EXPECT_EQ(r.body, "part");
}

TEST_F(FetcherTest, LowSpeedAbort) {
  Serve([](const RawRequest&) {
    return RawReply{.bytes = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart", .hang = true};
  });
  FetchOptions o = TestOptions();
  o.low_speed_limit_bytes = 1000;
  o.low_speed_time = 1s;
  const auto t0 = Clock::now();
  const FetchResult r = FetchPath("/trickle", o);
  const auto elapsed = Clock::now() - t0;
  EXPECT_EQ(r.outcome, FetchOutcome::kTimeout);
  EXPECT_EQ(r.truncated, "time");
  EXPECT_GE(elapsed, 900ms);
  EXPECT_LT(elapsed, 4s);  // well before total_timeout (5 s)
}

TEST_F(FetcherTest, ProxyFromEnvironmentIgnored) {
  Serve([](const RawRequest&) { return RawReply{.bytes = MakeResponse(200, "OK", {}, "direct")}; });
  setenv("http_proxy", "http://127.0.0.1:9", 1);
  setenv("ALL_PROXY", "http://127.0.0.1:9", 1);
  const FetchResult r = FetchPath("/p");
  unsetenv("http_proxy");
  unsetenv("ALL_PROXY");
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.body, "direct");
}

TEST_F(FetcherTest, ConnectionClosedMidBodyIsDisconnect) {
  Serve([](const RawRequest&) {
    return RawReply{.bytes = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart", .close = true};
  });
  const FetchResult r = FetchPath("/cut");
  EXPECT_EQ(r.outcome, FetchOutcome::kProtocolError);
  EXPECT_EQ(r.truncated, "disconnect");
  EXPECT_EQ(r.body, "part");
}

TEST_F(FetcherTest, ConnectionRefused) {
  FetcherUnderTest f(TestOptions());
  const FetchResult r =
      FetchOne(f, {.url = "http://127.0.0.1:" + std::to_string(UnusedPort()) + "/"});
  EXPECT_EQ(r.outcome, FetchOutcome::kConnectError) << r.error;
  EXPECT_EQ(r.status, 0);
}

TEST_F(FetcherTest, TlsHandshakeWithPlainHttpServerIsTlsError) {
  // A listener that answers the ClientHello with plain HTTP (RawHttpServer would wait for
  // CRLF CRLF, which a ClientHello does not contain).
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  std::thread greeter([fd] {
    const int c = accept(fd, nullptr, nullptr);
    if (c < 0) return;
    const char kNotTls[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    (void)send(c, kNotTls, sizeof(kNotTls) - 1, MSG_NOSIGNAL);
    std::this_thread::sleep_for(100ms);
    close(c);
  });
  FetcherUnderTest f(TestOptions());
  const FetchResult r =
      FetchOne(f, {.url = "https://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/"});
  greeter.join();
  close(fd);
  EXPECT_EQ(r.outcome, FetchOutcome::kTlsError) << r.error;
}

TEST_F(FetcherTest, UnresolvableHostIsDnsError) {
  FetcherUnderTest f(TestOptions());
  const FetchResult r = FetchOne(f, {.url = "http://no-such-host.invalid/"}, 10s);
  EXPECT_EQ(r.outcome, FetchOutcome::kDnsError) << r.error;
}

TEST_F(FetcherTest, ConnectToRoutesAnyHostName) {
  Serve([](const RawRequest& req) {
    return RawReply{.bytes = MakeResponse(200, "OK", {}, req.Header("Host").value_or("?"))};
  });
  FetchOptions o = TestOptions();
  o.connect_to = {RouteAll()};
  FetcherUnderTest f(o);
  ASSERT_TRUE(f.status().ok());
  const FetchResult r = FetchOne(f, {.url = "http://h1.test/x"});
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.body, "h1.test");
  EXPECT_EQ(r.ip, "127.0.0.1");
  EXPECT_EQ(r.effective_url, "http://h1.test/x");
}

TEST_F(FetcherTest, BadConnectToFailsEveryRequest) {
  FetchOptions o = TestOptions();
  o.connect_to = {"nonsense"};
  FetcherUnderTest f(o);
  EXPECT_EQ(f.status().code(), Status::Code::kInvalidArgument);
  const FetchResult r = FetchOne(f, {.url = "http://h1.test/"});
  EXPECT_EQ(r.outcome, FetchOutcome::kOtherError);
  EXPECT_NE(r.error.find("connect_to"), std::string::npos) << r.error;
}

TEST_F(FetcherTest, ExtraRequestHeadersSentAndInjectionRejected) {
  Serve([](const RawRequest&) {
    return RawReply{.bytes = MakeResponse(304, "Not Modified", {}, "")};
  });
  FetcherUnderTest f(TestOptions());
  FetchResult r =
      FetchOne(f, {.url = Url("/c"),
                   .headers = {{"If-None-Match", "\"abc\""},
                               {"If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT"}}});
  EXPECT_EQ(r.status, 304);
  const auto log = server_->requests();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].Header("If-None-Match"), "\"abc\"");
  EXPECT_EQ(log[0].Header("If-Modified-Since"), "Sun, 06 Nov 1994 08:49:37 GMT");
  r = FetchOne(f, {.url = Url("/c"), .headers = {{"X-Evil", "a\r\nHost: other"}}});
  EXPECT_EQ(r.outcome, FetchOutcome::kOtherError);
  EXPECT_EQ(server_->requests().size(), 1u);
}

// Finished transfers' easy handles are reset and reused: nothing of one request (headers,
// redirects, a refused connection reuse, a body cap) may carry over to the next.
TEST_F(FetcherTest, ReusedHandlesCarryNothingOver) {
  Serve([](const RawRequest& req) {
    if (req.target == "/a" || req.target == "/b" || req.target == "/c") return RedirectChain(req);
    return RawReply{.bytes = MakeResponse(200, "OK", {}, "body of " + req.target)};
  });
  FetchOptions o = TestOptions();
  o.max_body_bytes = 1000;
  FetcherUnderTest f(o);
  for (int round = 0; round < 3; ++round) {
    FetchResult r =
        FetchOne(f, {.url = Url("/a"), .headers = {{"X-One", "1"}}, .max_redirects = 5});
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.redirects_followed, 2);
    EXPECT_EQ(r.body, "final");
    r = FetchOne(f, {.url = Url("/plain"), .reuse_connection = false});
    EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
    EXPECT_EQ(r.redirects_followed, 0);
    EXPECT_EQ(r.body, "body of /plain");
    EXPECT_EQ(r.request_head.find("X-One"), std::string::npos) << r.request_head;
    EXPECT_TRUE(r.request_head.starts_with("GET /plain HTTP/1.1\r\n")) << r.request_head;
    // A 3xx is the result again once a request does not ask to follow.
    r = FetchOne(f, {.url = Url("/a")});
    EXPECT_EQ(r.status, 301);
    EXPECT_EQ(r.effective_url, Url("/a"));
    EXPECT_EQ(r.request_head.find("X-One"), std::string::npos) << r.request_head;
    r = FetchOne(f, {.url = Url("/plain2"), .headers = {{"X-Two", "2"}}});
    EXPECT_EQ(r.body, "body of /plain2");
    EXPECT_EQ(r.request_head.find("X-One"), std::string::npos) << r.request_head;
    EXPECT_NE(r.request_head.find("X-Two: 2"), std::string::npos) << r.request_head;
    // A connect address (CURLOPT_CONNECT_TO, a list freed with its transfer): the next
    // round's requests must not use it.
    r = FetchOne(f, {.url = "http://reuse.invalid:" + std::to_string(server_->port()) + "/via",
                     .connect_address = "127.0.0.1"});
    EXPECT_EQ(r.body, "body of /via") << r.error;
  }
  const auto log = server_->requests();
  ASSERT_EQ(log.size(), 3u * 7u);  // 3 for the chain, then one each
  // /plain refused connection reuse; the next round's redirect chain reuses one again.
  for (size_t round = 1; round < 3; ++round) {
    EXPECT_EQ(log[round * 7].connection, log[round * 7 + 1].connection) << round;
    EXPECT_EQ(log[round * 7 + 1].connection, log[round * 7 + 2].connection) << round;
  }
  for (const auto& req : log) {
    if (req.target != "/a" && req.target != "/b" && req.target != "/c") {
      EXPECT_FALSE(req.Header("X-One").has_value()) << req.target;
    }
  }
}

TEST_F(FetcherTest, RetryAfterFromResponse) {
  Serve([](const RawRequest&) {
    return RawReply{.bytes = MakeResponse(503, "Busy", {{"Retry-After", "120"}}, "")};
  });
  const FetchResult r = FetchPath("/busy");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.RetryAfter(r.start_wall_us), std::chrono::seconds(120));
}

}  // namespace
}  // namespace harvest::fetch
