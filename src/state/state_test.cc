#include "state/state.h"
#include "base/testing/temp_dir.h"

#include <gtest/gtest.h>

#include <rocksdb/db.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "state/host_record_table.h"
#include "state/internal.h"

namespace harvest::state {
namespace {

using test_util::TempDir;

std::unique_ptr<StateDb> OpenDb(const std::filesystem::path& dir) {
  Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir});
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::move(*db) : nullptr;
}

TEST(StateDb, CreatesThenReopens) {
  TempDir dir("state_test");
  {
    auto db = OpenDb(dir.path());
    ASSERT_TRUE(db);
    EXPECT_TRUE(db->created());
  }
  auto db = OpenDb(dir.path());
  ASSERT_TRUE(db);
  EXPECT_FALSE(db->created());
}

std::set<std::string> FamiliesOfClosedDb(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  EXPECT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir.string(), &names).ok());
  return {names.begin(), names.end()};
}

// A new database gets its families in one call after the open (one OPTIONS file write); a
// crash in between leaves a database with the default family only, which the next open
// completes and starts as a new crawl state.
TEST(StateDb, CreatesEveryFamilyAndCompletesADatabaseLeftWithoutThem) {
  const std::set<std::string> all = {"default", "queues",   "seen",     "hosts",   "digests",
                                     "meta",    "admitted", "schedule", "simhash", "parked",
                                     "pages",   "depths",   "deferred"};
  TempDir fresh("state_test");
  { ASSERT_TRUE(OpenDb(fresh.path())); }
  EXPECT_EQ(FamiliesOfClosedDb(fresh.path()), all);

  TempDir left("state_test");
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, left.path().string(), &raw).ok());
    delete raw;
  }
  {
    auto db = OpenDb(left.path());
    ASSERT_TRUE(db);
    EXPECT_FALSE(db->created());
    EXPECT_EQ(db->simhash_version(), dedup::kNewestSimHash);  // no crawl in it: a new one
    db->PutPoliteness("a.test", {.next_allowed_us = 7});
    ASSERT_TRUE(db->Commit().ok());
  }
  EXPECT_EQ(FamiliesOfClosedDb(left.path()), all);
  auto db = OpenDb(left.path());
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->GetPoliteness("a.test"));
  EXPECT_EQ(db->GetPoliteness("a.test")->next_allowed_us, 7);
}

// Writes (or, with value nullopt, deletes) a meta key of a closed database, as another
// harvest version may have left it.
void SetMetaOfClosedDb(const std::filesystem::path& dir, std::string_view key,
                       std::optional<std::string> value) {
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir.string(), &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : names)
    descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(
      rocksdb::DB::Open(rocksdb::DBOptions(), dir.string(), descriptors, &handles, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != "meta") continue;
    const rocksdb::Slice k(key.data(), key.size());
    rocksdb::Status s = value ? db->Put(rocksdb::WriteOptions(), handles[i], k, *value)
                              : db->Delete(rocksdb::WriteOptions(), handles[i], k);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  for (rocksdb::ColumnFamilyHandle* h : handles) EXPECT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
}

// docs/architecture.md §1.4: a new crawl state takes SimHash version 2 and keeps it.
TEST(StateDb, NewDatabaseUsesSimHashVersion2) {
  TempDir dir("state_test");
  {
    auto db = OpenDb(dir.path());
    ASSERT_TRUE(db);
    EXPECT_EQ(db->simhash_version(), dedup::SimHashVersion::kV2);
  }
  auto db = OpenDb(dir.path());
  ASSERT_TRUE(db);
  EXPECT_EQ(db->simhash_version(), dedup::SimHashVersion::kV2);
}

