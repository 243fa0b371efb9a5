// RunReport on its own, with a FakeClock.
#include "crawl/run_report.h"

#include <gtest/gtest.h>

#include <thread>

namespace harvest::crawl {
namespace {

using namespace std::chrono_literals;

TEST(RunReportTest, PublishesOnceASecondAndAtTheEnd) {
  FakeClock clock;
  RunReport report(&clock, /*progress_line=*/false);
  report.Start(clock.Now());
  EXPECT_EQ(report.started(), clock.Now());
  EXPECT_FALSE(report.Due(false));
  EXPECT_TRUE(report.Due(true));
  clock.Advance(1s);
  ASSERT_TRUE(report.Due(false));
  CrawlStats stats;
  stats.pages = 7;
  report.Publish(stats, {}, false);
  EXPECT_FALSE(report.Due(false));  // the second counts from the last Publish
  CrawlStats read;
  std::thread reader([&] { read = report.published(); });  // any thread
  reader.join();
  EXPECT_EQ(read.pages, 7u);
  stats.pages = 9;
  report.Publish(stats, {}, true);
  EXPECT_EQ(report.published().pages, 9u);
}

TEST(RunReportTest, TheSummarySaysHowTheCrawlEnded) {
  CrawlStats s;
  s.complete = true;
  s.pages = 3;
  EXPECT_NE(FormatSummary(s).find("crawl complete"), std::string::npos);
  s.complete = false;
  s.page_limit_reached = true;
  s.still_queued = 5;
  const std::string summary = FormatSummary(s);
  EXPECT_NE(summary.find("stopped at the page limit"), std::string::npos);
  EXPECT_NE(summary.find("5 URLs still queued"), std::string::npos);
}

}  // namespace
}  // namespace harvest::crawl
