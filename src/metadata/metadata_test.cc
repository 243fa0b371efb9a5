// Tests of Database and MetadataWriter against a real PostgreSQL (scripts/pg-local): schema
// creation and versions, idempotent batches, the cursor, and the writer across an outage.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "base/ascii.h"
#include "metadata/metadata.h"
#include "metadata/testing/local_postgres.h"
#include "store/store.h"

namespace harvest::metadata {
namespace {

using testing::LocalPostgres;
using namespace std::chrono_literals;

class MetadataDbTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto pg = LocalPostgres::Start();
    // No skipping: the server binaries are a build dependency (scripts/bootstrap).
    ASSERT_TRUE(pg.ok()) << "cannot start PostgreSQL for the tests: " << pg.status().ToString();
    pg_ = std::move(*pg).release();
  }
  static void TearDownTestSuite() {
    delete pg_;
    pg_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(pg_, nullptr);
    // A database per test, so each starts without a schema.
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    LowerAsciiInPlace(name);
    db_name_ = "t_" + name;
    MetadataOptions admin;
    admin.url = pg_->url();
    auto db = Database::Connect(admin);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_TRUE((*db)->Query("DROP DATABASE IF EXISTS " + db_name_).ok());
    auto created = (*db)->Query("CREATE DATABASE " + db_name_);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    url_ = pg_->url().substr(0, pg_->url().rfind('/') + 1) + db_name_;
    dir_ = std::filesystem::temp_directory_path() /
           ("harvest-md-" + std::to_string(::getpid()) + "-" + name);
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  MetadataOptions Options(const std::string& source = "src") const {
    MetadataOptions o;
    o.url = url_;
    o.worker = "w1";
    o.source = source;
    o.out_dir = dir_;
    o.batch_rows = 16;
    o.poll_interval = 20ms;
    o.min_backoff = 50ms;
    o.max_backoff = 400ms;
    o.connect_timeout = 2s;
    return o;
  }
  std::unique_ptr<Database> Connect() const {
    auto db = Database::Connect(Options());
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::move(*db) : nullptr;
  }
  std::string One(Database* db, const std::string& sql) const {
    auto r = db->Query(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    if (!r.ok() || r->empty() || (*r)[0].empty()) return "<none>";
    return (*r)[0][0];
  }
  static PageRow Row(int i) {
    PageRow r;
    r.page_id = static_cast<uint64_t>(i);
    r.url = "http://a.test/" + std::to_string(i);
    r.host = "a.test";
    r.domain = "a.test";
    r.status = 200;
    r.fetched_at_us = 1'700'000'000'000'000 + i;
    r.warc_file = "f.warc.gz";
    r.warc_offset = static_cast<uint64_t>(i) * 100;
    r.fetch_key = "f.warc.gz:" + std::to_string(r.warc_offset);
    r.outcome = "fetched";
    r.worker = "w1";
    r.outlinks = i;
    return r;
  }

  static LocalPostgres* pg_;
  std::string db_name_;
  std::string url_;
  std::filesystem::path dir_;
};
LocalPostgres* MetadataDbTest::pg_ = nullptr;

TEST_F(MetadataDbTest, MigrateCreatesTheSchemaOnceAndRefusesANewerOne) {
  auto db = Connect();
  ASSERT_NE(db, nullptr);
  auto first = db->Migrate();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, 0);
  auto second = db->Migrate();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, kSchemaVersion);
  EXPECT_EQ(One(db.get(),
                "SELECT count(*) FROM pg_indexes WHERE tablename = 'pages' AND "
                "indexname IN ('pages_host_fetched_at', 'pages_digest')"),
            "2");
  EXPECT_EQ(One(db.get(),
                "SELECT data_type FROM information_schema.columns WHERE "
                "table_name = 'pages' AND column_name = 'fetched_at'"),
            "timestamp with time zone");
  ASSERT_TRUE(db->Query("INSERT INTO schema_version (version) VALUES (99)").ok());
  auto newer = db->Migrate();
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.status().message().find("newer"), std::string::npos) << newer.status().ToString();
}

