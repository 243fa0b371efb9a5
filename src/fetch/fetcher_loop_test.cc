// Fetcher tests: the event loop — connection reuse, concurrency limits, re-entrancy, Wakeup.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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

TEST_F(FetcherTest, KeepAliveReusesOneConnection) {
  Serve([](const RawRequest&) { return RawReply{.bytes = MakeResponse(200, "OK", {}, "k")}; });
  FetcherUnderTest f(TestOptions());
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(FetchOne(f, {.url = Url("/k" + std::to_string(i))}).outcome, FetchOutcome::kOk);
  }
  EXPECT_EQ(server_->connections(), 1);
  EXPECT_EQ(server_->requests().size(), 5u);
}

TEST_F(FetcherTest, ServerClosingEachConnectionStillWorks) {
  // Each reply closes its connection, so curl opens a new socket every time and descriptor
  // numbers get reused: exercises the epoll ADD/MOD/DEL bookkeeping.
  Serve([](const RawRequest&) {
    return RawReply{.bytes = MakeResponse(200, "OK", {{"Connection", "close"}}, "c"),
                    .close = true};
  });
  FetcherUnderTest f(TestOptions());
  for (int i = 0; i < 20; ++i) {
    const FetchResult r = FetchOne(f, {.url = Url("/c" + std::to_string(i))});
    ASSERT_EQ(r.outcome, FetchOutcome::kOk) << i << ": " << r.error;
    EXPECT_EQ(r.body, "c");
  }
  EXPECT_EQ(server_->connections(), 20);
}

TEST_F(FetcherTest, FiveHundredConcurrentTransfersComplete) {
  Serve([](const RawRequest& req) {
    return RawReply{.bytes =
                        MakeResponse(200, "OK", {}, req.Header("Host").value_or("") + req.target)};
  });
  FetchOptions o = TestOptions();
  o.connect_to = {RouteAll()};
  FetcherUnderTest f(o);
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
  FetcherUnderTest f(o);
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

TEST_F(FetcherTest, MaxHostConnectionsLimitsEachUrlHost) {
  std::mutex mu;
  std::map<std::string, int> active;
  std::map<std::string, int> peak;
  int total_active = 0, total_peak = 0;
  Serve([&](const RawRequest& req) {
    const std::string host = req.Header("Host").value_or("");
    {
      std::lock_guard<std::mutex> lock(mu);
      peak[host] = std::max(peak[host], ++active[host]);
      total_peak = std::max(total_peak, ++total_active);
    }
    std::this_thread::sleep_for(20ms);
    {
      std::lock_guard<std::mutex> lock(mu);
      --active[host];
      --total_active;
    }
    return RawReply{.bytes = MakeResponse(200, "OK", {}, "h")};
  });
  FetchOptions o = TestOptions();
  o.connect_to = {RouteAll()};  // both hosts share one connect address
  FetcherUnderTest f(o);
  int done = 0;
  for (int i = 0; i < 8; ++i) {
    f.Start({.url = std::string(i % 2 ? "http://a.test/" : "http://b.test/") + std::to_string(i)},
            [&done](FetchResult&& r) { done += r.outcome == FetchOutcome::kOk; });
  }
  const auto deadline = Clock::now() + 5s;
  while (done < 8 && Clock::now() < deadline) f.Poll(50ms);
  EXPECT_EQ(done, 8);
  EXPECT_EQ(peak["a.test"], 1);
  EXPECT_EQ(peak["b.test"], 1);
  EXPECT_EQ(total_peak, 2);  // the two hosts did run side by side
}

TEST_F(FetcherTest, CallbackMayStartTheNextTransfer) {
  Serve([](const RawRequest& req) {
    return RawReply{.bytes = MakeResponse(200, "OK", {}, req.target)};
  });
  FetcherUnderTest f(TestOptions());
  std::vector<std::string> bodies;
  std::function<void(FetchResult &&)> next = [&](FetchResult&& r) {
    bodies.push_back(r.body);
    if (bodies.size() < 5) f.Start({.url = Url("/n" + std::to_string(bodies.size()))}, next);
  };
  f.Start({.url = Url("/n0")}, next);
  const auto deadline = Clock::now() + 5s;
  while (bodies.size() < 5 && Clock::now() < deadline) f.Poll(50ms);
  EXPECT_EQ(bodies, (std::vector<std::string>{"/n0", "/n1", "/n2", "/n3", "/n4"}));
}

TEST_F(FetcherTest, WakeupFromAnotherThreadEndsPoll) {
  FetcherUnderTest f(TestOptions());
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
  FetcherUnderTest f(TestOptions());
  bool called = false;
  FetchResult got;
  f.Start({.url = "http://"}, [&](FetchResult&& r) {
    called = true;
    got = std::move(r);
  });
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
    FetcherUnderTest f(TestOptions());
    for (int i = 0; i < 3; ++i) f.Start({.url = Url("/h")}, [&](FetchResult&&) { called = true; });
    for (int i = 0; i < 5; ++i) f.Poll(20ms);
    EXPECT_EQ(f.in_flight(), 3u);
  }
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace harvest::fetch
