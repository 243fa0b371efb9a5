// Page records, operator host overrides and the read-only StateReader.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "state/internal.h"
#include "state/state.h"

namespace harvest::state {
namespace {

class PagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("harvest_pages_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<StateDb> Open(uint64_t pages_max = 10'000'000) {
    Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir_, .pages_max = pages_max});
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::move(*db) : nullptr;
  }
  static PageEntry Page(int i) {
    return {.url = "http://h" + std::to_string(i % 2) + ".test:8080/" + std::to_string(i),
            .host = "h" + std::to_string(i % 2) + ".test:8080",
            .status = i % 3 == 0 ? 404 : 200,
            .fetched_at_us = 1000 * i,
            .title = "t" + std::to_string(i),
            .warc_file = "x.warc.gz",
            .warc_offset = 10u * i};
  }
  std::filesystem::path dir_;
};

TEST_F(PagesTest, IdsGrowAcrossRunsAndScansFilterAndResume) {
  {
    auto db = Open();
    for (int i = 1; i <= 5; ++i) EXPECT_EQ(*db->AddPage(Page(i)), static_cast<uint64_t>(i));
  }
  auto db = Open();
  EXPECT_EQ(db->pages_added(), 5u);
  for (int i = 6; i <= 10; ++i) EXPECT_EQ(*db->AddPage(Page(i)), static_cast<uint64_t>(i));
  std::optional<PageEntry> p = db->GetPage(7);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->title, "t7");
  EXPECT_EQ(p->warc_offset, 70u);
  EXPECT_FALSE(db->GetPage(11));
  // host h1.test (odd ids), 3 at a time, resumed from the cursor.
  PageScan scan = db->ScanPages({.host = "h1.test", .limit = 3});
  ASSERT_EQ(scan.pages.size(), 3u);
  EXPECT_EQ(scan.pages[2].id, 5u);
  ASSERT_TRUE(scan.next_after_id);
  scan = db->ScanPages({.after_id = *scan.next_after_id, .host = "h1.test:8080", .limit = 3});
  ASSERT_EQ(scan.pages.size(), 2u);
  EXPECT_EQ(scan.pages[1].id, 9u);
  EXPECT_EQ(db->ScanPages({.status = 404}).pages.size(), 3u);  // 3, 6, 9
  EXPECT_EQ(db->ScanPages({.since_us = 8000}).pages.size(), 3u);
  EXPECT_EQ(db->ScanPages({.host = "h1.tes"}).pages.size(), 0u);
  // A scan reading at most 4 records stops with a cursor even when it matched nothing.
  scan = db->ScanPages({.status = 500, .max_scanned = 4});
  EXPECT_TRUE(scan.pages.empty());
  EXPECT_EQ(scan.next_after_id, 4u);
}

TEST_F(PagesTest, OldestRecordsAreTrimmedBeyondTheMaximum) {
  auto db = Open(/*pages_max=*/10);
  for (int i = 1; i <= 2000; ++i) ASSERT_TRUE(db->AddPage(Page(i)).ok());
  EXPECT_FALSE(db->GetPage(1));
  EXPECT_TRUE(db->GetPage(2000));
  EXPECT_LT(db->ScanPages({.limit = 5000, .max_scanned = 5000}).pages.size(), 1100u);
}

// The writer thread's records of one stored fetch, in one write; each part optional.
TEST_F(PagesTest, PutStoredFetchWritesDigestSimHashAndPage) {
  {
    auto db = Open();
    StoredFetchRecords r;
    r.digest.emplace("sha256:AAAA", DigestRecord{"http://a.test/", 5, "<urn:uuid:1>"});
    r.simhash.emplace(7, SimHashRecord{0xabcdef, "http://a.test/", "<urn:uuid:1>", 5});
    r.page = Page(1);
    Result<uint64_t> id = db->PutStoredFetch(r);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    EXPECT_EQ(*id, 1u);
    // A revisit: only its page record.
    EXPECT_EQ(*db->PutStoredFetch({.page = Page(2)}), 2u);
    // Nothing to write: no page id, no write.
    EXPECT_EQ(*db->PutStoredFetch({}), 0u);
    EXPECT_EQ(db->pages_added(), 2u);
  }
  auto db = Open();  // and all of it is there after a reopen
  std::optional<DigestRecord> d = db->FindDigest("sha256:AAAA");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->uri, "http://a.test/");
  EXPECT_EQ(d->record_id, "<urn:uuid:1>");
  std::optional<SimHashRecord> h = db->GetSimHash(7);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->hash, 0xabcdefu);
  EXPECT_EQ(h->date_us, 5);
  ASSERT_TRUE(db->GetPage(1));
  EXPECT_EQ(db->GetPage(1)->title, "t1");
  EXPECT_EQ(db->GetPage(2)->title, "t2");
  EXPECT_EQ(db->pages_added(), 2u);
}

