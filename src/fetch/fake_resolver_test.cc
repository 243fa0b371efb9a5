// FakeResolver: the scripted resolver crawl tests run on.
#include "fetch/testing/fake_resolver.h"

#include <gtest/gtest.h>

#include <chrono>

#include "base/clock.h"

namespace harvest::fetch::testing {
namespace {

using namespace std::chrono_literals;

TEST(FakeResolverTest, ScriptedAnswersFailuresAndDefault) {
  FakeClock clock;
  int wakeups = 0;
  FakeResolver r(&clock, {}, [&] { ++wakeups; });
  r.SetAnswer("A.example", "192.0.2.1", 120s);
  r.SetFailure("nx.example");
  r.SetFailure("slow.example", "timeout after 5000 ms");
  r.Resolve("a.example");
  r.Resolve("nx.example");
  r.Resolve("slow.example");
  r.Resolve("other.example");
  EXPECT_EQ(wakeups, 4);
  const std::vector<Resolution> got = r.TakeCompleted();
  ASSERT_EQ(got.size(), 4u);
  EXPECT_TRUE(got[0].ok);
  EXPECT_EQ(got[0].name, "a.example");
  EXPECT_EQ(got[0].address, "192.0.2.1");
  EXPECT_EQ(got[0].ttl, 120s);
  EXPECT_FALSE(got[1].ok);
  EXPECT_EQ(got[1].error, "NXDOMAIN (domain name not found)");
  EXPECT_EQ(got[1].ttl, ResolverOptions{}.negative_ttl);  // the default
  EXPECT_EQ(got[2].error, "timeout after 5000 ms");
  EXPECT_TRUE(got[3].ok);
  EXPECT_EQ(got[3].address, "10.0.0.1");
  EXPECT_TRUE(r.TakeCompleted().empty());
  EXPECT_EQ(r.total_lookups(), 4u);
  EXPECT_EQ(r.cached(), 4u);

  r.SetDefaultFailure("SERVFAIL (server failure)");
  r.Resolve("x.example");
  EXPECT_EQ(r.TakeCompleted()[0].error, "SERVFAIL (server failure)");
}

TEST(FakeResolverTest, CachesWithTheOptionsSemantics) {
  FakeClock clock;
  ResolverOptions o;
  o.min_ttl = 60s;
  o.max_ttl = 600s;
  o.negative_ttl = 10s;
  o.max_entries = 2;
  FakeResolver r(&clock, o);
  r.SetAnswer("short.example", "192.0.2.1", 1s);
  r.SetAnswer("long.example", "192.0.2.2", 86400s);
  r.SetFailure("nx.example");
  r.Resolve("short.example");
  r.Resolve("long.example");
  std::vector<Resolution> got = r.TakeCompleted();
  EXPECT_EQ(got[0].ttl, 60s);
  EXPECT_EQ(got[1].ttl, 600s);
  r.Resolve("short.example");  // fresh: no second lookup
  EXPECT_EQ(r.TakeCompleted().size(), 1u);
  EXPECT_EQ(r.lookups("short.example"), 1u);
  clock.Advance(60s);
  EXPECT_FALSE(r.Cached("short.example").has_value());
  EXPECT_TRUE(r.Cached("long.example").has_value());
  r.Resolve("short.example");
  EXPECT_EQ(r.lookups("SHORT.example"), 2u);
  r.Resolve("nx.example");  // evicts the least recently used (long.example)
  got = r.TakeCompleted();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].ttl, 10s);
  EXPECT_EQ(r.cached(), 2u);
  EXPECT_FALSE(r.Cached("long.example").has_value());
  clock.Advance(10s);
  EXPECT_FALSE(r.Cached("nx.example").has_value());
  EXPECT_TRUE(r.Cached("127.0.0.1").has_value());
}

TEST(FakeResolverTest, HangCoalescesUntilAnswered) {
  FakeClock clock;
  int wakeups = 0;
  FakeResolver r(&clock);
  r.set_wakeup([&] { ++wakeups; });
  r.SetHang("hang.example");
  r.Resolve("hang.example");
  r.Resolve("hang.example");
  EXPECT_EQ(r.pending(), 1u);
  EXPECT_EQ(r.lookups("hang.example"), 1u);
  EXPECT_TRUE(r.TakeCompleted().empty());
  EXPECT_FALSE(r.Cached("hang.example").has_value());
  EXPECT_EQ(wakeups, 0);
  r.SetAnswer("hang.example", "192.0.2.9");
  EXPECT_EQ(wakeups, 1);
  EXPECT_EQ(r.pending(), 0u);
  const std::vector<Resolution> got = r.TakeCompleted();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].address, "192.0.2.9");
  EXPECT_TRUE(r.Cached("hang.example").has_value());
}

}  // namespace
}  // namespace harvest::fetch::testing
