// Parked URLs of StateDb (state.h): taken by whole hosts (every class), hosts met best class
// first, going on where the last call stopped and wrapping once; durable across a restart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <rocksdb/db.h>

#include "base/testing/temp_dir.h"
#include "state/internal.h"
#include "state/parked_table.h"
#include "state/state.h"

namespace harvest::state {
namespace {

using test_util::TempDir;

frontier::UrlItem Item(const std::string& host, int i, int cls) {
  frontier::UrlItem item;
  item.host = "http://" + host;
  item.url = item.host + "/p/" + std::to_string(i);
  item.fp = std::hash<std::string>()(item.url);
  item.priority = cls;
  return item;
}

constexpr int kClasses = 4;

// The database of a closed StateDb, opened with RocksDB alone: its `parked` and `meta`
// families as stored.
class RawState {
 public:
  explicit RawState(const std::filesystem::path& dir) {
    std::vector<std::string> names;
    EXPECT_TRUE(rocksdb::DB::ListColumnFamilies({}, dir.string(), &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const std::string& n : names) {
      rocksdb::ColumnFamilyOptions cf;
      if (n == "parked") cf.prefix_extractor = NewParkedGroupPrefix();
      descriptors.emplace_back(n, cf);
    }
    rocksdb::DB* raw = nullptr;
    EXPECT_TRUE(rocksdb::DB::Open({}, dir.string(), descriptors, &handles_, &raw).ok());
    db_.reset(raw);
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == "parked") parked_ = handles_[i];
      if (names[i] == "meta") meta_ = handles_[i];
    }
  }
  ~RawState() {
    for (rocksdb::ColumnFamilyHandle* h : handles_) (void)db_->DestroyColumnFamilyHandle(h);
    (void)db_->Close();
  }
  std::vector<std::string> ParkedKeys() const {
    std::vector<std::string> keys;
    rocksdb::ReadOptions ro;
    ro.total_order_seek = true;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, parked_));
    for (it->SeekToFirst(); it->Valid(); it->Next()) keys.push_back(it->key().ToString());
    return keys;
  }
  void PutParked(const std::string& key, const std::string& value) {
    EXPECT_TRUE(db_->Put({}, parked_, key, value).ok());
  }
  void PutMeta(const std::string& key, const std::string& value) {
    EXPECT_TRUE(db_->Put({}, meta_, key, value).ok());
  }
  std::string Meta(const std::string& key) const {
    std::string v;
    EXPECT_TRUE(db_->Get({}, meta_, key, &v).ok());
    return v;
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  rocksdb::ColumnFamilyHandle* parked_ = nullptr;
  rocksdb::ColumnFamilyHandle* meta_ = nullptr;
};

// class | host | '\0' | sequence (8, big-endian): a version-3 key; with `grouped`, the
// group mark after it (version 4).
std::string KeyOf(int cls, const std::string& host, uint64_t seq, bool grouped) {
  std::string k(1, static_cast<char>(cls));
  k += host;
  k.push_back('\0');
  PutBigEndian(&k, seq, 8);
  if (grouped) k.push_back(1);
  return k;
}

// The URLs taken, sorted (a host's classes come in any order).
std::vector<std::string> Take(StateDb& db, size_t hosts) {
  std::vector<std::string> urls;
  db.TakeParked(hosts, kClasses, [&](frontier::UrlItem item) { urls.push_back(item.url); });
  std::sort(urls.begin(), urls.end());
  return urls;
}

TEST(Parked, TakesHostsBestClassFirstAndWrapsOnce) {
  TempDir dir("parked_test");
  Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto store = (*db)->NewQueueStore(4);
  (*db)->Park(Item("b.test", 1, 2));
  (*db)->Park(Item("a.test", 1, 2));
  (*db)->Park(Item("b.test", 2, 2));
  (*db)->Park(Item("c.test", 1, 0));
  EXPECT_EQ((*db)->parked(), 4u);
  // Class 0 first, then hosts by name.
  EXPECT_EQ(Take(**db, 1), std::vector<std::string>{"http://c.test/p/1"});
  EXPECT_EQ(Take(**db, 1), std::vector<std::string>{"http://a.test/p/1"});
  // Parked meanwhile before the cursor: found after wrapping, the rest of this call first.
  (*db)->Park(Item("a.test", 3, 1));
  EXPECT_EQ(Take(**db, 5), (std::vector<std::string>{"http://a.test/p/3", "http://b.test/p/1",
                                                     "http://b.test/p/2"}));
  EXPECT_EQ((*db)->parked(), 0u);
  EXPECT_TRUE(Take(**db, 5).empty());
  // A lone group met again after wrapping is not taken twice in one call.
  (*db)->Park(Item("d.test", 1, 3));
  (*db)->Park(Item("d.test", 2, 3));
  EXPECT_EQ(Take(**db, 5), (std::vector<std::string>{"http://d.test/p/1", "http://d.test/p/2"}));
  EXPECT_EQ((*db)->parked(), 0u);
}

