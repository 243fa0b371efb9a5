// Tests of BuildRow, HostOf and TimestampLiteral (row.cc) over WARC files written by
// store::WarcWriter.
#include <gtest/gtest.h>

#include <filesystem>

#include "metadata/metadata.h"
#include "metadata/row_parse.h"
#include "store/store.h"

namespace harvest::metadata {
namespace {

class BuildRowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("harvest-row-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    store::WarcOptions o;
    o.dir = dir_;
    auto w = store::WarcWriter::Open(o);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    writer_ = std::move(*w);
  }
  void TearDown() override {
    writer_.reset();
    std::filesystem::remove_all(dir_);
  }
  static store::Capture Page(const std::string& url, std::vector<std::string> links) {
    store::Capture c;
    c.target_uri = url;
    c.fetch_time_us = 1'700'000'000'000'000;
    c.request_header = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
    c.response_header = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
    c.payload = "<html><title>T</title></html>";
    c.status = 200;
    c.mime = "text/html";
    c.outlinks = std::move(links);
    return c;
  }
  state::PageEntry Entry(const store::RecordLocation& loc, const std::string& url, bool revisit) {
    state::PageEntry p;
    p.id = ++next_id_;
    p.url = url;
    p.host = HostOf(url);
    p.status = 200;
    p.fetched_at_us = 1'700'000'000'000'000;
    p.warc_file = loc.filename;
    p.warc_offset = loc.offset;
    p.warc_length = loc.length;
    p.revisit = revisit;
    return p;
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::WarcWriter> writer_;
  uint64_t next_id_ = 0;
};

TEST_F(BuildRowTest, ResponseCountsOutlinksOfItsOwnMetadataRecord) {
  auto a =
      writer_->WriteResponse(Page("http://www.a.test/x", {"http://b.test/", "http://c.test/"}));
  ASSERT_TRUE(a.ok());
  // The next fetch has three links: they must not be counted for the first.
  auto b = writer_->WriteResponse(
      Page("http://www.a.test/y", {"http://d.test/", "http://e.test/", "http://f.test/"}));
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(writer_->Flush().ok());
  PageRow row = BuildRow(Entry(*a, "http://www.a.test/x", false), dir_, "w1");
  EXPECT_EQ(row.outcome, "fetched");
  ASSERT_TRUE(row.outlinks.has_value());
  EXPECT_EQ(*row.outlinks, 2);
  EXPECT_EQ(row.host, "www.a.test");
  EXPECT_EQ(row.domain, "a.test");
  EXPECT_EQ(row.worker, "w1");
  EXPECT_EQ(row.fetch_key, a->filename + ":" + std::to_string(a->offset));
  PageRow row_b = BuildRow(Entry(*b, "http://www.a.test/y", false), dir_, "w1");
  EXPECT_EQ(*row_b.outlinks, 3);
}

TEST_F(BuildRowTest, ResponseWithoutMetadataRecordHasNoOutlinks) {
  auto a = writer_->WriteResponse(Page("http://a.test/", {}));
  auto b = writer_->WriteResponse(Page("http://a.test/2", {"http://z.test/"}));
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(writer_->Flush().ok());
  PageRow row = BuildRow(Entry(*a, "http://a.test/", false), dir_, "w");
  ASSERT_TRUE(row.outlinks.has_value());
  EXPECT_EQ(*row.outlinks, 0);  // the next record is the other fetch's request
}

TEST_F(BuildRowTest, RevisitNamesTheRevisitedUri) {
  auto a = writer_->WriteResponse(Page("http://a.test/", {}));
  ASSERT_TRUE(a.ok());
  store::Revisit r;
  r.refers_to_uri = "http://a.test/";
  r.refers_to_date_us = 1'700'000'000'000'000;
  auto b = writer_->WriteRevisit(Page("http://a.test/copy", {"http://q.test/"}), r);
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(writer_->Flush().ok());
  PageRow row = BuildRow(Entry(*b, "http://a.test/copy", true), dir_, "w");
  EXPECT_EQ(row.outcome, "revisit");
  EXPECT_EQ(row.reason, "http://a.test/");
  EXPECT_EQ(*row.outlinks, 1);
}

// The crawler's outcome and reason (page record format 2) win over what the WARC record
// implies; an attempt has no WARC record to read and is keyed by its source and id.
TEST_F(BuildRowTest, OutcomeAndReasonAreTheCrawlersAndAttemptsNeedNoWarc) {
  auto a = writer_->WriteResponse(Page("http://a.test/busy", {"http://q.test/"}));
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(writer_->Flush().ok());
  state::PageEntry gave_up = Entry(*a, "http://a.test/busy", false);
  gave_up.status = 503;
  gave_up.outcome = "gave-up";
  gave_up.reason = "HTTP 503 (3 attempts)";
  PageRow row = BuildRow(gave_up, dir_, "w", "w:/crawl");
  EXPECT_EQ(row.outcome, "gave-up");
  EXPECT_EQ(row.reason, "HTTP 503 (3 attempts)");
  EXPECT_EQ(row.fetch_key, a->filename + ":" + std::to_string(a->offset));
  EXPECT_EQ(*row.outlinks, 1);
  state::PageEntry attempt;
  attempt.id = 42;
  attempt.url = "http://a.test/slow";
  attempt.fetched_at_us = 5;
  attempt.outcome = "retried";
  attempt.reason = "timeout: slow (attempt 1)";
  row = BuildRow(attempt, dir_, "w", "w:/crawl");
  EXPECT_EQ(row.fetch_key, "w:/crawl#42");
  EXPECT_EQ(row.fetch_key, AttemptKey("w:/crawl", 42));
  EXPECT_EQ(row.status, 0);
  EXPECT_EQ(row.warc_file, "");
  EXPECT_EQ(row.host, "a.test");
  EXPECT_EQ(row.outcome, "retried");
  EXPECT_EQ(row.reason, "timeout: slow (attempt 1)");
  EXPECT_EQ(row.fetched_at_us, 5);
}

TEST_F(BuildRowTest, UnreadableWarcLeavesOutlinksUnknown) {
  state::PageEntry p;
  p.id = 1;
  p.url = "http://a.test/";
  p.warc_file = "missing.warc.gz";
  p.revisit = true;
  PageRow row = BuildRow(p, dir_, "w");
  EXPECT_FALSE(row.outlinks.has_value());
  EXPECT_EQ(row.outcome, "revisit");
  EXPECT_EQ(row.host, "a.test");
}

TEST_F(BuildRowTest, FetchTimeHasTheMicrosecondsOfTheWarcDate) {
  store::Capture c = Page("http://a.test/", {});
  c.fetch_time_us = 1'700'000'000'123'456;
  auto a = writer_->WriteResponse(c);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(writer_->Flush().ok());
  state::PageEntry p = Entry(*a, "http://a.test/", false);
  p.fetched_at_us = 1'700'000'000'123'000;  // as the admin API gives it: milliseconds
  EXPECT_EQ(BuildRow(p, dir_, "w").fetched_at_us, 1'700'000'000'123'456);
}

TEST(ParseWarcDateTest, Rfc3339UtcWithOptionalFraction) {
  using internal::ParseWarcDate;
  EXPECT_EQ(ParseWarcDate("2023-11-14T22:13:20Z"), 1'700'000'000'000'000);
  EXPECT_EQ(ParseWarcDate("2023-11-14T22:13:20.5Z"), 1'700'000'000'500'000);
  EXPECT_EQ(ParseWarcDate("2023-11-14T22:13:20.123456789Z"), 1'700'000'000'123'456);
  EXPECT_FALSE(ParseWarcDate("2023-11-14 22:13:20Z"));
  EXPECT_FALSE(ParseWarcDate("2023-11-14T22:13:20"));
  EXPECT_FALSE(ParseWarcDate("2023-13-14T22:13:20Z"));
  EXPECT_FALSE(ParseWarcDate("2023-11-14T22:13:20.Z"));
  EXPECT_FALSE(ParseWarcDate("2023-11-14T22:13:20.1234567890Z"));
  EXPECT_FALSE(ParseWarcDate(""));
}

TEST(CountOutlinksTest, OnlyOutlinkFieldsAtLineStarts) {
  EXPECT_EQ(internal::CountOutlinks("via: x\r\noutlink: a\r\noutlink: b\r\nxoutlink: c\r\n"), 2);
  EXPECT_EQ(internal::CountOutlinks(""), 0);
}

TEST(HostOfTest, AuthorityWithoutUserinfo) {
  EXPECT_EQ(HostOf("http://a.test:8080/x?y"), "a.test:8080");
  EXPECT_EQ(HostOf("https://u:p@b.test/"), "b.test");
  EXPECT_EQ(HostOf("http://c.test"), "c.test");
  EXPECT_EQ(HostOf("no-scheme"), "");
}

TEST(TimestampLiteralTest, MicrosecondsInUtc) {
  EXPECT_EQ(TimestampLiteral(0), "1970-01-01 00:00:00.000000+00");
  EXPECT_EQ(TimestampLiteral(1'700'000'000'123'456), "2023-11-14 22:13:20.123456+00");
  EXPECT_EQ(TimestampLiteral(-1), "1969-12-31 23:59:59.999999+00");
}

}  // namespace
}  // namespace harvest::metadata