// A crawl state written before SimHash versions existed (a "version" key, no SimHash
// version) holds version 1 fingerprints: it is version 1, recorded at the first open, and
// stays 1.
TEST(StateDb, OldDatabaseKeepsSimHashVersion1) {
  TempDir dir("state_test");
  {
    auto db = OpenDb(dir.path());
    ASSERT_TRUE(db);
  }
  SetMetaOfClosedDb(dir.path(), kSimHashVersionKey, std::nullopt);
  for (int open = 0; open < 2; ++open) {
    auto db = OpenDb(dir.path());
    ASSERT_TRUE(db);
    EXPECT_FALSE(db->created());
    EXPECT_EQ(db->simhash_version(), dedup::SimHashVersion::kV1) << "open " << open;
  }
}

TEST(StateDb, RefusesAnUnknownSimHashVersion) {
  TempDir dir("state_test");
  {
    auto db = OpenDb(dir.path());
    ASSERT_TRUE(db);
  }
  SetMetaOfClosedDb(dir.path(), kSimHashVersionKey, "7");
  Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().ToString().find("SimHash version 7"), std::string::npos)
      << db.status().ToString();
}

TEST(StateDb, RefusesASecondProcessOnTheSameDirectory) {
  TempDir dir("state_test");
  auto db = OpenDb(dir.path());
  ASSERT_TRUE(db);
  Result<std::unique_ptr<StateDb>> second = StateDb::Open({.dir = dir.path()});
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("another harvest process"), std::string::npos)
      << second.status().ToString();
}

