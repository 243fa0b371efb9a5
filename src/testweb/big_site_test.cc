// Tests of big.test (--big-site) and sessions.test (--trap-host): links, sitemaps, archive,
// robots, manifest, reachability, uniqueness, determinism and the per-request cost.
#include "testweb/big_site.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "testweb/internal.h"
#include "testweb/session_trap.h"
#include "testweb/testweb.h"

namespace harvest::testweb {
namespace {

constexpr int kArticles = 12000;  // 24 archive pages, 3 sitemaps (1 and 3 gzip)

SiteOptions BigOptions(int articles = kArticles) {
  SiteOptions o;
  o.hosts = 3;
  o.pages = 5;
  o.big_site = articles;
  o.trap_host = true;
  return o;
}

int BigHost(const Site& site) { return site.FindHost("big.test"); }

// Inflates a gzip member; "" on any error.
std::string Gunzip(const std::string& data) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return "";
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  }
  inflateEnd(&zs);
  return rc == Z_STREAM_END ? out : "";
}

// Every "<tag>...</tag>" text of a document, in order.
std::vector<std::string> Elements(const std::string& xml, const std::string& tag) {
  std::vector<std::string> out;
  const std::string open = "<" + tag + ">", close = "</" + tag + ">";
  for (size_t p = xml.find(open); p != std::string::npos; p = xml.find(open, p + 1)) {
    const size_t start = p + open.size();
    out.push_back(xml.substr(start, xml.find(close, start) - start));
  }
  return out;
}

Response Get(const Site& site, const std::string& host, const std::string& target) {
  Request req;
  req.method = "GET";
  req.host = host;
  req.target = target;
  return Handle(site, req, nullptr);
}

std::string ContentType(const Response& r) {
  for (const auto& [k, v] : r.headers) {
    if (k == "Content-Type") return v;
  }
  return "";
}

TEST(BigSite, AbsentWithoutTheOptions) {
  SiteOptions o = BigOptions(0);
  o.trap_host = false;
  Site site(o);
  EXPECT_EQ(site.FindHost("big.test"), -1);
  EXPECT_EQ(site.FindHost("sessions.test"), -1);
  EXPECT_EQ(site.SeedUrls().size(), 3u);
  const std::string manifest = site.ManifestJson();
  EXPECT_EQ(manifest.find("\"big.test"), std::string::npos);  // robots-big.test is there
  EXPECT_EQ(manifest.find("\"trap\": true"), std::string::npos);
  EXPECT_EQ(manifest.find("big_site"), std::string::npos);
}

TEST(BigSite, SeededAfterTheNormalHostsAndNotLinkedFromThem) {
  Site site(BigOptions());
  EXPECT_EQ(site.SeedUrls(), (std::vector<std::string>{"http://h0000.test/", "http://h0001.test/",
                                                       "http://h0002.test/", "http://big.test/",
                                                       "http://sessions.test/"}));
  for (const Link& l : site.LinksOf(0, "/")) {
    EXPECT_NE(l.host, "big.test");
    EXPECT_NE(l.host, "sessions.test");
  }
  const BigSite big(site, BigHost(site));
  EXPECT_EQ(big.archive_pages(), 24);
  EXPECT_EQ(big.sitemaps(), 3);
}

// RFC 9309: one group for every agent, Disallow: /search; the Sitemap line is absolute.
TEST(BigSite, Rfc9309_RobotsDisallowsSearchAndNamesTheSitemapIndex) {
  Site site(BigOptions());
  const int h = BigHost(site);
  const std::string robots = site.RobotsTxt(h);
  EXPECT_NE(robots.find("User-agent: *\nDisallow: /search\n"), std::string::npos) << robots;
  EXPECT_NE(robots.find("\nSitemap: http://big.test/sitemap_index.xml\n"), std::string::npos);
  EXPECT_EQ(robots.find("Crawl-delay"), std::string::npos);
  EXPECT_EQ(ContentType(Get(site, "big.test", "/robots.txt")), "text/plain; charset=utf-8");
  EXPECT_EQ(*Get(site, "big.test", "/robots.txt").body, robots);
  const Route search = site.Resolve("big.test", "/search?q=river");
  EXPECT_TRUE(search.disallowed);
  EXPECT_EQ(search.page, "big.test/search?q=river");
  EXPECT_EQ(Get(site, "big.test", "/search?q=river").status, 200);
  const BigSite big(site, h);
  EXPECT_FALSE(site.DisallowedForHarvest(h, big.ArticlePath(7)));
  EXPECT_FALSE(site.DisallowedForHarvest(h, "/archive/page/2"));
  // With --tls the absolute URLs carry the seeds' scheme.
  SiteOptions tls = BigOptions();
  tls.big_site_https = true;
  Site secure(tls);
  EXPECT_NE(secure.RobotsTxt(h).find("\nSitemap: https://big.test/sitemap_index.xml\n"),
            std::string::npos);
}

