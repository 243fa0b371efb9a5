#include "state/state.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <random>

#include "state/internal.h"

namespace harvest::state {
namespace {

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("harvest_state_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::remove_all(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

std::unique_ptr<StateDb> OpenDb(const std::filesystem::path& dir) {
  Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir});
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::move(*db) : nullptr;
}

TEST(StateDb, CreatesThenReopens) {
  TempDir dir;
  {
    auto db = OpenDb(dir.path());
    ASSERT_TRUE(db);
    EXPECT_TRUE(db->created());
  }
  auto db = OpenDb(dir.path());
  ASSERT_TRUE(db);
  EXPECT_FALSE(db->created());
}

TEST(StateDb, RefusesASecondProcessOnTheSameDirectory) {
  TempDir dir;
  auto db = OpenDb(dir.path());
  ASSERT_TRUE(db);
  Result<std::unique_ptr<StateDb>> second = StateDb::Open({.dir = dir.path()});
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("another harvest process"), std::string::npos)
      << second.status().ToString();
}

TEST(StateDb, SeenStoreIsExactReadsItsOwnPendingWritesAndPersists) {
  TempDir dir;
  {
    auto db = OpenDb(dir.path());
    dedup::SeenBackend* seen = db->seen();
    EXPECT_FALSE(seen->Contains(42));
    seen->Insert(42);
    EXPECT_TRUE(seen->Contains(42));  // still in the pending batch
    ASSERT_TRUE(db->Commit().ok());
    EXPECT_TRUE(seen->Contains(42));  // now in the database
    EXPECT_FALSE(seen->Contains(43));
    seen->Insert(7);
    // Pending at close: the destructor commits it.
  }
  auto db = OpenDb(dir.path());
  std::vector<uint64_t> all;
  ASSERT_TRUE(db->ForEachSeen([&](uint64_t fp) { all.push_back(fp); }).ok());
  // The destructor commits what was pending.
  EXPECT_EQ(all, (std::vector<uint64_t>{7, 42}));
  std::optional<SeenRecord> r = db->GetSeen(42);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->state, SeenRecord::State::kQueued);
}

TEST(StateDb, MarkDoneRecordsTheFetch) {
  TempDir dir;
  auto db = OpenDb(dir.path());
  frontier::UrlItem item;
  item.url = "http://a.test/";
  item.fp = 99;
  db->seen()->Insert(99);
  db->MarkDone(item, {.state = SeenRecord::State::kDone, .status = 200, .fetch_time_us = 123,
                      .etag = "\"x\"", .last_modified = "Tue"});
  ASSERT_TRUE(db->Commit().ok());
  std::optional<SeenRecord> r = db->GetSeen(99);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->state, SeenRecord::State::kDone);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->fetch_time_us, 123);
  EXPECT_EQ(r->etag, "\"x\"");
  EXPECT_EQ(r->last_modified, "Tue");
}

TEST(StateDb, HostRecordsRoundTrip) {
  TempDir dir;
  {
    auto db = OpenDb(dir.path());
    EXPECT_FALSE(db->GetPoliteness("a.test"));
    db->PutPoliteness("a.test", {.next_allowed_us = 5'000'000, .crawl_delay_ms = 1500});
    db->PutRobots("a.test", {.status = 200, .redirects = 1, .failures = 0, .expiry_us = 77,
                             .body = "User-agent: *\nDisallow: /x\n"});
    db->PutPoliteness("b.test", {.dead_reason = "robots-unavailable"});
  }
  auto db = OpenDb(dir.path());
  auto p = db->GetPoliteness("a.test");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->next_allowed_us, 5'000'000);
  EXPECT_EQ(p->crawl_delay_ms, 1500);
  EXPECT_EQ(db->GetPoliteness("b.test")->dead_reason, "robots-unavailable");
  auto r = db->GetRobots("a.test");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->redirects, 1);
  EXPECT_EQ(r->expiry_us, 77);
  EXPECT_EQ(r->body, "User-agent: *\nDisallow: /x\n");
}

TEST(StateDb, DigestsAreWrittenDirectly) {
  TempDir dir;
  {
    auto db = OpenDb(dir.path());
    EXPECT_FALSE(db->FindDigest("sha256:AAAA"));
    ASSERT_TRUE(db->PutDigest("sha256:AAAA", {"http://a.test/", 12, "<urn:uuid:1>"}).ok());
  }
  auto db = OpenDb(dir.path());
  auto d = db->FindDigest("sha256:AAAA");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->uri, "http://a.test/");
  EXPECT_EQ(d->date_us, 12);
  EXPECT_EQ(d->record_id, "<urn:uuid:1>");
  EXPECT_EQ(db->digests_found(), 1u);
}

TEST(StateCodec, ItemRoundTripsAndRejectsEveryTruncation) {
  frontier::UrlItem item;
  item.url = "http://a.test/p?q=1";
  item.fp = 0xfedcba9876543210ull;
  item.depth = 3;
  item.priority = 2;
  item.attempts = 1;
  item.via = "http://a.test/";
  item.hops = 2;
  item.sitemap = true;
  const std::string v = EncodeItem(item);
  frontier::UrlItem back;
  ASSERT_TRUE(DecodeItem(v, &back));
  EXPECT_EQ(back.url, item.url);
  EXPECT_EQ(back.fp, item.fp);
  EXPECT_EQ(back.depth, 3);
  EXPECT_EQ(back.priority, 2);
  EXPECT_EQ(back.attempts, 1);
  EXPECT_EQ(back.via, item.via);
  EXPECT_EQ(back.hops, 2);
  EXPECT_TRUE(back.sitemap);
  for (size_t n = 0; n < v.size(); ++n) {
    frontier::UrlItem cut;
    EXPECT_FALSE(DecodeItem(std::string_view(v).substr(0, n), &cut)) << n;
  }
}

TEST(StateCodec, RandomBytesNeverCrashTheDecoders) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20000; ++i) {
    std::string junk(rng() % 40, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    frontier::UrlItem item;
    SeenRecord s;
    HostPoliteness p;
    RobotsRecord r;
    DigestRecord d;
    (void)DecodeItem(junk, &item);
    (void)DecodeSeen(junk, &s);
    (void)DecodePoliteness(junk, &p);
    (void)DecodeRobots(junk, &r);
    (void)DecodeDigest(junk, &d);
  }
}

TEST(StateCodec, QueueKeysSortByHostClassSequence) {
  EXPECT_LT(QueueKey(1, 3, 999), QueueKey(2, 0, 1));
  EXPECT_LT(QueueKey(1, 0, 999), QueueKey(1, 1, 1));
  EXPECT_LT(QueueKey(1, 1, 255), QueueKey(1, 1, 256));
  EXPECT_EQ(QueueKey(1, 1, 1).size(), kQueueKeySize);
}

}  // namespace
}  // namespace harvest::state