TEST(StateDb, SeenStoreIsExactReadsItsOwnPendingWritesAndPersists) {
  TempDir dir("state_test");
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

// BackgroundWorkPending reports flushes and compactions while they run and false once the
// database is idle (state_scale_bench waits for that before it times lookups).
TEST(StateDb, BackgroundWorkSettlesOnAnIdleDatabase) {
  TempDir dir("state_test");
  Result<std::unique_ptr<StateDb>> opened = StateDb::Open(
      {.dir = dir.path(), .write_buffer_bytes = 1u << 20, .ingest_every = 5000, .sync = false});
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<StateDb> db = std::move(*opened);
  for (uint64_t fp = 1; fp <= 50'000; ++fp) {
    db->seen()->Insert(fp * 0x9E3779B97F4A7C15ull);
    if (fp % 1000 == 0) {
      ASSERT_TRUE(db->Commit().ok());
    }
  }
  ASSERT_TRUE(db->Sync().ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (db->BackgroundWorkPending() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(db->BackgroundWorkPending());
  EXPECT_TRUE(db->seen()->Contains(50'000 * 0x9E3779B97F4A7C15ull));
}

// The level-0 table files of a family in RocksDB's statistics ("  L0      2/0 ..." under
// "** Compaction Stats [name] **"; a level without tables has no row).
int Level0Files(const std::string& engine_stats, const std::string& family) {
  const std::string header = "** Compaction Stats [" + family + "] **";
  const size_t at = engine_stats.find(header);
  if (at == std::string::npos) return 0;
  const size_t end = engine_stats.find("** Compaction Stats [", at + header.size());
  std::istringstream in(engine_stats.substr(at, end == std::string::npos ? end : end - at));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string level, files;
    if (row >> level >> files && level == "L0") return std::stoi(files);
  }
  return 0;
}

// MergeLevel0 (state_scale_bench --merge-level0) leaves no table in level 0 of a leveled
// family and every record readable, whether the levels below are empty or already hold the
// family's tables. Reopening flushes the write-ahead log into a level-0 table.
TEST(StateDb, MergeLevel0MovesLevel0TablesIntoTheLevelBelow) {
  TempDir dir("state_test");
  SeenRecord done;
  done.state = SeenRecord::State::kDone;
  done.status = 200;
  auto fp_of = [](uint64_t i) { return i * 0x9E3779B97F4A7C15ull; };
  for (uint64_t round = 0; round < 2; ++round) {
    {
      auto db = OpenDb(dir.path());
      frontier::UrlItem item;
      for (uint64_t i = 1; i <= 3000; ++i) {
        item.fp = fp_of(round * 3000 + i);
        db->MarkDone(item, done);
      }
      ASSERT_TRUE(db->Commit().ok());
    }
    auto db = OpenDb(dir.path());
    ASSERT_GE(Level0Files(db->EngineStats(), "seen"), 1) << db->EngineStats();
    ASSERT_TRUE(db->MergeLevel0().ok());
    EXPECT_EQ(Level0Files(db->EngineStats(), "seen"), 0) << db->EngineStats();
    for (uint64_t i = 1; i <= (round + 1) * 3000; ++i) {
      std::optional<SeenRecord> r = db->GetSeen(fp_of(i));
      ASSERT_TRUE(r) << i;
      EXPECT_EQ(r->state, SeenRecord::State::kDone);
    }
  }
}

// The admitted set as sorted runs: ForEachSeen merges them with the seen family, each
// fingerprint once, ascending; they survive reopening.
TEST(StateDb, ForEachSeenMergesTheAdmittedRunsOnce) {
  TempDir dir("state_test");
  std::set<uint64_t> oracle;
  std::mt19937_64 rng(5);
  {
    Result<std::unique_ptr<StateDb>> opened =
        StateDb::Open({.dir = dir.path(), .ingest_every = 700, .sync = false});
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<StateDb> db = std::move(*opened);
    for (int i = 0; i < 20'000; ++i) {
      const uint64_t fp = rng();
      oracle.insert(fp);
      db->seen()->Insert(fp);
      if (i % 500 == 0) {
        ASSERT_TRUE(db->Commit().ok());
      }
    }
    ASSERT_TRUE(db->Commit().ok());
    EXPECT_GT(db->stats().ingests, 10u);
    EXPECT_GE(db->stats().admitted_runs, 1u);
  }
  auto db = OpenDb(dir.path());
  ASSERT_TRUE(db);
  std::vector<uint64_t> all;
  ASSERT_TRUE(db->ForEachSeen([&](uint64_t fp) { all.push_back(fp); }).ok());
  EXPECT_TRUE(std::equal(all.begin(), all.end(), oracle.begin(), oracle.end()));
  for (uint64_t fp : oracle) ASSERT_TRUE(db->seen()->Contains(fp)) << fp;
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(db->seen()->Contains(i), oracle.contains(i));
}

// A database written before the admitted set moved out of RocksDB keeps it in the `admitted`
// column family: opening moves every fingerprint into the runs and empties the family.
TEST(StateDb, MovesAnOlderAdmittedFamilyIntoTheRuns) {
  TempDir dir("state_test");
  { ASSERT_TRUE(OpenDb(dir.path())); }
  std::vector<uint64_t> old;
  for (uint64_t i = 1; i <= 3000; ++i) old.push_back(i * 0x9E3779B97F4A7C15ull);
  auto with_admitted_family =
      [&](const std::function<void(rocksdb::DB*, rocksdb::ColumnFamilyHandle*)>& fn) {
        std::vector<std::string> names;
        ASSERT_TRUE(
            rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir.path().string(), &names)
                .ok());
        std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
        for (const std::string& name : names)
          descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions());
        std::vector<rocksdb::ColumnFamilyHandle*> handles;
        rocksdb::DB* raw = nullptr;
        ASSERT_TRUE(rocksdb::DB::Open(rocksdb::DBOptions(), dir.path().string(), descriptors,
                                      &handles, &raw)
                        .ok());
        std::unique_ptr<rocksdb::DB> db(raw);
        for (size_t i = 0; i < names.size(); ++i) {
          if (names[i] == "admitted") fn(db.get(), handles[i]);
        }
        for (rocksdb::ColumnFamilyHandle* h : handles)
          EXPECT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
      };
  with_admitted_family([&](rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf) {
    for (uint64_t fp : old) {
      std::string key;
      PutBigEndian(&key, fp, 8);
      ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), cf, key, "").ok());
    }
  });
  {
    auto db = OpenDb(dir.path());
    ASSERT_TRUE(db);
    for (uint64_t fp : old) ASSERT_TRUE(db->seen()->Contains(fp)) << fp;
    EXPECT_FALSE(db->seen()->Contains(12345));
  }
  with_admitted_family([&](rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf) {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), cf));
    it->SeekToFirst();
    EXPECT_FALSE(it->Valid());  // emptied
  });
  auto db = OpenDb(dir.path());
  ASSERT_TRUE(db);
  size_t n = 0;
  ASSERT_TRUE(db->ForEachSeen([&](uint64_t) { ++n; }).ok());
  EXPECT_EQ(n, old.size());
}

