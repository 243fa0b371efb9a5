#include "audit/interner.h"

#include <gtest/gtest.h>

#include <string>

namespace harvest::audit {
namespace {

TEST(InternerTest, DenseStableIndicesAcrossGrowth) {
  Interner t;
  EXPECT_EQ(t.Find("x"), Interner::kAbsent);
  for (uint32_t i = 0; i < 5000; ++i) EXPECT_EQ(t.Intern("id/" + std::to_string(i)), i);
  EXPECT_EQ(t.size(), 5000u);
  for (uint32_t i = 0; i < 5000; ++i) {
    EXPECT_EQ(t.Intern("id/" + std::to_string(i)), i);
    EXPECT_EQ(t.Find("id/" + std::to_string(i)), i);
    EXPECT_EQ(t.Get(i), "id/" + std::to_string(i));
  }
  EXPECT_EQ(t.Find("id/5000"), Interner::kAbsent);
  EXPECT_EQ(t.Intern(""), 5000u);
  EXPECT_EQ(t.Find(""), 5000u);
}

}  // namespace
}  // namespace harvest::audit