TEST(Parked, AHostComesWithEveryClassAndIsNotMetAgain) {
  TempDir dir("parked_test");
  Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto store = (*db)->NewQueueStore(kClasses);
  (*db)->Park(Item("e.test", 1, 0));
  (*db)->Park(Item("f.test", 1, 0));
  (*db)->Park(Item("e.test", 2, 2));
  (*db)->Park(Item("e.test", 3, 3));
  (*db)->Park(Item("f.test", 2, 1));
  EXPECT_EQ(Take(**db, 1), (std::vector<std::string>{"http://e.test/p/1", "http://e.test/p/2",
                                                     "http://e.test/p/3"}));
  EXPECT_EQ(Take(**db, 1), (std::vector<std::string>{"http://f.test/p/1", "http://f.test/p/2"}));
  EXPECT_EQ((*db)->parked(), 0u);
  // In one call, the cursor passes over the later classes of a host it took already.
  (*db)->Park(Item("g.test", 1, 1));
  (*db)->Park(Item("g.test", 2, 2));
  (*db)->Park(Item("h.test", 1, 2));
  EXPECT_EQ(Take(**db, 2), (std::vector<std::string>{"http://g.test/p/1", "http://g.test/p/2",
                                                     "http://h.test/p/1"}));
  EXPECT_EQ((*db)->parked(), 0u);
  EXPECT_TRUE(Take(**db, 5).empty());
}

TEST(Parked, SurviveARestartAndStayAdmitted) {
  TempDir dir("parked_test");
  const frontier::UrlItem a = Item("a.test", 1, 1);
  const frontier::UrlItem b = Item("b.test", 1, 1);
  {
    Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto store = (*db)->NewQueueStore(4);
    // Admitted (the seen set knows them), then parked, and made durable.
    (*db)->seen()->Insert(a.fp);
    (*db)->seen()->Insert(b.fp);
    (*db)->Park(a);
    (*db)->Park(b);
    ASSERT_TRUE((*db)->Commit().ok());
    ASSERT_TRUE((*db)->Sync().ok());
    store.reset();               // the queue store refers to the database
    (*db)->AbandonForTesting();  // no clean close: nothing ingested
  }
  Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto store = (*db)->NewQueueStore(4);
  EXPECT_EQ((*db)->parked(), 2u);
  // Restored from the parked entries, as from queue entries: not admitted a second time.
  EXPECT_TRUE((*db)->seen()->Contains(a.fp));
  EXPECT_TRUE((*db)->seen()->Contains(b.fp));
  EXPECT_EQ(Take(**db, 10), (std::vector<std::string>{"http://a.test/p/1", "http://b.test/p/1"}));
}