// Admissions since the last ingest of the admitted set live in RAM; after a crash they come
// back from their queue entries, so the exact seen store still knows every admitted URL.
TEST(StateDb, AdmissionsSurviveACrashBetweenIngests) {
  TempDir dir("state_test");
  constexpr uint64_t kUrls = 350;
  std::set<uint64_t> done;
  {
    auto opened = StateDb::Open({.dir = dir.path(), .ingest_every = 100});
    ASSERT_TRUE(opened.ok());
    std::unique_ptr<StateDb> db = std::move(*opened);
    auto store = db->NewQueueStore(4);
    store->RegisterHost(0, "a.test");
    for (uint64_t i = 0; i < kUrls; ++i) {
      frontier::UrlItem item;
      item.host = "a.test";
      item.url = "http://a.test/" + std::to_string(i);
      item.fp = 1000 + i;
      db->seen()->Insert(item.fp);  // as SeenSet does, before the frontier's Add
      store->Push(0, item, false);
      if (i % 10 == 9) {
        ASSERT_TRUE(db->Commit().ok());  // the crawl: once per loop iteration
      }
    }
    for (int k = 0; k < 10; ++k) {
      std::optional<frontier::UrlItem> it = store->Pop(0);
      ASSERT_TRUE(it);
      db->MarkDone(*it, {.state = SeenRecord::State::kDone, .status = 200});
      done.insert(it->fp);
    }
    ASSERT_TRUE(db->Commit().ok());
    ASSERT_TRUE(db->Sync().ok());
    EXPECT_EQ(db->stats().ingests, 3u);  // at 100, 200 and 300: 50 only in RAM
    store.reset();
    db->AbandonForTesting();
  }
  auto db = OpenDb(dir.path());
  ASSERT_TRUE(db);
  auto store = db->NewQueueStore(4);
  std::vector<uint64_t> all;
  ASSERT_TRUE(db->ForEachSeen([&](uint64_t fp) { all.push_back(fp); }).ok());
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), kUrls);  // each once
  for (uint64_t i = 0; i < kUrls; ++i) {
    EXPECT_EQ(all[i], 1000 + i);
    EXPECT_TRUE(db->seen()->Contains(1000 + i)) << i;
    std::optional<SeenRecord> r = db->GetSeen(1000 + i);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->state,
              done.count(1000 + i) ? SeenRecord::State::kDone : SeenRecord::State::kQueued);
  }
  EXPECT_FALSE(db->seen()->Contains(999));
  EXPECT_FALSE(db->seen()->Contains(1000 + kUrls));
  // A clean close ingests the rest: the next open re-adds nothing and still knows them all.
  store.reset();
  db.reset();
  db = OpenDb(dir.path());
  ASSERT_TRUE(db);
  all.clear();
  ASSERT_TRUE(db->ForEachSeen([&](uint64_t fp) { all.push_back(fp); }).ok());
  EXPECT_EQ(all.size(), kUrls);
  EXPECT_TRUE(db->seen()->Contains(1000 + kUrls - 1));
}

