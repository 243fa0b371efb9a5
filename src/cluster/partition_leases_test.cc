// Tests of PartitionLeases without a worker: the hosts handed over with a partition (no
// Redis), and two lease holders sharing the partitions of a throw-away 3-master Redis Cluster
// on loopback (scripts/redis-cluster): sticky shares, draining, giving up, a lost lease.
#include "cluster/partition_leases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "cluster/internal.h"
#include "redis/testing/local_cluster.h"
#include "state/state.h"

namespace harvest::cluster {
namespace {

using namespace std::chrono_literals;

redis::Reply Str(const std::string& s) {
  redis::Reply r;
  r.type = redis::Reply::Type::kString;
  r.str = s;
  return r;
}

redis::Reply Array(const std::vector<std::string>& items) {
  redis::Reply r;
  r.type = redis::Reply::Type::kArray;
  for (const std::string& s : items) r.elements.push_back(Str(s));
  return r;
}

size_t NothingTaken(int) { return 0; }

TEST(PartitionLeases, HandOverHostsWaitsForTheRecordsAndTheHostsInHand) {
  FakeClock clock;
  WorkerOptions o;
  o.partitions.partitions = 4;
  o.lease_margin = 1000ms;
  o.takeover_hold = 300ms;
  PartitionLeases leases(o, &clock, /*redis=*/nullptr, "w#1", NothingTaken);

  const int64_t next_allowed = clock.WallMicros() - 10'000'000;
  state::HostPoliteness a{.next_allowed_us = next_allowed, .crawl_delay_ms = 2000};
  state::BreakerRecord b{.open = true, .open_until_us = clock.WallMicros() + 5'000'000};
  const redis::Reply records = Array({"p:http://a.test", state::EncodePoliteness(a),
                                      "b:http://b.test", state::EncodeBreaker(b), "x", "y"});
  const redis::Reply in_hand = Array({"http://a.test", "http://c.test"});

  // Given up on purpose: each host waits for its record plus the margin; nothing in hand.
  std::vector<crawl::SharedCrawl::HostHandover> h =
      leases.HandOverHosts(2, /*graceful=*/true, in_hand, records);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].host, "http://a.test");
  ASSERT_TRUE(h[0].records.politeness);
  EXPECT_EQ(h[0].records.politeness->crawl_delay_ms, 2000);
  EXPECT_EQ(h[0].not_before_us, next_allowed + 1'000'000);
  EXPECT_EQ(h[1].host, "http://b.test");
  ASSERT_TRUE(h[1].records.breaker);
  EXPECT_TRUE(h[1].records.breaker->open);
  EXPECT_EQ(h[1].not_before_us, 0);

  // Expired: a host in the dead owner's hand waits takeover_hold plus its Crawl-delay.
  h = leases.HandOverHosts(2, /*graceful=*/false, in_hand, records);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].host, "http://a.test");
  EXPECT_EQ(h[0].not_before_us, clock.WallMicros() + 300'000 + 2'000'000);
  EXPECT_EQ(h[1].host, "http://b.test");
  EXPECT_EQ(h[1].not_before_us, 0);
  EXPECT_EQ(h[2].host, "http://c.test");
  EXPECT_FALSE(h[2].records.politeness);
  EXPECT_EQ(h[2].not_before_us, clock.WallMicros() + 300'000);
}

class PartitionLeasesRedisTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Result<std::unique_ptr<redis::testing::LocalCluster>> c =
        redis::testing::LocalCluster::Start(3, 0);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cluster_ = std::move(*c).release();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  void SetUp() override { ASSERT_NE(cluster_, nullptr); }

  WorkerOptions Options(const std::string& id) {
    WorkerOptions o;
    Result<redis::ClusterOptions> r = redis::ParseRedisUrl(cluster_->seeds());
    EXPECT_TRUE(r.ok());
    o.redis = *r;
    o.prefix = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    o.worker_id = id;
    o.partitions.partitions = 4;
    o.lease_ttl = 3000ms;
    o.lease_margin = 1000ms;
    return o;
  }

  std::unique_ptr<redis::Cluster> Connect() {
    Result<std::unique_ptr<redis::Cluster>> c = redis::Cluster::Connect(Options("x").redis);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }

  static std::vector<int> Partitions(const std::vector<PartitionLeases::Acquired>& acquired) {
    std::vector<int> out;
    for (const PartitionLeases::Acquired& a : acquired) out.push_back(a.partition);
    std::sort(out.begin(), out.end());
    return out;
  }

  static redis::testing::LocalCluster* cluster_;
};

