// Tests of the Fetcher against an in-process server that writes exact bytes.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "base/version.h"
#include "fetch/fetch.h"
#include "fetch/testing/raw_http_server.h"

namespace harvest::fetch {
namespace {

using namespace std::chrono_literals;
using testing::MakeResponse;
using testing::RawHttpServer;
using testing::RawReply;
using testing::RawRequest;
using Clock = std::chrono::steady_clock;

std::string Gzip(const std::string& in) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, in.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// A port nothing listens on: bound, never listened, then closed.
int UnusedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

class FetcherTest : public ::testing::Test {
 protected:
  void Serve(RawHttpServer::Handler handler) {
    server_ = std::make_unique<RawHttpServer>(std::move(handler));
    ASSERT_TRUE(server_->Start());
  }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(server_->port()) + path;
  }
  std::string RouteAll() const { return "::127.0.0.1:" + std::to_string(server_->port()); }
  static FetchOptions TestOptions() {
    FetchOptions o;
    o.connect_timeout = 2s;
    o.total_timeout = 5s;
    return o;
  }
  // Starts one request and polls until it completes (or `limit` passes).
  static FetchResult FetchOne(Fetcher& f, FetchRequest req, std::chrono::milliseconds limit = 5s) {
    std::optional<FetchResult> out;
    f.Start(std::move(req), [&out](FetchResult&& r) { out = std::move(r); });
    const auto deadline = Clock::now() + limit;
    while (!out && Clock::now() < deadline) f.Poll(50ms);
    EXPECT_TRUE(out.has_value()) << "request did not complete in time";
    return out ? std::move(*out) : FetchResult{};
  }
  FetchResult FetchPath(const std::string& path, FetchOptions o = TestOptions()) {
    Fetcher f(o);
    EXPECT_TRUE(f.status().ok()) << f.status().ToString();
    return FetchOne(f, {.id = 7, .url = Url(path)});
  }

  std::unique_ptr<RawHttpServer> server_;
};

TEST_F(FetcherTest, Ok200CapturesHeadsBodyAndMetadata) {
  const std::string reply =
      MakeResponse(200, "OK", {{"Content-Type", "text/html"}, {"X-Test", "a"}}, "hello world");
  Serve([&](const RawRequest&) { return RawReply{.bytes = reply}; });
  const int64_t before = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
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
  EXPECT_EQ(log[0].Header("User-Agent"),
            std::string("Harvest/") + kVersion + " (+" + kProjectUrl + ")");
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
  Serve([](const RawRequest&) { return RawReply{.bytes = MakeResponse(404, "Not Found", {}, "no")}; });
  const FetchResult r = FetchPath("/missing");
  EXPECT_EQ(r.outcome, FetchOutcome::kOk);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, "no");
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
  Fetcher f(TestOptions());
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
  Fetcher f(TestOptions());
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
    return RawReply{.bytes = "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n" + final_head + "ok"};
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
  Fetcher f(TestOptions());
  const FetchResult r =
      FetchOne(f, {.url = "http://127.0.0.1:" + std::to_string(UnusedPort()) + "/"});
  EXPECT_EQ(r.outcome, FetchOutcome::kConnectError) << r.error;
  EXPECT_EQ(r.status, 0);
}

TEST_F(FetcherTest, UnresolvableHostIsDnsError) {
  Fetcher f(TestOptions());
  const FetchResult r = FetchOne(f, {.url = "http://no-such-host.invalid/"}, 10s);
  EXPECT_EQ(r.outcome, FetchOutcome::kDnsError) << r.error;
}

TEST_F(FetcherTest, ConnectToRoutesAnyHostName) {
  Serve([](const RawRequest& req) {
    return RawReply{.bytes = MakeResponse(200, "OK", {}, req.Header("Host").value_or("?"))};
  });
  FetchOptions o = TestOptions();
  o.connect_to = {RouteAll()};
  Fetcher f(o);
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
  Fetcher f(o);
  EXPECT_EQ(f.status().code(), Status::Code::kInvalidArgument);
  const FetchResult r = FetchOne(f, {.url = "http://h1.test/"});
  EXPECT_EQ(r.outcome, FetchOutcome::kOtherError);
  EXPECT_NE(r.error.find("connect_to"), std::string::npos) << r.error;
}