TEST(StateDb, MarkDoneRecordsTheFetch) {
  TempDir dir("state_test");
  auto db = OpenDb(dir.path());
  frontier::UrlItem item;
  item.url = "http://a.test/";
  item.fp = 99;
  db->seen()->Insert(99);
  db->MarkDone(item, {.state = SeenRecord::State::kDone,
                      .status = 200,
                      .fetch_time_us = 123,
                      .etag = "\"x\"",
                      .last_modified = "Tue"});
  ASSERT_TRUE(db->Commit().ok());
  std::optional<SeenRecord> r = db->GetSeen(99);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->state, SeenRecord::State::kDone);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->fetch_time_us, 123);
  EXPECT_EQ(r->etag, "\"x\"");
  EXPECT_EQ(r->last_modified, "Tue");
}

TEST(StateDb, TheBlockCacheGrowsWithTheTablesIndexAndFilterBlocks) {
  TempDir dir("state_test");
  const size_t least = 64u << 10;
  {
    Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path(),
                                                         .block_cache_bytes = least,
                                                         .block_cache_max_bytes = 64u << 20,
                                                         .write_buffer_bytes = 1u << 20});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ((*db)->stats().block_cache_bytes, least);  // no tables yet
    frontier::UrlItem item;
    item.url = "http://a.test/";
    for (uint64_t fp = 1; fp <= 100'000; ++fp) {
      item.fp = fp * 0x9E3779B97F4A7C15ull;
      (*db)->MarkDone(item, {.state = SeenRecord::State::kDone, .status = 200});
    }
    ASSERT_TRUE((*db)->Commit().ok());
  }
  // Measured at open (and every 10 s of commits): 100 k seen records' Bloom filter alone is
  // ~120 KiB.
  uint64_t metadata = 0;
  {
    Result<std::unique_ptr<StateDb>> db = StateDb::Open(
        {.dir = dir.path(), .block_cache_bytes = least, .block_cache_max_bytes = 64u << 20});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    const StateStats st = (*db)->stats();
    metadata = st.table_metadata_bytes;
    EXPECT_GT(metadata, 100u << 10);
    EXPECT_EQ(st.block_cache_bytes, 2 * metadata);
  }
  {  // the most it may grow to
    Result<std::unique_ptr<StateDb>> db = StateDb::Open(
        {.dir = dir.path(), .block_cache_bytes = least, .block_cache_max_bytes = metadata});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ((*db)->stats().block_cache_bytes, metadata);
  }
}

TEST(StateDb, HostRecordsRoundTrip) {
  TempDir dir("state_test");
  {
    auto db = OpenDb(dir.path());
    EXPECT_FALSE(db->GetPoliteness("a.test"));
    db->PutPoliteness("a.test", {.next_allowed_us = 5'000'000, .crawl_delay_ms = 1500});
    db->PutRobots("a.test", {.status = 200,
                             .redirects = 1,
                             .failures = 0,
                             .expiry_us = 77,
                             .body = "User-agent: *\nDisallow: /x\n"});
    db->PutPoliteness("b.test", {.dead_reason = "robots-unavailable",
                                 .dead_detail = "robots.txt: HTTP 503 (3 attempts)"});
  }
  auto db = OpenDb(dir.path());
  auto p = db->GetPoliteness("a.test");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->next_allowed_us, 5'000'000);
  EXPECT_EQ(p->crawl_delay_ms, 1500);
  EXPECT_EQ(db->GetPoliteness("b.test")->dead_reason, "robots-unavailable");
  EXPECT_EQ(db->GetPoliteness("b.test")->dead_detail, "robots.txt: HTTP 503 (3 attempts)");
  auto r = db->GetRobots("a.test");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->redirects, 1);
  EXPECT_EQ(r->expiry_us, 77);
  EXPECT_EQ(r->body, "User-agent: *\nDisallow: /x\n");
}