// Format 2 keeps the crawler's outcome and reason, and attempts (no WARC location); a
// format-1 record written by an older build still decodes, its outcome derived.
TEST_F(PagesTest, OutcomeAndReasonRoundTripAndFormatOneRecordsStillDecode) {
  {
    auto db = Open();
    PageEntry gave_up = Page(1);
    gave_up.status = 503;
    gave_up.outcome = "gave-up";
    gave_up.reason = "HTTP 503 (3 attempts)";
    ASSERT_EQ(*db->AddPage(gave_up), 1u);
    // An attempt: a request that got no response and is asked again.
    ASSERT_EQ(*db->AddPage({.url = "http://a.test/x",
                            .host = "a.test",
                            .fetched_at_us = 77,
                            .outcome = "retried",
                            .reason = "timeout: too slow, attempt 1"}),
              2u);
  }
  {
    // Format-1 values as the previous build wrote them: a revisit answering a recrawl
    // (304) and a response.
    auto format1 = [](int status, bool revisit) {
      std::string v;
      PutVarint(&v, 1);
      PutBytes(&v, "http://old.test/");
      PutBytes(&v, "old.test");
      PutSignedVarint(&v, status);
      PutSignedVarint(&v, 5);
      PutBytes(&v, "text/html");
      PutBytes(&v, "old");
      PutBytes(&v, "sha256:X");
      PutBytes(&v, "old.warc.gz");
      PutVarint(&v, 100);
      PutVarint(&v, 50);
      PutVarint(&v, revisit ? 1 : 0);
      return v;
    };
    std::vector<std::string> names;
    ASSERT_TRUE(rocksdb::DB::ListColumnFamilies({}, dir_.string(), &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const std::string& n : names) families.emplace_back(n, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open({}, dir_.string(), families, &handles, &raw).ok());
    std::unique_ptr<rocksdb::DB> rdb(raw);
    rocksdb::ColumnFamilyHandle* pages = nullptr;
    for (rocksdb::ColumnFamilyHandle* h : handles) {
      if (h->GetName() == "pages") pages = h;
    }
    ASSERT_NE(pages, nullptr);
    for (auto [id, status, revisit] :
         {std::tuple{3, 304, true}, std::tuple{4, 200, false}, std::tuple{5, 200, true}}) {
      std::string key;
      PutBigEndian(&key, id, 8);
      ASSERT_TRUE(rdb->Put({}, pages, key, format1(status, revisit)).ok());
    }
    for (rocksdb::ColumnFamilyHandle* h : handles) rdb->DestroyColumnFamilyHandle(h);
  }
  auto db = Open();
  EXPECT_EQ(db->pages_added(), 5u);
  std::optional<PageEntry> p = db->GetPage(1);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->outcome, "gave-up");
  EXPECT_EQ(p->reason, "HTTP 503 (3 attempts)");
  EXPECT_FALSE(p->attempt());
  p = db->GetPage(2);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->attempt());
  EXPECT_EQ(p->status, 0);
  EXPECT_EQ(p->outcome, "retried");
  EXPECT_EQ(p->reason, "timeout: too slow, attempt 1");
  std::vector<PageEntry> old = db->ScanPages({.after_id = 2}).pages;
  ASSERT_EQ(old.size(), 3u);
  EXPECT_EQ(old[0].outcome, "not-modified");
  EXPECT_EQ(old[1].outcome, "fetched");
  EXPECT_EQ(old[2].outcome, "revisit");
  EXPECT_EQ(old[0].warc_offset, 100u);
  EXPECT_EQ(old[0].title, "old");
  for (const PageEntry& e : old) EXPECT_EQ(e.reason, "");
}

TEST_F(PagesTest, OverridesPersistAndTheReaderSeesEverything) {
  {
    auto db = Open();
    db->PutHostOverride("http://a.test", {.crawl_delay_ms = 5000, .weight = 2.5});
    db->PutHostOverride("http://b.test", {.blocked = true});
    db->PutHostOverride("http://c.test", {.blocked = true});
    db->PutHostOverride("http://c.test", {});  // cleared
    db->PutPoliteness("http://a.test", {.crawl_delay_ms = 2000});
    ASSERT_TRUE(db->AddPage(Page(1)).ok());
    ASSERT_TRUE(db->Commit().ok());
    ASSERT_TRUE(db->Sync().ok());
  }
  auto db = Open();
  std::map<std::string, HostOverride> all;
  ASSERT_TRUE(db->ForEachHostOverride([&](const std::string& h, const HostOverride& o) {
                  all[h] = o;
                }).ok());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all["http://a.test"].crawl_delay_ms, 5000);
  EXPECT_EQ(all["http://a.test"].weight, 2.5);
  EXPECT_TRUE(all["http://b.test"].blocked);
  EXPECT_FALSE(db->GetHostOverride("http://c.test"));
  db.reset();
  Result<std::unique_ptr<StateReader>> reader = StateReader::Open(dir_);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->pages_added(), 1u);
  EXPECT_EQ((*reader)->GetPage(1)->title, "t1");
  EXPECT_EQ((*reader)->GetHostOverride("http://a.test")->crawl_delay_ms, 5000);
  EXPECT_EQ((*reader)->GetPoliteness("http://a.test")->crawl_delay_ms, 2000);
  EXPECT_EQ(StateReader::Open(dir_ / "nothing").status().code(), Status::Code::kNotFound);
}

// The write-ahead log of a crawl that ended holds depth notes (merge records) before later
// page records: the reader replays past them.
TEST_F(PagesTest, TheReaderReplaysPastDepthNotes) {
  {
    auto db = Open();
    db->NoteDepth(7, 3);
    ASSERT_TRUE(db->Commit().ok());
    ASSERT_TRUE(db->Sync().ok());
    ASSERT_TRUE(db->AddPage(Page(1)).ok());
    ASSERT_TRUE(db->Commit().ok());
    ASSERT_TRUE(db->Sync().ok());
  }
  Result<std::unique_ptr<StateReader>> reader = StateReader::Open(dir_);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->pages_added(), 1u);
  ASSERT_TRUE((*reader)->GetPage(1));
  EXPECT_EQ((*reader)->GetPage(1)->title, "t1");
}

}  // namespace
}  // namespace harvest::state