TEST_F(FetcherTest, ExtraRequestHeadersSentAndInjectionRejected) {
  Serve([](const RawRequest&) { return RawReply{.bytes = MakeResponse(304, "Not Modified", {}, "")}; });
  Fetcher f(TestOptions());
  FetchResult r = FetchOne(f, {.url = Url("/c"),
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

TEST_F(FetcherTest, RetryAfterFromResponse) {
  Serve([](const RawRequest&) {
    return RawReply{.bytes = MakeResponse(503, "Busy", {{"Retry-After", "120"}}, "")};
  });
  const FetchResult r = FetchPath("/busy");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.RetryAfter(r.start_wall_us), std::chrono::seconds(120));
}

TEST_F(FetcherTest, KeepAliveReusesOneConnection) {
  Serve([](const RawRequest&) { return RawReply{.bytes = MakeResponse(200, "OK", {}, "k")}; });
  Fetcher f(TestOptions());
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(FetchOne(f, {.url = Url("/k" + std::to_string(i))}).outcome, FetchOutcome::kOk);
  }
  EXPECT_EQ(server_->connections(), 1);
  EXPECT_EQ(server_->requests().size(), 5u);
}

TEST_F(FetcherTest, FiveHundredConcurrentTransfersComplete) {
  Serve([](const RawRequest& req) {
    return RawReply{.bytes = MakeResponse(200, "OK", {}, req.Header("Host").value_or("") + req.target)};
  });
  FetchOptions o = TestOptions();
  o.connect_to = {RouteAll()};
  Fetcher f(o);
  constexpr int kCount = 500;
  std::map<uint64_t, FetchResult> results;
  for (int i = 0; i < kCount; ++i) {
    f.Start({.id = static_cast<uint64_t>(i),
             .url = "http://h" + std::to_string(i) + ".test/p" + std::to_string(i)},
            [&results](FetchResult&& r) { results.emplace(r.id, std::move(r)); });
  }
  EXPECT_EQ(f.in_flight(), static_cast<size_t>(kCount));
  const auto deadline = Clock::now() + 15s;
  int completed = 0;
  while (completed < kCount && Clock::now() < deadline) completed += f.Poll(100ms);
  ASSERT_EQ(results.size(), static_cast<size_t>(kCount));
  EXPECT_EQ(completed, kCount);
  EXPECT_EQ(f.in_flight(), 0u);
  for (const auto& [id, r] : results) {
    ASSERT_EQ(r.outcome, FetchOutcome::kOk) << id << ": " << r.error;
    EXPECT_EQ(r.body, "h" + std::to_string(id) + ".test/p" + std::to_string(id));
  }
}

TEST_F(FetcherTest, MaxConcurrentQueuesTheRest) {
  std::atomic<int> active{0}, peak{0};
  Serve([&](const RawRequest&) {
    const int now = ++active;
    int p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
    std::this_thread::sleep_for(20ms);
    --active;
    return RawReply{.bytes = MakeResponse(200, "OK", {}, "q")};
  });
  FetchOptions o = TestOptions();
  o.connect_to = {RouteAll()};
  o.max_concurrent = 3;
  Fetcher f(o);
  std::vector<uint64_t> order;
  for (uint64_t i = 0; i < 20; ++i) {
    f.Start({.id = i, .url = "http://q" + std::to_string(i) + ".test/"},
            [&order](FetchResult&& r) { order.push_back(r.id); });
  }
  EXPECT_EQ(f.in_flight(), 20u);
  const auto deadline = Clock::now() + 10s;
  while (order.size() < 20 && Clock::now() < deadline) f.Poll(50ms);
  EXPECT_EQ(order.size(), 20u);
  EXPECT_LE(peak.load(), 3);
  EXPECT_GE(peak.load(), 2);
}

TEST_F(FetcherTest, CallbackMayStartTheNextTransfer) {
  Serve([](const RawRequest& req) { return RawReply{.bytes = MakeResponse(200, "OK", {}, req.target)}; });
  Fetcher f(TestOptions());
  std::vector<std::string> bodies;
  std::function<void(FetchResult&&)> next = [&](FetchResult&& r) {
    bodies.push_back(r.body);
    if (bodies.size() < 5) f.Start({.url = Url("/n" + std::to_string(bodies.size()))}, next);
  };
  f.Start({.url = Url("/n0")}, next);
  const auto deadline = Clock::now() + 5s;
  while (bodies.size() < 5 && Clock::now() < deadline) f.Poll(50ms);
  EXPECT_EQ(bodies, (std::vector<std::string>{"/n0", "/n1", "/n2", "/n3", "/n4"}));
}

TEST_F(FetcherTest, WakeupFromAnotherThreadEndsPoll) {
  Fetcher f(TestOptions());
  f.Poll(0ms);  // binds the loop thread
  std::thread waker([&f] {
    std::this_thread::sleep_for(100ms);
    f.Wakeup();
  });
  const auto t0 = Clock::now();
  EXPECT_EQ(f.Poll(10s), 0);
  const auto elapsed = Clock::now() - t0;
  waker.join();
  EXPECT_GE(elapsed, 50ms);
  EXPECT_LT(elapsed, 3s);
}

TEST_F(FetcherTest, ErrorsAreDeliveredInsidePollNotStart) {
  Fetcher f(TestOptions());
  bool called = false;
  FetchResult got;
  f.Start({.url = "http://"}, [&](FetchResult&& r) { called = true; got = std::move(r); });
  EXPECT_FALSE(called);
  EXPECT_EQ(f.in_flight(), 1u);
  const auto deadline = Clock::now() + 2s;
  while (!called && Clock::now() < deadline) f.Poll(50ms);
  ASSERT_TRUE(called);
  EXPECT_EQ(got.outcome, FetchOutcome::kOtherError);
  EXPECT_EQ(f.in_flight(), 0u);
  // Schemes other than http(s) are refused.
  EXPECT_EQ(FetchOne(f, {.url = "file:///etc/passwd"}).outcome, FetchOutcome::kOtherError);
}

TEST_F(FetcherTest, DestructorAbortsWithoutCallbacks) {
  Serve([](const RawRequest&) { return RawReply{.hang = true}; });
  bool called = false;
  {
    Fetcher f(TestOptions());
    for (int i = 0; i < 3; ++i) f.Start({.url = Url("/h")}, [&](FetchResult&&) { called = true; });
    for (int i = 0; i < 5; ++i) f.Poll(20ms);
    EXPECT_EQ(f.in_flight(), 3u);
  }
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace harvest::fetch
