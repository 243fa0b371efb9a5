// Parked URLs of StateDb (state.h): taken by (class, host) groups, best class first, going
// on where the last call stopped and wrapping once; durable across a restart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "state/state.h"

namespace harvest::state {
namespace {

class ParkedDir {
 public:
  ParkedDir() {
    path_ =
        std::filesystem::temp_directory_path() /
        ("harvest_parked_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::remove_all(path_);
  }
  ~ParkedDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

frontier::UrlItem Item(const std::string& host, int i, int cls) {
  frontier::UrlItem item;
  item.host = "http://" + host;
  item.url = item.host + "/p/" + std::to_string(i);
  item.fp = std::hash<std::string>()(item.url);
  item.priority = cls;
  return item;
}

std::vector<std::string> Take(StateDb& db, size_t groups) {
  std::vector<std::string> urls;
  db.TakeParked(groups, [&](frontier::UrlItem item) { urls.push_back(item.url); });
  return urls;
}

TEST(Parked, TakesWholeGroupsBestClassFirstAndWrapsOnce) {
  ParkedDir dir;
  Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto store = (*db)->NewQueueStore(4);
  (*db)->Park(Item("b.test", 1, 2));
  (*db)->Park(Item("a.test", 1, 2));
  (*db)->Park(Item("b.test", 2, 2));
  (*db)->Park(Item("c.test", 1, 0));
  EXPECT_EQ((*db)->parked(), 4u);
  // Class 0 first, then hosts by name; a group is every URL of one host and class.
  EXPECT_EQ(Take(**db, 1), std::vector<std::string>{"http://c.test/p/1"});
  EXPECT_EQ(Take(**db, 1), std::vector<std::string>{"http://a.test/p/1"});
  // Parked meanwhile before the cursor: found after wrapping, the rest of this call first.
  (*db)->Park(Item("a.test", 3, 1));
  EXPECT_EQ(Take(**db, 5), (std::vector<std::string>{"http://b.test/p/1", "http://b.test/p/2",
                                                     "http://a.test/p/3"}));
  EXPECT_EQ((*db)->parked(), 0u);
  EXPECT_TRUE(Take(**db, 5).empty());
  // A lone group met again after wrapping is not taken twice in one call.
  (*db)->Park(Item("d.test", 1, 3));
  (*db)->Park(Item("d.test", 2, 3));
  EXPECT_EQ(Take(**db, 5), (std::vector<std::string>{"http://d.test/p/1", "http://d.test/p/2"}));
  EXPECT_EQ((*db)->parked(), 0u);
}

TEST(Parked, SurviveARestartAndStayAdmitted) {
  ParkedDir dir;
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

}  // namespace
}  // namespace harvest::state
