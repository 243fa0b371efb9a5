// Priorities across hosts (docs/priority.md): with a page budget of a tenth of a scripted
// web whose value lies mostly across hosts, the crawl fetches pages of a clearly higher mean
// priority than the web's mean (a random tenth's expectation), and does not with
// priority.across_hosts = false. Plus the [priority] configuration keys.
#include <algorithm>
#include <map>
#include <numeric>
#include <random>

#include "crawl/crawler_test_fixture.h"

namespace harvest::crawl {
namespace {

using namespace crawler_test_util;

constexpr int kGold = 10;     // hosts of weight kGoldWeight
constexpr int kPlain = 40;    // hosts of weight 1
constexpr int kChildren = 3;  // pages below each host's root
constexpr double kGoldWeight = 8;

struct Page {
  int depth = 0;
  bool seed = false;
  double weight = 1;
};

class CrawlerPriorityTest : public CrawlerTestBase {
 protected:
  // hub.test/ links to every host's root, in a shuffled order; each root links to its
  // children. Returns every page with what the test knows of it.
  std::map<std::string, Page> ScriptWeb() {
    std::map<std::string, Page> web;
    std::vector<std::string> roots;
    for (int i = 0; i < kGold + kPlain; ++i) {
      const bool gold = i < kGold;
      const std::string host = (gold ? "g" : "p") + std::to_string(100 + i) + ".test";
      const std::string root = "http://" + host + "/";
      std::vector<std::string> children;
      for (int c = 0; c < kChildren; ++c) {
        children.push_back(root + "c" + std::to_string(c));
        fetcher_->Script(children.back(), FakeResponse::Html("leaf"));
        web[children.back()] = {2, false, gold ? kGoldWeight : 1};
      }
      fetcher_->Script(root, FakeResponse::Html(Links(children)));
      web[root] = {1, false, gold ? kGoldWeight : 1};
      roots.push_back(root);
    }
    std::mt19937 rng(12);
    std::shuffle(roots.begin(), roots.end(), rng);
    fetcher_->Script("http://hub.test/", FakeResponse::Html(Links(roots)));
    web["http://hub.test/"] = {0, true, 1};
    return web;
  }

  // The documented score of a page (every page of this web has one in-link, the seed none).
  static double Score(const Page& p) {
    return frontier::PriorityScore(
        {.depth = p.depth, .seed = p.seed, .inlinks = p.seed ? 0u : 1u, .host_weight = p.weight});
  }

  // Crawls a tenth of the web; returns the mean score of the pages fetched and sets *all
  // to the mean over the whole web.
  double CrawlTenth(bool across_hosts, double* all, int* gold_fetched) {
    fetcher_ = std::make_unique<FakeFetcher>(&clock_);
    const std::map<std::string, Page> web = ScriptWeb();
    CrawlOptions o = Options();
    o.out_dir = dir_ / (across_hosts ? "on" : "off");
    const std::string toml = std::string("[priority]\nacross_hosts = ") +
                             (across_hosts ? "true" : "false") +
                             "\n[[priority.host]]\npattern = \"g*.test\"\nweight = 8\n";
    Status s = LoadConfigString(toml, "test.toml", &o);
    EXPECT_TRUE(s.ok()) << s.ToString();
    o.max_pages = web.size() / 10;
    CrawlStats st = Crawl(o, {"http://hub.test/"});
    EXPECT_TRUE(st.page_limit_reached);
    double sum = 0;
    int n = 0;
    *gold_fetched = 0;
    for (const FakeRequestLog& r : fetcher_->log()) {
      if (r.url.ends_with("/robots.txt")) continue;
      auto it = web.find(r.url);
      EXPECT_NE(it, web.end()) << r.url;
      if (it == web.end()) continue;
      sum += Score(it->second);
      ++n;
      *gold_fetched += it->second.weight == kGoldWeight;
    }
    EXPECT_EQ(n, static_cast<int>(o.max_pages));
    double total = 0;
    for (const auto& [url, page] : web) total += Score(page);
    *all = total / static_cast<double>(web.size());
    ExpectPolite(1s);
    return n > 0 ? sum / n : 0;
  }
};

// The acceptance test of issue 12 (part 3): the mean priority of a tenth fetched beats the
// web's mean by 80 %; with priority across hosts off it does not (the scheduler then serves
// hosts in ready-time order, which knows nothing of their value).
TEST_F(CrawlerPriorityTest, ATenthOfTheWebFetchesTheBestPagesFirst) {
  constexpr double kBar = 1.8;
  double all_on = 0, all_off = 0;
  int gold_on = 0, gold_off = 0;
  const double on = CrawlTenth(true, &all_on, &gold_on);
  const double off = CrawlTenth(false, &all_off, &gold_off);
  std::printf("mean score: web %.3f, priority on %.3f (%d weighted pages), off %.3f (%d)\n", all_on,
              on, gold_on, off, gold_off);
  EXPECT_DOUBLE_EQ(all_on, all_off);
  EXPECT_GE(on, kBar * all_on) << "priority across hosts must fetch the best pages first";
  EXPECT_GE(gold_on, kGold) << "every weighted host's root among the first tenth";
  EXPECT_LT(off, kBar * all_off) << "without priority the bar must not be met (else the test "
                                    "shows nothing)";
}

// In-links reach the priority: a URL linked 30 times by the links admitted with it (here
// one page's repeated links; equally links from several pages of one inbox batch) is
// queued in a better class than its siblings and fetched first, though linked last.
TEST_F(CrawlerPriorityTest, InlinksCountedBeforeAdmission) {
  std::vector<std::string> links;
  for (int i = 0; i < 6; ++i) links.push_back("/x" + std::to_string(i));
  for (int i = 0; i < 30; ++i) links.push_back("/popular");
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links(links)));
  CrawlOptions o = Options();
  Crawl(o, {"http://a.test/"});
  std::vector<std::string> order;
  for (const FakeRequestLog& r : fetcher_->log()) {
    if (!r.url.ends_with("/robots.txt")) order.push_back(r.url);
  }
  ASSERT_EQ(order.size(), 8u);
  EXPECT_EQ(order[1], "http://a.test/popular");
  // Off: the sketch is not kept and the siblings keep their order.
  fetcher_ = std::make_unique<FakeFetcher>(&clock_);
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links(links)));
  o = Options();
  o.out_dir = dir_ / "no-sketch";
  o.priority.inlink_sketch_bytes = 0;
  Crawl(o, {"http://a.test/"});
  order.clear();
  for (const FakeRequestLog& r : fetcher_->log()) {
    if (!r.url.ends_with("/robots.txt")) order.push_back(r.url);
  }
  ASSERT_EQ(order.size(), 8u);
  EXPECT_EQ(order[1], "http://a.test/x0");
  EXPECT_EQ(order[7], "http://a.test/popular");
}

