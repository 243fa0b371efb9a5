// Shallower paths of StateDb (state.h): the least depth noted per URL, durable across a
// restart, whether the notes were committed or were still in the pending batch.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/testing/temp_dir.h"
#include "state/state.h"

namespace harvest::state {
namespace {

using test_util::TempDir;

TEST(Depths, TheLeastNotedDepthIsKeptAcrossARestart) {
  TempDir dir("depths_test");
  {
    Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ((*db)->NotedDepth(7), std::nullopt);
    (*db)->NoteDepth(7, 5);
    (*db)->NoteDepth(7, 3);
    (*db)->NoteDepth(7, 4);  // deeper than the least: changes nothing
    EXPECT_EQ((*db)->NotedDepth(7), 3);
    (*db)->NoteDepth(9, 6);
    ASSERT_TRUE((*db)->Commit().ok());
    ASSERT_TRUE((*db)->Sync().ok());
    EXPECT_EQ((*db)->NotedDepth(7), 3);
    EXPECT_EQ((*db)->NotedDepth(9), 6);
    EXPECT_EQ((*db)->NotedDepth(8), std::nullopt);
    // Closed by the destructor.
  }
  Result<std::unique_ptr<StateDb>> db = StateDb::Open({.dir = dir.path()});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  // From the column family alone (the RAM table of recent notes is empty after a restart).
  EXPECT_EQ((*db)->NotedDepth(7), 3);
  EXPECT_EQ((*db)->NotedDepth(9), 6);
  // A deeper note after the restart is merged away by the minimum.
  (*db)->NoteDepth(7, 8);
  ASSERT_TRUE((*db)->Commit().ok());
  ASSERT_TRUE((*db)->Sync().ok());
  EXPECT_EQ((*db)->NotedDepth(7), 3);
  (*db)->NoteDepth(7, 1);
  EXPECT_EQ((*db)->NotedDepth(7), 1);  // pending: found in the RAM table
}

}  // namespace
}  // namespace harvest::state
