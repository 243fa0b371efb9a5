#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <random>

#include "frontier/frontier.h"
#include "state/state.h"

namespace harvest::state {
namespace {

// A fresh directory, removed when the test ends (after the databases in it are closed:
// declare it first).
struct FreshDir {
  explicit FreshDir(const char* name)
      : path(std::filesystem::temp_directory_path() /
             (std::string("harvest_qs_") + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
  }
  ~FreshDir() { std::filesystem::remove_all(path); }
  operator const std::filesystem::path&() const { return path; }  // NOLINT: test helper
  std::filesystem::path path;
};

frontier::UrlItem Item(const std::string& host, int n, int priority = 1) {
  frontier::UrlItem it;
  it.host = host;
  it.url = "http://" + host + "/p/" + std::to_string(n);
  it.fp = std::hash<std::string>()(it.url);
  it.priority = priority;
  it.via = "http://" + host + "/";
  return it;
}

std::string PathOf(const frontier::UrlItem& it) { return it.url.substr(it.url.find("/p/") + 3); }

// The same operations against the memory store and the RocksDB store with a tiny RAM budget
// (so most items spill) must pop the same sequence; with one epoch for everything and with
// epochs of 2 and 16 items (a host's queue read back across many epochs).
class RocksQueueStoreEpochs : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(EpochBits, RocksQueueStoreEpochs, ::testing::Values(20, 1, 4));

TEST_P(RocksQueueStoreEpochs, MatchesTheMemoryStoreWhileSpilling) {
  FreshDir dir("match");
  auto db = StateDb::Open(
      {.dir = dir, .queue_ram_items = 7, .window_per_host = 3, .queue_epoch_bits = GetParam()});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto disk = (*db)->NewQueueStore(4);
  auto mem = frontier::NewMemoryQueueStore(4);
  std::mt19937 rng(11);
  const int kHosts = 5;
  for (int h = 0; h < kHosts; ++h) {
    disk->RegisterHost(h, "h" + std::to_string(h) + ".test");
    mem->RegisterHost(h, "h" + std::to_string(h) + ".test");
  }
  int n = 0;
  std::map<int, std::vector<frontier::UrlItem>> leased;
  for (int step = 0; step < 4000; ++step) {
    const int h = static_cast<int>(rng() % kHosts);
    const int op = static_cast<int>(rng() % 10);
    if (op < 5) {
      auto it = Item("h" + std::to_string(h) + ".test", n++, static_cast<int>(rng() % 4));
      disk->Push(h, it, false);
      mem->Push(h, it, false);
    } else if (op < 9) {
      auto a = disk->Pop(h);
      auto b = mem->Pop(h);
      ASSERT_EQ(a.has_value(), b.has_value()) << step;
      if (a) {
        ASSERT_EQ(a->url, b->url) << step;
        EXPECT_EQ(a->priority, b->priority);
        EXPECT_EQ(a->host, b->host);
        EXPECT_NE(a->store_seq, 0u);
        leased[h].push_back(*a);
      }
    } else if (!leased[h].empty()) {  // a lease put back (robots.txt fetch served the slot)
      auto it = leased[h].back();
      leased[h].pop_back();
      disk->Push(h, it, true);
      mem->Push(h, it, true);
    }
    ASSERT_EQ(disk->Size(h), mem->Size(h)) << step;
  }
  for (int h = 0; h < kHosts; ++h) {
    auto a = disk->Drain(h);
    auto b = mem->Drain(h);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].url, b[i].url);
  }
}

// Everything pushed and not marked done is served again after a restart, in key order;
// done items are gone.
TEST(RocksQueueStore, RestartServesEveryItemNotDone) {
  FreshDir dir("restart");
  std::set<std::string> expected;
  {
    auto db = StateDb::Open({.dir = dir, .queue_ram_items = 10, .queue_epoch_bits = 3});
    ASSERT_TRUE(db.ok());
    auto store = (*db)->NewQueueStore(4);
    store->RegisterHost(0, "a.test");
    store->RegisterHost(1, "b.test");
    for (int i = 0; i < 100; ++i) store->Push(i % 2, Item(i % 2 ? "b.test" : "a.test", i), false);
    for (int k = 0; k < 30; ++k) {
      auto it = store->Pop(0);
      ASSERT_TRUE(it);
      if (k % 3 == 0) {
        (*db)->MarkDone(*it, {.state = SeenRecord::State::kDone, .status = 200});
      } else {
        expected.insert(it->url);  // leased, never done: the "in flight" of a crash
      }
    }
    for (int i = 0; i < 100; ++i) {
      auto it = Item(i % 2 ? "b.test" : "a.test", i);
      if (i % 2 == 1 || i >= 60) expected.insert(it.url);
    }
    ASSERT_TRUE((*db)->Commit().ok());
    // No orderly close of the store: the database is closed by the StateDb destructor.
  }
  auto db = StateDb::Open({.dir = dir});
  ASSERT_TRUE(db.ok());
  EXPECT_FALSE((*db)->created());
  auto store = (*db)->NewQueueStore(4);
  std::map<std::string, size_t> loaded;
  (*db)->ForEachLoadedHost([&](const std::string& h, size_t n) { loaded[h] = n; });
  EXPECT_EQ(loaded["a.test"], 20u + 20u);  // 20 leased-not-done + 20 never popped
  EXPECT_EQ(loaded["b.test"], 50u);
  // Frontier host ids are per process: register in another order than before.
  store->RegisterHost(0, "b.test");
  store->RegisterHost(1, "a.test");
  EXPECT_EQ(store->Size(1), 40u);
  std::set<std::string> got;
  std::vector<int> a_order;
  for (int h = 0; h < 2; ++h) {
    while (auto it = store->Pop(h)) {
      got.insert(it->url);
      if (h == 1) a_order.push_back(std::stoi(PathOf(*it)));
    }
  }
  EXPECT_EQ(got, expected);
  EXPECT_TRUE(std::is_sorted(a_order.begin(), a_order.end()));  // FIFO survives the restart
  // New items get sequence numbers after the old ones.
  store->Push(1, Item("a.test", 1000), false);
  EXPECT_EQ(PathOf(*store->Pop(1)), "1000");
}

// The frontier over the RocksDB store with a restart in the middle: every URL is leased
// exactly once to completion, and the restart re-serves the leases that were outstanding.
TEST(RocksQueueStore, FrontierResumesAfterRestart) {
  FreshDir dir("frontier");
  FakeClock clock;
  frontier::FrontierOptions fo;
  fo.default_delay = std::chrono::milliseconds(0);
  std::set<std::string> done;
  std::set<std::string> outstanding;
  {
    auto db = StateDb::Open({.dir = dir, .queue_ram_items = 50, .queue_epoch_bits = 5});
    ASSERT_TRUE(db.ok());
    frontier::Frontier f(fo, &clock, (*db)->NewQueueStore(fo.priority_classes));
    for (int h = 0; h < 100; ++h) {
      for (int i = 0; i < 6; ++i) f.Add(Item("h" + std::to_string(h) + ".test", i));
    }
    for (int k = 0; k < 200; ++k) {
      auto lease = f.Next();
      ASSERT_TRUE(lease);
      if (k % 10 == 9) {  // still in flight when the process dies
        outstanding.insert(lease->item.url);
        continue;
      }
      f.Complete(*lease, {});
      (*db)->MarkDone(lease->item, {.state = SeenRecord::State::kDone});
      done.insert(lease->item.url);
    }
    ASSERT_TRUE((*db)->Commit().ok());
  }
  auto db = StateDb::Open({.dir = dir, .queue_ram_items = 50});
  ASSERT_TRUE(db.ok());
  frontier::Frontier f(fo, &clock, (*db)->NewQueueStore(fo.priority_classes));
  (*db)->ForEachLoadedHost([&](const std::string& h, size_t) { f.AdoptStoredHost(h); });
  EXPECT_EQ(f.queued(), 600u - done.size());
  std::set<std::string> second;
  while (auto lease = f.Next()) {
    EXPECT_TRUE(second.insert(lease->item.url).second);
    EXPECT_EQ(done.count(lease->item.url), 0u) << lease->item.url;
    f.Complete(*lease, {});
  }
  EXPECT_TRUE(f.Idle());
  EXPECT_EQ(second.size() + done.size(), 600u);
  for (const auto& u : outstanding) EXPECT_EQ(second.count(u), 1u) << u;
}

}  // namespace
}  // namespace harvest::state