TEST(PriorityConfig, KeysAndHostWeights) {
  CrawlOptions o;
  EXPECT_TRUE(o.frontier.cross_host_priority);
  EXPECT_EQ(o.frontier.per_ip_gap.count(), 0);
  EXPECT_EQ(o.priority.inlink_sketch_bytes, size_t{4} << 20);
  Status s = LoadConfigString(
      "[politeness]\nper_ip_gap_ms = \"2s\"\n"
      "[priority]\nacross_hosts = false\ninlink_sketch_mb = 16\n"
      "[[priority.host]]\npattern = \"news.example\"\nweight = 3.5\n"
      "[[priority.host]]\npattern = \"*.spam.test\"\nweight = 0.1\n",
      "t.toml", &o);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(o.frontier.cross_host_priority);
  EXPECT_EQ(o.frontier.per_ip_gap.count(), 2000);
  EXPECT_EQ(o.priority.inlink_sketch_bytes, size_t{16} << 20);
  ASSERT_EQ(o.priority.hosts.size(), 2u);
  HostWeights w(o.priority.hosts);
  EXPECT_DOUBLE_EQ(w.Weight("https://www.News.example:8443"), 3.5);
  EXPECT_DOUBLE_EQ(w.Weight("http://a.spam.test"), 0.1);
  EXPECT_DOUBLE_EQ(w.Weight("http://other.test"), 1.0);
  w.SetOverride("other.test", 2.0);
  EXPECT_DOUBLE_EQ(w.Weight("http://Other.test"), 2.0);
  w.SetOverride("http://news.example", 0.5);
  EXPECT_DOUBLE_EQ(w.Weight("http://news.example"), 0.5) << "an override wins over rules";
  w.SetOverride("news.example", std::nullopt);
  EXPECT_DOUBLE_EQ(w.Weight("http://news.example"), 3.5);

  for (const auto& [toml, error] : std::vector<std::pair<std::string, std::string>>{
           {"[politeness]\nper_ip_gap_ms = -1\n", "per_ip_gap_ms"},
           {"[priority]\nacross_hosts = 1\n", "true or false"},
           {"[[priority.host]]\npattern = \"a\"\n", "needs pattern"},
           {"[[priority.host]]\npattern = \"a\"\nweight = 0\n", "between"},
           {"[[priority.host]]\npattern = \"a\"\nweight = 1\nhosts = []\n",
            "unknown key 'priority.host.hosts'"},
           {"[priority]\nclasses = 4\n", "unknown key 'priority.classes'"},
       }) {
    CrawlOptions bad;
    Status st = LoadConfigString(toml, "bad.toml", &bad);
    EXPECT_FALSE(st.ok()) << toml;
    EXPECT_NE(st.message().find(error), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace harvest::crawl