// The parked family switched from leveled to universal compaction (docs/benchmarks.md, "At
// 100 M URLs"): a database whose parked entries sit in levels 1+ of a leveled tree (an older
// Harvest's) opens, and every entry is still there to take.
TEST(Parked, LeveledFamilyOfAnOlderDatabaseOpens) {
  TempDir dir("parked_test");
  constexpr int kHosts = 50;
  {
    Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto store = (*db)->NewQueueStore(4);
    for (int h = 0; h < kHosts; ++h) {
      for (int i = 0; i < 3; ++i) (*db)->Park(Item("h" + std::to_string(h) + ".test", i, h % 4));
    }
    ASSERT_TRUE((*db)->Commit().ok());
    ASSERT_TRUE((*db)->Sync().ok());
  }
  {
    // Reopened as a leveled tree (RocksDB's defaults) and the parked family compacted into
    // level 3.
    std::vector<std::string> names;
    ASSERT_TRUE(rocksdb::DB::ListColumnFamilies({}, dir.path().string(), &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const std::string& n : names) descriptors.emplace_back(n, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open({}, dir.path().string(), descriptors, &handles, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    const auto parked = std::find(names.begin(), names.end(), "parked");
    ASSERT_NE(parked, names.end());
    rocksdb::ColumnFamilyHandle* cf = handles[parked - names.begin()];
    ASSERT_TRUE(db->Flush({}, cf).ok());
    rocksdb::CompactRangeOptions to_level3;
    to_level3.change_level = true;
    to_level3.target_level = 3;
    ASSERT_TRUE(db->CompactRange(to_level3, cf, nullptr, nullptr).ok());
    std::string files;
    ASSERT_TRUE(db->GetProperty(cf, "rocksdb.num-files-at-level3", &files));
    EXPECT_EQ(files, "1");
    for (rocksdb::ColumnFamilyHandle* h : handles)
      ASSERT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto store = (*db)->NewQueueStore(4);
  EXPECT_EQ((*db)->parked(), 3u * kHosts);
  EXPECT_EQ(Take(**db, kHosts).size(), 3u * kHosts);
  EXPECT_EQ((*db)->parked(), 0u);
}

// The URLs a (class, host) gets between two hand-overs of the pending batch are one entry
// (docs/benchmarks.md, "Parked URLs grouped per host"); a restart reads them all back, in
// order, and a later commit's URLs of the same host are an entry of their own.
TEST(Parked, AHostsUrlsBetweenCommitsAreOneEntry) {
  TempDir dir("parked_test");
  {
    Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto store = (*db)->NewQueueStore(kClasses);
    for (int i = 1; i <= 3; ++i) (*db)->Park(Item("a.test", i, 1));
    (*db)->Park(Item("b.test", 1, 1));
    (*db)->Park(Item("a.test", 9, 2));
    ASSERT_TRUE((*db)->Commit().ok());
    (*db)->Park(Item("a.test", 4, 1));
    ASSERT_TRUE((*db)->Commit().ok());
    EXPECT_EQ((*db)->parked(), 6u);
  }
  {
    RawState raw(dir.path());
    const std::vector<std::string> keys = raw.ParkedKeys();
    ASSERT_EQ(keys.size(), 4u);  // a.test class 1 twice, b.test class 1, a.test class 2
    for (const std::string& k : keys) EXPECT_EQ(k.back(), 1) << "not a group's key";
  }
  Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto store = (*db)->NewQueueStore(kClasses);
  EXPECT_EQ((*db)->parked(), 6u);
  std::vector<std::string> urls;
  (*db)->TakeParked(1, kClasses, [&](frontier::UrlItem item) {
    if (item.priority == 1) urls.push_back(item.url);
  });
  // In parking order within the class, across the two entries.
  EXPECT_EQ(urls, (std::vector<std::string>{"http://a.test/p/1", "http://a.test/p/2",
                                            "http://a.test/p/3", "http://a.test/p/4"}));
  EXPECT_EQ((*db)->parked(), 1u);
  EXPECT_EQ(Take(**db, 5), std::vector<std::string>{"http://b.test/p/1"});
}

// A database of format version 3 holds one URL per parked entry: it opens, its entries are
// counted, readmitted and taken beside the groups parked since, and it is version 4 after.
TEST(Parked, Version3SingleEntriesAreRead) {
  TempDir dir("parked_test");
  {
    Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto store = (*db)->NewQueueStore(kClasses);
    (*db)->Park(Item("c.test", 1, 0));
  }
  const frontier::UrlItem old1 = Item("c.test", 2, 0), old2 = Item("d.test", 1, 3);
  {
    RawState raw(dir.path());
    EXPECT_EQ(raw.Meta("version"), kFormatVersion);
    raw.PutParked(KeyOf(0, old1.host, 500, false), EncodeItem(old1));
    raw.PutParked(KeyOf(3, old2.host, 501, false), EncodeItem(old2));
    raw.PutMeta("version", "3");
  }
  {
    Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto store = (*db)->NewQueueStore(kClasses);
    EXPECT_EQ((*db)->parked(), 3u);
    EXPECT_TRUE((*db)->seen()->Contains(old1.fp));  // readmitted like a queue entry
    EXPECT_TRUE((*db)->seen()->Contains(old2.fp));
    EXPECT_EQ(Take(**db, 5), (std::vector<std::string>{"http://c.test/p/1", "http://c.test/p/2",
                                                       "http://d.test/p/1"}));
    EXPECT_EQ((*db)->parked(), 0u);
  }
  RawState raw(dir.path());
  EXPECT_EQ(raw.Meta("version"), kFormatVersion);
}

// A group whose value is cut or corrupt: the URLs before the fault are taken, the entry is
// deleted, and nothing else is lost or crashes.
TEST(Parked, AMalformedGroupKeepsTheUrlsBeforeTheFault) {
  TempDir dir("parked_test");
  {
    Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto store = (*db)->NewQueueStore(kClasses);
    (*db)->Park(Item("f.test", 1, 1));
  }
  {
    RawState raw(dir.path());
    const std::string entry = EncodeItem(Item("e.test", 1, 1));
    std::string value;
    PutVarint(&value, 0);
    PutVarint(&value, entry.size());
    value += entry;
    PutVarint(&value, 1);
    PutVarint(&value, 200);  // longer than what follows
    value += "abc";
    raw.PutParked(KeyOf(1, "http://e.test", 700, true), value);
    std::string undecodable;
    PutVarint(&undecodable, 0);
    PutVarint(&undecodable, 2);
    undecodable += "xy";  // not a queue entry
    raw.PutParked(KeyOf(1, "http://g.test", 701, true), undecodable);
  }
  Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto store = (*db)->NewQueueStore(kClasses);
  EXPECT_EQ(Take(**db, 5), (std::vector<std::string>{"http://e.test/p/1", "http://f.test/p/1"}));
  EXPECT_TRUE(Take(**db, 5).empty());  // both bad entries deleted
  EXPECT_EQ((*db)->parked(), 0u);
}

}  // namespace
}  // namespace harvest::state
