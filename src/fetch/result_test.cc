// Tests of the FetchResult helpers: head parsing, header lookup, Retry-After, HTTP-date.
#include <gtest/gtest.h>

#include "fetch/fetch.h"

namespace harvest::fetch {
namespace {

using std::chrono::seconds;

FetchResult WithHeaders(std::vector<std::pair<std::string, std::string>> headers) {
  FetchResult r;
  r.headers = std::move(headers);
  return r;
}

// Sun, 06 Nov 1994 08:49:37 GMT, the example date of RFC 9110 §5.6.7.
constexpr int64_t kRfcExampleEpoch = 784111777;

TEST(ParseResponseHeaders, SplitsNameAndValueTrimmingOws) {
  const auto h = ParseResponseHeaders(
      "HTTP/1.1 200 OK\r\nContent-Type:  text/html \r\nX-Empty:\r\nSet-Cookie: a=1\r\n"
      "Set-Cookie: b=2\r\n\r\nbody: not a header\r\n");
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[0], (std::pair<std::string, std::string>{"Content-Type", "text/html"}));
  EXPECT_EQ(h[1], (std::pair<std::string, std::string>{"X-Empty", ""}));
  EXPECT_EQ(h[3].second, "b=2");
}

TEST(ParseResponseHeaders, Rfc9112_ObsFoldJoinedWithSpace) {
  const auto h = ParseResponseHeaders("HTTP/1.1 200 OK\r\nX-Long: one\r\n  two\r\n\tthree\r\n\r\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].second, "one two three");
}

TEST(ParseResponseHeaders, ToleratesBareLfAndGarbage) {
  const auto h = ParseResponseHeaders("HTTP/1.0 200 OK\nA: 1\nno colon here\n: empty name\nB:2\n");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].first, "A");
  EXPECT_EQ(h[1], (std::pair<std::string, std::string>{"B", "2"}));
  EXPECT_TRUE(ParseResponseHeaders("").empty());
  EXPECT_TRUE(ParseResponseHeaders(std::string_view("\0\0\r\n\r\n", 6)).empty());
}

TEST(FetchResult, HeaderIsCaseInsensitiveAndLastWins) {
  const FetchResult r = WithHeaders({{"Content-Type", "text/plain"},
                                     {"content-type", "text/html"},
                                     {"Content-Encoding", "gzip"}});
  EXPECT_EQ(r.Header("CONTENT-TYPE"), "text/html");
  EXPECT_EQ(r.ContentType(), "text/html");
  EXPECT_EQ(r.ContentEncoding(), "gzip");
  EXPECT_FALSE(r.Header("Location").has_value());
  EXPECT_EQ(WithHeaders({}).ContentType(), "");
}

TEST(ParseHttpDate, Rfc9110_AllThreeForms) {
  EXPECT_EQ(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), kRfcExampleEpoch);
  EXPECT_EQ(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"), kRfcExampleEpoch);
  EXPECT_EQ(ParseHttpDate("Sun Nov  6 08:49:37 1994"), kRfcExampleEpoch);
  EXPECT_EQ(ParseHttpDate("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
  EXPECT_EQ(ParseHttpDate("Tue, 29 Feb 2028 23:59:59 GMT"), 1835481599);
}

TEST(ParseHttpDate, RejectsMalformed) {
  EXPECT_FALSE(ParseHttpDate(""));
  EXPECT_FALSE(ParseHttpDate("yesterday"));
  EXPECT_FALSE(ParseHttpDate("Sun, 06 Foo 1994 08:49:37 GMT"));
  EXPECT_FALSE(ParseHttpDate("Sun, 06 Nov 1994 25:49:37 GMT"));
  EXPECT_FALSE(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 PST"));
  EXPECT_FALSE(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT trailing"));
  EXPECT_FALSE(ParseHttpDate(std::string(200, 'x')));
}

TEST(FetchResult, SinceLastByteIsClampedToTheTransfer) {
  FetchResult r;
  r.total_time = std::chrono::microseconds(5000);
  EXPECT_EQ(r.SinceLastByte(1'000'000), std::chrono::microseconds(0)) << "no stamp: ended now";
  r.last_byte_wall_us = 1'000'000;
  EXPECT_EQ(r.SinceLastByte(1'000'300), std::chrono::microseconds(300));
  EXPECT_EQ(r.SinceLastByte(999'000), std::chrono::microseconds(0)) << "the clock stepped back";
  EXPECT_EQ(r.SinceLastByte(9'000'000), std::chrono::microseconds(5000))
      << "the clock stepped forward: never earlier than the transfer's start";
}

TEST(FetchResult, Rfc9110_RetryAfterDelaySeconds) {
  EXPECT_EQ(WithHeaders({{"Retry-After", "120"}}).RetryAfter(0), seconds(120));
  EXPECT_EQ(WithHeaders({{"Retry-After", " 0 "}}).RetryAfter(0), seconds(0));
  // Absurd values are clamped to a year rather than overflowing.
  EXPECT_EQ(WithHeaders({{"Retry-After", "99999999999999999999999"}}).RetryAfter(0),
            seconds(365LL * 24 * 3600));
}

TEST(FetchResult, Rfc9110_RetryAfterHttpDate) {
  const FetchResult r = WithHeaders({{"Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT"}});
  EXPECT_EQ(r.RetryAfter((kRfcExampleEpoch - 90) * 1000000), seconds(90));
  EXPECT_EQ(r.RetryAfter((kRfcExampleEpoch + 5000) * 1000000), seconds(0));  // in the past
}

TEST(FetchResult, RetryAfterAbsentOrGarbage) {
  EXPECT_FALSE(WithHeaders({}).RetryAfter(0));
  EXPECT_FALSE(WithHeaders({{"Retry-After", ""}}).RetryAfter(0));
  EXPECT_FALSE(WithHeaders({{"Retry-After", "-5"}}).RetryAfter(0));
  EXPECT_FALSE(WithHeaders({{"Retry-After", "soon"}}).RetryAfter(0));
}

TEST(OutcomeName, NamesEveryOutcome) {
  EXPECT_EQ(OutcomeName(FetchOutcome::kOk), "ok");
  EXPECT_EQ(OutcomeName(FetchOutcome::kTruncated), "truncated");
  EXPECT_EQ(OutcomeName(FetchOutcome::kTooManyRedirects), "too_many_redirects");
  EXPECT_EQ(OutcomeName(FetchOutcome::kOtherError), "other_error");
}

}  // namespace
}  // namespace harvest::fetch
