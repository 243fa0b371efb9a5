// Tests of the shared crawl's worker side against a throw-away 3-master Redis Cluster on
// loopback (scripts/redis-cluster): admission, taking, done marks, leases, takeover after a
// kill, balance, the shared digest index.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "base/host_key.h"
#include "cluster/cluster.h"
#include "cluster/internal.h"
#include "redis/testing/local_cluster.h"

namespace harvest::cluster {
namespace {

using namespace std::chrono_literals;

frontier::UrlItem Item(int host, int page) {
  frontier::UrlItem item;
  item.host = "http://h" + std::to_string(host) + ".test";
  item.url = item.host + "/p" + std::to_string(page);
  item.fp = 0x1000000ull * static_cast<uint64_t>(host + 1) + static_cast<uint64_t>(page);
  item.depth = page % 3;
  item.priority = 2;
  item.via = page == 0 ? "" : item.host + "/";
  return item;
}

TEST(Codec, RoundTripsAndRejectsMalformed) {
  frontier::UrlItem a = Item(3, 7);
  a.hops = 2;
  a.sitemap = true;
  a.attempts = 1;
  a.recrawl = true;
  std::optional<frontier::UrlItem> b = internal::DecodeItem(internal::EncodeItem(a));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->url, a.url);
  EXPECT_EQ(b->host, a.host);
  EXPECT_EQ(b->fp, a.fp);
  EXPECT_EQ(b->depth, a.depth);
  EXPECT_EQ(b->priority, a.priority);
  EXPECT_EQ(b->hops, 2);
  EXPECT_TRUE(b->sitemap);
  EXPECT_TRUE(b->recrawl);
  EXPECT_EQ(b->attempts, 1);
  EXPECT_EQ(b->via, a.via);
  EXPECT_FALSE(internal::DecodeItem(""));
  EXPECT_FALSE(internal::DecodeItem("xyz\thost\t1\t2\t0\t0\t0\turl\tvia"));
  EXPECT_FALSE(internal::DecodeItem("0000000000000001\thost\tone\t2\t0\t0\t0\turl\tvia"));
  EXPECT_FALSE(internal::DecodeItem("0000000000000001\thost\t1\t2\t0\t7\t0\turl\tvia"));
  EXPECT_FALSE(internal::DecodeItem("0000000000000001\thost\t1\t2\t0\t0\t0\turl"));
}

TEST(Partitions, ByHostNameHotHostsAndDomains) {
  PartitionOptions o;
  o.partitions = 64;
  EXPECT_EQ(PartitionOf("http://A.test:8080", o), PartitionOf("https://a.test", o));
  EXPECT_EQ(PartitionOf("a.test", o), PartitionOf("http://a.test", o));
  std::set<int> seen;
  for (int i = 0; i < 1000; ++i) {
    const int p = PartitionOf("h" + std::to_string(i) + ".test", o);
    ASSERT_GE(p, 0);
    ASSERT_LT(p, 64);
    seen.insert(p);
  }
  EXPECT_EQ(seen.size(), 64u);  // 1,000 hosts reach every partition
  o.hot_hosts = {"big.test", "huge.test"};
  EXPECT_EQ(PartitionCount(o), 66);
  EXPECT_EQ(PartitionOf("http://big.test", o), 64);
  EXPECT_EQ(PartitionOf("https://HUGE.test:443", o), 65);
  o.by_domain = true;
  EXPECT_EQ(PartitionOf("http://www.example.com", o), PartitionOf("http://a.b.example.com", o));
}

class RedisCrawlTest : public ::testing::Test {
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

  WorkerOptions Options(const std::string& id) {
    WorkerOptions o;
    Result<redis::ClusterOptions> r = redis::ParseRedisUrl(cluster_->seeds());
    EXPECT_TRUE(r.ok());
    o.redis = *r;
    o.prefix = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    o.worker_id = id;
    o.partitions.partitions = 8;
    o.lease_ttl = 3000ms;
    o.lease_margin = 1000ms;
    o.takeover_hold = 300ms;
    return o;
  }

  std::unique_ptr<RedisCrawl> Worker(const std::string& id) { return Worker(Options(id)); }
  std::unique_ptr<RedisCrawl> Worker(WorkerOptions o) {
    Result<std::unique_ptr<RedisCrawl>> w = RedisCrawl::Create(std::move(o));
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    if (!w.ok()) return nullptr;
    EXPECT_TRUE((*w)->Start([] {}).ok());
    return std::move(*w);
  }

