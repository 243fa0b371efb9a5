// Randomised simulation: 1000 hosts, 100 k random operations, checking the politeness
// invariants against a model the test keeps itself (not the frontier's own state).
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <unordered_map>

#include "frontier/frontier.h"

namespace harvest::frontier {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

constexpr int kHosts = 1000;
constexpr int kIps = 50;
constexpr size_t kPerIpLimit = 3;
constexpr milliseconds kPerIpGap(40);

struct Model {
  std::unordered_map<std::string, Clock::TimePoint> earliest;  // host -> next allowed start
  std::unordered_map<std::string, milliseconds> crawl_delay, override_delay;
  std::unordered_map<std::string, microseconds> last_rt;
  std::unordered_map<std::string, Clock::TimePoint> not_before;  // url -> retry time
  std::unordered_map<std::string, Lease> leased;                 // host -> lease
  std::map<std::string, size_t> ip_in_flight;
  std::map<std::string, Clock::TimePoint> ip_last_start;
};

std::string HostName(int h) { return "h" + std::to_string(h) + ".test"; }
std::string IpOf(const std::string& host) {
  return "10.0.0." + std::to_string(std::stoi(host.substr(1)) % kIps);
}

TEST(FrontierSimulation, InvariantsHoldOver100kSteps) {
  // Thousands of breaker transitions are expected here; keep the test output readable.
  const auto level = spdlog::get_level();
  spdlog::set_level(spdlog::level::err);
  struct Restore {
    spdlog::level::level_enum level;
    ~Restore() { spdlog::set_level(level); }
  } restore{level};
  FakeClock clock;
  FrontierOptions o;
  o.default_delay = milliseconds(500);
  o.adaptive_factor = 2;
  o.per_ip_limit = kPerIpLimit;
  o.per_ip_gap = kPerIpGap;
  o.max_attempts = 3;
  o.backoff = {std::chrono::seconds(2), std::chrono::seconds(5)};
  o.breaker_window = 10;
  o.breaker_cooldown = std::chrono::seconds(10);
  Frontier f(o, &clock);
  Model m;
  std::mt19937_64 rng(20261126);
  auto rnd = [&](uint64_t n) { return rng() % n; };
  for (int h = 0; h < kHosts; ++h) f.SetHostIp(HostName(h), IpOf(HostName(h)));

  uint64_t added = 0, finished = 0, leases = 0;
  auto delay_for = [&](const std::string& host, std::optional<milliseconds> ra) {
    microseconds d = o.default_delay;
    if (m.crawl_delay.count(host)) d = std::max<microseconds>(d, m.crawl_delay[host]);
    if (m.override_delay.count(host)) d = std::max<microseconds>(d, m.override_delay[host]);
    if (ra) d = std::max<microseconds>(d, *ra);
    d = std::max<microseconds>(d, microseconds(2 * m.last_rt[host].count()));
    return d;
  };
  auto check_lease = [&](const Lease& l) {
    const auto now = clock.Now();
    const std::string& host = l.item.host;
    ASSERT_EQ(m.leased.count(host), 0u) << "two leases on " << host;
    if (m.earliest.count(host)) {
      ASSERT_GE(now, m.earliest[host]) << "too early on " << host;
    }
    if (m.not_before.count(l.item.url)) {
      ASSERT_GE(now, m.not_before[l.item.url]) << "retry too early: " << l.item.url;
    }
    ASSERT_LT(m.ip_in_flight[IpOf(host)], kPerIpLimit) << "IP limit on " << IpOf(host);
    if (auto it = m.ip_last_start.find(IpOf(host)); it != m.ip_last_start.end()) {
      ASSERT_GE(now - it->second, kPerIpGap) << "IP gap on " << IpOf(host);
    }
    m.ip_last_start[IpOf(host)] = now;
    ++m.ip_in_flight[IpOf(host)];
    m.leased[host] = l;
    ++leases;
  };
  auto complete = [&](const Lease& l, CompletionKind kind) {
    const std::string host = l.item.host;
    Completion c;
    c.kind = kind;
    c.error = rnd(4) == 0;
    if (rnd(10) == 0) c.retry_after = milliseconds(rnd(5000));
    c.response_time = microseconds(rnd(400'000));
    if (kind != CompletionKind::kNoRequest) {
      if (c.response_time.count() > 0) m.last_rt[host] = c.response_time;
      m.earliest[host] = clock.Now() + delay_for(host, c.retry_after);
    }
    const GiveUp g = f.Complete(l, c);
    if (kind == CompletionKind::kRetry) {
      if (l.item.attempts + 1 >= o.max_attempts) {
        ASSERT_EQ(g, GiveUp::kYes);
        ++finished;
      } else {
        ASSERT_EQ(g, GiveUp::kNo);
        microseconds wait = o.backoff[std::min<size_t>(l.item.attempts, 1)];
        if (c.retry_after) wait = std::max<microseconds>(wait, *c.retry_after);
        m.not_before[l.item.url] = clock.Now() + wait;
      }
    } else {
      ASSERT_EQ(g, GiveUp::kNo);
      if (kind != CompletionKind::kRequeue) ++finished;
    }
    m.leased.erase(host);
    --m.ip_in_flight[IpOf(host)];
  };
  auto random_kind = [&] {
    const uint64_t r = rnd(10);
    return r < 6   ? CompletionKind::kDone
           : r < 8 ? CompletionKind::kRetry
           : r < 9 ? CompletionKind::kRequeue
                   : CompletionKind::kNoRequest;
  };

  for (int step = 0; step < 100'000; ++step) {
    const uint64_t action = rnd(100);
    if (action < 30) {
      UrlItem item;
      item.host = HostName(static_cast<int>(rnd(kHosts)));
      item.url = "http://" + item.host + "/" + std::to_string(added);
      item.priority = static_cast<int>(rnd(16));
      f.Add(item);
      ++added;
    } else if (action < 60) {
      if (auto l = f.Next()) {
        ASSERT_NO_FATAL_FAILURE(check_lease(*l));
      }
    } else if (action < 85) {
      if (m.leased.empty()) continue;
      auto it = m.leased.begin();
      std::advance(it, rnd(std::min<size_t>(m.leased.size(), 16)));
      ASSERT_NO_FATAL_FAILURE(complete(Lease(it->second), random_kind()));
    } else if (action < 95) {
      clock.Advance(microseconds(rnd(2'000'000)));
    } else {
      const std::string host = HostName(static_cast<int>(rnd(kHosts)));
      if (rnd(2) == 0) {
        m.crawl_delay[host] = milliseconds(rnd(5000));
        f.SetCrawlDelay(host, m.crawl_delay[host]);
      } else {
        m.override_delay[host] = milliseconds(rnd(3000));
        f.SetDelayOverride(host, m.override_delay[host]);
      }
    }
    ASSERT_EQ(f.in_flight(), m.leased.size());
    // Never stuck: with nothing in flight, queued work must have a wakeup time.
    if (f.in_flight() == 0 && !f.Idle()) {
      ASSERT_TRUE(f.NextWakeup().has_value()) << step;
    }
  }

  // Drain: everything added reaches a final outcome (no loss), invariants still checked.
  int rounds = 0;
  while (!f.Idle()) {
    ASSERT_LT(++rounds, 1'000'000) << "frontier did not drain";
    while (auto l = f.Next()) ASSERT_NO_FATAL_FAILURE(check_lease(*l));
    std::vector<Lease> out;
    for (auto& [host, l] : m.leased) out.push_back(l);
    for (const Lease& l : out) ASSERT_NO_FATAL_FAILURE(complete(l, CompletionKind::kDone));
    if (auto t = f.NextWakeup(); t && *t > clock.Now()) {
      clock.Advance(*t - clock.Now());
    }
  }
  EXPECT_EQ(finished, added);
  EXPECT_GT(leases, added / 2);
  std::printf("added %llu, leases %llu, drain rounds %d\n", static_cast<unsigned long long>(added),
              static_cast<unsigned long long>(leases), rounds);
}

}  // namespace
}  // namespace harvest::frontier
