#include "frontier/frontier.h"

#include <gtest/gtest.h>

namespace harvest::frontier {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

UrlItem Item(const std::string& host, const std::string& path, int priority = 1) {
  UrlItem item;
  item.host = host;
  item.url = "http://" + host + path;
  item.priority = priority;
  return item;
}

class FrontierTest : public ::testing::Test {
 protected:
  FrontierOptions Options() {
    FrontierOptions o;
    o.default_delay = milliseconds(1000);
    return o;
  }
  void Advance(std::chrono::microseconds d) { clock_.Advance(d); }
  Completion Done() { return Completion{}; }
  Completion Retry(bool error = true) {
    Completion c;
    c.kind = CompletionKind::kRetry;
    c.error = error;
    return c;
  }
  FakeClock clock_;
};

TEST_F(FrontierTest, EmptyFrontier) {
  Frontier f(Options(), &clock_);
  EXPECT_TRUE(f.Idle());
  EXPECT_FALSE(f.Next().has_value());
  EXPECT_FALSE(f.NextWakeup().has_value());
}

TEST_F(FrontierTest, OneLeasePerHost) {
  Frontier f(Options(), &clock_);
  f.Add(Item("a.test", "/1"));
  f.Add(Item("a.test", "/2"));
  f.Add(Item("b.test", "/1"));
  auto l1 = f.Next();
  auto l2 = f.Next();
  ASSERT_TRUE(l1 && l2);
  EXPECT_NE(l1->item.host, l2->item.host);
  EXPECT_FALSE(f.Next().has_value()) << "a.test already has a lease";
  EXPECT_EQ(f.in_flight(), 2u);
  EXPECT_EQ(f.queued(), 1u);
  Advance(seconds(100));
  EXPECT_FALSE(f.Next().has_value()) << "time alone does not release a lease";
  EXPECT_FALSE(f.NextWakeup().has_value());
}

TEST_F(FrontierTest, DelayRespectedExactlyFromCompletion) {
  Frontier f(Options(), &clock_);
  f.Add(Item("a.test", "/1"));
  f.Add(Item("a.test", "/2"));
  auto l1 = f.Next();
  ASSERT_TRUE(l1);
  Advance(milliseconds(700));  // the request takes 700 ms
  const auto end = clock_.Now();
  f.Complete(*l1, Done());
  ASSERT_TRUE(f.NextWakeup().has_value());
  EXPECT_EQ(*f.NextWakeup(), end + milliseconds(1000));
  Advance(milliseconds(999));
  EXPECT_FALSE(f.Next().has_value());
  Advance(std::chrono::microseconds(999));
  EXPECT_FALSE(f.Next().has_value());
  Advance(std::chrono::microseconds(1));
  auto l2 = f.Next();
  ASSERT_TRUE(l2);
  EXPECT_EQ(l2->item.url, "http://a.test/2");
}

TEST_F(FrontierTest, CrawlDelayRaisesNeverLowers) {
  Frontier f(Options(), &clock_);
  f.SetCrawlDelay("a.test", milliseconds(5000));
  EXPECT_EQ(f.HostDelay("a.test"), milliseconds(5000));
  f.SetCrawlDelay("b.test", milliseconds(100));  // below the default: default wins
  EXPECT_EQ(f.HostDelay("b.test"), milliseconds(1000));
  f.Add(Item("a.test", "/1"));
  f.Add(Item("a.test", "/2"));
  auto l = f.Next();
  f.Complete(*l, Done());
  Advance(milliseconds(4999));
  EXPECT_FALSE(f.Next().has_value());
  Advance(milliseconds(1));
  EXPECT_TRUE(f.Next().has_value());
}

TEST_F(FrontierTest, CrawlDelayAboveMaxSkipsHost) {
  FrontierOptions o = Options();
  o.max_crawl_delay = seconds(300);
  Frontier f(o, &clock_);
  f.Add(Item("slow.test", "/1"));
  f.Add(Item("slow.test", "/2"));
  f.SetCrawlDelay("slow.test", seconds(301));
  EXPECT_TRUE(f.HostSkipped("slow.test"));
  EXPECT_FALSE(f.HostSkipped("other.test"));
  EXPECT_FALSE(f.Next().has_value());
  EXPECT_FALSE(f.Idle());
  auto drained = f.DrainHost("slow.test");
  ASSERT_EQ(drained.size(), 2u);
  EXPECT_EQ(drained[0].url, "http://slow.test/1");
  EXPECT_TRUE(f.Idle());
  f.SetCrawlDelay("slow.test", seconds(300));  // exactly the maximum is allowed
  EXPECT_FALSE(f.HostSkipped("slow.test"));
}

TEST_F(FrontierTest, RetryAfterIsOneShot) {
  Frontier f(Options(), &clock_);
  for (int i = 0; i < 3; ++i) f.Add(Item("a.test", "/" + std::to_string(i)));
  auto l = f.Next();
  Completion c;
  c.retry_after = milliseconds(10000);
  f.Complete(*l, c);
  EXPECT_EQ(*f.NextWakeup(), clock_.Now() + milliseconds(10000));
  Advance(milliseconds(10000));
  l = f.Next();
  ASSERT_TRUE(l);
  f.Complete(*l, Done());
  EXPECT_EQ(*f.NextWakeup(), clock_.Now() + milliseconds(1000)) << "back to the default";
}

TEST_F(FrontierTest, OverrideSetAndCleared) {
  Frontier f(Options(), &clock_);
  f.SetDelayOverride("a.test", milliseconds(3000));
  EXPECT_EQ(f.HostDelay("a.test"), milliseconds(3000));
  for (int i = 0; i < 3; ++i) f.Add(Item("a.test", "/" + std::to_string(i)));
  auto l = f.Next();
  f.Complete(*l, Done());
  EXPECT_EQ(*f.NextWakeup(), clock_.Now() + milliseconds(3000));
  f.SetDelayOverride("a.test", std::nullopt);
  Advance(milliseconds(3000));
  l = f.Next();
  f.Complete(*l, Done());
  EXPECT_EQ(*f.NextWakeup(), clock_.Now() + milliseconds(1000));
}

TEST_F(FrontierTest, AdaptiveFactor) {
  FrontierOptions o = Options();
  o.adaptive_factor = 10;
  Frontier f(o, &clock_);
  for (int i = 0; i < 3; ++i) f.Add(Item("a.test", "/" + std::to_string(i)));
  auto l = f.Next();
  Completion c;
  c.response_time = milliseconds(500);  // 10 x 500 ms = 5 s > default 1 s
  f.Complete(*l, c);
  EXPECT_EQ(*f.NextWakeup(), clock_.Now() + milliseconds(5000));
  Advance(milliseconds(5000));
  l = f.Next();
  c.response_time = milliseconds(20);  // 200 ms < default
  f.Complete(*l, c);
  EXPECT_EQ(*f.NextWakeup(), clock_.Now() + milliseconds(1000));
}

TEST_F(FrontierTest, PerIpLimitAcrossHosts) {
  FrontierOptions o = Options();
  o.per_ip_limit = 2;
  Frontier f(o, &clock_);
  for (const char* h : {"a.test", "b.test", "c.test", "d.test"}) {
    f.SetHostIp(h, "10.0.0.1");
    f.Add(Item(h, "/"));
  }
  f.SetHostIp("e.test", "10.0.0.2");
  f.Add(Item("e.test", "/"));
  std::vector<Lease> leases;
  while (auto l = f.Next()) leases.push_back(*l);
  ASSERT_EQ(leases.size(), 3u) << "2 on 10.0.0.1 plus e.test";
  EXPECT_EQ(f.hosts_ready(), 0u);
  EXPECT_FALSE(f.NextWakeup().has_value()) << "blocked hosts wait for a completion";
  // Completing one lease on 10.0.0.1 frees a slot for a waiting host.
  const Lease* on_ip = leases[0].item.host != "e.test" ? &leases[0] : &leases[1];
  f.Complete(*on_ip, Done());
  auto next = f.Next();
  ASSERT_TRUE(next);
  EXPECT_NE(next->item.host, "e.test");
  EXPECT_NE(next->item.host, on_ip->item.host);
  EXPECT_FALSE(f.Next().has_value());
}

// A lease that made no request and is not done (the host's address was not known yet): the
// item goes back to the front, no delay is charged, and a held host is not leased until
// released.
TEST_F(FrontierTest, PutBackAndHoldChargeNoDelay) {
  Frontier f(Options(), &clock_);
  f.Add(Item("a.test", "/page"));
  f.Add(Item("a.test", "/other"));
  f.Add(Item("b.test", "/"));
  auto l = f.Next();
  ASSERT_TRUE(l);
  const std::string host = l->item.host;
  f.SetHeld(host, true);
  f.Complete(*l, {.kind = CompletionKind::kPutBack});
  EXPECT_EQ(f.in_flight(), 0u);
  // Only the other host can be leased while `host` is held, at any time.
  Advance(seconds(10));
  auto other = f.Next();
  ASSERT_TRUE(other);
  EXPECT_NE(other->item.host, host);
  EXPECT_FALSE(f.Next().has_value());
  f.SetHeld(host, false);
  auto again = f.Next();
  ASSERT_TRUE(again) << "released: ready at once, no delay was charged";
  EXPECT_EQ(again->item.url, l->item.url) << "put back at the front of its queue";
  // A put-back without a hold: ready again at once.
  f.Complete(*again, {.kind = CompletionKind::kPutBack});
  auto third = f.Next();
  ASSERT_TRUE(third);
  EXPECT_EQ(third->item.url, l->item.url);
}

TEST_F(FrontierTest, RequeueGoesToFrontAndChargesDelay) {
  Frontier f(Options(), &clock_);
  f.Add(Item("a.test", "/page"));
  f.Add(Item("a.test", "/other"));
  auto l = f.Next();
  ASSERT_EQ(l->item.url, "http://a.test/page");
  Completion c;
  c.kind = CompletionKind::kRequeue;  // the slot fetched robots.txt instead
  f.Complete(*l, c);
  EXPECT_EQ(f.queued(), 2u);
  EXPECT_FALSE(f.Next().has_value());
  Advance(milliseconds(1000));
  l = f.Next();
  ASSERT_TRUE(l);
  EXPECT_EQ(l->item.url, "http://a.test/page");
  EXPECT_EQ(l->item.attempts, 0);
}

TEST_F(FrontierTest, NoRequestChargesNoDelay) {
  Frontier f(Options(), &clock_);
  for (int i = 0; i < 3; ++i) f.Add(Item("a.test", "/" + std::to_string(i)));
  auto l = f.Next();
  Completion c;
  c.kind = CompletionKind::kNoRequest;  // robots disallowed it
  f.Complete(*l, c);
  l = f.Next();
  ASSERT_TRUE(l) << "immediately available";
  f.Complete(*l, Done());
  EXPECT_FALSE(f.Next().has_value());
  // A kNoRequest after a real request keeps the earlier next_allowed.
  Advance(milliseconds(1000));
  l = f.Next();
  ASSERT_TRUE(l);
  f.Complete(*l, c);
  EXPECT_TRUE(f.Idle());
}

TEST_F(FrontierTest, RetriesWithBackoffThenGiveUp) {
  FrontierOptions o = Options();
  o.max_attempts = 3;
  o.backoff = {seconds(30), seconds(120)};
  o.breaker_window = 0;  // breaker off for this test
  Frontier f(o, &clock_);
  f.Add(Item("a.test", "/flaky"));
  f.Add(Item("a.test", "/other"));
  auto l = f.Next();
  EXPECT_EQ(f.Complete(*l, Retry()), GiveUp::kNo);
  EXPECT_EQ(f.retries_pending(), 1u);
  // The host continues with other URLs meanwhile.
  Advance(seconds(1));
  l = f.Next();
  ASSERT_TRUE(l);
  EXPECT_EQ(l->item.url, "http://a.test/other");
  f.Complete(*l, Done());
  EXPECT_EQ(*f.NextWakeup(), clock_.Now() - seconds(1) + seconds(30));
  Advance(seconds(28));
  EXPECT_FALSE(f.Next().has_value());
  Advance(seconds(1));
  l = f.Next();
  ASSERT_TRUE(l);
  EXPECT_EQ(l->item.url, "http://a.test/flaky");
  EXPECT_EQ(l->item.attempts, 1);
  EXPECT_EQ(f.Complete(*l, Retry()), GiveUp::kNo);
  Advance(seconds(119));
  EXPECT_FALSE(f.Next().has_value());
  Advance(seconds(1));
  l = f.Next();
  ASSERT_TRUE(l);
  EXPECT_EQ(l->item.attempts, 2);
  EXPECT_EQ(f.Complete(*l, Retry()), GiveUp::kYes);
  EXPECT_TRUE(f.Idle());
}

TEST_F(FrontierTest, RetryAfterExtendsBackoff) {
  FrontierOptions o = Options();
  o.backoff = {seconds(30)};
  Frontier f(o, &clock_);
  f.Add(Item("a.test", "/x"));
  auto l = f.Next();
  Completion c = Retry();
  c.retry_after = milliseconds(90'000);
  f.Complete(*l, c);
  EXPECT_EQ(*f.NextWakeup(), clock_.Now() + seconds(90));
}

TEST_F(FrontierTest, BreakerOpensCoolsDownProbes) {
  FrontierOptions o = Options();
  o.breaker_window = 10;
  o.breaker_error_rate = 0.2;
  o.breaker_cooldown = seconds(60);
  o.max_attempts = 100;
  o.backoff = {seconds(0)};
  Frontier f(o, &clock_);
  for (int i = 0; i < 50; ++i) f.Add(Item("a.test", "/" + std::to_string(i)));
  // 3 successes, then errors: after 5 samples 2/5 = 0.4 > 0.2 opens.
  auto step = [&](bool error) {
    auto l = f.Next();
    EXPECT_TRUE(l);
    if (!l) return;
    Completion c;
    c.error = error;
    f.Complete(*l, c);
    Advance(seconds(1));
  };
  step(false);
  step(false);
  step(false);
  step(true);
  EXPECT_EQ(f.hosts_paused(), 0u) << "only 4 samples";
  step(true);
  EXPECT_EQ(f.hosts_paused(), 1u);
  EXPECT_FALSE(f.Next().has_value());
  Advance(seconds(58));  // opened 1 s ago; 60 s cooldown
  EXPECT_FALSE(f.Next().has_value());
  Advance(seconds(1));
  // Probe fails: reopened.
  step(true);
  EXPECT_EQ(f.hosts_paused(), 1u);
  Advance(seconds(58));
  EXPECT_FALSE(f.Next().has_value());
  Advance(seconds(1));
  // Probe succeeds: closed; the window restarts so single errors do not reopen at once.
  step(false);
  EXPECT_EQ(f.hosts_paused(), 0u);
  step(true);
  EXPECT_EQ(f.hosts_paused(), 0u);
  EXPECT_TRUE(f.Next().has_value());
}

TEST_F(FrontierTest, PrioritiesWithinHost) {
  FrontierOptions o = Options();
  o.default_delay = milliseconds(0);
  Frontier f(o, &clock_);
  f.Add(Item("a.test", "/low", 3));
  f.Add(Item("a.test", "/mid1", 1));
  f.Add(Item("a.test", "/high", 0));
  f.Add(Item("a.test", "/mid2", 1));
  f.Add(Item("a.test", "/clamped", 99));
  std::vector<std::string> order;
  while (auto l = f.Next()) {
    order.push_back(l->item.url.substr(std::string("http://a.test").size()));
    f.Complete(*l, Done());
  }
  EXPECT_EQ(order, (std::vector<std::string>{"/high", "/mid1", "/mid2", "/low", "/clamped"}));
}

TEST(PriorityFor, Classes) {
  EXPECT_EQ(PriorityFor(0, true, false, 0), 0);
  EXPECT_EQ(PriorityFor(5, false, true, 0), 1);
  EXPECT_EQ(PriorityFor(1, false, false, 0), 1);
  EXPECT_EQ(PriorityFor(7, false, false, 12), 1);
  EXPECT_EQ(PriorityFor(3, false, false, 0), 2);
  EXPECT_EQ(PriorityFor(8, false, false, 3), 2);
  EXPECT_EQ(PriorityFor(8, false, false, 0), 3);
}

TEST_F(FrontierTest, NextWakeupIsEarliestHost) {
  Frontier f(Options(), &clock_);
  f.SetCrawlDelay("slow.test", seconds(10));
  f.Add(Item("slow.test", "/1"));
  f.Add(Item("slow.test", "/2"));
  f.Add(Item("fast.test", "/1"));
  f.Add(Item("fast.test", "/2"));
  EXPECT_LE(*f.NextWakeup(), clock_.Now());
  auto a = f.Next();
  auto b = f.Next();
  f.Complete(*a, Done());
  f.Complete(*b, Done());
  EXPECT_EQ(*f.NextWakeup(), clock_.Now() + seconds(1));
  Advance(seconds(1));
  auto c = f.Next();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->item.host, "fast.test");
  f.Complete(*c, Done());
  EXPECT_EQ(*f.NextWakeup(), clock_.Now() + seconds(9)) << "slow.test, 10 s after its end";
}

TEST_F(FrontierTest, StaleOrForeignLeaseIgnored) {
  Frontier f(Options(), &clock_);
  f.Add(Item("a.test", "/1"));
  auto l = f.Next();
  Lease forged = *l;
  forged.id += 1000;
  EXPECT_EQ(f.Complete(forged, Retry()), GiveUp::kNo);
  EXPECT_EQ(f.in_flight(), 1u);
  f.Complete(*l, Done());
  EXPECT_EQ(f.Complete(*l, Done()), GiveUp::kNo) << "double completion ignored";
  EXPECT_TRUE(f.Idle());
}

TEST_F(FrontierTest, DrainHostIncludesWaitingRetries) {
  Frontier f(Options(), &clock_);
  f.Add(Item("a.test", "/1"));
  f.Add(Item("a.test", "/2"));
  auto l = f.Next();
  f.Complete(*l, Retry(false));
  auto items = f.DrainHost("a.test");
  EXPECT_EQ(items.size(), 2u);
  EXPECT_TRUE(f.Idle());
  EXPECT_EQ(f.hosts(), 0u);
  EXPECT_FALSE(f.NextWakeup().has_value());
}

TEST_F(FrontierTest, Stats) {
  Frontier f(Options(), &clock_);
  f.Add(Item("a.test", "/1"));
  f.Add(Item("a.test", "/2"));
  f.Add(Item("b.test", "/1"));
  EXPECT_EQ(f.hosts(), 2u);
  EXPECT_EQ(f.hosts_ready(), 2u);
  EXPECT_EQ(f.queued(), 3u);
  auto l = f.Next();
  EXPECT_EQ(f.hosts_ready(), 1u);
  EXPECT_EQ(f.in_flight(), 1u);
  EXPECT_FALSE(f.Idle());
}

}  // namespace
}  // namespace harvest::frontier
