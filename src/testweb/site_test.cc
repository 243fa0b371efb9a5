// Tests of the generated web: determinism, sizes, links, reachability, robots, manifest.
#include <gtest/gtest.h>
#include <zlib.h>

#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "base/ascii.h"
#include "testweb/internal.h"
#include "testweb/request_log.h"
#include "testweb/testweb.h"

namespace harvest::testweb {
namespace {

SiteOptions Small() {
  SiteOptions o;
  o.hosts = 40;
  o.pages = 50;
  return o;
}

std::string TreePath(int i) { return i == 0 ? "/" : "/p/" + std::to_string(i); }

// A deliberately simple RFC 3986 resolver for the href forms the generator may write.
// Returns {host, path?query} or {"", ""} when the href is not http.
std::pair<std::string, std::string> ResolveHref(const std::string& base_host,
                                                const std::string& base_path, std::string href) {
  size_t hash = href.find('#');
  if (hash != std::string::npos) href = href.substr(0, hash);
  if (href.rfind("http://", 0) == 0 || href.rfind("HTTP://", 0) == 0) {
    size_t slash = href.find('/', 7);
    std::string authority = href.substr(7, slash - 7);
    const std::string host = ToLowerAscii(authority.substr(0, authority.find(':')));
    return {host, slash == std::string::npos ? "/" : href.substr(slash)};
  }
  if (href.empty()) return {base_host, base_path};
  std::string path;
  if (href[0] == '/') {
    path = href;
  } else {
    std::string dir = base_path.substr(0, base_path.rfind('/') + 1);
    path = dir + href;
  }
  // Remove dot segments (RFC 3986 §5.2.4) on the path only.
  std::string query;
  size_t q = path.find('?');
  if (q != std::string::npos) {
    query = path.substr(q);
    path = path.substr(0, q);
  }
  std::vector<std::string> segs, out;
  size_t start = 1;
  while (true) {
    size_t j = path.find('/', start);
    segs.push_back(path.substr(start, j == std::string::npos ? std::string::npos : j - start));
    if (j == std::string::npos) break;
    start = j + 1;
  }
  for (size_t k = 0; k < segs.size(); ++k) {
    bool last = k + 1 == segs.size();
    if (segs[k] == "." || segs[k] == "..") {
      if (segs[k] == ".." && !out.empty()) out.pop_back();
      if (last) out.push_back("");
      continue;
    }
    out.push_back(segs[k]);
  }
  std::string joined;
  for (size_t k = 0; k < out.size(); ++k) joined += "/" + out[k];
  if (joined.empty()) joined = "/";
  return {base_host, joined + query};
}

std::string Unescape(std::string s) {
  size_t p;
  while ((p = s.find("&amp;")) != std::string::npos) s.replace(p, 5, "&");
  return s;
}

// Removes every region from `open` to the next `close` (inclusive).
std::string Strip(std::string html, const std::string& open, const std::string& close) {
  size_t p;
  while ((p = html.find(open)) != std::string::npos) {
    size_t e = html.find(close, p + open.size());
    html.erase(p, e == std::string::npos ? std::string::npos : e + close.size() - p);
  }
  return html;
}

// hrefs of <a> tags outside comments and scripts.
std::vector<std::string> VisibleHrefs(std::string html) {
  html = Strip(Strip(html, "<!--", "-->"), "<script>", "</script>");
  std::vector<std::string> out;
  const std::string a = "<a href=\"";
  for (size_t p = html.find(a); p != std::string::npos; p = html.find(a, p + 1)) {
    size_t start = p + a.size();
    out.push_back(Unescape(html.substr(start, html.find('"', start) - start)));
  }
  return out;
}

TEST(Site, HostsBeyond10000HaveLongerNamesAndAreFound) {
  SiteOptions o;
  o.hosts = 10002;
  o.pages = 3;
  Site site(o);
  EXPECT_EQ(site.hosts()[9999].name, "h9999.test");
  EXPECT_EQ(site.hosts()[10001].name, "h10001.test");
  EXPECT_EQ(site.FindHost("h0007.test"), 7);
  EXPECT_EQ(site.FindHost("h9999.test"), 9999);
  EXPECT_EQ(site.FindHost("H10001.TEST:80"), 10001);
  EXPECT_EQ(site.FindHost("h10001.test."), 10001);
  EXPECT_EQ(site.FindHost("h10002.test"), -1);   // beyond --hosts
  EXPECT_EQ(site.FindHost("h010001.test"), -1);  // not the canonical spelling
  EXPECT_EQ(site.FindHost("h07.test"), -1);
  EXPECT_EQ(site.FindHost("h1000a.test"), -1);
  EXPECT_EQ(site.FindHost("HOSTILE.test"), site.FindHost("hostile.test"));
  EXPECT_GE(site.FindHost("hostile.test"), 10002);
  EXPECT_EQ(site.Resolve("h10001.test", "/p/2").page, "h10001.test/p/2");
  // The manifest follows the links of those hosts too (their tree pages are must_fetch).
  EXPECT_NE(site.ManifestJson().find("\"h10001.test/p/2\""), std::string::npos);
}

TEST(Site, DeterministicForASeed) {
  Site a(Small()), b(Small());
  SiteOptions other = Small();
  other.seed = 2;
  Site c(other);
  for (int p : {0, 1, 7, 49}) {
    EXPECT_EQ(RenderTreePage(a, 3, p, 0).body, RenderTreePage(b, 3, p, 0).body);
    EXPECT_NE(RenderTreePage(a, 3, p, 0).body, RenderTreePage(c, 3, p, 0).body);
  }
  EXPECT_EQ(a.ManifestJson(), b.ManifestJson());
  EXPECT_EQ(a.RobotsTxt(5), b.RobotsTxt(5));
}

TEST(Site, PagesAreHtmlOf5To30KB) {
  Site site(Small());
  for (int h = 0; h < 40; ++h) {
    for (int p = 0; p < 50; ++p) {
      std::string body = RenderTreePage(site, h, p, 0).body;
      EXPECT_GE(body.size(), 5000u) << h << " " << p;
      EXPECT_LE(body.size(), 30u * 1024) << h << " " << p;
      EXPECT_EQ(body.rfind("<!DOCTYPE html>", 0), 0u);
      EXPECT_NE(body.find("<meta charset=\"utf-8\">"), std::string::npos);
      EXPECT_NE(body.find("<footer>"), std::string::npos);
    }
  }
}

TEST(Site, EveryRenderedLinkResolvesIntoThePageSet) {
  Site site(Small());
  for (int h = 0; h < 40; ++h) {
    const std::string host = site.hosts()[h].name;
    for (int p = 0; p < 50; ++p) {
      const std::string path = TreePath(p);
      std::multiset<std::string> from_html, from_model;
      for (const std::string& href : VisibleHrefs(RenderTreePage(site, h, p, 0).body)) {
        auto [to_host, target] = ResolveHref(host, path, href);
        Route r = site.Resolve(to_host, target);
        ASSERT_GE(r.host, 0) << href << " on " << host << path;
        ASSERT_NE(r.kind, RequestKind::kUnknown) << href << " on " << host << path;
        from_html.insert(to_host + " " + target);
      }
      for (const Link& l : site.LinksOf(h, path)) from_model.insert(l.host + " " + l.target);
      EXPECT_EQ(from_html, from_model) << host << path;
    }
  }
}

TEST(Site, SpellingsOfAPageShareItsIdentity) {
  Site site(Small());
  for (const char* target : {"/p/12", "/p/12;jsessionid=AB12", "/p/12?sid=77",
                             "/p/12?utm_source=x&gclid=1", "/p/12#top", "/p/12?fbclid=z"}) {
    Route r = site.Resolve("H0001.TEST:80", target);
    EXPECT_EQ(r.kind, RequestKind::kPage) << target;
    EXPECT_EQ(r.page, "h0001.test/p/12") << target;
  }
  // Meaningful query parameters make another URL: query order does not.
  for (const char* target : {"/p/12?b=2&a=1", "/p/12?a=1&b=2", "/p/12?a=1&utm_medium=m&b=2"}) {
    EXPECT_EQ(site.Resolve("h0001.test", target).page, "h0001.test/p/12?a=1&b=2") << target;
  }
  EXPECT_EQ(site.Resolve("h0001.test", "/").page, "h0001.test/");
  EXPECT_EQ(site.Resolve("h0001.test", "/;jsessionid=1").page, "h0001.test/");
  for (const char* bad : {"/p/0", "/p/012", "/p/50", "/p/", "/nope", "/p/1x"}) {
    Route r = site.Resolve("h0001.test", bad);
    EXPECT_EQ(r.kind, RequestKind::kUnknown) << bad;
    EXPECT_TRUE(r.page.empty()) << bad;
  }
  EXPECT_EQ(site.Resolve("h0040.test", "/").host, -1);  // only 40 hosts
  EXPECT_EQ(site.Resolve("h0001.test", "/robots.txt").kind, RequestKind::kRobots);
  EXPECT_EQ(site.Resolve("h0001.test", "/sitemap.xml").kind, RequestKind::kSitemap);
}

TEST(Site, EveryPageWithinDepth5OfItsRootThroughAllowedFollowableLinks) {
  SiteOptions o = Small();
  o.pages = 300;  // forces a wider tree
  Site site(o);
  for (int h = 0; h < 40; ++h) {
    std::map<std::string, int> depth{{"/", 0}};
    std::deque<std::string> queue{"/"};
    while (!queue.empty()) {
      std::string path = queue.front();
      queue.pop_front();
      if (site.PageNofollow(h, path)) continue;
      for (const Link& l : site.LinksOf(h, path)) {
        if (l.nofollow || l.host != site.hosts()[h].name) continue;
        if (site.DisallowedForHarvest(h, l.target)) continue;
        Route r = site.Resolve(l.host, l.target);
        if (r.kind != RequestKind::kPage) continue;
        std::string canon = r.page.substr(l.host.size());
        if (depth.emplace(canon, depth[path] + 1).second) queue.push_back(canon);
      }
    }
    // A page may be reached under a URL with a meaningful query (`/p/7?a=1&b=2`): it is the
    // same page body, so it counts as reached at the smallest depth of any of its URLs.
    std::map<std::string, int> page_depth;
    for (const auto& [url, d] : depth) {
      std::string page = url.substr(0, url.find('?'));
      auto [it, fresh] = page_depth.emplace(page, d);
      if (!fresh) it->second = std::min(it->second, d);
    }
    for (int p = 0; p < o.pages; ++p) {
      auto it = page_depth.find(TreePath(p));
      ASSERT_NE(it, page_depth.end()) << site.hosts()[h].name << TreePath(p);
      EXPECT_LE(it->second, 5);
    }
  }
}

// RFC 9309 §2.2.1: the group naming our product token replaces `*`; §2.2.2: longest match
// wins; "$" anchors the end; "*" matches any sequence.
TEST(Site, Rfc9309_RuleFamiliesByConstruction) {
  Site site(Small());
  bool seen[4] = {};
  for (int h = 0; h < 40; ++h) {
    const HostInfo& info = site.hosts()[h];
    std::string robots = site.RobotsTxt(h);
    seen[info.variant] = true;
    const std::string lower = ToLowerAscii(robots);
    bool harvest_group = lower.find("user-agent: harvest\n") != std::string::npos;
    EXPECT_EQ(harvest_group, info.variant == 1) << robots;
    EXPECT_NE(robots.find("Sitemap: http://" + info.name + "/sitemap.xml"), std::string::npos);
    auto dis = [&](const char* t) { return site.DisallowedForHarvest(h, t); };
    EXPECT_FALSE(dis("/"));
    EXPECT_FALSE(dis("/p/3"));
    EXPECT_FALSE(dis("/robots.txt"));
    switch (info.variant) {
      case 0:
        EXPECT_TRUE(dis("/private/1.html"));
        EXPECT_FALSE(dis("/private/open/1.html"));  // longer Allow wins
        EXPECT_FALSE(dis("/private/open/x.pdf"));   // Allow (14 chars) beats /*.pdf$ (7)
        EXPECT_TRUE(dis("/files/doc-1.pdf"));
        EXPECT_FALSE(dis("/files/doc-1.pdf?x=1"));  // "$" anchors the end
        EXPECT_TRUE(dis("/search?q=a"));
        EXPECT_TRUE(dis("/tmp/1.html"));
        EXPECT_FALSE(dis("/harvest-only/1.html"));
        EXPECT_FALSE(dis("/p/3?print=1"));
        break;
      case 1:
        EXPECT_FALSE(dis("/private/1.html"));  // the `*` group does not apply to harvest
        EXPECT_TRUE(dis("/harvest-only/1.html"));
        EXPECT_TRUE(dis("/files/doc-1.pdf"));
        EXPECT_FALSE(dis("/search?q=a"));
        EXPECT_FALSE(dis("/tmp/1.html"));
        break;
      case 2:
        EXPECT_TRUE(dis("/private/1.html"));
        EXPECT_FALSE(dis("/private/open/1.html"));
        EXPECT_TRUE(dis("/p/3?print=1"));
        EXPECT_FALSE(dis("/p/3?sid=1"));
        EXPECT_TRUE(dis("/search"));
        break;
      case 3:
        EXPECT_FALSE(dis("/private/1.html"));
        EXPECT_FALSE(dis("/files/doc-1.pdf"));
        break;
    }
  }
  for (bool s : seen) EXPECT_TRUE(s);
  int big = site.FindHost("robots-big.test");
  std::string text = site.RobotsTxt(big);
  EXPECT_GE(text.size(), kBigRobotsBytes);
  EXPECT_GT(text.find("Disallow: /late/"), kRobotsParseLimit);
  EXPECT_LT(text.find("Disallow: /early/"), 1000u);
  EXPECT_FALSE(site.DisallowedForHarvest(big, "/late/1.html"));
  EXPECT_TRUE(site.DisallowedForHarvest(big, "/early/1.html"));
  EXPECT_TRUE(site.DisallowedForHarvest(site.FindHost("robots-5xx.test"), "/"));
  EXPECT_FALSE(site.DisallowedForHarvest(site.FindHost("robots-404.test"), "/private/1.html"));
}

TEST(Site, ManifestIsTheBfsOfAllowedFollowableLinks) {
  Site site(Small());
  auto doc = nlohmann::json::parse(site.ManifestJson());
  EXPECT_EQ(doc["seed"], 1);
  std::map<std::string, std::set<std::string>> must;
  for (const auto& h : doc["hosts"]) {
    for (const auto& id : h["must_fetch"]) must[h["host"]].insert(id.get<std::string>());
  }
  ASSERT_EQ(must.size(), 45u);  // 40 normal + 5 hostile hosts, control.test excluded
  for (int h = 0; h < 40; ++h) {
    const std::string name = site.hosts()[h].name;
    EXPECT_TRUE(must[name].count(name + "/robots.txt"));
    for (int p = 0; p < 50; ++p) EXPECT_TRUE(must[name].count(name + TreePath(p))) << name << p;
    for (const std::string& id : must[name]) {
      std::string path = id.substr(name.size());
      EXPECT_FALSE(site.DisallowedForHarvest(h, path)) << id;
      EXPECT_NE(site.Resolve(name, path).kind, RequestKind::kTrap) << id;
    }
  }
  EXPECT_EQ(must["robots-5xx.test"], std::set<std::string>{"robots-5xx.test/robots.txt"});
  EXPECT_TRUE(must["robots-redirect.test"].count("robots-redirect.test/robots-real.txt"));
  EXPECT_TRUE(must["robots-big.test"].count("robots-big.test/late/0.html") ||
              must["robots-big.test"].count("robots-big.test/late/1.html") ||
              must["robots-big.test"].count("robots-big.test/late/2.html") ||
              must["robots-big.test"].count("robots-big.test/late/3.html") ||
              must["robots-big.test"].count("robots-big.test/late/4.html"));
  const auto& hostile = must["hostile.test"];
  EXPECT_TRUE(hostile.count("hostile.test/edge/based/target"));
  EXPECT_TRUE(hostile.count("hostile.test/edge/malformed/t1"));
  EXPECT_TRUE(hostile.count("hostile.test/edge/noindex/target"));
  EXPECT_FALSE(hostile.count("hostile.test/edge/nofollow/target"));
  EXPECT_FALSE(hostile.count("hostile.test/edge/rel-nofollow/target"));
  EXPECT_FALSE(hostile.count("hostile.test/edge/slow"));
  EXPECT_FALSE(hostile.count("hostile.test/edge/disallowed/page.html"));
  EXPECT_FALSE(hostile.count("hostile.test/calendar/2026/11"));
  EXPECT_GT(doc["edge"].size(), 30u);

  SiteOptions quiet = Small();
  quiet.hostile = false;
  auto plain = nlohmann::json::parse(Site(quiet).ManifestJson());
  EXPECT_EQ(plain["hosts"].size(), 40u);
  EXPECT_TRUE(plain["edge"].empty());
}

TEST(Site, ChangingPagesDefaultToNMod10Is3) {
  Site site(Small());
  for (int h = 0; h < static_cast<int>(site.hosts().size()); ++h) {
    for (int i = 0; i < site.hosts()[h].pages; ++i) {
      EXPECT_EQ(site.PageChanges(h, i), i % 10 == 3) << site.hosts()[h].name << " " << i;
    }
  }
}

TEST(Site, ChangePercentIsAMonotoneShare) {
  SiteOptions o = Small();
  o.hosts = 3;
  o.pages = 1001;
  std::vector<std::set<int>> changing;
  for (int percent : {0, 1, 10, 15, 37, 99, 100}) {
    o.change_percent = percent;
    Site site(o);
    std::set<int> pages;
    for (int i = 0; i < o.pages; ++i) {
      if (site.PageChanges(1, i)) pages.insert(i);
    }
    // Exactly `percent` of every hundred consecutive pages; never the root.
    EXPECT_EQ(pages.size(), static_cast<size_t>(percent * 10)) << percent;
    EXPECT_FALSE(pages.count(0));
    if (!changing.empty()) {
      for (int i : changing.back()) EXPECT_TRUE(pages.count(i)) << percent << " lost " << i;
    }
    changing.push_back(pages);
    // The special robots hosts keep the default rule.
    const int special = site.FindHost("robots-404.test");
    EXPECT_TRUE(site.PageChanges(special, 3));
    EXPECT_FALSE(site.PageChanges(special, 4));
  }
}

TEST(Site, ManifestListsTheChangingPagesACrawlerFetches) {
  SiteOptions o = Small();
  o.change_percent = 20;
  Site site(o);
  auto doc = nlohmann::json::parse(site.ManifestJson());
  EXPECT_EQ(doc["change_percent"], 20);
  EXPECT_EQ(doc["near_dup_percent"], 0);
  EXPECT_TRUE(doc["near_duplicates"].empty());
  for (const auto& h : doc["hosts"]) {
    const std::string name = h["host"];
    std::set<std::string> must(h["must_fetch"].begin(), h["must_fetch"].end());
    std::set<std::string> listed(h["changing"].begin(), h["changing"].end());
    for (const std::string& id : listed) EXPECT_TRUE(must.count(id)) << id;
    if (name == "hostile.test") {
      EXPECT_EQ(listed, std::set<std::string>{"hostile.test/edge/changing"});
    } else if (name == "robots-5xx.test") {
      EXPECT_TRUE(listed.empty());  // robots.txt answers 503: nothing may be fetched
    } else if (name == "robots-404.test") {
      EXPECT_EQ(listed, std::set<std::string>{"robots-404.test/p/3"});
    } else if (name[0] == 'h') {
      std::set<std::string> expected;
      for (int i = 1; i < 50; ++i) {
        if (i % 10 == 3 || i % 10 == 4) expected.insert(name + TreePath(i));
      }
      EXPECT_EQ(listed, expected) << name;
    }
  }
  // Changing pages differ from one epoch to the next; the others do not.
  EXPECT_NE(RenderTreePage(site, 1, 14, 0).body, RenderTreePage(site, 1, 14, 1).body);
  EXPECT_EQ(RenderTreePage(site, 1, 15, 0).body, RenderTreePage(site, 1, 15, 1).body);
  EXPECT_EQ(RenderTreePage(site, 1, 0, 0).body, RenderTreePage(site, 1, 0, 1).body);
}

TEST(Site, CalendarTrapIsEndless) {
  Site site(Small());
  int h = site.FindHost("hostile.test");
  std::string path = "/calendar/2026/11";
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ(site.Resolve("hostile.test", path).kind, RequestKind::kTrap);
    auto links = site.LinksOf(h, path);
    ASSERT_EQ(links.size(), 2u);
    path = links[1].target;  // next month
  }
  EXPECT_EQ(path, "/calendar/2029/5");
}

TEST(RequestLog, LineFormat) {
  LogEntry e;
  e.host = "h0001.test";
  e.path = "/p/12?b=2&a=1";
  e.page = "h0001.test/p/12";
  e.start_us = 10;
  e.end_us = 20;
  e.status = 200;
  e.bytes = 5;
  e.conn = 3;
  e.kind = RequestKind::kPage;
  EXPECT_EQ(FormatLogLine(e),
            "{\"host\":\"h0001.test\",\"path\":\"/p/12?b=2&a=1\",\"page\":\"h0001.test/p/12\","
            "\"start_us\":10,\"end_us\":20,\"status\":200,\"bytes\":5,\"conn\":3,"
            "\"scheme\":\"http\",\"proto\":\"1.1\",\"kind\":\"page\",\"disallowed\":false}");
  e.page.clear();
  e.retry_after_s = 2;
  e.cond = true;
  e.kind = RequestKind::kEdge;
  e.path = "/\xff";
  auto j = nlohmann::json::parse(FormatLogLine(e));
  EXPECT_TRUE(j["page"].is_null());
  EXPECT_EQ(j["retry_after_s"], 2);
  EXPECT_EQ(j["cond"], true);
  EXPECT_EQ(j["kind"], "edge");
  EXPECT_FALSE(j.contains("inm"));
  EXPECT_FALSE(j.contains("ims"));
  e.inm = "\"abc\", W/\"def\"";
  e.ims = "Sun, 01 Nov 2026 00:00:00 GMT";
  j = nlohmann::json::parse(FormatLogLine(e));
  EXPECT_EQ(j["inm"], "\"abc\", W/\"def\"");
  EXPECT_EQ(j["ims"], "Sun, 01 Nov 2026 00:00:00 GMT");
  EXPECT_FALSE(j.contains("upgrade"));
  // HTTPS, HTTP/2 and the --http-redirect answers.
  e.https = true;
  e.h2 = true;
  e.upgrade = true;
  j = nlohmann::json::parse(FormatLogLine(e));
  EXPECT_EQ(j["scheme"], "https");
  EXPECT_EQ(j["proto"], "2");
  EXPECT_EQ(j["upgrade"], true);
}

TEST(Render, GzipBombInflatesBeyond1GB) {
  const std::string& bomb = *GzipBomb();
  EXPECT_LT(bomb.size(), 2u * 1024 * 1024);
  z_stream zs{};
  ASSERT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bomb.data()));
  zs.avail_in = static_cast<uInt>(bomb.size());
  std::vector<unsigned char> out(1 << 20);
  uint64_t total = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = out.data();
    zs.avail_out = static_cast<uInt>(out.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    total += out.size() - zs.avail_out;
  }
  inflateEnd(&zs);
  EXPECT_EQ(rc, Z_STREAM_END);  // CRC and length trailer verified by zlib
  EXPECT_EQ(total, kBombInflatedBytes);
  EXPECT_GT(total, 1'000'000'000u);
}

}  // namespace
}  // namespace harvest::testweb
