// HostTable without a Crawler: a crawl state in a temporary directory, an in-memory frontier,
// a robots gate and a FakeClock.
#include "crawl/host_table.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>
#include <vector>

namespace harvest::crawl {
namespace {

using namespace std::chrono_literals;

// A shared crawl that only records the host records it is given.
class RecordingShared : public SharedCrawl {
 public:
  Status Start(std::function<void()>) override { return Status::Ok(); }
  Status Stop() override { return Status::Ok(); }
  void Admit(frontier::UrlItem) override {}
  void TakeReady(Taken*) override {}
  void PutHost(const std::string& host, const HostRecords& parts) override {
    puts.emplace_back(host, parts);
  }
  void Done(const frontier::UrlItem&, std::chrono::milliseconds,
            const state::SeenRecord*) override {}
  bool MayFetch(std::string_view) override { return true; }
  bool Complete() override { return false; }
  Status status() override { return Status::Ok(); }
  Share share() override { return {}; }
  std::optional<state::DigestRecord> FindDigest(const std::string&) override {
    return std::nullopt;
  }
  void PutDigest(const std::string&, const state::DigestRecord&) override {}

  std::vector<std::pair<std::string, HostRecords>> puts;
};

class HostTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A "threadsafe" death test runs its test again in a child process, which dies before
    // its TearDown: the child's directory is named after the parent, which removes it.
    const bool death_child = !GTEST_FLAG_GET(internal_run_death_test).empty();
    dir_ = std::filesystem::temp_directory_path() /
           ("harvest_host_table_" + std::to_string(death_child ? ::getppid() : ::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() +
            (death_child ? "_child" : ""));
    std::filesystem::remove_all(dir_);
    Result<std::unique_ptr<state::StateDb>> db = state::StateDb::Open({.dir = dir_, .sync = false});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    frontier::FrontierOptions fo;
    fo.default_delay = 1s;
    frontier_ = std::make_unique<frontier::Frontier>(fo, &clock_);
    robots_ = std::make_unique<RobotsGate>(RobotsGate::Options{.product_token = "harvest"}, &clock_,
                                           db_.get());
  }
  void TearDown() override {
    table_.reset();
    robots_.reset();
    frontier_.reset();
    db_.reset();
    std::filesystem::remove_all(dir_);
    std::filesystem::remove_all(dir_.string() + "_child");
  }
  HostTable& Table(bool resumed = false, SharedCrawl* shared = nullptr) {
    table_ = std::make_unique<HostTable>(HostTable::Options{.resumed = resumed}, &clock_, db_.get(),
                                         frontier_.get(), robots_.get(), shared);
    return *table_;
  }
  frontier::UrlItem Item(const std::string& host, const std::string& path) {
    frontier::UrlItem item;
    item.host = host;
    item.url = host + path;
    item.fp = std::hash<std::string>{}(item.url);
    return item;
  }
  // Leases the host's next URL and completes it now.
  void FetchOne(const std::string& host) {
    frontier_->Add(Item(host, "/" + std::to_string(++paths_)));
    std::optional<frontier::Lease> lease = frontier_->Next();
    ASSERT_TRUE(lease.has_value());
    frontier_->Complete(*lease, {.kind = frontier::CompletionKind::kDone});
  }

