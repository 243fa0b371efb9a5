#include "base/duration.h"

#include <gtest/gtest.h>

namespace harvest {
namespace {

using std::chrono::milliseconds;

TEST(DurationTest, ParsesUnits) {
  EXPECT_EQ(*ParseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(*ParseDuration("30s"), milliseconds(30'000));
  EXPECT_EQ(*ParseDuration("15m"), milliseconds(900'000));
  EXPECT_EQ(*ParseDuration("12h"), milliseconds(43'200'000));
  EXPECT_EQ(*ParseDuration("30d"), milliseconds(2'592'000'000));
  EXPECT_EQ(*ParseDuration("1w"), milliseconds(604'800'000));
  EXPECT_EQ(*ParseDuration("1h30m"), milliseconds(5'400'000));
  EXPECT_EQ(*ParseDuration("0s"), milliseconds(0));
}

TEST(DurationTest, RefusesWithClearErrors) {
  for (const char* bad :
       {"", "30", "s", "-5s", "1.5h", "10 s", "3x", "5sec", "1h ", "99999999999w"}) {
    Result<milliseconds> r = ParseDuration(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("bad duration"), std::string::npos) << bad;
  }
  EXPECT_NE(ParseDuration("30").status().message().find("needs a unit"), std::string::npos);
}

TEST(DurationTest, FormatRoundTrips) {
  for (int64_t ms : {0LL, 1LL, 999LL, 1000LL, 1500LL, 60'000LL, 5'400'000LL, 86'400'000LL,
                     2'592'000'000LL, 90'061'001LL}) {
    std::string s = FormatDuration(milliseconds(ms));
    Result<milliseconds> back = ParseDuration(s);
    ASSERT_TRUE(back.ok()) << s;
    EXPECT_EQ(back->count(), ms) << s;
  }
  EXPECT_EQ(FormatDuration(milliseconds(86'400'000)), "1d");
  EXPECT_EQ(FormatDuration(milliseconds(5'400'000)), "1h30m");
}

}  // namespace
}  // namespace harvest
