// The column family tables (host_record_table.h, depth_table.h) and the Committer
// (committer.h) on their own, over a RocksDB opened in a temporary directory without a
// StateDb.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "state/committer.h"
#include "state/depth_table.h"
#include "state/host_record_table.h"
#include "state/internal.h"

namespace harvest::state {
namespace {

// A database with the `hosts`, `meta` and `depths` families and a started Committer.
class TablesTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("harvest_tables_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    Open();
  }
  void TearDown() override {
    Close();
    std::filesystem::remove_all(dir_);
  }

  void Open() {
    rocksdb::DBOptions options;
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    rocksdb::ColumnFamilyOptions depths;
    depths.merge_operator = NewMinDepthOperator();
    rocksdb::ColumnFamilyOptions hosts;
    hosts.merge_operator = NewHostCountersOperator();
    const std::vector<rocksdb::ColumnFamilyDescriptor> descriptors = {
        {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
        {"hosts", hosts},
        {"meta", rocksdb::ColumnFamilyOptions()},
        {"depths", depths},
    };
    rocksdb::DB* raw = nullptr;
    const rocksdb::Status s =
        rocksdb::DB::Open(options, dir_.string(), descriptors, &handles_, &raw);
    ASSERT_TRUE(s.ok()) << s.ToString();
    db_.reset(raw);
    committer_ = std::make_unique<Committer>(db_.get(), size_t{1} << 20, /*sync=*/false);
    committer_->Start();
  }

  // Writes what is pending, then closes.
  void Close() {
    if (committer_) {
      EXPECT_TRUE(committer_->WritePending().ok());
      committer_.reset();
    }
    if (db_) {
      for (rocksdb::ColumnFamilyHandle* h : handles_) db_->DestroyColumnFamilyHandle(h);
      handles_.clear();
      db_.reset();
    }
  }

  rocksdb::ColumnFamilyHandle* hosts() const { return handles_[1]; }
  rocksdb::ColumnFamilyHandle* meta() const { return handles_[2]; }
  rocksdb::ColumnFamilyHandle* depths() const { return handles_[3]; }

  std::filesystem::path dir_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  std::unique_ptr<Committer> committer_;
};

TEST_F(TablesTest, HostRecordTableKeepsIdsAcrossAReopen) {
  {
    HostRecordTable table(db_.get(), hosts(), meta(), committer_.get(), 100);
    table.Load();
    EXPECT_EQ(table.IdOf("a.example"), 1u);
    EXPECT_EQ(table.IdOf("b.example"), 2u);
    EXPECT_EQ(table.ids_given(), 2u);
    table.RememberId("a.example", 1);
    EXPECT_TRUE(table.MaybeEvicted("a.example"));
    ASSERT_TRUE(committer_->HandOver().ok());
    // An evicted host gets its id back; its name is found by id.
    EXPECT_EQ(table.IdOf("a.example"), 1u);
    std::string name;
    ASSERT_TRUE(table.GetName(2, &name));
    EXPECT_EQ(name, "b.example");
  }
  Close();
  Open();
  HostRecordTable table(db_.get(), hosts(), meta(), committer_.get(), 100);
  table.Load();
  EXPECT_EQ(table.ids_given(), 2u);
  EXPECT_EQ(table.IdOf("c.example"), 3u);  // ids go on from the last run's
}

TEST_F(TablesTest, HostRecordTableReadsItsRecordsBack) {
  HostRecordTable table(db_.get(), hosts(), meta(), committer_.get(), 100);
  HostPoliteness p;
  p.crawl_delay_ms = 1500;
  table.PutPoliteness("a.example", p);
  HostOverride blocked;
  blocked.blocked = true;
  table.PutOverride("a.example", blocked);
  table.PutOverride("b.example", HostOverride{});  // empty: no override
  ASSERT_TRUE(committer_->HandOver().ok());
  const std::optional<HostPoliteness> read = table.GetPoliteness("a.example");
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->crawl_delay_ms, 1500);
  EXPECT_FALSE(table.GetPoliteness("b.example").has_value());
  EXPECT_FALSE(table.GetOverride("b.example").has_value());
  std::vector<std::string> overridden;
  ASSERT_TRUE(table
                  .ForEachOverride([&](const std::string& host, const HostOverride& o) {
                    EXPECT_TRUE(o.blocked);
                    overridden.push_back(host);
                  })
                  .ok());
  EXPECT_EQ(overridden, std::vector<std::string>{"a.example"});
}

// Increments of a host's admitted count are added to its saved counters (or make them)
// without a read, before and after compaction and across a reopen; the listing sees the sums.
TEST_F(TablesTest, HostCounterIncrementsAddToTheSavedCounters) {
  const uint64_t a = 0x1234, b = 0x5678;
  {
    HostRecordTable table(db_.get(), hosts(), meta(), committer_.get(), 100);
    frontier::HostCounters saved;
    saved.day = 20000;
    saved.fetched_today = 4;
    saved.admitted = 30;
    saved.fetched = 9;
    table.PutCounters(a, saved);
    table.AddAdmitted(a, 5);
    table.AddAdmitted(a, 2);
    table.AddAdmitted(b, 3);  // no record before: one is made
    EXPECT_TRUE(table.MaybeEvicted(b)) << "a later load must read it";
    ASSERT_TRUE(committer_->HandOver().ok());
    std::optional<frontier::HostCounters> read = table.GetCounters(a);
    ASSERT_TRUE(read.has_value());
    EXPECT_EQ(read->admitted, 37u);
    EXPECT_EQ(read->fetched, 9u);
    EXPECT_EQ(read->fetched_today, 4u);
    EXPECT_EQ(read->day, 20000);
    read = table.GetCounters(b);
    ASSERT_TRUE(read.has_value());
    EXPECT_EQ(read->admitted, 3u);
    EXPECT_EQ(read->fetched, 0u);
    // A put replaces the sum; later increments add to it.
    saved.admitted = 1;
    table.PutCounters(a, saved);
    table.AddAdmitted(a, 1);
    ASSERT_TRUE(committer_->WritePending().ok());
    ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions(), hosts()).ok());
    table.AddAdmitted(b, 10);
    ASSERT_TRUE(committer_->WritePending().ok());
    ASSERT_TRUE(db_->CompactRange(rocksdb::CompactRangeOptions(), hosts(), nullptr, nullptr).ok());
  }
  Close();
  Open();
  HostRecordTable table(db_.get(), hosts(), meta(), committer_.get(), 100);
  EXPECT_EQ(table.GetCounters(a)->admitted, 2u);
  EXPECT_EQ(table.GetCounters(b)->admitted, 13u);
  table.PutPoliteness("c.example", HostPoliteness{});  // other records are not listed
  ASSERT_TRUE(committer_->HandOver().ok());
  std::vector<std::pair<uint64_t, uint64_t>> listed;
  ASSERT_TRUE(table
                  .ForEachCounters([&](uint64_t key, const frontier::HostCounters& c) {
                    listed.emplace_back(key, c.admitted);
                  })
                  .ok());
  EXPECT_EQ(listed, (std::vector<std::pair<uint64_t, uint64_t>>{{a, 2}, {b, 13}}));
}

