#include "frontier/frontier.h"

#include <gtest/gtest.h>

#include "base/host_key.h"

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

TEST_F(FrontierTest, DelayCountsFromWhenTheResponseEnded) {
  Frontier f(Options(), &clock_);
  f.Add(Item("a.test", "/1"));
  f.Add(Item("a.test", "/2"));
  auto l1 = f.Next();
  ASSERT_TRUE(l1);
  Advance(milliseconds(700));
  const auto end = clock_.Now();
  Advance(milliseconds(3));  // the loop gets to the completion 3 ms after the last byte came
  Completion c = Done();
  c.ended_ago = milliseconds(3);
  f.Complete(*l1, c);
  ASSERT_TRUE(f.NextWakeup().has_value());
  EXPECT_EQ(*f.NextWakeup(), end + milliseconds(1000));
  Advance(milliseconds(996));
  EXPECT_FALSE(f.Next().has_value());
  Advance(milliseconds(1));
  EXPECT_TRUE(f.Next().has_value());
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

TEST(PriorityFor, ScoreFollowsTheDocumentedFormula) {
  // score = w * (0.4 D + 0.2 L + 0.2 S + 0.2 B) (docs/priority.md).
  PriorityInputs seed{.depth = 0, .seed = true};
  EXPECT_DOUBLE_EQ(PriorityScore(seed), 0.4 + 0.2 * 0.5 + 0.2);
  PriorityInputs deep{.depth = 3, .inlinks = 3};
  EXPECT_DOUBLE_EQ(PriorityScore(deep), 0.4 / 4 + 0.2 * 2.0 / 10 + 0.2 * 0.5);
  PriorityInputs many{.depth = 1, .sitemap_priority = 1.0, .inlinks = 5000};
  EXPECT_DOUBLE_EQ(PriorityScore(many), 0.2 + 0.2 + 0.2);
  PriorityInputs weighted = deep;
  weighted.host_weight = 3;
  EXPECT_DOUBLE_EQ(PriorityScore(weighted), 3 * PriorityScore(deep));
  // Each signal moves the score the documented way.
  PriorityInputs shallow = deep;
  shallow.depth = 1;
  EXPECT_GT(PriorityScore(shallow), PriorityScore(deep));
  PriorityInputs linked = deep;
  linked.inlinks = 100;
  EXPECT_GT(PriorityScore(linked), PriorityScore(deep));
  PriorityInputs low_sitemap = deep;
  low_sitemap.sitemap_priority = 0.1;
  EXPECT_LT(PriorityScore(low_sitemap), PriorityScore(deep));
}

TEST(PriorityFor, ClassesByHalvings) {
  EXPECT_EQ(PriorityClass(1.0, 16), 0);
  EXPECT_EQ(PriorityClass(7.0, 16), 0);
  EXPECT_EQ(PriorityClass(0.55, 16), 3);  // -log2 = 0.86 -> 3.45
  EXPECT_EQ(PriorityClass(0.5, 16), 4);
  EXPECT_EQ(PriorityClass(0.25, 16), 8);
  EXPECT_EQ(PriorityClass(0.01, 16), 15);
  EXPECT_EQ(PriorityClass(0, 16), 15);
  EXPECT_EQ(PriorityClass(-1, 16), 15);
  EXPECT_EQ(PriorityClass(0.5, 4), 1);
  EXPECT_EQ(PriorityClass(0.5, 1), 0);
  // A seed lands in a better class than a deep page; weight 4 lifts a page 8 classes.
  PriorityInputs page{.depth = 3, .inlinks = 1};
  EXPECT_LT(PriorityFor(PriorityInputs{.seed = true}, 16), PriorityFor(page, 16));
  const int plain = PriorityFor(page, 16);
  page.host_weight = 4;
  EXPECT_EQ(PriorityFor(page, 16), plain - 8);
}

// Three hosts ready at once: served by the class of their best item, not by insertion.
TEST_F(FrontierTest, ReadyHostsServedByBestClass) {
  Frontier f(Options(), &clock_);
  f.Add(Item("a.test", "/", 5));
  f.Add(Item("b.test", "/x", 9));
  f.Add(Item("b.test", "/", 1));  // b's best is class 1
  f.Add(Item("c.test", "/", 3));
  std::vector<std::string> order;
  while (auto l = f.Next()) order.push_back(l->item.url);
  EXPECT_EQ(order,
            (std::vector<std::string>{"http://b.test/", "http://c.test/", "http://a.test/"}));
}

// Equal classes: the host ready first is served first (FIFO among equals), whatever its id;
// a better class wins over an earlier ready time.
TEST_F(FrontierTest, EqualClassesByReadyTimeBetterClassFirst) {
  for (const bool x_better : {false, true}) {
    SCOPED_TRACE(x_better);
    Frontier f(Options(), &clock_);
    f.Add(Item("x.test", "/1", 2));
    f.Add(Item("y.test", "/1", 2));
    auto l1 = f.Next();
    auto l2 = f.Next();
    ASSERT_TRUE(l1 && l2);
    f.Add(Item("x.test", "/2", x_better ? 0 : 2));
    f.Add(Item("y.test", "/2", 2));
    const Lease& lx = l1->item.host == "x.test" ? *l1 : *l2;
    const Lease& ly = l1->item.host == "x.test" ? *l2 : *l1;
    f.Complete(ly, Done());  // y ready at +1 s
    Advance(milliseconds(100));
    f.Complete(lx, Done());  // x ready at +1.1 s
    Advance(seconds(2));
    auto n1 = f.Next();
    auto n2 = f.Next();
    ASSERT_TRUE(n1 && n2);
    EXPECT_EQ(n1->item.host, x_better ? "x.test" : "y.test");
    EXPECT_EQ(n2->item.host, x_better ? "y.test" : "x.test");
  }
}

// Switched off: ready hosts are served by ready time alone, as before.
TEST_F(FrontierTest, CrossHostPriorityOffServesByReadyTime) {
  FrontierOptions o = Options();
  o.cross_host_priority = false;
  Frontier f(o, &clock_);
  f.Add(Item("a.test", "/1", 5));
  f.Add(Item("b.test", "/1", 5));
  auto l1 = f.Next();
  auto l2 = f.Next();
  ASSERT_TRUE(l1 && l2);
  f.Add(Item("a.test", "/2", 7));
  f.Add(Item("b.test", "/2", 0));
  const Lease& la = l1->item.host == "a.test" ? *l1 : *l2;
  const Lease& lb = l1->item.host == "a.test" ? *l2 : *l1;
  f.Complete(la, Done());  // a ready first
  Advance(milliseconds(100));
  f.Complete(lb, Done());
  Advance(seconds(2));
  auto n1 = f.Next();
  ASSERT_TRUE(n1);
  EXPECT_EQ(n1->item.url, "http://a.test/2") << "earliest ready, though b holds class 0";
}

// A better item added to a host already waiting among the ready ones moves it up.
TEST_F(FrontierTest, AddingABetterItemRaisesAReadyHost) {
  Frontier f(Options(), &clock_);
  f.Add(Item("a.test", "/", 4));
  f.Add(Item("b.test", "/", 6));
  f.Add(Item("c.test", "/", 5));
  auto first = f.Next();  // a.test; b and c now wait among the ready hosts
  ASSERT_TRUE(first);
  EXPECT_EQ(first->item.host, "a.test");
  f.Add(Item("b.test", "/top", 1));
  auto l = f.Next();
  ASSERT_TRUE(l);
  EXPECT_EQ(l->item.url, "http://b.test/top");
}

// A retry that is due counts with its class when its host is ranked.
TEST_F(FrontierTest, DueRetryCountsWithItsClass) {
  FrontierOptions o = Options();
  o.backoff = {seconds(5)};
  Frontier f(o, &clock_);
  f.Add(Item("r.test", "/retry", 0));
  auto l = f.Next();
  ASSERT_TRUE(l);
  f.Complete(*l, Retry());  // r.test: nothing queued, a class-0 retry due in 5 s
  f.Add(Item("q.test", "/", 3));
  auto q = f.Next();
  ASSERT_TRUE(q);
  f.Complete(*q, Done());
  f.Add(Item("q.test", "/2", 3));
  Advance(seconds(10));
  auto n = f.Next();
  ASSERT_TRUE(n);
  EXPECT_EQ(n->item.url, "http://r.test/retry");
}

// per_ip_gap: leases of hosts sharing an IP start at least the gap apart; other IPs are
// not held back; NextWakeup() names the gap's end.
TEST_F(FrontierTest, PerIpGapSpacesLeasesOfAnIp) {
  FrontierOptions o = Options();
  o.per_ip_gap = milliseconds(300);
  Frontier f(o, &clock_);
  f.SetHostIp("a.test", "10.0.0.1");
  f.SetHostIp("b.test", "10.0.0.1");
  f.SetHostIp("c.test", "10.0.0.2");
  f.Add(Item("a.test", "/", 1));
  f.Add(Item("b.test", "/", 2));
  f.Add(Item("c.test", "/", 3));
  const Clock::TimePoint t0 = clock_.Now();
  auto l1 = f.Next();
  ASSERT_TRUE(l1);
  EXPECT_EQ(l1->item.host, "a.test");
  auto l2 = f.Next();
  ASSERT_TRUE(l2);
  EXPECT_EQ(l2->item.host, "c.test") << "another IP is not held back";
  EXPECT_FALSE(f.Next().has_value()) << "b.test shares a.test's IP";
  EXPECT_EQ(f.hosts_ready(), 0u);
  ASSERT_TRUE(f.NextWakeup().has_value());
  EXPECT_EQ(*f.NextWakeup(), t0 + milliseconds(300));
  // The gap counts from the lease's start, not its end.
  f.Complete(*l1, Done());
  Advance(milliseconds(299));
  EXPECT_FALSE(f.Next().has_value());
  Advance(milliseconds(1));
  auto l3 = f.Next();
  ASSERT_TRUE(l3);
  EXPECT_EQ(l3->item.host, "b.test");
}

TEST_F(FrontierTest, PerIpGapOffByDefaultAndWithPriorityOff) {
  for (const bool cross : {true, false}) {
    FrontierOptions o = Options();
    o.cross_host_priority = cross;
    Frontier plain(o, &clock_);
    o.per_ip_gap = milliseconds(500);
    Frontier gapped(o, &clock_);
    for (Frontier* f : {&plain, &gapped}) {
      f->SetHostIp("a.test", "10.0.0.1");
      f->SetHostIp("b.test", "10.0.0.1");
      f->Add(Item("a.test", "/"));
      f->Add(Item("b.test", "/"));
    }
    EXPECT_TRUE(plain.Next() && plain.Next());
    EXPECT_TRUE(gapped.Next().has_value());
    EXPECT_FALSE(gapped.Next().has_value());
    Advance(milliseconds(500));
    EXPECT_TRUE(gapped.Next().has_value());
  }
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

namespace harvest::frontier {
namespace {

// One request in flight and one delay per host name, across schemes and ports.
class FrontierNameSlotTest : public ::testing::Test {
 protected:
  static UrlItem At(const std::string& origin, const std::string& path) {
    UrlItem item;
    item.host = origin;
    item.url = origin + path;
    return item;
  }
  FrontierOptions Options() {
    FrontierOptions o;
    o.default_delay = milliseconds(1000);
    return o;
  }
  FakeClock clock_;
};

TEST_F(FrontierNameSlotTest, TheOriginsOfOneNameShareOneSlot) {
  Frontier f(Options(), &clock_);
  f.Add(At("http://a.test", "/1"));
  f.Add(At("https://a.test", "/2"));
  f.Add(At("https://a.test:8443", "/3"));
  f.Add(At("http://b.test", "/1"));
  std::optional<Lease> first = f.Next();
  std::optional<Lease> other = f.Next();
  ASSERT_TRUE(first && other);
  EXPECT_NE(NameOfHostKey(first->item.host), NameOfHostKey(other->item.host));
  EXPECT_FALSE(f.Next().has_value()) << "a.test has a lease out on one of its origins";
  const Lease a = NameOfHostKey(first->item.host) == "a.test" ? *first : *other;
  const Lease b = NameOfHostKey(first->item.host) == "a.test" ? *other : *first;
  f.Complete(b, Completion{});
  clock_.Advance(seconds(5));
  EXPECT_FALSE(f.Next().has_value()) << "still: time alone does not end a.test's lease";
  f.Complete(a, Completion{});
  EXPECT_FALSE(f.Next().has_value()) << "a.test's delay counts for all its origins";
  clock_.Advance(milliseconds(999));
  EXPECT_FALSE(f.Next().has_value());
  clock_.Advance(milliseconds(1));
  std::optional<Lease> second = f.Next();
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(second->item.host, a.item.host);
  EXPECT_EQ(NameOfHostKey(second->item.host), "a.test");
  EXPECT_FALSE(f.Next().has_value());
  f.Complete(*second, Completion{});
  clock_.Advance(seconds(1));
  std::optional<Lease> third = f.Next();
  ASSERT_TRUE(third.has_value());
  EXPECT_NE(third->item.host, a.item.host);
  EXPECT_NE(third->item.host, second->item.host);
  f.Complete(*third, Completion{});
  EXPECT_TRUE(f.Idle());
}

TEST_F(FrontierNameSlotTest, TheLongestDelayOfTheNamesOriginsHolds) {
  Frontier f(Options(), &clock_);
  f.SetCrawlDelay("https://a.test", milliseconds(10'000));
  f.Add(At("https://a.test", "/1"));
  std::optional<Lease> l = f.Next();
  ASSERT_TRUE(l.has_value());
  f.Complete(*l, Completion{});
  f.Add(At("http://a.test", "/2"));  // its own delay is the default, 1 s
  clock_.Advance(seconds(5));
  EXPECT_FALSE(f.Next().has_value()) << "https://a.test's Crawl-delay holds the name";
  ASSERT_TRUE(f.NextWakeup().has_value());
  EXPECT_EQ(*f.NextWakeup(), clock_.Now() + seconds(5));
  clock_.Advance(seconds(5));
  EXPECT_TRUE(f.Next().has_value());
}

TEST_F(FrontierNameSlotTest, ARestoredNextAllowedHoldsTheNamesOtherOrigins) {
  Frontier f(Options(), &clock_);
  f.Add(At("http://a.test", "/1"));
  f.RestoreNextAllowed("https://a.test", clock_.Now() + seconds(3));  // the last run's
  EXPECT_FALSE(f.Next().has_value());
  clock_.Advance(seconds(3));
  EXPECT_TRUE(f.Next().has_value());
}

TEST_F(FrontierNameSlotTest, AForgottenOriginsDelayStillHoldsTheNamesNextHost) {
  Frontier f(Options(), &clock_);
  f.Add(At("http://a.test", "/1"));
  std::optional<Lease> l = f.Next();
  ASSERT_TRUE(l.has_value());
  f.Complete(*l, Completion{});
  ASSERT_TRUE(f.Forget("http://a.test"));  // evicted: idle
  f.Add(At("https://a.test", "/2"));
  EXPECT_FALSE(f.Next().has_value()) << "the request just made still counts";
  clock_.Advance(seconds(1));
  EXPECT_TRUE(f.Next().has_value());
}

TEST_F(FrontierNameSlotTest, APutBackFreesTheSlotAtOnce) {
  Frontier f(Options(), &clock_);
  f.Add(At("http://a.test", "/1"));
  f.Add(At("https://a.test", "/2"));
  std::optional<Lease> l = f.Next();
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(f.hosts_ready(), 0u);                      // the other origin waits for the name
  f.Complete(*l, {.kind = CompletionKind::kPutBack});  // no request made
  std::optional<Lease> next = f.Next();
  ASSERT_TRUE(next.has_value());
}

}  // namespace
}  // namespace harvest::frontier
