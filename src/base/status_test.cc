#include "base/status.h"

#include <gtest/gtest.h>

#include "base/clock.h"

namespace harvest {
namespace {

TEST(StatusTest, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "ok");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = Status::InvalidArgument("config line 3: unknown key 'x'");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.ToString(), "invalid argument: config line 3: unknown key 'x'");
}

TEST(ResultTest, HoldsValueOrError) {
  Result<int> good(42);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);
  Result<int> bad(Status::NotFound("no such host"));
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kNotFound);
}

TEST(FakeClockTest, MovesOnlyWhenAdvanced) {
  FakeClock clock(1000);
  auto t0 = clock.Now();
  clock.Advance(std::chrono::milliseconds(5));
  EXPECT_EQ((clock.Now() - t0).count(), 5000);
  EXPECT_EQ(clock.WallMicros(), 6000);
}

}  // namespace
}  // namespace harvest
