// RequestIssuer without a Crawler: the parts over a crawl state in a temporary directory, a
// scripted FakeFetcher and a FakeClock; the test leases URLs from the frontier itself.
#include "crawl/request_issuer.h"

#include "crawl/crawl_parts_fixture.h"

namespace harvest::crawl {
namespace {

using namespace std::chrono_literals;
using parts_test_util::CrawlPartsTest;
using parts_test_util::FakeResponse;
using parts_test_util::RecordingSharedCrawl;

class RequestIssuerTest : public CrawlPartsTest {
 protected:
  // Leases the frontier's next URL and hands it to the issuer; false when none is ready.
  bool IssueNext() {
    std::optional<frontier::Lease> lease = frontier_->Next();
    if (!lease) return false;
    issuer_->HandleLease(std::move(*lease));
    return true;
  }
  // Completes what the fetcher has in flight, then waits out the host's delay.
  void CompleteAll() {
    while (fetcher_->in_flight() > 0) fetcher_->Poll(std::chrono::seconds(1));
    clock_.Advance(2s);
  }
  std::vector<std::string> Requested() const {
    std::vector<std::string> urls;
    for (const auto& r : fetcher_->log()) urls.push_back(r.url);
    return urls;
  }
};

TEST_F(RequestIssuerTest, FetchesRobotsTxtBeforeAHostsFirstPage) {
  OpenState();
  OpenOutput();
  fetcher_->Script("http://a.test/page", FakeResponse::Html("<p>hi</p>"));
  ASSERT_EQ(Seed("http://a.test/page"), frontier::AdmitVerdict::kAccept);
  ASSERT_TRUE(IssueNext());
  EXPECT_EQ(Requested(), (std::vector<std::string>{"http://a.test/robots.txt"}));
  CompleteAll();  // 404: no rules, everything allowed
  ASSERT_TRUE(IssueNext());
  CompleteAll();
  EXPECT_EQ(Requested(),
            (std::vector<std::string>{"http://a.test/robots.txt", "http://a.test/page"}));
  EXPECT_EQ(pipeline_->pending(), 2u);  // both responses went to the process pool
  EXPECT_TRUE(hosts_->Ensure("http://a.test").ip_known);
  EXPECT_FALSE(issuer_->page_limit_reached());
}

TEST_F(RequestIssuerTest, ADisallowedURLGetsItsOutcomeWithoutARequest) {
  OpenState();
  OpenOutput();
  fetcher_->Script("http://a.test/robots.txt",
                   FakeResponse::Text("User-agent: *\nDisallow: /private\n"));
  ASSERT_EQ(Seed("http://a.test/private"), frontier::AdmitVerdict::kAccept);
  ASSERT_TRUE(IssueNext());
  CompleteAll();
  ASSERT_TRUE(IssueNext());
  EXPECT_EQ(fetcher_->in_flight(), 0u);
  EXPECT_EQ(Requested(), (std::vector<std::string>{"http://a.test/robots.txt"}));
  EXPECT_EQ(issuer_->counters().disallowed, 1u);
  const auto outcomes = Outcomes();
  EXPECT_NE(std::find(outcomes.begin(), outcomes.end(),
                      std::pair<std::string, std::string>{"http://a.test/private", "disallowed"}),
            outcomes.end());
  ASSERT_TRUE(db_->Commit().ok());
  ASSERT_TRUE(db_->Sync().ok());  // GetSeen reads what was written
  std::optional<state::SeenRecord> seen = db_->GetSeen(Link("http://a.test/private").fp);
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->state, state::SeenRecord::State::kDone);
}

TEST_F(RequestIssuerTest, AHostTheOperatorBlockedIsHeldWithoutARequest) {
  OpenState();
  OpenOutput();
  ASSERT_EQ(Seed("http://a.test/"), frontier::AdmitVerdict::kAccept);
  std::optional<frontier::Lease> lease = frontier_->Next();
  ASSERT_TRUE(lease.has_value());
  hosts_->Override("http://a.test").blocked = true;  // blocked while its lease was out
  issuer_->HandleLease(std::move(*lease));
  EXPECT_TRUE(fetcher_->log().empty());
  EXPECT_FALSE(frontier_->Next().has_value());  // held
  EXPECT_EQ(frontier_->queued(), 1u);           // not lost
}

TEST_F(RequestIssuerTest, StopsLeasingAtThePageLimit) {
  opts_.max_pages = 1;
  OpenState();
  OpenOutput();
  ASSERT_EQ(Seed("http://a.test/1"), frontier::AdmitVerdict::kAccept);
  ASSERT_EQ(Seed("http://b.test/2"), frontier::AdmitVerdict::kAccept);
  for (int i = 0; i < 4 && !issuer_->page_limit_reached(); ++i) {
    if (!IssueNext()) CompleteAll();
  }
  EXPECT_TRUE(issuer_->page_limit_reached());
  CompleteAll();
  size_t pages = 0;
  for (const std::string& url : Requested()) pages += url.ends_with("robots.txt") ? 0 : 1;
  EXPECT_EQ(pages, 1u);
}

TEST_F(RequestIssuerTest, ALeaseOfAPartitionNotKnownToBeValidWaitsWithoutARequest) {
  RecordingSharedCrawl shared;
  shared.may_fetch = false;
  opts_.shared = &shared;
  OpenState();
  OpenOutput();
  frontier::UrlItem item;
  item.url = "http://a.test/";
  item.host = "http://a.test";
  item.fp = Link(item.url).fp;
  admitter_->AddOrPark(item);  // as taken from the shared crawl
  ASSERT_TRUE(IssueNext());
  EXPECT_TRUE(fetcher_->log().empty());
  EXPECT_EQ(issuer_->counters().lease_waits, 1u);
  EXPECT_EQ(frontier_->queued(), 1u);
}

}  // namespace
}  // namespace harvest::crawl
