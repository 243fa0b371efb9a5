#include "audit/log_line.h"

#include <gtest/gtest.h>

#include <string>

namespace harvest::audit {
namespace {

constexpr const char* kFull =
    R"({"host":"h0001.test","path":"/p/12?b=2&a=1","page":"h0001.test/p/12",)"
    R"("start_us":1700000000000000,"end_us":1700000000012000,"status":200,"bytes":1234,)"
    R"("conn":17,"kind":"page","disallowed":false,"retry_after_s":2,"cond":true})";

TEST(ParseLogLineTest, ParsesEveryDocumentedField) {
  LogLine l;
  std::string error;
  ASSERT_TRUE(ParseLogLine(kFull, &l, &error)) << error;
  EXPECT_EQ(l.host, "h0001.test");
  EXPECT_EQ(l.path, "/p/12?b=2&a=1");
  EXPECT_TRUE(l.has_page);
  EXPECT_EQ(l.page, "h0001.test/p/12");
  EXPECT_EQ(l.start_us, 1700000000000000);
  EXPECT_EQ(l.end_us, 1700000000012000);
  EXPECT_EQ(l.status, 200);
  EXPECT_EQ(l.kind, "page");
  EXPECT_FALSE(l.disallowed);
  EXPECT_TRUE(l.has_retry_after);
  EXPECT_DOUBLE_EQ(l.retry_after_s, 2.0);
  EXPECT_TRUE(l.cond);
}

TEST(ParseLogLineTest, NullPageAndOptionalFieldsAbsent) {
  LogLine l;
  std::string error;
  ASSERT_TRUE(ParseLogLine(
      R"( { "host" : "a.test", "path":"/robots.txt", "page": null, "start_us":1, "end_us":1, "status":0 } )",
      &l, &error))
      << error;
  EXPECT_FALSE(l.has_page);
  EXPECT_FALSE(l.has_retry_after);
  EXPECT_FALSE(l.cond);
  EXPECT_FALSE(l.disallowed);
  EXPECT_EQ(l.status, 0);
}

TEST(ParseLogLineTest, SkipsUnknownFieldsOfAnyShape) {
  LogLine l;
  std::string error;
  ASSERT_TRUE(ParseLogLine(
      R"({"x":{"a":[1,2.5e3,{"b":null}],"c":"\"}"},"host":"a.test","y":[],"path":"/","z":-0.5,)"
      R"("start_us":5,"end_us":6,"status":404,"w":true})",
      &l, &error))
      << error;
  EXPECT_EQ(l.status, 404);
}

TEST(ParseLogLineTest, UnescapesStrings) {
  LogLine l;
  std::string error;
  ASSERT_TRUE(ParseLogLine(
      R"({"host":"a.test","path":"/caf\u00e9/\ud83d\ude00\/\"q\"","start_us":1,"end_us":2,"status":200})",
      &l, &error))
      << error;
  EXPECT_EQ(l.path, "/caf\xC3\xA9/\xF0\x9F\x98\x80/\"q\"");
}

TEST(ParseLogLineTest, ReusedRecordIsReset) {
  LogLine l;
  std::string error;
  ASSERT_TRUE(ParseLogLine(kFull, &l, &error));
  ASSERT_TRUE(
      ParseLogLine(R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":200})", &l, &error));
  EXPECT_FALSE(l.has_page);
  EXPECT_FALSE(l.cond);
  EXPECT_FALSE(l.has_retry_after);
  EXPECT_EQ(l.kind, "");
}

TEST(ParseLogLineTest, ParsesSchemeProtoAndUpgrade) {
  LogLine l;
  std::string error;
  ASSERT_TRUE(ParseLogLine(R"({"host":"a.test","path":"/","page":null,"start_us":1,"end_us":2,)"
                           R"("status":301,"kind":"page","scheme":"http","proto":"1.1",)"
                           R"("upgrade":true})",
                           &l, &error))
      << error;
  EXPECT_EQ(l.scheme, Scheme::kHttp);
  EXPECT_EQ(l.proto, Proto::kHttp11);
  EXPECT_TRUE(l.upgrade);
  ASSERT_TRUE(ParseLogLine(R"({"host":"a.test:8443","path":"/","start_us":1,"end_us":2,)"
                           R"("status":200,"scheme":"https","proto":"2","upgrade":false})",
                           &l, &error))
      << error;
  EXPECT_EQ(l.scheme, Scheme::kHttps);
  EXPECT_EQ(l.proto, Proto::kHttp2);
  EXPECT_FALSE(l.upgrade);
  // null reads as absent, as for the other optional fields.
  ASSERT_TRUE(ParseLogLine(R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":200,)"
                           R"("scheme":null,"proto":null,"upgrade":null})",
                           &l, &error))
      << error;
  EXPECT_EQ(l.scheme, Scheme::kUnspecified);
  EXPECT_EQ(l.proto, Proto::kUnspecified);
  EXPECT_FALSE(l.upgrade);
}

