#include "base/zeroed_array.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

namespace harvest {
namespace {

bool AllZero(const ZeroedArray<uint64_t>& a) {
  return std::all_of(a.begin(), a.end(), [](uint64_t v) { return v == 0; });
}

// Sizes on both sides of calloc / page mapping, and not multiples of a page: every element starts
// zero, can be written, and Zero() clears it again.
TEST(ZeroedArray, StartsZeroAndZeroesAgainAtEverySize) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{32 * 1024 + 3},
                   size_t{(2 << 20) / 8 - 1}, size_t{(2 << 20) / 8}, size_t{3'000'001}}) {
    SCOPED_TRACE(n);
    ZeroedArray<uint64_t> a(n);
    ASSERT_EQ(a.size(), n);
    EXPECT_EQ(a.empty(), n == 0);
    EXPECT_TRUE(AllZero(a));
    for (size_t i = 0; i < n; i += 7) a[i] = i + 1;
    if (n > 0) {
      a[n - 1] = 42;  // the last element is inside the mapping
      EXPECT_EQ(a[n - 1], 42u);
      if (n > 1) {
        EXPECT_EQ(a[0], 1u);
      }
    }
    a.Zero();
    EXPECT_TRUE(AllZero(a));
    for (size_t i = 0; i < n; i += 5) a[i] = 9;  // usable again after Zero()
    if (n > 0) {
      EXPECT_EQ(a[0], 9u);
    }
  }
}

TEST(ZeroedArray, MovesAndSwapsOwnership) {
  ZeroedArray<uint32_t> a(100'000);
  a[5] = 7;
  ZeroedArray<uint32_t> b(std::move(a));
  EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): the moved-from state is empty
  EXPECT_EQ(a.data(), nullptr);
  ASSERT_EQ(b.size(), 100'000u);
  EXPECT_EQ(b[5], 7u);
  ZeroedArray<uint32_t> c(3);
  c[0] = 1;
  c = std::move(b);
  EXPECT_EQ(c.size(), 100'000u);
  EXPECT_EQ(c[5], 7u);
  ZeroedArray<uint32_t> d;
  d.swap(c);
  EXPECT_EQ(d[5], 7u);
  EXPECT_TRUE(c.empty());
}

}  // namespace
}  // namespace harvest