TEST(DatabaseCheckUrlTest, RefusesWhatLibpqCannotParse) {
  EXPECT_TRUE(Database::CheckUrl("postgresql://harvest@127.0.0.1:5432/harvest").ok());
  EXPECT_TRUE(Database::CheckUrl("postgres://u:p@h/db?connect_timeout=3").ok());
  EXPECT_FALSE(Database::CheckUrl("redis://127.0.0.1:6379").ok());
  EXPECT_FALSE(Database::CheckUrl("postgresql://h/db?no_such_option=1").ok());
  EXPECT_FALSE(Database::CheckUrl("").ok());
}

TEST_F(MetadataDbTest, ConcurrentMigrationsCreateOneSchema) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      auto db = Database::Connect(Options());
      if (db.ok() && (*db)->Migrate().ok()) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 4);
  auto db = Connect();
  EXPECT_EQ(One(db.get(), "SELECT count(*) FROM schema_version"), std::to_string(kSchemaVersion));
}

TEST_F(MetadataDbTest, BatchesAreIdempotentAndTheCursorNeverGoesBack) {
  auto db = Connect();
  ASSERT_TRUE(db->Migrate().ok());
  std::vector<PageRow> rows = {Row(1), Row(2), Row(3)};
  rows[1].outlinks.reset();
  rows[2].title = "It's \"quoted\"\ttab\nline\\back\r";
  rows[0].reason = std::string("nul\0byte \xff\xc3\xa9", 12);  // NUL, a stray byte, then é
  auto n = db->WriteBatch(rows, "s", 3);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 3u);
  auto again = db->WriteBatch(rows, "s", 1);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0u);
  EXPECT_EQ(One(db.get(), "SELECT count(*) FROM pages"), "3");
  EXPECT_EQ(*db->ReadCursor("s"), 3u);
  EXPECT_EQ(*db->ReadCursor("other"), 0u);
  EXPECT_EQ(One(db.get(), "SELECT outlinks IS NULL FROM pages WHERE page_id = 2"), "t");
  EXPECT_EQ(One(db.get(),
                "SELECT title = E'It''s \"quoted\"\\ttab\\nline\\\\back\\r' FROM pages "
                "WHERE page_id = 3"),
            "t");
  EXPECT_EQ(One(db.get(), "SELECT reason FROM pages WHERE page_id = 1"),
            "nulbyte \xef\xbf\xbd\xc3\xa9");
  EXPECT_EQ(One(db.get(),
                "SELECT fetched_at = to_timestamp(1700000000.000001) FROM pages "
                "WHERE page_id = 1"),
            "t");
  EXPECT_EQ(One(db.get(), "SELECT title IS NULL AND mime IS NULL FROM pages WHERE page_id = 1"),
            "t");
}

// A crawl directory written through store::WarcWriter, and a source over its page records
// that grows while the writer runs.
class FakeCrawl {
 public:
  explicit FakeCrawl(const std::filesystem::path& dir) {
    store::WarcOptions o;
    o.dir = dir;
    writer_ = std::move(*store::WarcWriter::Open(o));
  }
  void AddPages(int n) {
    for (int i = 0; i < n; ++i) {
      store::Capture c;
      const int k = next_++;
      c.target_uri = "http://h" + std::to_string(k % 5) + ".test/p" + std::to_string(k);
      c.fetch_time_us = 1'700'000'000'000'000 + k;
      c.request_header = "GET / HTTP/1.1\r\n\r\n";
      c.response_header = "HTTP/1.1 200 OK\r\n\r\n";
      c.payload = "page " + std::to_string(k);
      c.status = 200;
      c.outlinks = {"http://x.test/"};
      auto loc = writer_->WriteResponse(c);
      ASSERT_TRUE(loc.ok());
      state::PageEntry p;
      p.url = c.target_uri;
      p.host = HostOf(p.url);
      p.status = 200;
      p.fetched_at_us = c.fetch_time_us;
      p.warc_file = loc->filename;
      p.warc_offset = loc->offset;
      p.warc_length = loc->length;
      std::lock_guard lock(mu_);
      p.id = pages_.size() + 1;
      pages_.push_back(p);
    }
  }
  // A page record as given (an attempt: no WARC location), with the next id.
  void AddEntry(state::PageEntry p) {
    std::lock_guard lock(mu_);
    p.id = pages_.size() + 1;
    pages_.push_back(std::move(p));
  }
  PageSource Source() {
    return [this](uint64_t after, size_t limit) -> Result<std::vector<state::PageEntry>> {
      std::lock_guard lock(mu_);
      std::vector<state::PageEntry> out;
      for (size_t i = after; i < pages_.size() && out.size() < limit; ++i) {
        out.push_back(pages_[i]);
      }
      return out;
    };
  }