  // Takes from `w` until `n` URLs came or `limit` passed.
  static std::vector<frontier::UrlItem> TakeN(RedisCrawl* w, size_t n,
                                              std::chrono::milliseconds limit = 15s) {
    std::vector<frontier::UrlItem> got;
    const auto end = std::chrono::steady_clock::now() + limit;
    while (got.size() < n && std::chrono::steady_clock::now() < end) {
      crawl::SharedCrawl::Taken t;
      w->TakeReady(&t);
      for (frontier::UrlItem& item : t.urls) got.push_back(std::move(item));
      std::this_thread::sleep_for(20ms);
    }
    return got;
  }

  static bool WaitFor(const std::function<bool()>& cond, std::chrono::milliseconds limit = 15s) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if (cond()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return cond();
  }

  static redis::testing::LocalCluster* cluster_;
};

redis::testing::LocalCluster* RedisCrawlTest::cluster_ = nullptr;

TEST_F(RedisCrawlTest, EveryUrlIsTakenOnceAndTheCrawlCompletesWhenAllAreDone) {
  std::unique_ptr<RedisCrawl> a = Worker("a");
  ASSERT_TRUE(a);
  for (int h = 0; h < 20; ++h) {
    for (int p = 0; p < 5; ++p) a->Admit(Item(h, p));
  }
  // The same URLs again, through a second worker: admission is idempotent.
  std::unique_ptr<RedisCrawl> b = Worker("b");
  ASSERT_TRUE(b);
  for (int h = 0; h < 20; ++h) {
    for (int p = 0; p < 5; ++p) b->Admit(Item(h, p));
  }
  crawl::SharedCrawl::Taken ta, tb;
  std::vector<frontier::UrlItem>& got_a = ta.urls;
  std::vector<frontier::UrlItem>& got_b = tb.urls;
  ASSERT_TRUE(WaitFor([&] {
    a->TakeReady(&ta);
    b->TakeReady(&tb);
    return got_a.size() + got_b.size() >= 100;
  }));
  std::this_thread::sleep_for(500ms);  // nothing more may come
  a->TakeReady(&ta);
  b->TakeReady(&tb);
  EXPECT_TRUE(ta.hosts.empty() && tb.hosts.empty());  // no host state saved yet
  std::set<uint64_t> fps;
  for (const auto* got : {&got_a, &got_b}) {
    for (const frontier::UrlItem& item : *got) {
      EXPECT_TRUE(fps.insert(item.fp).second) << "taken twice: " << item.url;
      // Only the partition's lease holder takes its URLs.
      EXPECT_TRUE((got == &got_a ? a : b)->MayFetch(item.host)) << item.url;
    }
  }
  EXPECT_EQ(fps.size(), 100u);
  EXPECT_FALSE(a->Complete());
  // Each partition is held by one of them (the admin API's share).
  EXPECT_EQ(a->share().partitions_held + b->share().partitions_held, 8);
  EXPECT_EQ(a->share().partitions, 8);
  EXPECT_EQ(a->share().worker, "a");
  for (const frontier::UrlItem& item : got_a) a->Done(item, 1000ms, nullptr);
  for (const frontier::UrlItem& item : got_b) b->Done(item, 1000ms, nullptr);
  EXPECT_TRUE(WaitFor([&] { return a->Complete() && b->Complete(); }));
  EXPECT_EQ(a->stats().admitted_new + b->stats().admitted_new, 100u);
  EXPECT_TRUE(a->Stop().ok());
  EXPECT_TRUE(b->Stop().ok());
  Result<ClusterStatus> st =
      ReadStatus(Options("x").redis, "EveryUrlIsTakenOnceAndTheCrawlCompletesWhenAllAreDone");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->done, 100);
  EXPECT_EQ(st->pending, 0);
  EXPECT_EQ(st->seen, 100);
  EXPECT_EQ(st->unowned, 8);  // both gave their partitions up when they stopped
}