TEST(BigSite, SitemapsListEveryArticleExactlyOnce) {
  Site site(BigOptions());
  const BigSite big(site, BigHost(site));
  const Response index = Get(site, "big.test", "/sitemap_index.xml");
  ASSERT_EQ(index.status, 200);
  EXPECT_EQ(ContentType(index), "application/xml");
  EXPECT_NE(
      index.body->find("<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"),
      std::string::npos);
  const std::vector<std::string> maps = Elements(*index.body, "loc");
  ASSERT_EQ(maps, (std::vector<std::string>{"http://big.test/sitemaps/articles-1.xml.gz",
                                            "http://big.test/sitemaps/articles-2.xml",
                                            "http://big.test/sitemaps/articles-3.xml.gz"}));
  EXPECT_EQ(Elements(*index.body, "lastmod").size(), 3u);
  std::multiset<std::string> listed;
  for (const std::string& loc : maps) {
    const std::string path = loc.substr(std::string("http://big.test").size());
    const Route route = site.Resolve("big.test", path);
    EXPECT_EQ(route.kind, RequestKind::kSitemap) << path;
    const Response r = Get(site, "big.test", path);
    ASSERT_EQ(r.status, 200) << path;
    const bool gzip = path.ends_with(".gz");
    EXPECT_EQ(ContentType(r), gzip ? "application/gzip" : "application/xml") << path;
    const std::string xml = gzip ? Gunzip(*r.body) : *r.body;
    ASSERT_FALSE(xml.empty()) << path << " does not inflate";
    EXPECT_NE(xml.find("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"),
              std::string::npos);
    const std::vector<std::string> locs = Elements(xml, "loc");
    EXPECT_LE(locs.size(), static_cast<size_t>(kArticlesPerSitemap)) << path;
    EXPECT_EQ(Elements(xml, "lastmod").size(), locs.size()) << path;
    listed.insert(locs.begin(), locs.end());
  }
  ASSERT_EQ(listed.size(), static_cast<size_t>(kArticles));
  for (int k = 1; k <= kArticles; ++k) {
    ASSERT_EQ(listed.count("http://big.test" + big.ArticlePath(k)), 1u) << k;
  }
  EXPECT_EQ(Get(site, "big.test", "/sitemaps/articles-4.xml").status, 404);
  EXPECT_EQ(Get(site, "big.test", "/sitemaps/articles-1.xml").status, 404);  // it is .xml.gz
}

TEST(BigSite, ArchivePagesCoverEveryArticleOnceAndLinkTheirNeighbours) {
  Site site(BigOptions());
  const int h = BigHost(site);
  const BigSite big(site, h);
  std::vector<int> seen(kArticles + 1, 0);
  for (int p = 1; p <= big.archive_pages(); ++p) {
    const std::string path = "/archive/page/" + std::to_string(p);
    EXPECT_EQ(site.Resolve("big.test", path).kind, RequestKind::kPage);
    std::set<std::string> archive_links;
    int articles = 0;
    for (const Link& l : site.LinksOf(h, path)) {
      EXPECT_EQ(l.host, "big.test");
      const BigPage target = big.Find(l.target);
      if (target.type == BigPageType::kArchive) archive_links.insert(l.target);
      if (target.type != BigPageType::kArticle) continue;
      ++seen[target.number];
      ++articles;
      EXPECT_EQ(big.ArchivePageOf(target.number), p);
    }
    EXPECT_EQ(articles, kArticlesPerArchivePage) << path;  // 12000 is a multiple of 500
    if (p > 1) {
      EXPECT_TRUE(archive_links.count("/archive/page/" + std::to_string(p - 1))) << p;
    }
    if (p < big.archive_pages()) {
      EXPECT_TRUE(archive_links.count("/archive/page/" + std::to_string(p + 1))) << p;
    }
  }
  for (int k = 1; k <= kArticles; ++k) ASSERT_EQ(seen[k], 1) << k;
  EXPECT_EQ(site.Resolve("big.test", "/archive/page/25").kind, RequestKind::kUnknown);
  EXPECT_EQ(site.Resolve("big.test", "/archive/page/0").kind, RequestKind::kUnknown);
  EXPECT_EQ(site.Resolve("big.test", "/archive/page/01").kind, RequestKind::kUnknown);
}