// Admissions counted blind (HostCounterStore::AddAdmitted) are read back by a load, even of a
// host never saved whole, across a reopen, and listed for a resumed crawl; the database
// opens read-only too (the family's merge operator installed there).
TEST(StateDb, AdmissionCounterIncrementsAreLoadedAndListed) {
  TempDir dir("state_test");
  const uint64_t a = frontier::Admission::HostHash("a.test");
  const uint64_t b = frontier::Admission::HostHash("b.test");
  {
    auto db = OpenDb(dir.path());
    HostCounterStore store(db.get(), /*resumed=*/false);
    EXPECT_TRUE(store.ListSaved([](uint64_t, const frontier::HostCounters&) {
      ADD_FAILURE() << "a new crawl's store lists nothing";
    }));
    frontier::HostCounters c;
    c.admitted = 10;
    c.fetched = 4;
    store.Save(a, c);
    store.AddAdmitted(a, 2);
    store.AddAdmitted(b, 7);
    ASSERT_TRUE(db->Commit().ok());
    frontier::HostCounters read;
    ASSERT_TRUE(store.Load(b, &read)) << "a host counted blind is read, never saved whole";
    EXPECT_EQ(read.admitted, 7u);
    ASSERT_TRUE(store.Load(a, &read));
    EXPECT_EQ(read.admitted, 12u);
    EXPECT_EQ(read.fetched, 4u);
    store.AddAdmitted(b, 1);
    ASSERT_TRUE(db->Commit().ok());
  }
  {
    Result<std::unique_ptr<StateReader>> reader = StateReader::Open(dir.path());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  }
  auto db = OpenDb(dir.path());
  HostCounterStore store(db.get(), /*resumed=*/true);
  std::map<uint64_t, uint64_t> listed;
  EXPECT_TRUE(store.ListSaved(
      [&](uint64_t key, const frontier::HostCounters& c) { listed[key] = c.admitted; }));
  EXPECT_EQ(listed, (std::map<uint64_t, uint64_t>{{a, 12}, {b, 8}}));
}

TEST(StateDb, DigestsAreWrittenDirectly) {
  TempDir dir("state_test");
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
  // url, host key (the origin), via: the URL is stored without its origin when it starts
  // with the host key, and via without the prefix it shares with the URL.
  const std::vector<std::array<std::string, 3>> cases = {
      {"http://a.test/p?q=1", "http://a.test", "http://a.test/"},
      {"https://a.test/x", "https://a.test", "https://a.test/x/y"},
      {"http://a.test:8080/", "http://a.test:8080", "http://b.test/"},
      {"http://a.test:8080/", "http://a.test", ""},  // host key not followed by '/'
      {"https://a.test/x", "http://a.test", ""},     // another scheme: stored whole
      {"http://b.test/other-host", "http://a.test", "http://a.test/"},
      {"ftp://a.test/", "http://a.test", "http://a.test/"},
      {"", "", ""},
  };
  for (const auto& [url, host, via] : cases) {
    frontier::UrlItem item;
    item.url = url;
    item.host = host;
    item.fp = 0xfedcba9876543210ull;
    item.depth = 3;
    item.priority = 2;
    item.attempts = 1;
    item.via = via;
    item.hops = 2;
    item.sitemap = true;
    const std::string v = EncodeItem(item);
    frontier::UrlItem back;
    back.host = host;
    ASSERT_TRUE(DecodeItem(v, &back)) << url;
    EXPECT_EQ(back.url, item.url);
    EXPECT_EQ(back.fp, item.fp);
    EXPECT_EQ(back.depth, 3);
    EXPECT_EQ(back.priority, 2);
    EXPECT_EQ(back.attempts, 1);
    EXPECT_EQ(back.via, item.via);
    EXPECT_EQ(back.hops, 2);
    EXPECT_TRUE(back.sitemap);
    uint64_t fp = 0;
    ASSERT_TRUE(ItemFingerprint(v, &fp));
    EXPECT_EQ(fp, item.fp);
    for (size_t n = 0; n < v.size(); ++n) {
      frontier::UrlItem cut;
      cut.host = host;
      EXPECT_FALSE(DecodeItem(std::string_view(v).substr(0, n), &cut)) << url << " " << n;
    }
  }
  // Stored relative to its host: without the host it cannot be decoded.
  frontier::UrlItem item;
  item.url = "http://a.test/section-7/page-1234.html?id=1a2b3c4d";
  item.host = "http://a.test";
  item.via = "http://a.test/section-7/";
  frontier::UrlItem back;
  EXPECT_FALSE(DecodeItem(EncodeItem(item), &back));
  // 8-byte fingerprint and 6 bytes of fields, 2 of lengths, "/section-7/page-...", "" of via.
  EXPECT_EQ(EncodeItem(item).size(), 1 + 1 + item.url.size() - 13 + 8 + 4 + 1 + 1);
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
    item.host = "a.test";
    (void)DecodeItem(junk, &item);
    uint64_t fp = 0;
    (void)ItemFingerprint(junk, &fp);
    (void)DecodeSeen(junk, &s);
    (void)DecodePoliteness(junk, &p);
    (void)DecodeRobots(junk, &r);
    (void)DecodeDigest(junk, &d);
  }
}