TEST_F(RedisCrawlTest, ADeadWorkersTakenUrlsAreServedAgainAfterItsLeaseExpires) {
  std::unique_ptr<RedisCrawl> a = Worker("a");
  ASSERT_TRUE(a);
  for (int h = 0; h < 10; ++h) a->Admit(Item(h, 0));
  std::vector<frontier::UrlItem> got = TakeN(a.get(), 10);
  ASSERT_EQ(got.size(), 10u);
  a->Done(got[0], 1000ms, nullptr);
  std::this_thread::sleep_for(300ms);  // the done mark is written
  a->AbandonForTesting();              // kill -9: nine URLs taken, not done
  const auto killed = std::chrono::steady_clock::now();
  std::unique_ptr<RedisCrawl> b = Worker("b");
  ASSERT_TRUE(b);
  std::vector<frontier::UrlItem> again = TakeN(b.get(), 9, 20s);
  // Not before the dead worker's leases expired (3 s from its last renewal).
  EXPECT_GE(std::chrono::steady_clock::now() - killed, 1500ms);
  ASSERT_EQ(again.size(), 9u);
  std::set<uint64_t> expected, served;
  for (size_t i = 1; i < got.size(); ++i) expected.insert(got[i].fp);
  for (const frontier::UrlItem& item : again) served.insert(item.fp);
  EXPECT_EQ(served, expected);
  EXPECT_GE(b->stats().partitions_taken_over, 1u);
  EXPECT_EQ(b->stats().requeued, 9u);
  EXPECT_FALSE(b->Complete());
  for (const frontier::UrlItem& item : again) b->Done(item, 1000ms, nullptr);
  EXPECT_TRUE(WaitFor([&] { return b->Complete(); }));
  EXPECT_TRUE(b->Stop().ok());
}

TEST_F(RedisCrawlTest, ANewOwnerGetsEachHostsSavedStateBeforeItsUrls) {
  std::unique_ptr<RedisCrawl> a = Worker("a");
  ASSERT_TRUE(a);
  for (const frontier::UrlItem& item : {Item(1, 0), Item(1, 1), Item(2, 0), Item(3, 0)}) {
    a->Admit(item);
  }
  std::vector<frontier::UrlItem> got = TakeN(a.get(), 4);
  ASSERT_EQ(got.size(), 4u);
  const int64_t wall = SystemClock::Default()->WallMicros();
  const std::string h1 = Item(1, 0).host, h2 = Item(2, 0).host, h3 = Item(3, 0).host;
  a->PutHost(h1, {.politeness = state::HostPoliteness{.next_allowed_us = wall + 2'000'000,
                                                      .crawl_delay_ms = 5000},
                  .robots = state::RobotsRecord{.status = 200, .body = "User-agent: *"}});
  a->PutHost(h2, {.breaker = state::BreakerRecord{.open = true, .open_until_us = wall + 1}});
  a->PutHost(h3, {.robots = state::RobotsRecord{.status = 404}});
  // By name: h1's name learnt to upgrade http to https (crawl::HttpsUpgrades).
  const std::string n1(NameOfHostKey(h1));
  a->PutHost(n1, {.upgrade = state::UpgradeRecord{.streak = 3, .learnt_until_us = wall + 1}});
  // h1's first URL, h2's and h3's are done; h1/p1 is still in hand when the worker dies.
  for (const frontier::UrlItem& item : got) {
    if (item.url != Item(1, 1).url) a->Done(item, 1000ms, nullptr);
  }
  std::this_thread::sleep_for(300ms);  // written
  a->AbandonForTesting();
  std::unique_ptr<RedisCrawl> b = Worker("b");
  ASSERT_TRUE(b);
  crawl::SharedCrawl::Taken t;
  std::vector<frontier::UrlItem>& again = t.urls;
  std::vector<crawl::SharedCrawl::HostHandover>& hosts = t.hosts;
  ASSERT_TRUE(WaitFor([&] {
    b->TakeReady(&t);
    return !again.empty();
  }));
  const int64_t acquired = SystemClock::Default()->WallMicros();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].url, Item(1, 1).url);
  std::map<std::string, crawl::SharedCrawl::HostHandover> by_host;
  for (crawl::SharedCrawl::HostHandover& h : hosts) by_host[h.host] = std::move(h);
  // h1: its rules, its Crawl-delay, and — a URL of it was in hand — the takeover hold (300 ms)
  // plus its 5 s Crawl-delay from the takeover.
  ASSERT_TRUE(by_host.contains(h1));
  ASSERT_TRUE(by_host[h1].records.robots);
  EXPECT_EQ(by_host[h1].records.robots->body, "User-agent: *");
  ASSERT_TRUE(by_host[h1].records.politeness);
  EXPECT_EQ(by_host[h1].records.politeness->crawl_delay_ms, 5000);
  EXPECT_GE(by_host[h1].not_before_us, acquired - 1'000'000 + 5'300'000);
  EXPECT_LE(by_host[h1].not_before_us, acquired + 5'300'000);
  // h2: its open breaker; nothing of it in hand and no request recorded: no wait.
  ASSERT_TRUE(by_host.contains(h2));
  ASSERT_TRUE(by_host[h2].records.breaker);
  EXPECT_TRUE(by_host[h2].records.breaker->open);
  EXPECT_EQ(by_host[h2].not_before_us, 0);
  // h3 has no URL queued: its robots.txt record stays in the store.
  EXPECT_FALSE(by_host.contains(h3));
  // The name's upgrade record, keyed by the name.
  ASSERT_TRUE(by_host.contains(n1));
  ASSERT_TRUE(by_host[n1].records.upgrade);
  EXPECT_EQ(by_host[n1].records.upgrade->streak, 3);
  EXPECT_EQ(by_host[n1].records.upgrade->learnt_until_us, wall + 1);
  b->Done(again[0], 1000ms, nullptr);
  EXPECT_TRUE(WaitFor([&] { return b->Complete(); }));
  EXPECT_TRUE(b->Stop().ok());
}

