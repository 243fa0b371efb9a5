// The recrawl schedule and the near-duplicate index records of StateDb.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "base/testing/temp_dir.h"
#include "state/internal.h"
#include "state/state.h"

namespace harvest::state {
namespace {

using test_util::TempDir;

std::unique_ptr<StateDb> Open(const std::filesystem::path& dir) {
  Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir});
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::move(*db) : nullptr;
}

frontier::UrlItem Item(int i) {
  frontier::UrlItem item;
  item.host = "http://h.test";
  item.url = "http://h.test/p/" + std::to_string(i);
  item.fp = 1000 + i;
  item.depth = 2;
  item.priority = 1;
  item.via = "http://h.test/";
  return item;
}

SeenRecord Done(int64_t due) {
  SeenRecord r;
  r.state = SeenRecord::State::kDone;
  r.status = 200;
  r.fetch_time_us = 5;
  r.next_due_us = due;
  return r;
}

TEST(Schedule, TakesDueUrlsInOrderAndKeepsTheRestAcrossRestarts) {
  TempDir dir("schedule_test");
  {
    auto db = Open(dir.path());
    ASSERT_TRUE(db);
    EXPECT_FALSE(db->NextDue());
    db->MarkDone(Item(1), Done(300));
    db->MarkDone(Item(2), Done(100));
    db->MarkDone(Item(3), Done(200));
    db->MarkDone(Item(4), Done(0));  // not scheduled
    EXPECT_EQ(db->NextDue(), 100);
    std::vector<frontier::UrlItem> got;
    EXPECT_EQ(db->TakeDue(50, 10, [&](frontier::UrlItem i) { got.push_back(i); }), 0u);
    EXPECT_EQ(db->TakeDue(250, 10, [&](frontier::UrlItem i) { got.push_back(i); }), 2u);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].url, "http://h.test/p/2");
    EXPECT_EQ(got[1].url, "http://h.test/p/3");
    EXPECT_TRUE(got[0].recrawl);
    EXPECT_EQ(got[0].host, "http://h.test");
    EXPECT_EQ(got[0].depth, 2);
    EXPECT_EQ(got[0].via, "http://h.test/");
    EXPECT_EQ(db->NextDue(), 300);
    // Taken entries are gone even before a commit.
    got.clear();
    EXPECT_EQ(db->TakeDue(250, 10, [&](frontier::UrlItem i) { got.push_back(i); }), 0u);
    ASSERT_TRUE(db->Commit().ok());
    ASSERT_TRUE(db->Sync().ok());
  }
  auto db = Open(dir.path());
  ASSERT_TRUE(db);
  EXPECT_EQ(db->NextDue(), 300);
  std::vector<frontier::UrlItem> got;
  EXPECT_EQ(db->TakeDue(1000, 10, [&](frontier::UrlItem i) { got.push_back(i); }), 1u);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].url, "http://h.test/p/1");
  EXPECT_FALSE(db->NextDue());
}

TEST(Schedule, TakeRespectsTheLimit) {
  TempDir dir("schedule_test");
  auto db = Open(dir.path());
  ASSERT_TRUE(db);
  for (int i = 0; i < 10; ++i) db->MarkDone(Item(i), Done(100 + i));
  std::vector<uint64_t> fps;
  EXPECT_EQ(db->TakeDue(1000, 4, [&](frontier::UrlItem i) { fps.push_back(i.fp); }), 4u);
  EXPECT_EQ(db->NextDue(), 104);
  EXPECT_EQ(db->TakeDue(1000, 100, [&](frontier::UrlItem i) { fps.push_back(i.fp); }), 6u);
  ASSERT_EQ(fps.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(fps[i], 1000u + i);
}

TEST(Schedule, SeenRecordKeepsRecrawlFieldsAndReadsOldRecords) {
  SeenRecord r = Done(77);
  r.etag = "\"e\"";
  r.last_modified = "Tue, 01 Jan 2030 00:00:00 GMT";
  r.interval_ms = 60'000;
  r.payload_digest = "sha256:ABC";
  r.simhash = 0x0123456789abcdefULL;
  r.changes = 3;
  r.unchanged = 9;
  SeenRecord back;
  ASSERT_TRUE(DecodeSeen(EncodeSeen(r), &back));
  EXPECT_EQ(back.next_due_us, 77);
  EXPECT_EQ(back.interval_ms, 60'000);
  EXPECT_EQ(back.payload_digest, "sha256:ABC");
  EXPECT_EQ(back.simhash, r.simhash);
  EXPECT_EQ(back.changes, 3u);
  EXPECT_EQ(back.unchanged, 9u);
  // A record as written before recrawling (no trailing fields) still decodes.
  std::string old = EncodeSeen(r);
  std::string prefix;
  prefix.push_back(static_cast<char>(SeenRecord::State::kDone));
  PutSignedVarint(&prefix, r.status);
  PutSignedVarint(&prefix, r.fetch_time_us);
  PutSignedVarint(&prefix, r.next_due_us);
  PutBytes(&prefix, r.etag);
  PutBytes(&prefix, r.last_modified);
  SeenRecord legacy;
  ASSERT_TRUE(DecodeSeen(prefix, &legacy));
  EXPECT_EQ(legacy.etag, "\"e\"");
  EXPECT_EQ(legacy.interval_ms, 0);
  EXPECT_FALSE(DecodeSeen(old.substr(0, old.size() - 1), &legacy));
}

TEST(SimHashRecords, NewestAreRebuiltOldestFirstAndTrimmed) {
  TempDir dir("schedule_test");
  {
    auto db = Open(dir.path());
    ASSERT_TRUE(db);
    for (uint64_t seq = 1; seq <= 10; ++seq) {
      ASSERT_TRUE(db->PutSimHash(seq, {.hash = seq * 7,
                                       .uri = "http://h.test/" + std::to_string(seq),
                                       .record_id = "<urn:uuid:" + std::to_string(seq) + ">",
                                       .date_us = static_cast<int64_t>(seq)})
                      .ok());
    }
    ASSERT_TRUE(db->TrimSimHashes(3).ok());
    EXPECT_FALSE(db->GetSimHash(2));
    ASSERT_TRUE(db->GetSimHash(3));
    EXPECT_EQ(db->GetSimHash(3)->uri, "http://h.test/3");
  }
  auto db = Open(dir.path());
  ASSERT_TRUE(db);
  std::vector<uint64_t> seqs;
  ASSERT_TRUE(db->ForEachSimHash(4, [&](uint64_t seq, const SimHashRecord& r) {
                  EXPECT_EQ(r.hash, seq * 7);
                  seqs.push_back(seq);
                }).ok());
  EXPECT_EQ(seqs, (std::vector<uint64_t>{7, 8, 9, 10}));
  seqs.clear();
  ASSERT_TRUE(db->ForEachSimHash(100, [&](uint64_t seq, const SimHashRecord&) {
                  seqs.push_back(seq);
                }).ok());
  EXPECT_EQ(seqs, (std::vector<uint64_t>{3, 4, 5, 6, 7, 8, 9, 10}));
}

}  // namespace
}  // namespace harvest::state