  FakeClock clock_;
  std::filesystem::path dir_;
  std::unique_ptr<state::StateDb> db_;
  std::unique_ptr<frontier::Frontier> frontier_;
  std::unique_ptr<RobotsGate> robots_;
  std::unique_ptr<HostTable> table_;
  int paths_ = 0;
};

TEST_F(HostTableTest, EnsureAddsAHostOnce) {
  HostTable& t = Table();
  t.Ensure("http://a.test").crawl_delay_ms = 5000;
  EXPECT_EQ(t.Ensure("http://a.test").crawl_delay_ms, 5000);  // the same entry
  t.Ensure("http://b.test");
  EXPECT_EQ(t.size(), 2u);
  EXPECT_TRUE(t.Contains("http://a.test"));
  EXPECT_FALSE(t.Contains("http://c.test"));
}

TEST_F(HostTableTest, AppliesTheOperatorsSavedOverridesWhenAHostArrives) {
  {
    HostTable& t = Table();
    t.Override("http://a.test").blocked = true;
    t.Override("http://b.test").crawl_delay_ms = 7000;
    t.Override("http://c.test").weight = 3;
    t.SaveOverride("http://a.test");
    t.SaveOverride("http://b.test");
    t.SaveOverride("http://c.test");
    t.Override("http://d.test");  // empty: saving erases it
    t.SaveOverride("http://d.test");
    ASSERT_TRUE(db_->Commit().ok());
  }
  HostTable& t = Table(/*resumed=*/true);
  std::vector<std::pair<std::string, double>> weights;
  t.LoadOverrides([&](const std::string& h, double w) { weights.emplace_back(h, w); });
  EXPECT_EQ(weights, (std::vector<std::pair<std::string, double>>{{"http://c.test", 3}}));
  EXPECT_EQ(t.overrides().size(), 3u);
  EXPECT_TRUE(t.Blocked("http://a.test"));
  EXPECT_FALSE(t.Blocked("http://b.test"));
  ASSERT_NE(t.FindOverride("http://b.test"), nullptr);
  EXPECT_EQ(t.FindOverride("http://d.test"), nullptr);
  // On arrival: a blocked host is held (its URL is not leased), a delay override applies.
  t.Ensure("http://a.test");
  t.Ensure("http://b.test");
  frontier_->Add(Item("http://a.test", "/x"));
  EXPECT_FALSE(frontier_->Next().has_value());
  EXPECT_EQ(frontier_->HostDelay("http://b.test"), 7s);
}

TEST_F(HostTableTest, EvictsTheLeastRecentlyActiveIdleHostsFirst) {
  HostTable& t = Table();
  for (const char* h : {"http://a.test", "http://b.test", "http://c.test"}) t.Ensure(h);
  t.Ensure("http://a.test");  // a is now the most recently active
  t.Evict(2);
  EXPECT_FALSE(t.Contains("http://b.test"));
  EXPECT_TRUE(t.Contains("http://a.test"));
  EXPECT_TRUE(t.Contains("http://c.test"));
  EXPECT_EQ(t.stats().evicted, 1u);
  EXPECT_EQ(t.stats().resident, 2u);
  EXPECT_EQ(t.stats().resident_peak, 2u);
}

TEST_F(HostTableTest, AHostWithWorkIsNotEvicted) {
  HostTable& t = Table();
  t.Ensure("http://busy.test");
  frontier_->Add(Item("http://busy.test", "/queued"));
  t.Ensure("http://idle.test");
  t.Evict(1);
  EXPECT_TRUE(t.Contains("http://busy.test"));
  EXPECT_FALSE(t.Contains("http://idle.test"));
  t.Evict(0);
  EXPECT_TRUE(t.Contains("http://busy.test"));
  EXPECT_EQ(t.stats().resident, 1u);
}

// An evicted host comes back with its Crawl-delay, dead reason and next-allowed time.
TEST_F(HostTableTest, AnEvictedHostIsReloadedWithItsPoliteness) {
  HostTable& t = Table();
  const std::string h = "http://slow.test";
  FetchOne(h);
  frontier_->SetCrawlDelay(h, 7s);
  t.Ensure(h).crawl_delay_ms = 7000;
  t.SavePoliteness(h, 30'000ms);  // a Retry-After: the next request in 30 s at the earliest
  t.Evict(0);
  ASSERT_TRUE(db_->Commit().ok());  // as the crawl does right after evicting
  ASSERT_FALSE(t.Contains(h));
  EXPECT_FALSE(frontier_->KnowsHost(h));
  HostTable::Host& back = t.Ensure(h);
  EXPECT_EQ(back.crawl_delay_ms, 7000);
  EXPECT_EQ(t.stats().reloaded, 1u);
  EXPECT_EQ(frontier_->HostDelay(h), 7s);
  frontier_->Add(Item(h, "/next"));
  EXPECT_FALSE(frontier_->Next().has_value());
  clock_.Advance(29s);
  EXPECT_FALSE(frontier_->Next().has_value());
  clock_.Advance(1s);
  EXPECT_TRUE(frontier_->Next().has_value());
}

// A completion that only moves the next-allowed time on is written when the host leaves RAM.
TEST_F(HostTableTest, AStalePolitenessRecordIsWrittenAtEviction) {
  HostTable& t = Table();
  const std::string h = "http://a.test";
  FetchOne(h);
  t.SavePoliteness(h, std::nullopt);  // the first record
  ASSERT_TRUE(db_->Commit().ok());
  const int64_t first = db_->GetPoliteness(h)->next_allowed_us;
  clock_.Advance(10s);
  FetchOne(h);
  t.SavePoliteness(h, std::nullopt);  // stale: not written now
  ASSERT_TRUE(db_->Commit().ok());
  EXPECT_EQ(db_->GetPoliteness(h)->next_allowed_us, first);
  t.Evict(0);
  ASSERT_TRUE(db_->Commit().ok());
  EXPECT_EQ(db_->GetPoliteness(h)->next_allowed_us, clock_.WallMicros() + 1'000'000);
}

// A resumed crawl reads a host back and waits its full delay from the run's start.
TEST_F(HostTableTest, AResumedHostWaitsItsDelayFromTheRunStart) {
  const std::string h = "http://a.test";
  db_->PutPoliteness(h, {.next_allowed_us = clock_.WallMicros() - 1'000'000,
                         .crawl_delay_ms = 2000,
                         .dead_reason = "",
                         .dead_detail = ""});
  ASSERT_TRUE(db_->Commit().ok());
  HostTable& t = Table(/*resumed=*/true);
  t.SetRunStart(clock_.Now());
  EXPECT_EQ(t.Ensure(h).crawl_delay_ms, 2000);
  EXPECT_EQ(t.stats().reloaded, 0u);  // read back, not reloaded after an eviction
  frontier_->Add(Item(h, "/x"));
  clock_.Advance(1999ms);
  EXPECT_FALSE(frontier_->Next().has_value());
  clock_.Advance(1ms);
  EXPECT_TRUE(frontier_->Next().has_value());
}

// A host taken over from another worker gets that worker's records, also in the local state.
TEST_F(HostTableTest, AHandedOverHostStartsFromTheSavedState) {
  HostTable& t = Table();
  const std::string h = "http://gone.test";
  SharedCrawl::HostHandover over;
  over.host = h;
  over.records.politeness =
      state::HostPoliteness{.next_allowed_us = clock_.WallMicros() + 5'000'000,
                            .crawl_delay_ms = -1,
                            .dead_reason = "gave-up",
                            .dead_detail = "connect failed (3 attempts)"};
  t.HandOver(over);
  EXPECT_FALSE(t.Contains(h));
  ASSERT_TRUE(db_->Commit().ok());
  EXPECT_TRUE(db_->GetPoliteness(h).has_value());
  HostTable::Host& host = t.Ensure(h);
  EXPECT_EQ(host.dead_reason, "gave-up");
  EXPECT_EQ(host.dead_detail, "connect failed (3 attempts)");
  frontier_->Add(Item(h, "/x"));
  clock_.Advance(4999ms);
  EXPECT_FALSE(frontier_->Next().has_value());
  clock_.Advance(1ms);
  EXPECT_TRUE(frontier_->Next().has_value());
}

TEST_F(HostTableTest, AHandOverWithNothingToKeepLeavesNoRecord) {
  HostTable& t = Table();
  SharedCrawl::HostHandover over;
  over.host = "http://fresh.test";
  t.HandOver(over);
  ASSERT_TRUE(db_->Commit().ok());
  EXPECT_FALSE(db_->GetPoliteness("http://fresh.test").has_value());
  EXPECT_FALSE(db_->MayHaveHostRecords("http://fresh.test"));
}

TEST_F(HostTableTest, RecordsGoToTheSharedCrawl) {
  RecordingShared shared;
  HostTable& t = Table(/*resumed=*/false, &shared);
  FetchOne("http://a.test");
  t.SavePoliteness("http://a.test", std::nullopt);
  ASSERT_EQ(shared.puts.size(), 1u);
  EXPECT_EQ(shared.puts[0].first, "http://a.test");
  ASSERT_TRUE(shared.puts[0].second.politeness.has_value());
  EXPECT_EQ(shared.puts[0].second.politeness->next_allowed_us, clock_.WallMicros() + 1'000'000);
}

#ifndef NDEBUG
TEST_F(HostTableTest, UseFromASecondThreadAborts) {
  // The crawl state's threads (RocksDB's, the committer) run beside the test: a forked child
  // may inherit a lock one of them held and hang (it did under ASan). "threadsafe" runs the
  // death test in a fresh process of this binary instead.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  HostTable& t = Table();
  t.Ensure("http://a.test");  // binds the table to this thread
  EXPECT_DEATH(std::thread([&] { t.Ensure("http://b.test"); }).join(), "CalledOnValidThread");
}
#endif

// A shared crawl hands a name's http->https record over with its partition, keyed by the
// name: the new owner upgrades that name's http:// URLs at once, and keeps the record in its
// state. A name's records go to the shared crawl when they change.
TEST_F(HostTableTest, TakesANamesUpgradeRecordOverAndSharesItsOwn) {
  RecordingShared shared;
  HostTable& t = Table(false, &shared);
  const int64_t later = clock_.WallMicros() + 3'600'000'000;
  SharedCrawl::HostHandover h;
  h.host = "a.test";
  h.records.upgrade = state::UpgradeRecord{.streak = 3, .learnt_until_us = later};
  t.HandOver(h);
  EXPECT_EQ(t.upgrades().Upgrade("http://a.test/x"), "https://a.test/x");
  EXPECT_FALSE(t.Contains("a.test"));  // a name, not a host key
  ASSERT_TRUE(db_->Commit().ok());
  std::optional<state::UpgradeRecord> kept = db_->GetUpgrade("a.test");
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->learnt_until_us, later);
  fetch::FetchResult r;
  r.url = "https://b.test/";
  r.outcome = fetch::FetchOutcome::kOk;
  r.status = 200;
  r.headers = {{"Strict-Transport-Security", "max-age=60"}};
  t.upgrades().OnResponse(r);
  ASSERT_FALSE(shared.puts.empty());
  EXPECT_EQ(shared.puts.back().first, "b.test");
  ASSERT_TRUE(shared.puts.back().second.upgrade.has_value());
  EXPECT_GT(shared.puts.back().second.upgrade->hsts_until_us, clock_.WallMicros());
}

}  // namespace
}  // namespace harvest::crawl
