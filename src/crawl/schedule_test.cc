#include "crawl/schedule.h"

#include <gtest/gtest.h>

namespace harvest::crawl {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

TEST(Schedule, FirstRecrawlIsOneWindowAfterTheFetch) {
  FreshnessOptions o;
  o.refresh_window = milliseconds(20'000);
  state::SeenRecord r;
  ScheduleNext(PolicyFor(o, "a.test"), nullptr, Change::kFirst, 1'000'000, &r);
  EXPECT_EQ(r.interval_ms, 20'000);
  EXPECT_EQ(r.next_due_us, 1'000'000 + 20'000'000);
}

TEST(Schedule, GrowsWhenUnchangedShrinksWhenChangedWithinBounds) {
  FreshnessOptions o;
  o.refresh_window = milliseconds(1000);
  o.max_interval = milliseconds(5000);
  SchedulePolicy p = PolicyFor(o, "a.test");
  state::SeenRecord prev;
  prev.interval_ms = 1000;
  std::vector<int64_t> seen;
  for (int i = 0; i < 5; ++i) {
    state::SeenRecord next;
    ScheduleNext(p, &prev, Change::kUnchanged, 0, &next);
    seen.push_back(next.interval_ms);
    prev = next;
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{2000, 4000, 5000, 5000, 5000}));
  EXPECT_EQ(prev.unchanged, 5u);
  state::SeenRecord changed;
  ScheduleNext(p, &prev, Change::kChanged, 0, &changed);
  EXPECT_EQ(changed.interval_ms, 2500);
  EXPECT_EQ(changed.changes, 1u);
  EXPECT_EQ(changed.unchanged, 5u);
  state::SeenRecord again;
  ScheduleNext(p, &changed, Change::kChanged, 0, &again);
  ScheduleNext(p, &again, Change::kChanged, 0, &again);
  EXPECT_EQ(again.interval_ms, 1000);  // never below the window
}

TEST(Schedule, HostClassesOverrideWindowAndMaximum) {
  FreshnessOptions o;
  o.refresh_window = hours(24);
  o.max_interval = hours(24 * 30);
  o.classes.push_back({.hosts = {"news.test", "*.daily.test"},
                       .refresh_window = hours(1),
                       .max_interval = hours(24)});
  EXPECT_EQ(PolicyFor(o, "http://www.news.test:8080").window_ms, 3'600'000);
  EXPECT_EQ(PolicyFor(o, "news.test").max_ms, 86'400'000);
  EXPECT_EQ(PolicyFor(o, "a.daily.test").window_ms, 3'600'000);
  EXPECT_EQ(PolicyFor(o, "fakenews.test").window_ms, 86'400'000);
  EXPECT_EQ(PolicyFor(o, "other.test").max_ms, 30 * 86'400'000LL);
}

TEST(Schedule, HostPatterns) {
  EXPECT_TRUE(HostPatternMatches("Example.com", "WWW.example.com"));
  EXPECT_TRUE(HostPatternMatches("example.com", "https://example.com:443"));
  EXPECT_FALSE(HostPatternMatches("example.com", "badexample.com"));
  EXPECT_TRUE(HostPatternMatches("h00*.test", "h0012.test"));
  EXPECT_FALSE(HostPatternMatches("h00*.test", "h0012.testx"));
  EXPECT_TRUE(HostPatternMatches("*", "anything"));
}

}  // namespace
}  // namespace harvest::crawl