TEST(ParseLogLineTest, OldLinesHaveNoSchemeOrProtoAndAReusedRecordForgetsThem) {
  LogLine l;
  std::string error;
  ASSERT_TRUE(ParseLogLine(R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":301,)"
                           R"("scheme":"http","proto":"2","upgrade":true})",
                           &l, &error));
  ASSERT_TRUE(ParseLogLine(kFull, &l, &error)) << error;
  EXPECT_EQ(l.scheme, Scheme::kUnspecified);
  EXPECT_EQ(l.proto, Proto::kUnspecified);
  EXPECT_FALSE(l.upgrade);
}

struct BadLine {
  const char* text;
  const char* reason;
};

class ParseLogLineBadTest : public ::testing::TestWithParam<BadLine> {};

TEST_P(ParseLogLineBadTest, RejectsWithReason) {
  LogLine l;
  std::string error;
  EXPECT_FALSE(ParseLogLine(GetParam().text, &l, &error));
  EXPECT_NE(error.find(GetParam().reason), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, ParseLogLineBadTest,
    ::testing::Values(
        BadLine{"", "not a JSON object"}, BadLine{"[1,2]", "not a JSON object"},
        BadLine{"garbage", "not a JSON object"},
        BadLine{R"({"host":"a","path":"/","end_us":2,"status":200})", "missing \"start_us\""},
        BadLine{R"({"path":"/","start_us":1,"end_us":2,"status":200})", "missing \"host\""},
        BadLine{R"({"host":"a","path":"/","start_us":1,"end_us":2})", "missing \"status\""},
        BadLine{R"({"host":"","path":"/","start_us":1,"end_us":2,"status":200})", "empty"},
        BadLine{R"({"host":"a","path":"/","start_us":3,"end_us":2,"status":200})", "before"},
        BadLine{R"({"host":"a","path":"/","start_us":"1","end_us":2,"status":200})",
                "\"start_us\" is not a non-negative integer"},
        BadLine{R"({"host":"a","path":"/","start_us":1.5,"end_us":2,"status":200})",
                "\"start_us\""},
        BadLine{R"({"host":"a","path":"/","start_us":-1,"end_us":2,"status":200})", "\"start_us\""},
        BadLine{R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":1000})", "0..999"},
        BadLine{R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":200,"cond":1})",
                "\"cond\" is not a boolean"},
        BadLine{
            R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":200,"retry_after_s":"x"})",
            "retry_after_s"},
        BadLine{R"({"host":7,"path":"/","start_us":1,"end_us":2,"status":200})",
                "\"host\" is not a string"},
        BadLine{R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":200} x)", "trailing"},
        BadLine{R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":200)", "expected"},
        BadLine{R"({"host":"a\q","path":"/","start_us":1,"end_us":2,"status":200})", "host"},
        BadLine{R"({"host":"a","path":"/\ud800","start_us":1,"end_us":2,"status":200})", "path"},
        BadLine{R"({"host":"a","path":"/","start_us":99999999999999999999,"end_us":2,"status":1})",
                "start_us"},
        BadLine{R"({"host":"a","x":tru,"path":"/","start_us":1,"end_us":2,"status":200})",
                "invalid value for \"x\""},
        BadLine{R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":200,"scheme":"ftp"})",
                R"("scheme" is "ftp", not "http" or "https")"},
        BadLine{R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":200,"scheme":"HTTPS"})",
                R"("scheme" is "HTTPS", not "http" or "https")"},
        BadLine{R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":200,"scheme":1})",
                R"("scheme" is not a string or null)"},
        BadLine{R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":200,"proto":"3"})",
                R"("proto" is "3", not "1.1" or "2")"},
        BadLine{R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":200,"proto":2})",
                R"("proto" is not a string or null)"},
        BadLine{R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":200,"upgrade":1})",
                R"("upgrade" is not a boolean)"},
        BadLine{R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":301,)"
                R"("scheme":"https","upgrade":true})",
                R"("upgrade" is true on an https request)"}));

TEST(ParseLogLineTest, ALongUnknownSchemeIsEchoedShortened) {
  LogLine l;
  std::string error;
  std::string line = R"({"host":"a","path":"/","start_us":1,"end_us":2,"status":200,"scheme":")" +
                     std::string(1000, 'x') + "\"}";
  EXPECT_FALSE(ParseLogLine(line, &l, &error));
  EXPECT_EQ(error, R"("scheme" is ")" + std::string(32, 'x') + R"(...", not "http" or "https")");
}

TEST(ParseLogLineTest, DeepNestingIsRejectedNotRecursedInto) {
  std::string deep = R"({"x":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  LogLine l;
  std::string error;
  EXPECT_FALSE(ParseLogLine(deep, &l, &error));
  std::string ok = R"({"x":)" + std::string(60, '[') + std::string(60, ']') +
                   R"(,"host":"a","path":"/","start_us":1,"end_us":2,"status":200})";
  EXPECT_TRUE(ParseLogLine(ok, &l, &error)) << error;
}

TEST(ParseLogLineTest, TruncationsNeverCrash) {
  // Every prefix of a valid line is rejected cleanly (the full line parses).
  std::string full = kFull;
  LogLine l;
  std::string error;
  for (size_t n = 0; n < full.size(); ++n)
    EXPECT_FALSE(ParseLogLine(std::string_view(full).substr(0, n), &l, &error)) << n;
  EXPECT_TRUE(ParseLogLine(full, &l, &error));
}

}  // namespace
}  // namespace harvest::audit
