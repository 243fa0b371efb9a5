// A state write that fails (here: the file-size limit, as a full disk would) is reported and
// sticky; whatever was written before it is intact when the crawl is run again, and the
// store goes on from there. (RocksDB 7.x does not write again in the same process after a
// write-ahead-log error, facebook/rocksdb#11643: the crawl stays paused until restarted.)
// Its own executable: the file-size limit is process-wide.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <map>

#include "frontier/url_item.h"
#include "state/state.h"

namespace harvest::state {
namespace {

frontier::UrlItem Item(int n) {
  frontier::UrlItem it;
  it.host = "a.test";
  it.url = "http://a.test/" + std::to_string(n) + "/" + std::string(150, 'x');
  it.fp = 1000 + static_cast<uint64_t>(n);
  it.via = "http://b.test/";
  return it;
}

void SetFileSizeLimit(rlim_t soft) {
  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &lim), 0);
  lim.rlim_cur = soft;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
}

TEST(StateWriteError, ReportedAndNothingWrittenBeforeIsLost) {
  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &lim), 0);
  const rlim_t original = lim.rlim_cur;
  ASSERT_TRUE(lim.rlim_max == RLIM_INFINITY || lim.rlim_max > (1u << 20))
      << "the hard file-size limit is too low for this test";
  std::signal(SIGXFSZ, SIG_IGN);  // writes past the limit fail with EFBIG instead
  const auto dir = std::filesystem::temp_directory_path() /
                   ("harvest_write_error_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  int pushed = 0;
  int durable = 0;  // pushed items whose batches were written and synced
  {
    auto opened = StateDb::Open({.dir = dir});
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<StateDb> db = std::move(*opened);
    auto store = db->NewQueueStore(4);
    store->RegisterHost(0, "a.test");
    ASSERT_TRUE(db->Commit().ok());
    ASSERT_TRUE(db->Sync().ok());
    SetFileSizeLimit(256 << 10);
    // ~200 bytes an item: the write-ahead log passes 256 KiB within a few thousand.
    while (pushed < 20000) {
      for (int i = 0; i < 100; ++i) store->Push(0, Item(pushed++), false);
      (void)db->Commit();
      if (!db->Sync().ok()) break;
      durable = pushed;
    }
    ASSERT_FALSE(db->status().ok()) << "no write failed below the limit";
    EXPECT_GT(durable, 0);
    // Still failing: nothing is taken as written.
    for (int i = 0; i < 100; ++i) store->Push(0, Item(pushed++), false);
    (void)db->Commit();
    EXPECT_FALSE(db->Sync().ok());
    EXPECT_FALSE(db->status().ok());
    SetFileSizeLimit(original);  // space is back; the process ends (a restart)
  }
  // Run again: every durable item is there, in order; a batch is never half written.
  auto opened = StateDb::Open({.dir = dir});
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<StateDb> db = std::move(*opened);
  auto store = db->NewQueueStore(4);
  std::map<std::string, size_t> loaded;
  db->ForEachLoadedHost([&](const std::string& h, size_t n) { loaded[h] = n; });
  EXPECT_GE(loaded["a.test"], static_cast<size_t>(durable));
  EXPECT_LE(loaded["a.test"], static_cast<size_t>(pushed));
  EXPECT_EQ(loaded["a.test"] % 100, 0u);
  store->RegisterHost(0, "a.test");
  // The store goes on: new items after the old ones.
  store->Push(0, Item(99999), false);
  ASSERT_TRUE(db->Commit().ok());
  ASSERT_TRUE(db->Sync().ok());
  EXPECT_TRUE(db->status().ok());
  int n = 0;
  while (auto it = store->Pop(0)) {
    if (n < static_cast<int>(loaded["a.test"])) {
      EXPECT_EQ(it->url, Item(n).url);
    } else {
      EXPECT_EQ(it->url, Item(99999).url);
    }
    ++n;
  }
  EXPECT_EQ(n, static_cast<int>(loaded["a.test"]) + 1);
  store.reset();
  db.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace harvest::state