TEST_F(RedisCrawlTest, AHostRecordWithoutADoneMarkIsWrittenBeforeItsPartitionIsGivenUp) {
  std::unique_ptr<RedisCrawl> a = Worker("a");
  ASSERT_TRUE(a);
  ASSERT_TRUE(WaitFor([&] { return a->share().partitions_held == 8; }));
  const std::string h5 = Item(5, 0).host;
  a->PutHost(h5, {.politeness = state::HostPoliteness{.crawl_delay_ms = 7000}});
  EXPECT_TRUE(a->Stop().ok());  // no done mark came: written when the lease is given up
  std::unique_ptr<RedisCrawl> b = Worker("b");
  ASSERT_TRUE(b);
  crawl::SharedCrawl::Taken t;
  ASSERT_TRUE(WaitFor([&] {
    b->TakeReady(&t);
    for (const crawl::SharedCrawl::HostHandover& h : t.hosts) {
      if (h.host == h5) return true;
    }
    return false;
  }));
  for (const crawl::SharedCrawl::HostHandover& h : t.hosts) {
    if (h.host != h5) continue;
    ASSERT_TRUE(h.records.politeness);
    EXPECT_EQ(h.records.politeness->crawl_delay_ms, 7000);
  }
  EXPECT_TRUE(b->Stop().ok());
}

TEST_F(RedisCrawlTest, ARecrawlComesBackWhenDueWithTheRecordOfTheLastFetch) {
  std::unique_ptr<RedisCrawl> a = Worker("a");
  ASSERT_TRUE(a);
  a->Admit(Item(4, 0));
  std::vector<frontier::UrlItem> got = TakeN(a.get(), 1);
  ASSERT_EQ(got.size(), 1u);
  const int64_t wall = SystemClock::Default()->WallMicros();
  const state::SeenRecord record{.state = state::SeenRecord::State::kDone,
                                 .status = 200,
                                 .fetch_time_us = wall,
                                 .next_due_us = wall + 2'000'000,
                                 .etag = "\"x1\"",
                                 .payload_digest = "sha256:abc"};
  const auto done = std::chrono::steady_clock::now();
  a->Done(got[0], 1000ms, &record);
  crawl::SharedCrawl::Taken t;
  ASSERT_TRUE(WaitFor([&] {
    a->TakeReady(&t);
    return !t.urls.empty();
  }));
  EXPECT_GE(std::chrono::steady_clock::now() - done, 1900ms);  // not before it is due
  ASSERT_EQ(t.urls.size(), 1u);
  EXPECT_EQ(t.urls[0].url, Item(4, 0).url);
  EXPECT_EQ(t.urls[0].fp, Item(4, 0).fp);
  EXPECT_TRUE(t.urls[0].recrawl);
  ASSERT_EQ(t.previous.size(), 1u);
  EXPECT_EQ(t.previous[0].first, Item(4, 0).fp);
  EXPECT_EQ(t.previous[0].second.etag, "\"x1\"");
  EXPECT_EQ(t.previous[0].second.payload_digest, "sha256:abc");
  EXPECT_EQ(t.previous[0].second.fetch_time_us, wall);
  // Done without a next due time: not scheduled again.
  state::SeenRecord last = record;
  last.next_due_us = 0;
  a->Done(t.urls[0], 1000ms, &last);
  EXPECT_TRUE(WaitFor([&] { return a->Complete(); }));
  std::this_thread::sleep_for(3500ms);  // longer than an idle partition's poll
  crawl::SharedCrawl::Taken none;
  a->TakeReady(&none);
  EXPECT_TRUE(none.urls.empty());
  EXPECT_TRUE(a->Stop().ok());
}

