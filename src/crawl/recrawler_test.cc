// Recrawler without a Crawler: a crawl state in a temporary directory, the frontier over it,
// a FakeClock.
#include "crawl/recrawler.h"

#include "crawl/crawl_parts_fixture.h"

namespace harvest::crawl {
namespace {

using namespace std::chrono_literals;
using parts_test_util::CrawlPartsTest;
using parts_test_util::RecordingSharedCrawl;

class RecrawlerTest : public CrawlPartsTest {
 protected:
  frontier::UrlItem Item(const std::string& url) {
    const FoundLink link = Link(url);
    frontier::UrlItem item;
    item.url = link.url;
    item.host = link.origin();
    item.fp = link.fp;
    return item;
  }
};

TEST_F(RecrawlerTest, ADoneMarkIsDueOneRefreshWindowLater) {
  opts_.freshness.refresh_window = 1h;
  OpenState();
  const frontier::UrlItem item = Item("http://a.test/x");
  const int64_t now = clock_.WallMicros();
  recrawler_->MarkDone(item, 404);
  ASSERT_TRUE(db_->Commit().ok());
  ASSERT_TRUE(db_->Sync().ok());  // GetSeen reads what was written
  std::optional<state::SeenRecord> seen = db_->GetSeen(item.fp);
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->state, state::SeenRecord::State::kDone);
  EXPECT_EQ(seen->status, 404);
  EXPECT_EQ(seen->fetch_time_us, now);
  EXPECT_EQ(seen->next_due_us, now + 3'600'000'000);
  EXPECT_EQ(recrawler_->NextDue(), now + 3'600'000'000);
  EXPECT_FALSE(recrawler_->DueNow());
  EXPECT_EQ(recrawler_->Previous(item)->status, 404);  // the last version, for the recrawl
  EXPECT_FALSE(recrawler_->Previous(Item("http://a.test/unknown")).has_value());
}

TEST_F(RecrawlerTest, ReleasesDueURLsIntoTheFrontierWithinTheRecrawlShare) {
  opts_.freshness.refresh_window = 1h;
  opts_.freshness.recrawl_share = 0.5;
  OpenState();
  for (int i = 0; i < 40; ++i)
    recrawler_->MarkDone(Item("http://a.test/" + std::to_string(i)), 200);
  ASSERT_TRUE(db_->Commit().ok());
  EXPECT_EQ(Seed("http://new.test/"), frontier::AdmitVerdict::kAccept);  // a new URL waits
  recrawler_->ReleaseDue();
  EXPECT_EQ(frontier_->queued(), 1u);  // none due yet
  clock_.Advance(1h);
  ASSERT_TRUE(recrawler_->DueNow());
  recrawler_->ReleaseDue();
  // With a new URL waiting and none started yet, recrawls get only the slack (16, +1).
  EXPECT_EQ(frontier_->queued(), 1u + 17u);
  recrawler_->ReleaseDue();
  EXPECT_EQ(frontier_->queued(), 1u + 17u);  // the share is used up until new fetches start
  std::optional<frontier::Lease> lease = frontier_->Next();
  ASSERT_TRUE(lease.has_value());
  EXPECT_TRUE(lease->item.recrawl || lease->item.host == "http://new.test");
}

TEST_F(RecrawlerTest, ASharedCrawlsRecrawlKnowsItsLastFetchUntilDone) {
  RecordingSharedCrawl shared;
  opts_.shared = &shared;
  OpenState();
  frontier::UrlItem item = Item("http://a.test/x");
  item.recrawl = true;
  state::SeenRecord last{.state = state::SeenRecord::State::kDone, .status = 200, .etag = "\"v1\""};
  recrawler_->KeepPrevious(item.fp, last);
  ASSERT_TRUE(recrawler_->Previous(item).has_value());
  EXPECT_EQ(recrawler_->Previous(item)->etag, "\"v1\"");
  EXPECT_FALSE(recrawler_->NextDue().has_value());  // the shared crawl hands due URLs out
  recrawler_->MarkDone(item, 200);
  EXPECT_FALSE(recrawler_->Previous(item).has_value());
  ASSERT_EQ(shared.done.size(), 1u);
  EXPECT_EQ(shared.done[0], item.url);
  // The local state keeps the done mark without a schedule entry.
  ASSERT_TRUE(db_->Commit().ok());
  ASSERT_TRUE(db_->Sync().ok());
  std::optional<state::SeenRecord> local = db_->GetSeen(item.fp);
  ASSERT_TRUE(local.has_value());
  EXPECT_EQ(local->next_due_us, 0);
}

}  // namespace
}  // namespace harvest::crawl
