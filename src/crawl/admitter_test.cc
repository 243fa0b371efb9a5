// Admitter without a Crawler: a crawl state in a temporary directory, the frontier and host
// table over it, a FakeClock.
#include "crawl/admitter.h"

#include "crawl/crawl_parts_fixture.h"

namespace harvest::crawl {
namespace {

using namespace std::chrono_literals;
using parts_test_util::CrawlPartsTest;

class AdmitterTest : public CrawlPartsTest {};

TEST_F(AdmitterTest, AdmitsASeedOnceAndCountsWhatItRefuses) {
  OpenState();
  admitter_->AdmitSeeds({"http://a.test/", "not a url", "http://a.test/"});
  EXPECT_EQ(frontier_->queued(), 1u);
  const Admitter::Counters& c = admitter_->counters();
  EXPECT_EQ(c.seeds, 3u);
  EXPECT_EQ(c.admitted, 1u);
  EXPECT_EQ(c.rejected, 1u);  // the second a.test/: seen
  EXPECT_EQ(admitter_->seen_refusals(), 1u);
  EXPECT_EQ(Seed("http://a.test/"), frontier::AdmitVerdict::kSeen);
  EXPECT_EQ(Seed("http://b.test/"), frontier::AdmitVerdict::kAccept);
  EXPECT_EQ(admitter_->counters().seeds, 4u);  // an injected seed counts once accepted
  EXPECT_TRUE(hosts_->Contains("http://b.test"));
}

TEST_F(AdmitterTest, ALinkIsOneLevelDeeperARedirectKeepsTheDepthUpToItsHopLimit) {
  opts_.max_redirect_hops = 1;
  OpenState();
  frontier::UrlItem page;
  page.url = "http://a.test/";
  page.host = "http://a.test";
  page.depth = 2;
  EXPECT_EQ(admitter_->Admit(Link("http://a.test/next"), page), frontier::AdmitVerdict::kAccept);
  FoundLink redirect = Link("http://a.test/moved");
  redirect.redirect = true;
  EXPECT_EQ(admitter_->Admit(redirect, page), frontier::AdmitVerdict::kAccept);
  frontier::UrlItem hop = page;
  hop.hops = 1;
  FoundLink again = Link("http://a.test/moved-again");
  again.redirect = true;
  EXPECT_EQ(admitter_->Admit(again, hop), frontier::AdmitVerdict::kTooDeep);
  std::vector<std::pair<std::string, int>> depths;
  while (std::optional<frontier::Lease> lease = frontier_->Next()) {
    depths.emplace_back(lease->item.url, lease->item.depth);
    frontier_->Complete(*lease, {.kind = frontier::CompletionKind::kDone});
    clock_.Advance(2s);
  }
  std::sort(depths.begin(), depths.end());
  EXPECT_EQ(depths, (std::vector<std::pair<std::string, int>>{{"http://a.test/moved", 2},
                                                              {"http://a.test/next", 3}}));
  const auto outcomes = Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0],
            (std::pair<std::string, std::string>{"http://a.test/moved-again", "redirect-limit"}));
}

TEST_F(AdmitterTest, ParksTheURLsOfAHostWithNoRoomAndLetsThemInOnceThereIs) {
  opts_.host_cache = 1;
  OpenState();
  EXPECT_EQ(Seed("http://a.test/"), frontier::AdmitVerdict::kAccept);
  EXPECT_EQ(Seed("http://b.test/"), frontier::AdmitVerdict::kAccept);
  EXPECT_EQ(frontier_->queued(), 1u);
  EXPECT_EQ(db_->parked(), 1u);
  EXPECT_FALSE(hosts_->Contains("http://b.test"));
  admitter_->ActivateParked();  // no room yet
  EXPECT_EQ(db_->parked(), 1u);
  std::optional<frontier::Lease> lease = frontier_->Next();
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->item.host, "http://a.test");
  frontier_->Complete(*lease, {.kind = frontier::CompletionKind::kDone});
  hosts_->Evict(0);  // a.test is idle: it makes room
  ASSERT_TRUE(db_->Commit().ok());
  admitter_->ActivateParked();
  EXPECT_EQ(db_->parked(), 0u);
  EXPECT_EQ(admitter_->counters().unparked, 1u);
  EXPECT_TRUE(hosts_->Contains("http://b.test"));
  EXPECT_EQ(frontier_->queued(), 1u);
}

TEST_F(AdmitterTest, FollowsAPagesLinksFromTheShortestPathFoundWhileItWaited) {
  OpenState();
  frontier::UrlItem deep;
  deep.url = "http://x.test/deep";
  deep.host = "http://x.test";
  deep.depth = 4;
  const FoundLink target = Link("http://a.test/page");
  ASSERT_EQ(admitter_->Admit(target, deep), frontier::AdmitVerdict::kAccept);  // depth 5
  frontier::UrlItem shallow = deep;
  shallow.url = "http://x.test/shallow";
  shallow.depth = 1;
  EXPECT_EQ(admitter_->Admit(target, shallow), frontier::AdmitVerdict::kSeen);  // notes 2
  // The page is fetched (admitted at depth 5); its links come from depth 2.
  std::vector<PageLinks> batch(1);
  batch[0].source.url = target.url;
  batch[0].source.host = target.origin();
  batch[0].source.fp = target.fp;
  batch[0].source.depth = 5;
  batch[0].links.push_back(Link("http://a.test/child"));
  admitter_->AdmitLinks(&batch);
  EXPECT_EQ(batch[0].source.depth, 2);
  EXPECT_EQ(admitter_->counters().depth_lowered, 1u);
  bool found = false;
  while (std::optional<frontier::Lease> lease = frontier_->Next()) {
    if (lease->item.url == "http://a.test/child") {
      EXPECT_EQ(lease->item.depth, 3);
      found = true;
    }
    frontier_->Complete(*lease, {.kind = frontier::CompletionKind::kDone});
    clock_.Advance(2s);
  }
  EXPECT_TRUE(found);
}

TEST_F(AdmitterTest, HostWeightsRaiseAHostsPriorityClass) {
  opts_.frontier.priority_classes = 4;
  OpenState();
  admitter_->weights().SetOverride("http://heavy.test", 100.0);
  EXPECT_EQ(admitter_->weights().Weight("http://heavy.test"), 100.0);
  frontier::UrlItem page;
  page.url = "http://x.test/";
  page.host = "http://x.test";
  page.depth = 3;
  ASSERT_EQ(admitter_->Admit(Link("http://light.test/"), page), frontier::AdmitVerdict::kAccept);
  ASSERT_EQ(admitter_->Admit(Link("http://heavy.test/"), page), frontier::AdmitVerdict::kAccept);
  std::optional<frontier::Lease> first = frontier_->Next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->item.host, "http://heavy.test");  // a better class is served first
}

}  // namespace
}  // namespace harvest::crawl