 private:
  std::unique_ptr<store::WarcWriter> writer_;
  std::mutex mu_;
  std::vector<state::PageEntry> pages_;
  int next_ = 0;
};

bool WaitFor(const std::function<bool()>& cond, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (cond()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return cond();
}

TEST_F(MetadataDbTest, WriterCopiesEveryPageOnceAcrossADatabaseOutage) {
  FakeCrawl crawl(dir_);
  crawl.AddPages(40);
  MetadataWriter writer(Options(), crawl.Source());
  writer.Start();
  ASSERT_TRUE(WaitFor([&] { return writer.stats().cursor == 40; }, 20s))
      << writer.stats().last_error;
  ASSERT_TRUE(pg_->Stop().ok());
  crawl.AddPages(40);  // the crawl goes on while the database is down
  ASSERT_TRUE(WaitFor([&] { return writer.stats().outage_since_us != 0; }, 10s));
  EXPECT_FALSE(writer.stats().connected);
  EXPECT_EQ(writer.stats().cursor, 40u);
  ASSERT_TRUE(pg_->Restart().ok());
  crawl.AddPages(20);
  Status s = writer.Finish(crawl.Source(), 30s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  WriterStats st = writer.stats();
  EXPECT_EQ(st.cursor, 100u);
  EXPECT_EQ(st.rows_written, 100u);
  EXPECT_GE(st.failures, 1u);
  EXPECT_EQ(st.outage_since_us, 0);
  auto db = Connect();
  EXPECT_EQ(One(db.get(), "SELECT count(*), count(DISTINCT page_id) FROM pages"), "100");
  EXPECT_EQ(One(db.get(), "SELECT count(DISTINCT page_id) FROM pages"), "100");
  EXPECT_EQ(One(db.get(), "SELECT sum(outlinks) FROM pages"), "100");
  EXPECT_EQ(One(db.get(), "SELECT count(*) FROM pages WHERE host = 'h3.test'"), "20");
  EXPECT_EQ(*db->ReadCursor("src"), 100u);
}

TEST_F(MetadataDbTest, ARestartedWriterResumesAfterTheCursorAndReplaysAreHarmless) {
  FakeCrawl crawl(dir_);
  crawl.AddPages(30);
  {
    MetadataWriter first(Options(), crawl.Source());
    ASSERT_TRUE(first.Finish(crawl.Source(), 20s).ok());
    EXPECT_EQ(first.stats().rows_written, 30u);
  }
  crawl.AddPages(5);
  MetadataWriter again(Options(), crawl.Source());
  ASSERT_TRUE(again.Finish(crawl.Source(), 20s).ok());
  EXPECT_EQ(again.stats().rows_written, 5u);
  EXPECT_EQ(again.stats().rows_existing, 0u);  // resumed after the cursor: nothing resent
  // The same crawl under another cursor (a lost cursor): every row sent again, none doubled.
  MetadataWriter replay(Options("other"), crawl.Source());
  ASSERT_TRUE(replay.Finish(crawl.Source(), 20s).ok());
  EXPECT_EQ(replay.stats().rows_written, 0u);
  EXPECT_EQ(replay.stats().rows_existing, 35u);
  auto db = Connect();
  EXPECT_EQ(One(db.get(), "SELECT count(*) FROM pages"), "35");
}

// Requests that left no WARC record have a row too: no status without a response, no WARC
// location, keyed "<source>#<page_id>" so a replay of the same crawl directory adds nothing;
// every row's outcome and reason are the crawler's.
TEST_F(MetadataDbTest, AttemptsHaveRowsAndOutcomesAreTheCrawlers) {
  FakeCrawl crawl(dir_);
  crawl.AddPages(2);
  crawl.AddEntry({.url = "http://a.test/slow",
                  .host = "a.test",
                  .fetched_at_us = 1'700'000'000'000'007,
                  .outcome = "retried",
                  .reason = "timeout: too slow (attempt 1)"});
  crawl.AddEntry({.url = "http://a.test/busy",
                  .host = "a.test",
                  .status = 503,
                  .fetched_at_us = 1'700'000'000'000'008,
                  .outcome = "retried",
                  .reason = "HTTP 503 (attempt 1)"});
  crawl.AddEntry({.url = "http://a.test/slow",
                  .host = "a.test",
                  .fetched_at_us = 1'700'000'000'000'009,
                  .outcome = "gave-up",
                  .reason = "timeout: too slow (3 attempts)"});
  crawl.AddPages(1);
  MetadataWriter writer(Options("w1:/crawl"), crawl.Source());
  Status s = writer.Finish(crawl.Source(), 20s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(writer.stats().rows_written, 6u);
  auto db = Connect();
  EXPECT_EQ(One(db.get(), "SELECT count(*) FROM pages WHERE warc_file IS NULL"), "3");
  EXPECT_EQ(One(db.get(),
                "SELECT string_agg(fetch_key || ' ' || coalesce(status::text, 'NULL') || ' ' || "
                "outcome || ' ' || reason || ' ' || (warc_offset IS NULL) || ' ' || outlinks, "
                "'|' ORDER BY page_id) FROM pages WHERE warc_file IS NULL"),
            "w1:/crawl#3 NULL retried timeout: too slow (attempt 1) true 0|"
            "w1:/crawl#4 503 retried HTTP 503 (attempt 1) true 0|"
            "w1:/crawl#5 NULL gave-up timeout: too slow (3 attempts) true 0");
  EXPECT_EQ(One(db.get(),
                "SELECT fetched_at = to_timestamp(1700000000.000009) FROM pages "
                "WHERE page_id = 5"),
            "t");
  // Stored fetches whose page records carry no outcome: the one their WARC record implies.
  EXPECT_EQ(One(db.get(),
                "SELECT count(*) FROM pages WHERE warc_file IS NOT NULL AND "
                "outcome = 'fetched' AND status = 200"),
            "3");
  // The same crawl directory again (a lost cursor, an export): no row twice.
  ASSERT_TRUE(db->Query("DELETE FROM metadata_cursors").ok());
  MetadataWriter replay(Options("w1:/crawl"), crawl.Source());
  ASSERT_TRUE(replay.Finish(crawl.Source(), 20s).ok());
  EXPECT_EQ(replay.stats().rows_written, 0u);
  EXPECT_EQ(replay.stats().rows_existing, 6u);
  EXPECT_EQ(One(db.get(), "SELECT count(*) FROM pages"), "6");
}

TEST_F(MetadataDbTest, FinishGivesUpAfterItsLimitWhileTheDatabaseIsDown) {
  FakeCrawl crawl(dir_);
  crawl.AddPages(3);
  ASSERT_TRUE(pg_->Stop().ok());
  MetadataWriter writer(Options(), crawl.Source());
  const auto start = std::chrono::steady_clock::now();
  Status s = writer.Finish(crawl.Source(), 1500ms);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(pg_->Restart().ok());
  EXPECT_EQ(s.code(), Status::Code::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("gave up"), std::string::npos) << s.ToString();
  EXPECT_LT(took, 10s);
  EXPECT_GE(writer.stats().failures, 2u);
  // Once the database is back the same rows go in.
  ASSERT_TRUE(writer.Finish(crawl.Source(), 20s).ok());
  EXPECT_EQ(writer.stats().rows_written, 3u);
}

}  // namespace
}  // namespace harvest::metadata
