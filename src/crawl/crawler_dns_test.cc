// The crawler as a unit, DNS and per-IP politeness (docs/politeness.md "DNS and per-IP
// limits"): names resolved by the crawl's own resolver before a host's first request, DNS
// failures recorded with their cause on the retry schedule, a lookup that never answers
// holding up no other host, pinned (resolve file) and routed (connect_to) hosts never looked
// up, and the per-IP cap holding from a host's first request. In-process on a FakeFetcher,
// a FakeResolver and a FakeClock.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "base/host_key.h"
#include "crawl/crawler_test_fixture.h"
#include "fetch/testing/fake_resolver.h"

namespace harvest::crawl {
namespace {

using crawler_test_util::Links;
using crawler_test_util::OutcomeLine;
using fetch::testing::FakeRequestLog;
using fetch::testing::FakeResolver;
using fetch::testing::FakeResponse;
using namespace std::chrono_literals;

class CrawlerDnsTest : public crawler_test_util::CrawlerTestBase {
 protected:
  void SetUp() override {
    CrawlerTestBase::SetUp();
    fetch::ResolverOptions ro;
    ro.negative_ttl = 10s;  // shorter than the first retry backoff: each attempt asks again
    resolver_ = std::make_unique<FakeResolver>(&clock_, ro);
  }
  CrawlOptions DnsOptions() {
    CrawlOptions o = Options();
    o.resolver = resolver_.get();
    // The fake DNS answers private addresses (10.0.0.1 by default) and a route goes to the
    // loopback: opened, as for an intranet crawl.
    o.allow_addresses = {"10.0.0.0/8", "127.0.0.0/8"};
    return o;
  }
  // A site of `n` pages linked from its home page, at http://<host>/.
  void ScriptSite(const std::string& host, int n) {
    std::vector<std::string> hrefs;
    for (int i = 0; i < n; ++i) hrefs.push_back("/p" + std::to_string(i));
    fetcher_->Script("http://" + host + "/", FakeResponse::Html(Links(hrefs)));
    for (int i = 0; i < n; ++i) {
      fetcher_->Script("http://" + host + "/p" + std::to_string(i),
                       FakeResponse::Html("page " + std::to_string(i) + " of " + host));
    }
  }
  std::vector<FakeRequestLog> RequestsToHost(const std::string& host) const {
    std::vector<FakeRequestLog> out;
    for (const FakeRequestLog& r : fetcher_->log()) {
      if (r.host == host) out.push_back(r);
    }
    return out;
  }
  // The largest number of requests in flight at once over the whole log.
  size_t MaxInFlight() const {
    std::vector<std::pair<Clock::TimePoint, int>> events;
    for (const FakeRequestLog& r : fetcher_->log()) {
      events.emplace_back(r.start, 1);
      events.emplace_back(r.end, -1);
    }
    std::sort(events.begin(), events.end());  // an end before a start at the same moment
    int now = 0, max = 0;
    for (const auto& [t, d] : events) max = std::max(max, now += d);
    return static_cast<size_t>(max);
  }