TEST(BigSite, ArticlesLinkFiveOtherArticlesTheSearchAndTheirArchivePage) {
  Site site(BigOptions());
  const int h = BigHost(site);
  const BigSite big(site, h);
  for (int k : {1, 2, 499, 500, 501, 7777, kArticles}) {
    const std::string path = big.ArticlePath(k);
    ASSERT_EQ(big.Find(path).number, k) << path;
    int articles = 0, search = 0, archive = 0;
    std::set<std::string> distinct;
    for (const Link& l : site.LinksOf(h, path)) {
      const BigPage target = big.Find(l.target.substr(0, l.target.find('?')));
      if (target.type == BigPageType::kArticle) {
        ++articles;
        EXPECT_NE(target.number, k);
        distinct.insert(l.target);
      }
      if (target.type == BigPageType::kSearch) {
        ++search;
        EXPECT_TRUE(site.Resolve("big.test", l.target).disallowed);
      }
      if (target.type == BigPageType::kArchive) {
        ++archive;
        EXPECT_EQ(target.number, big.ArchivePageOf(k));
      }
    }
    EXPECT_EQ(articles, kRelatedArticles) << path;
    EXPECT_EQ(distinct.size(), static_cast<size_t>(kRelatedArticles)) << path;
    EXPECT_EQ(search, 1) << path;
    EXPECT_EQ(archive, 1) << path;
    // The rendered hrefs are the modelled links.
    const std::string html = *Get(site, "big.test", path).body;
    for (const Link& l : site.LinksOf(h, path)) {
      EXPECT_NE(html.find("<a href=\"" + l.href + "\">"), std::string::npos) << l.href;
    }
  }
  // One spelling per article: a wrong slug, date or number is not a page.
  const std::string path = big.ArticlePath(42);
  std::string wrong_number = path;
  wrong_number.replace(wrong_number.rfind("42"), 2, "43");
  for (const std::string& bad :
       std::vector<std::string>{wrong_number, path.substr(0, path.size() - 5),
                                "/1999/01/a-b-c-42.html", "/2026/11/x-12001.html", "/x-0.html"}) {
    EXPECT_EQ(site.Resolve("big.test", bad).kind, RequestKind::kUnknown) << bad;
    EXPECT_EQ(Get(site, "big.test", bad).status, 404) << bad;
  }
}

TEST(BigSite, RootLinksTheArchiveRecentArticlesAndTheTrapHost) {
  Site site(BigOptions());
  const int h = BigHost(site);
  const BigSite big(site, h);
  std::set<std::string> targets;
  bool trap = false;
  for (const Link& l : site.LinksOf(h, "/")) {
    if (l.host == "sessions.test") {
      trap = true;
      EXPECT_EQ(l.href, "http://sessions.test/");
    } else {
      targets.insert(l.target);
    }
  }
  EXPECT_TRUE(trap);
  EXPECT_TRUE(targets.count("/archive/page/1"));
  for (int k = kArticles; k > kArticles - kRecentArticles; --k) {
    EXPECT_TRUE(targets.count(big.ArticlePath(k))) << k;
  }
}

