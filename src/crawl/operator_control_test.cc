// OperatorControl without a Crawler: the parts over a crawl state in a temporary directory,
// a FakeFetcher and a FakeClock; the commands are called directly (no channel).
#include "crawl/operator_control.h"

#include "crawl/crawl_parts_fixture.h"

namespace harvest::crawl {
namespace {

using namespace std::chrono_literals;
using parts_test_util::CrawlPartsTest;

class OperatorControlTest : public CrawlPartsTest {
 protected:
  void Open() {
    OpenState();
    OpenOutput();
    OpenControl();
  }
};

TEST_F(OperatorControlTest, InjectsSeedsDurablyAndSaysWhyItRefusedOthers) {
  Open();
  Result<admin::SeedResult> r =
      control_->InjectSeeds({.urls = {"http://a.test/", "http://a.test/", "ftp://a.test/", "::"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->queued, 1u);
  ASSERT_EQ(r->rejected.size(), 3u);
  EXPECT_EQ(r->rejected[0].reason, "already seen or queued");
  EXPECT_EQ(r->rejected[1].reason, "invalid URL: not http or https");
  EXPECT_EQ(r->rejected[2].reason, "invalid URL");
  EXPECT_EQ(frontier_->queued(), 1u);
  EXPECT_FALSE(control_->InjectSeeds({.urls = {"http://b.test/"}, .priority = 99}).ok());
}

TEST_F(OperatorControlTest, APolicyMayOnlyMakeTheCrawlPoliterAndIsSaved) {
  Open();
  EXPECT_EQ(control_->SetPolicy("a.test", {.crawl_delay_ms = 5000}).code(),
            Status::Code::kNotFound);  // not met yet
  ASSERT_EQ(Seed("http://a.test/"), frontier::AdmitVerdict::kAccept);
  EXPECT_EQ(control_->SetPolicy("a.test", {.crawl_delay_ms = 10}).code(),
            Status::Code::kInvalidArgument);  // below the default delay (1 s)
  EXPECT_EQ(control_->SetPolicy("a.test", {.max_concurrent = 2}).code(),
            Status::Code::kInvalidArgument);
  ASSERT_TRUE(control_->SetPolicy("a.test", {.crawl_delay_ms = 5000, .weight = 2.5}).ok());
  EXPECT_EQ(frontier_->HostDelay("http://a.test"), 5s);
  EXPECT_EQ(admitter_->weights().Weight("http://a.test"), 2.5);
  std::optional<state::HostOverride> saved = db_->GetHostOverride("http://a.test");
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->crawl_delay_ms, 5000);
  Result<nlohmann::json> host = control_->GetHost("a.test");
  ASSERT_TRUE(host.ok());
  EXPECT_EQ((*host)["host"], "http://a.test");
  EXPECT_EQ((*host)["policy"]["crawl_delay_ms"], 5000);
  EXPECT_EQ((*host)["policy"]["source"], "operator");
  EXPECT_EQ((*host)["queue_length"], 1);
}

TEST_F(OperatorControlTest, BlockingHoldsAHostAndUnblockingReleasesIt) {
  Open();
  ASSERT_EQ(Seed("http://a.test/"), frontier::AdmitVerdict::kAccept);
  ASSERT_TRUE(control_->SetBlocked("http://a.test", true).ok());
  EXPECT_FALSE(frontier_->Next().has_value());
  EXPECT_TRUE(hosts_->Blocked("http://a.test"));
  EXPECT_EQ(control_->GetStatus().hosts.blocked, 1u);
  ASSERT_TRUE(control_->SetBlocked("a.test", false).ok());
  EXPECT_TRUE(frontier_->Next().has_value());
  EXPECT_FALSE(hosts_->Blocked("http://a.test"));
}

TEST_F(OperatorControlTest, StatusAndMetricsShowTheCrawlsFigures) {
  Open();
  ASSERT_EQ(Seed("http://a.test/"), frontier::AdmitVerdict::kAccept);
  ASSERT_EQ(Seed("http://a.test/"), frontier::AdmitVerdict::kSeen);
  EXPECT_EQ(control_->GetStatus().state, "running");
  control_->Pause(true);
  EXPECT_TRUE(control_->paused());
  EXPECT_EQ(control_->GetStatus().state, "paused");
  const admin::StatusSnapshot s = control_->GetStatus();
  EXPECT_EQ(s.queue_depth, 1u);
  EXPECT_EQ(s.uptime_s, 10);
  const MetricsSnapshot m = control_->Metrics();
  EXPECT_EQ(m.admitted, 1u);
  EXPECT_EQ(m.dedup_url_seen, 1u);
  EXPECT_TRUE(m.paused);
  EXPECT_EQ(m.latency_counts.size(), m.latency_bounds.size() + 1);
  control_->Pause(false);
  stopping_ = true;
  EXPECT_EQ(control_->GetStatus().state, "draining");
}

}  // namespace
}  // namespace harvest::crawl