TEST_F(TablesTest, DepthTableKeepsTheLeastDepth) {
  {
    DepthTable table(db_.get(), depths(), committer_.get());
    EXPECT_EQ(table.Noted(7), std::nullopt);
    table.Note(7, 5);
    table.Note(7, 3);
    table.Note(7, 4);
    EXPECT_EQ(table.Noted(7), 3);  // pending: from the RAM slots
    ASSERT_TRUE(committer_->WritePending().ok());
  }
  // A new table has no RAM slots: the merged minimum is read from the family.
  DepthTable table(db_.get(), depths(), committer_.get());
  EXPECT_EQ(table.Noted(7), 3);
  table.Note(7, 9);
  ASSERT_TRUE(committer_->WritePending().ok());
  EXPECT_EQ(table.Noted(7), 3);
}

TEST_F(TablesTest, CommitterWritesWhatIsHandedOver) {
  committer_->batch()->Put(meta(), "k", "v");
  EXPECT_EQ(committer_->commits(), 0u);
  ASSERT_TRUE(committer_->WritePending().ok());
  EXPECT_EQ(committer_->commits(), 1u);
  std::string value;
  ASSERT_TRUE(ReadValue(db_.get(), meta(), "k", &value).ok());
  EXPECT_EQ(value, "v");
  EXPECT_TRUE(committer_->WriteNeededByReads().ok());  // nothing needed: no write
  EXPECT_EQ(committer_->commits(), 1u);
  EXPECT_TRUE(committer_->error().ok());
}

}  // namespace
}  // namespace harvest::state