// The manifest's claim that a compliant crawler fetches every page: each is within the
// crawler's default depth (10) of big.test/ through allowed links.
TEST(BigSite, EveryPageWithinDepth5OfTheRoot) {
  Site site(BigOptions());
  const int h = BigHost(site);
  std::map<std::string, int> depth{{"/", 0}};
  std::deque<std::string> queue{"/"};
  while (!queue.empty()) {
    const std::string path = queue.front();
    queue.pop_front();
    for (const Link& l : site.LinksOf(h, path)) {
      if (l.host != "big.test" || site.DisallowedForHarvest(h, l.target)) continue;
      const Route r = site.Resolve(l.host, l.target);
      ASSERT_EQ(r.kind, RequestKind::kPage) << l.target;
      if (depth.emplace(l.target, depth[path] + 1).second) queue.push_back(l.target);
    }
  }
  const BigSite big(site, h);
  ASSERT_EQ(depth.size(), static_cast<size_t>(kArticles + big.archive_pages() + 1));
  int deepest = 0;
  for (const auto& [path, d] : depth) deepest = std::max(deepest, d);
  EXPECT_LE(deepest, 5);  // docs/testweb.md: 1 + ceil(log5 24) + 1
}

TEST(BigSite, ManifestListsEveryPageAsMustFetchAndTheTrapHostAsTrap) {
  Site site(BigOptions());
  const nlohmann::json m = nlohmann::json::parse(site.ManifestJson());
  const BigSite big(site, BigHost(site));
  bool big_seen = false, trap_seen = false;
  for (const auto& host : m["hosts"]) {
    if (host["host"] == "big.test") {
      big_seen = true;
      const auto must = host["must_fetch"].get<std::vector<std::string>>();
      // Pages: "/", every article, every archive page; plus robots.txt as on every host.
      EXPECT_EQ(must.size(), static_cast<size_t>(kArticles + big.archive_pages() + 1 + 1));
      const std::set<std::string> set(must.begin(), must.end());
      EXPECT_EQ(set.size(), must.size());
      EXPECT_TRUE(std::is_sorted(must.begin(), must.end()));
      EXPECT_TRUE(set.count("big.test/"));
      EXPECT_TRUE(set.count("big.test/robots.txt"));
      EXPECT_TRUE(set.count("big.test/archive/page/24"));
      EXPECT_TRUE(set.count("big.test" + big.ArticlePath(1)));
      EXPECT_TRUE(set.count("big.test" + big.ArticlePath(kArticles)));
      EXPECT_EQ(host["must_not_fetch_prefixes"], nlohmann::json::array({"/search"}));
      EXPECT_EQ(host["big_site"],
                nlohmann::json({{"articles", kArticles}, {"archive_pages", 24}, {"sitemaps", 3}}));
      EXPECT_FALSE(host.contains("trap"));
    }
    if (host["host"] == "sessions.test") {
      trap_seen = true;
      EXPECT_EQ(host["trap"], true);
      EXPECT_TRUE(host["must_fetch"].empty());
    } else {
      EXPECT_FALSE(host.contains("trap")) << host["host"];
    }
  }
  EXPECT_TRUE(big_seen);
  EXPECT_TRUE(trap_seen);
}

TEST(BigSite, PagesAreUniqueAndModest) {
  Site site(BigOptions(3000));
  const BigSite big(site, BigHost(site));
  std::unordered_set<std::string> bodies;
  auto add = [&](const std::string& path, size_t min_bytes, size_t max_bytes) {
    const Response r = Get(site, "big.test", path);
    ASSERT_EQ(r.status, 200) << path;
    EXPECT_GE(r.body->size(), min_bytes) << path;
    EXPECT_LE(r.body->size(), max_bytes) << path;
    EXPECT_TRUE(bodies.insert(*r.body).second) << path << " repeats another page";
  };
  add("/", 1000, 8000);
  for (int k = 1; k <= big.articles(); ++k) add(big.ArticlePath(k), 2000, 6000);
  for (int p = 1; p <= big.archive_pages(); ++p) add(big.ArchivePath(p), 1000, 80000);
}

