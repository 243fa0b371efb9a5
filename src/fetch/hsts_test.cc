// Strict-Transport-Security parsing (RFC 6797 §6.1, §8.1).
#include <gtest/gtest.h>

#include "fetch/fetch.h"

namespace harvest::fetch {
namespace {

using std::chrono::seconds;

TEST(HstsTest, MaxAgeAndIncludeSubDomainsInAnyCaseAndOrder) {
  for (const char* v :
       {"max-age=31536000; includeSubDomains", "includeSubDomains; max-age=31536000",
        "MAX-AGE=31536000;INCLUDESUBDOMAINS", "  max-age = 31536000 ;  includesubdomains ",
        "max-age=\"31536000\"; includeSubDomains", ";;max-age=31536000;;includeSubDomains;"}) {
    std::optional<HstsPolicy> p = ParseStrictTransportSecurity(v);
    ASSERT_TRUE(p.has_value()) << v;
    EXPECT_EQ(p->max_age, seconds(31536000)) << v;
    EXPECT_TRUE(p->include_subdomains) << v;
  }
  std::optional<HstsPolicy> p = ParseStrictTransportSecurity("max-age=60");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->max_age, seconds(60));
  EXPECT_FALSE(p->include_subdomains);
}

TEST(HstsTest, MaxAgeZeroClearsAndAHugeOneIsCut) {
  ASSERT_TRUE(ParseStrictTransportSecurity("max-age=0").has_value());
  EXPECT_EQ(ParseStrictTransportSecurity("max-age=0")->max_age, seconds(0));
  EXPECT_EQ(ParseStrictTransportSecurity("max-age=99999999999999999999999")->max_age, kMaxHstsAge);
}

TEST(HstsTest, UnknownDirectivesAreIgnoredWithTheirValues) {
  std::optional<HstsPolicy> p =
      ParseStrictTransportSecurity("preload; max-age=10; report-uri=\"https://r/;x\"; foo=bar");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->max_age, seconds(10));
  EXPECT_FALSE(p->include_subdomains);
}

TEST(HstsTest, AnInvalidHeaderIsIgnoredAsAWhole) {
  for (const char* v :
       {"", "includeSubDomains",   // no max-age
        "max-age=10; max-age=20",  // a directive twice
        "max-age=10; MAX-AGE=10",  // the same, in another case
        "includeSubDomains; max-age=1; includesubdomains", "max-age=-1", "max-age=1.5",
        "max-age=", "max-age=abc", "max-age", "max-age=\"\"", "max-age=\"10", "max-age=10 20",
        "max-age=10 x", "max-age=10; includeSubDomains=yes", "max-age=10, includeSubDomains", "=10",
        "max-age=10; =x", "max-age=10; foo=\"a\"b"}) {
    EXPECT_FALSE(ParseStrictTransportSecurity(v).has_value()) << "'" << v << "'";
  }
}

TEST(HstsTest, OnlyTheFirstHeaderOfAResponseCounts) {
  FetchResult r;
  EXPECT_FALSE(r.StrictTransportSecurity().has_value());
  r.headers = {{"Content-Type", "text/html"},
               {"strict-transport-security", "max-age=100"},
               {"Strict-Transport-Security", "max-age=200; includeSubDomains"}};
  std::optional<HstsPolicy> p = r.StrictTransportSecurity();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->max_age, seconds(100));
  EXPECT_FALSE(p->include_subdomains);
  r.headers[1].second = "max-age=oops";  // the first is invalid: ignored, not the second used
  EXPECT_FALSE(r.StrictTransportSecurity().has_value());
}

}  // namespace
}  // namespace harvest::fetch
