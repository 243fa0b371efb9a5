// Deferred URLs of StateDb (state.h): kept per host name, taken oldest first, durable across
// a reopen (counted per host, their fingerprints readmitted like queue entries).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/testing/temp_dir.h"
#include "state/state.h"

namespace harvest::state {
namespace {

using test_util::TempDir;

frontier::UrlItem Item(const std::string& origin, int i) {
  frontier::UrlItem item;
  item.host = origin;
  item.url = origin + "/p/" + std::to_string(i);
  item.fp = std::hash<std::string>()(item.url);
  item.priority = 2;
  item.depth = 3;
  item.via = origin + "/";
  return item;
}

std::vector<frontier::UrlItem> Take(StateDb& db, std::string_view name, size_t max) {
  std::vector<frontier::UrlItem> out;
  db.TakeDeferred(name, max, [&](frontier::UrlItem item) { out.push_back(std::move(item)); });
  return out;
}

TEST(Deferred, TakenPerHostNameOldestFirstAcrossOrigins) {
  TempDir dir("deferred_test");
  Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto store = (*db)->NewQueueStore(4);
  (*db)->Defer("a.test", Item("http://a.test", 1));
  (*db)->Defer("b.test", Item("http://b.test", 1));
  (*db)->Defer("a.test", Item("https://a.test:8443", 2));  // another origin of the name
  (*db)->Defer("a.test", Item("http://a.test", 3));
  EXPECT_EQ((*db)->deferred(), 4u);
  std::vector<frontier::UrlItem> two = Take(**db, "a.test", 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].url, "http://a.test/p/1");
  EXPECT_EQ(two[0].host, "http://a.test");
  EXPECT_EQ(two[1].url, "https://a.test:8443/p/2");
  EXPECT_EQ(two[1].host, "https://a.test:8443") << "the origin comes back from the URL";
  EXPECT_EQ(two[1].priority, 2);
  EXPECT_EQ(two[1].depth, 3);
  EXPECT_EQ(two[1].via, "https://a.test:8443/");
  EXPECT_EQ((*db)->deferred(), 2u);
  EXPECT_EQ(Take(**db, "a.test", 10).size(), 1u);
  EXPECT_TRUE(Take(**db, "a.test", 10).empty());
  EXPECT_TRUE(Take(**db, "a.tes", 10).empty()) << "a name, not a prefix of one";
  EXPECT_EQ((*db)->deferred(), 1u);
}

TEST(Deferred, SurviveAReopenCountedPerHost) {
  TempDir dir("deferred_test");
  {
    Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto store = (*db)->NewQueueStore(4);
    for (int i = 0; i < 5; ++i) (*db)->Defer("a.test", Item("http://a.test", i));
    (*db)->Defer("b.test", Item("http://b.test", 0));
    Take(**db, "a.test", 2);
    ASSERT_TRUE((*db)->Commit().ok());
    ASSERT_TRUE((*db)->Sync().ok());
  }
  Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto store = (*db)->NewQueueStore(4);
  EXPECT_EQ((*db)->deferred(), 4u);
  const std::map<std::string, uint64_t> expected = {{"a.test", 3}, {"b.test", 1}};
  EXPECT_EQ((*db)->DeferredHosts(), expected);
  std::vector<frontier::UrlItem> rest = Take(**db, "a.test", 10);
  ASSERT_EQ(rest.size(), 3u);
  EXPECT_EQ(rest[0].url, "http://a.test/p/2");
}

}  // namespace
}  // namespace harvest::state