TEST(BigSite, DeterministicForASeed) {
  Site a(BigOptions()), b(BigOptions());
  SiteOptions other = BigOptions();
  other.seed = 2;
  Site c(other);
  const int h = BigHost(a);
  const BigSite x(a, h), y(b, h), z(c, h);
  int differ = 0;
  for (int k = 1; k <= 50; ++k) {
    EXPECT_EQ(x.ArticlePath(k), y.ArticlePath(k));
    EXPECT_EQ(x.RelatedArticles(k), y.RelatedArticles(k));
    EXPECT_EQ(*Get(a, "big.test", x.ArticlePath(k)).body,
              *Get(b, "big.test", y.ArticlePath(k)).body);
    differ += x.ArticlePath(k) != z.ArticlePath(k);
  }
  EXPECT_GT(differ, 40);
  EXPECT_EQ(a.ManifestJson(), b.ManifestJson());
}

// No O(N) work per request: a million-article site answers as fast as a small one.
TEST(BigSite, ServingCostDoesNotGrowWithTheSite) {
  Site site(BigOptions(kMaxBigSiteArticles));
  const BigSite big(site, BigHost(site));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 2000; ++i) {
    const int k = 1 + static_cast<int>(Mix(i) % kMaxBigSiteArticles);
    ASSERT_EQ(Get(site, "big.test", big.ArticlePath(k)).status, 200);
  }
  ASSERT_EQ(Get(site, "big.test", "/archive/page/1777").status, 200);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  // About 10 us a page here; the bound leaves room for sanitizers and a loaded machine.
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST(SessionTrap, EveryPageLinksNewShortUrlsForever) {
  Site site(BigOptions(10));
  const int h = site.FindHost("sessions.test");
  ASSERT_GE(h, 0);
  EXPECT_EQ(site.RobotsTxt(h), "# robots.txt for sessions.test\nUser-agent: *\nDisallow:\n");
  std::unordered_set<std::string> seen{"sessions.test/"};
  std::deque<std::string> queue{"/"};
  int pages = 0;
  while (!queue.empty() && pages < 3000) {
    const std::string target = queue.front();
    queue.pop_front();
    ++pages;
    const Response r = Get(site, "sessions.test", target);
    ASSERT_EQ(r.status, 200) << target;
    EXPECT_EQ(r.route.kind, RequestKind::kTrap) << target;
    EXPECT_FALSE(r.route.disallowed);
    int fresh = 0;
    for (const Link& l : site.LinksOf(h, target)) {
      EXPECT_NE(r.body->find("href=\"" + l.href + "\""), std::string::npos);
      if (l.target == "/") continue;
      // Short, one query parameter, no repeated path segment: the URL-shape guards pass it.
      EXPECT_LT(l.target.size(), 60u) << l.target;
      EXPECT_EQ(l.target.find('&'), std::string::npos) << l.target;
      const std::string path = l.target.substr(0, l.target.find('?'));
      std::set<std::string> segments;
      for (size_t p = 1, e; p < path.size(); p = e + 1) {
        e = path.find('/', p);
        if (e == std::string::npos) e = path.size();
        EXPECT_TRUE(segments.insert(path.substr(p, e - p)).second) << l.target;
      }
      const Route route = site.Resolve("sessions.test", l.target);
      ASSERT_EQ(route.kind, RequestKind::kTrap) << l.target;
      if (seen.insert(route.page).second) {
        ++fresh;
        queue.push_back(l.target);
      }
    }
    EXPECT_EQ(fresh, kSessionLinksPerPage) << target << " linked a URL seen before";
  }
  EXPECT_EQ(pages, 3000);
  // Deterministic: another site of the same seed links the same URLs.
  Site again(BigOptions(10));
  const std::string some = queue.back();
  std::vector<std::string> x, y;
  for (const Link& l : site.LinksOf(h, some)) x.push_back(l.href);
  for (const Link& l : again.LinksOf(h, some)) y.push_back(l.href);
  EXPECT_EQ(x, y);
  // Only the spelling the pages write names a page.
  const SessionTrap trap(site, h);
  const std::string path = trap.PagePath(trap.ChildIds(0)[0]);
  EXPECT_TRUE(trap.Find(path).has_value());
  EXPECT_EQ(Get(site, "sessions.test", path.substr(0, path.rfind('/')) + "/nope").status, 404);
  EXPECT_EQ(Get(site, "sessions.test", "/s/00000000000g/page").status, 404);
}

}  // namespace
}  // namespace harvest::testweb
