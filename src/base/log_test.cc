#include "base/log.h"

#include <gtest/gtest.h>

namespace harvest {
namespace {

TEST(JsonEscapeTest, EscapesQuotesBackslashAndControlBytes) {
  EXPECT_EQ(JsonEscape("plain"), "plain");
  EXPECT_EQ(JsonEscape("a\"b\\c"), "a\\\"b\\\\c");
  EXPECT_EQ(JsonEscape("x\ny\t\x01"), "x\\ny\\t\\u0001");
}

TEST(SetupLoggingTest, RejectsUnknownLevelAndFormat) {
  EXPECT_FALSE(SetupLogging({.level = "loud", .format = "text"}).ok());
  EXPECT_FALSE(SetupLogging({.level = "info", .format = "xml"}).ok());
}

}  // namespace
}  // namespace harvest