  std::unique_ptr<FakeResolver> resolver_;
};

// A name that does not resolve: no request, recorded as a DNS failure with its cause after
// the retry schedule (one lookup per attempt), while another host is crawled meanwhile.
TEST_F(CrawlerDnsTest, UnresolvableNameIsRecordedWithItsCauseAndRetried) {
  resolver_->SetFailure("nx.test", "NXDOMAIN (domain name not found)");
  resolver_->SetAnswer("ok.test", "10.0.0.2", 300s);
  ScriptSite("ok.test", 5);
  CrawlStats s = Crawl(DnsOptions(), {"http://nx.test/", "http://nx.test/a", "http://ok.test/"});
  EXPECT_TRUE(s.complete);
  EXPECT_TRUE(RequestsToHost("nx.test").empty()) << "a request to a name that did not resolve";
  for (const char* u : {"http://nx.test/", "http://nx.test/a"}) {
    const OutcomeLine* o = FirstOutcome(u);
    ASSERT_NE(o, nullptr) << u;
    EXPECT_EQ(o->outcome, "gave-up") << u;
    EXPECT_NE(o->detail.find("dns_error"), std::string::npos) << o->detail;
    EXPECT_NE(o->detail.find("NXDOMAIN"), std::string::npos) << o->detail;
    EXPECT_NE(o->detail.find("(3 attempts)"), std::string::npos) << o->detail;
  }
  EXPECT_EQ(resolver_->lookups("nx.test"), 3) << "one lookup per attempt";
  EXPECT_EQ(s.dns_failures, 3u);
  EXPECT_EQ(s.fetches, 6u + 1u);  // ok.test: robots.txt + 6 pages; nx.test: none
  // ok.test was crawled at once, not after nx.test's retries (30 s + 120 s).
  const std::vector<FakeRequestLog> ok = RequestsToHost("ok.test");
  ASSERT_EQ(ok.size(), 7u);
  EXPECT_LT(ok.back().end - fetcher_->log().front().start, 30s);
  for (const FakeRequestLog& r : ok) EXPECT_EQ(r.connect_address, "10.0.0.2") << r.url;
  ExpectOutcomesExplained();
}

// A lookup that never answers holds only its own host.
TEST_F(CrawlerDnsTest, HangingLookupDoesNotBlockOtherHosts) {
  resolver_->SetHang("slow.test");
  resolver_->SetAnswer("ok.test", "10.0.0.2", 300s);
  ScriptSite("ok.test", 5);
  CrawlOptions o = DnsOptions();
  o.freshness.stop_after = 5min;
  Crawler crawler(o, &clock_);
  ASSERT_TRUE(crawler.Run({"http://slow.test/", "http://ok.test/"}).ok());
  CrawlStats s = crawler.stats();
  EXPECT_TRUE(s.stopped_after);
  EXPECT_TRUE(RequestsToHost("slow.test").empty());
  EXPECT_EQ(RequestsToHost("ok.test").size(), 7u);
  EXPECT_EQ(s.still_queued, 1u);  // slow.test's seed stays queued for the next run
  EXPECT_EQ(resolver_->lookups("slow.test"), 1);
}

// Many hosts on one address: never more than per_ip_limit requests in flight to it, from the
// first request of each host on (the address is known before the first lease counts).
TEST_F(CrawlerDnsTest, PerIpLimitHoldsFromEachHostsFirstRequest) {
  std::vector<std::string> seeds;
  for (int i = 0; i < 12; ++i) {
    const std::string host = "h" + std::to_string(i) + ".test";
    resolver_->SetAnswer(host, "10.9.9.9", 300s);
    ScriptSite(host, 3);
    seeds.push_back("http://" + host + "/");
  }
  CrawlOptions o = DnsOptions();
  o.frontier.per_ip_limit = 3;
  CrawlStats s = Crawl(o, seeds);
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(s.fetches, 12u * 5u);
  EXPECT_EQ(MaxInFlight(), 3u);
  ExpectPolite(1s);
  // Without the limit the same crawl runs all twelve hosts at once (the check can fail).
  std::filesystem::remove_all(dir_);
  fetcher_ = std::make_unique<fetch::testing::FakeFetcher>(&clock_);
  for (int i = 0; i < 12; ++i) ScriptSite("h" + std::to_string(i) + ".test", 3);
  o = DnsOptions();
  o.fetcher = fetcher_.get();
  o.frontier.per_ip_limit = 0;
  Crawl(o, seeds);
  EXPECT_GT(MaxInFlight(), 3u);
}

// Pinned hosts (resolve file) connect to their pinned address and port and are never looked
// up; hosts routed by connect_to are not looked up either.
TEST_F(CrawlerDnsTest, PinnedAndRoutedHostsAreNotLookedUp) {
  std::filesystem::create_directories(dir_);
  const std::filesystem::path pins = dir_ / "resolve.txt";
  std::ofstream(pins) << "# pins\n*.pin.test 10.1.1.1:8080\nexact.test 10.1.1.2\n";
  ScriptSite("a.pin.test", 2);
  ScriptSite("exact.test", 2);
  CrawlOptions o = DnsOptions();
  o.resolve_file = pins;
  CrawlStats s = Crawl(o, {"http://a.pin.test/", "http://exact.test/"});
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(resolver_->lookups("a.pin.test"), 0);
  EXPECT_EQ(resolver_->lookups("exact.test"), 0);
  for (const FakeRequestLog& r : RequestsToHost("a.pin.test")) {
    EXPECT_EQ(r.connect_address, "10.1.1.1") << r.url;
    EXPECT_EQ(r.connect_port, 8080) << r.url;
  }
  for (const FakeRequestLog& r : RequestsToHost("exact.test")) {
    EXPECT_EQ(r.connect_address, "10.1.1.2") << r.url;
    EXPECT_EQ(r.connect_port, 0) << r.url;
  }
  EXPECT_EQ(RequestsToHost("a.pin.test").size(), 4u);

  std::filesystem::remove_all(dir_ / "crawl");
  ScriptSite("routed.test", 2);
  o = DnsOptions();
  o.fetch.connect_to = {"::127.0.0.1:9"};
  s = Crawl(o, {"http://routed.test/"});
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(resolver_->lookups("routed.test"), 0);
  EXPECT_EQ(RequestsToHost("routed.test").size(), 4u);
}

// Every request leaves its connection open for the host's next one, including the root
// (its links are queued only after it has been processed); the fetcher bounds idle
// connections (fetch.h FetchRequest::reuse_connection, max_idle_connections).
TEST_F(CrawlerDnsTest, ConnectionsAreKeptForTheHostsNextRequest) {
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/1", "/2"})));
  fetcher_->Script("http://a.test/1", FakeResponse::Html("one"));
  fetcher_->Script("http://a.test/2", FakeResponse::Html("two"));
  CrawlStats s = Crawl(DnsOptions(), {"http://a.test/"});
  EXPECT_TRUE(s.complete);
  const std::vector<FakeRequestLog> log = RequestsToHost("a.test");
  ASSERT_EQ(log.size(), 4u);
  for (const FakeRequestLog& r : log) EXPECT_TRUE(r.reuse_connection) << r.url;
}

// A bad resolve file stops the crawl before it starts, naming the file and line.
TEST_F(CrawlerDnsTest, BadResolveFileIsAnInputError) {
  std::filesystem::create_directories(dir_);
  const std::filesystem::path pins = dir_ / "resolve.txt";
  std::ofstream(pins) << "good.test 10.0.0.1\nbad.test not-an-address\n";
  CrawlOptions o = DnsOptions();
  o.resolve_file = pins;
  Crawler crawler(o, &clock_);
  Status st = crawler.Run({"http://good.test/"});
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("resolve.txt:2"), std::string::npos) << st.message();
  EXPECT_TRUE(fetcher_->log().empty());
}

// A public page that points into private networks in the forms an attacker would use — a
// name that resolves to the loopback, numeric forms of it, IPv4-mapped IPv6, the cloud
// metadata address, a redirect to a private address — gets none of them requested.
TEST_F(CrawlerDnsTest, NeverConnectsToPrivateOrSpecialAddressesUnlessOpened) {
  resolver_->SetDefaultAnswer("93.184.216.34");  // a public address
  resolver_->SetAnswer("secret.test", "127.0.0.1");
  resolver_->SetAnswer("intranet.test", "10.0.0.5");
  const std::vector<std::string> targets = {
      "http://secret.test/",        "http://127.0.0.2/",
      "http://2130706433/",         "http://0x7f.1/",
      "http://[::ffff:127.0.0.1]/", "http://169.254.169.254/latest/meta-data/",
      "http://intranet.test/admin", "http://[::1]:8080/",
      "http://[fd00::1]/"};
  std::vector<std::string> hrefs = targets;
  hrefs.push_back("/moved");
  fetcher_->Script("http://pub.test/", FakeResponse::Html(Links(hrefs)));
  fetcher_->Script("http://pub.test/moved", FakeResponse::Redirect(301, "http://10.1.2.3/x"));
  CrawlOptions o = DnsOptions();
  o.allow_addresses.clear();
  CrawlStats s = Crawl(o, {"http://pub.test/"});
  EXPECT_TRUE(s.complete);
  for (const FakeRequestLog& r : fetcher_->log()) {
    EXPECT_EQ(NameOfAuthority(r.host), "pub.test") << r.url << " was requested";
  }
  size_t blocked = 0;
  for (const auto& line : Outcomes()) {
    if (line.outcome != "blocked-address") continue;
    ++blocked;
    EXPECT_NE(line.detail.find(" is "), std::string::npos) << line.detail;
  }
  // The nine targets (2130706433 and 0x7f.1 are one URL, http://127.0.0.1/) and the
  // redirect's, each its own host.
  EXPECT_EQ(blocked, 9u);
  EXPECT_EQ(OutcomesOf("http://127.0.0.1/"), (std::vector<std::string>{"blocked-address"}));
  EXPECT_EQ(OutcomesOf("http://10.1.2.3/x"), (std::vector<std::string>{"blocked-address"}));
  const OutcomeLine* meta = FirstOutcome("http://169.254.169.254/latest/meta-data/");
  ASSERT_NE(meta, nullptr);
  EXPECT_NE(meta->detail.find("169.254.169.254 is link-local 169.254.0.0/16"), std::string::npos)
      << meta->detail;
  EXPECT_EQ(s.hosts_given_up.at("blocked-address").hosts, 9u);
  ExpectOutcomesExplained();

  // Opened by the operator: the loopback is crawled.
  std::filesystem::remove_all(dir_ / "crawl");
  fetcher_->Script("http://secret.test/", FakeResponse::Html("secret"));
  o.allow_addresses = {"127.0.0.0/8"};
  Crawl(o, {"http://secret.test/"});
  EXPECT_EQ(OutcomesOf("http://secret.test/"), (std::vector<std::string>{"fetched"}));
}

}  // namespace
}  // namespace harvest::crawl