// The counters' merge operator over junk records and operands: a record always comes out,
// and it decodes.
TEST(StateCodec, HostCountersMergeOfJunkYieldsARecord) {
  const std::shared_ptr<rocksdb::MergeOperator> op = NewHostCountersOperator();
  const spdlog::level::level_enum level = spdlog::get_level();
  spdlog::set_level(spdlog::level::off);  // every junk record is logged
  std::mt19937_64 rng(7);
  auto junk = [&rng] {
    std::string s(rng() % 24, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    return s;
  };
  for (int i = 0; i < 5000; ++i) {
    const std::string existing = junk(), a = junk(), b = junk();
    const rocksdb::Slice existing_slice(existing);
    const std::vector<rocksdb::Slice> operands = {rocksdb::Slice(a), rocksdb::Slice(b)};
    std::string merged;
    rocksdb::Slice existing_operand;
    rocksdb::MergeOperator::MergeOperationOutput out(merged, existing_operand);
    ASSERT_TRUE(op->FullMergeV2(rocksdb::MergeOperator::MergeOperationInput(
                                    "c", i % 2 ? &existing_slice : nullptr, operands, nullptr),
                                &out));
    frontier::HostCounters c;
    EXPECT_TRUE(DecodeCounters(merged, &c));
    std::string partial;
    (void)op->PartialMerge("c", a, b, &partial, nullptr);
  }
  spdlog::set_level(level);
}

TEST(StateCodec, QueueKeysSortByHostClassSequence) {
  // Within an epoch by host, class, sequence; epochs in order.
  constexpr int kBits = 20;
  constexpr uint64_t kNextEpoch = uint64_t{1} << kBits;
  EXPECT_LT(QueueKey(kBits, 1, 3, 999), QueueKey(kBits, 2, 0, 1));
  EXPECT_LT(QueueKey(kBits, 1, 0, 999), QueueKey(kBits, 1, 1, 1));
  EXPECT_LT(QueueKey(kBits, 1, 1, 255), QueueKey(kBits, 1, 1, 256));
  EXPECT_LT(QueueKey(kBits, 9, 0, kNextEpoch - 1), QueueKey(kBits, 1, 0, kNextEpoch));
  EXPECT_EQ(QueueKey(kBits, 1, 1, 1).size(), kQueueKeySize);
  uint32_t host = 0;
  uint8_t cls = 0;
  uint64_t seq = 0;
  ASSERT_TRUE(ParseQueueKey(kBits, QueueKey(kBits, 7, 2, 5 * kNextEpoch + 3), &host, &cls, &seq));
  EXPECT_EQ(host, 7u);
  EXPECT_EQ(cls, 2);
  EXPECT_EQ(seq, 5 * kNextEpoch + 3);
  std::string bad = QueueKey(kBits, 7, 2, 3);
  bad[3] = 1;  // epoch does not match the sequence
  EXPECT_FALSE(ParseQueueKey(kBits, bad, &host, &cls, &seq));
  EXPECT_FALSE(ParseQueueKey(kBits, "short", &host, &cls, &seq));
}

}  // namespace
}  // namespace harvest::state