TEST_F(RedisCrawlTest, AWorkerThatLosesItsLeaseFetchesNothingMoreAndFails) {
  std::unique_ptr<RedisCrawl> a = Worker("a");
  ASSERT_TRUE(a);
  a->Admit(Item(1, 0));
  ASSERT_EQ(TakeN(a.get(), 1).size(), 1u);
  EXPECT_TRUE(a->MayFetch(Item(1, 0).host));
  // Another party removes the lease (as if it expired and was taken): the next renewal fails.
  Result<std::unique_ptr<redis::Cluster>> c = redis::Cluster::Connect(Options("x").redis);
  ASSERT_TRUE(c.ok());
  PartitionOptions po;
  po.partitions = 8;
  const std::string key =
      internal::PartitionTag("AWorkerThatLosesItsLeaseFetchesNothingMoreAndFails",
                             PartitionOf(Item(1, 0).host, po)) +
      "lease";
  ASSERT_TRUE((*c)->Run({{"DEL", key}}).ok());
  EXPECT_TRUE(WaitFor([&] { return !a->status().ok(); }));
  EXPECT_FALSE(a->MayFetch(Item(1, 0).host));
  EXPECT_FALSE(a->MayFetch(Item(2, 0).host));  // a failed worker fetches nothing at all
  EXPECT_EQ(a->status().code(), Status::Code::kAborted);
}

TEST_F(RedisCrawlTest, AJoiningWorkerGetsItsShareAndPartitionsMoveOnlyOnce) {
  std::unique_ptr<RedisCrawl> a = Worker("a");
  ASSERT_TRUE(a);
  const std::string prefix = "AJoiningWorkerGetsItsShareAndPartitionsMoveOnlyOnce";
  auto owned = [&](const std::string& id) {
    Result<ClusterStatus> st = ReadStatus(Options("x").redis, prefix);
    if (!st.ok()) return -1;
    for (const ClusterStatus::Worker& w : st->workers) {
      if (w.id.rfind(id + "#", 0) == 0) return w.partitions;
    }
    return 0;
  };
  ASSERT_TRUE(WaitFor([&] { return owned("a") == 8; }));
  std::unique_ptr<RedisCrawl> b = Worker("b");
  ASSERT_TRUE(b);
  ASSERT_TRUE(WaitFor([&] { return owned("a") == 4 && owned("b") == 4; }));
  std::this_thread::sleep_for(2500ms);  // stable: nothing moves back and forth
  EXPECT_EQ(owned("a"), 4);
  EXPECT_EQ(owned("b"), 4);
  EXPECT_EQ(a->stats().partitions_given_up, 4u);
  EXPECT_EQ(b->stats().partitions_owned, 4u);
  EXPECT_EQ(b->stats().partitions_taken_over, 0u);  // given up on purpose, not expired
}

TEST_F(RedisCrawlTest, WorkersMustShareThePartitioning) {
  std::unique_ptr<RedisCrawl> a = Worker("a");
  ASSERT_TRUE(a);
  WorkerOptions o = Options("b");
  o.partitions.partitions = 16;
  Result<std::unique_ptr<RedisCrawl>> b = RedisCrawl::Create(o);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(b.status().message().find("partitions=8"), std::string::npos) << b.status().message();
}

TEST_F(RedisCrawlTest, APayloadDigestIsSharedBetweenWorkers) {
  std::unique_ptr<RedisCrawl> a = Worker("a");
  std::unique_ptr<RedisCrawl> b = Worker("b");
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(b->FindDigest("sha256:abc"));
  a->PutDigest("sha256:abc", {.uri = "http://h.test/", .date_us = 42, .record_id = "<urn:x>"});
  a->PutDigest("sha256:abc", {.uri = "http://other.test/", .date_us = 43, .record_id = "<urn:y>"});
  std::optional<state::DigestRecord> d = b->FindDigest("sha256:abc");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->uri, "http://h.test/");  // the first stored location is kept
  EXPECT_EQ(d->date_us, 42);
  EXPECT_EQ(d->record_id, "<urn:x>");
}

}  // namespace
}  // namespace harvest::cluster