redis::testing::LocalCluster* PartitionLeasesRedisTest::cluster_ = nullptr;

TEST_F(PartitionLeasesRedisTest, StickySharesDrainGiveUpAndALostLease) {
  FakeClock clock;
  std::unique_ptr<redis::Cluster> ra = Connect(), rb = Connect(), raw = Connect();
  ASSERT_TRUE(ra && rb && raw);
  PartitionLeases a(Options("a"), &clock, ra.get(), "a#1", NothingTaken);
  PartitionLeases b(Options("b"), &clock, rb.get(), "b#1", NothingTaken);
  const int64_t now = internal::Ms(clock.Now());

  // Alone: a takes every partition (free ones count as given up on purpose).
  ASSERT_TRUE(a.Heartbeat(false).ok());
  std::vector<PartitionLeases::Acquired> got;
  ASSERT_TRUE(a.Balance(&got).ok());
  EXPECT_EQ(Partitions(got), (std::vector<int>{0, 1, 2, 3}));
  for (const PartitionLeases::Acquired& g : got) EXPECT_TRUE(g.graceful);
  EXPECT_EQ(a.ValidCount(now), 4);
  EXPECT_TRUE(a.Drained().empty());

  // b joins: nothing is free yet; a, above its share of 2, drains two and gives them up.
  ASSERT_TRUE(b.Heartbeat(false).ok());
  got.clear();
  ASSERT_TRUE(b.Balance(&got).ok());
  EXPECT_TRUE(got.empty());
  ASSERT_TRUE(a.Heartbeat(false).ok());
  got.clear();
  ASSERT_TRUE(a.Balance(&got).ok());
  EXPECT_TRUE(got.empty());
  const std::vector<int> drained = a.Drained();
  ASSERT_EQ(drained.size(), 2u);
  for (int p : drained) {
    EXPECT_TRUE(a.lease(p).draining);
    a.GiveUp(p, /*delay_ms=*/0, std::nullopt);
    EXPECT_FALSE(a.lease(p).owned);
    EXPECT_FALSE(a.Valid(p, now));
  }
  EXPECT_EQ(a.Held().size(), 2u);

  // b takes those two, given up on purpose: no URL before their quiet time.
  got.clear();
  ASSERT_TRUE(b.Balance(&got).ok());
  EXPECT_EQ(Partitions(got), drained);
  for (const PartitionLeases::Acquired& g : got) {
    EXPECT_TRUE(g.graceful);
    EXPECT_GT(b.lease(g.partition).hold_until_wall, 0);
    EXPECT_TRUE(b.Valid(g.partition, now));
  }
  EXPECT_TRUE(a.Renew().ok());
  EXPECT_TRUE(b.Renew().ok());

  // A lease gone (expired and taken): the renewal fails and the partition is not b's.
  const int lost = drained[0];
  Result<redis::Reply> del =
      raw->Run({{"DEL", internal::PartitionTag(Options("b").prefix, lost) + "lease"}});
  ASSERT_TRUE(del.ok());
  const Status renewed = b.Renew();
  EXPECT_EQ(renewed.code(), Status::Code::kAborted) << renewed.ToString();
  EXPECT_FALSE(b.lease(lost).owned);

  for (int p : a.Held()) a.GiveUp(p, 0, std::nullopt);
  for (int p : b.Held()) b.GiveUp(p, 0, std::nullopt);
  EXPECT_EQ(a.ValidCount(now), 0);
  EXPECT_TRUE(a.Heartbeat(true).ok());
  EXPECT_TRUE(b.Heartbeat(true).ok());
}

}  // namespace
}  // namespace harvest::cluster
