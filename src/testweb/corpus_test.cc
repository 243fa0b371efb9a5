// Tests of the real-pages web (--corpus): loading and skipping files, the split of a file at
// its URLs, rewired links checked against the crawler's own extractor, reachability from
// the root, determinism, unique bodies, preserved link counts, the export.
#include "testweb/corpus.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "extract/extract.h"
#include "testweb/internal.h"
#include "testweb/testweb.h"

namespace harvest::testweb {
namespace {

namespace fs = std::filesystem;

std::string TreePath(int i) { return i == 0 ? "/" : "/p/" + std::to_string(i); }

// Text to bring a file over the 1 KiB minimum.
std::string Filler() {
  std::string p = "<p>";
  for (int i = 0; i < 40; ++i) p += "Real pages have real words in them. ";
  return p + "</p>\n";
}

// Every kind of URL the split must handle: slots, self slots, inert resources, cut tags, links
// hidden in a comment and a script (not links for a crawler).
std::string RichPage() {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<HEAD>\n<meta charset=\"utf-8\">\n"
         "<title>Rich <a href=\"in-title.html\"> page</title>\n"
         "<base href=\"http://elsewhere.example/docs/\">\n"
         "<meta name=\"robots\" content=\"noindex, nofollow\">\n"
         "<meta http-equiv=\"refresh\" content=\"5; url=http://elsewhere.example/\">\n"
         "<link rel=\"stylesheet\" href=\"_static/style.css\">\n"
         "<link rel=\"next\" title=\"Next\" href=\"b.html\">\n"
         "<link rel=\"canonical\" href=\"https://docs.example.org/3/a.html\">\n"
         "<script src=\"_static/x.js\"></script>\n"
         "<script>var t = '<a href=\"ghost-script.html\">x</a>';</script>\n"
         "<style>a[href=\"x\"] { color: red }</style>\n"
         "</head>\n<body>\n"
         "<!-- <a href=\"ghost-comment.html\">old</a> -->\n"
         "<nav><a href=\"index.html\">Home</a> | <a class=\"x\" href='../up.html'>Up</a></nav>\n"
         "<p>See <A HREF=unquoted.html>this</A> and <a rel=\"nofollow ugc\" href=\"n.html\">that"
         "</a>, <a name=\"anchor\">no href</a>, <a href=\"#section\">section</a>.</p>\n"
         "<img src=\"i.png\" srcset=\"i2.png 2x\" alt=\"picture\">\n"
         "<map name=\"m\"><area shape=\"rect\" coords=\"0,0,1,1\" href=\"area.html\"></map>\n"
         "<iframe src=\"frame.html\"></iframe>\n"
         "<form action=\"search.html\"><input name=\"q\"></form>\n" +
         Filler() + "<p><a href=\"mailto:someone@example.org\">mail</a></p>\n</body>\n</html>\n";
}

class CorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "testweb_corpus_test_" + std::to_string(getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/sub");
    Write("a.html", RichPage());
    // No <head>, no links.
    Write("b.htm", "<html><body>\n<h1>No links</h1>\n" + Filler() + "</body></html>\n");
    // One link; upper-case extension.
    Write("sub/c.HTML", "<!doctype html><html><head><title>C</title></head><body>" + Filler() +
                            "<p><a href=\"a.html\">A</a></p></body></html>");
    Write("tiny.html", "<html><body><a href=\"x\">x</a></body></html>");
    Write("notes.html", std::string(2000, 'x'));
    Write("readme.txt", "<html>" + Filler() + "</html>");
    Write("big.html", "<html><body>" + std::string(1100 * 1024, 'y') + "</body></html>");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& name, const std::string& data) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << data;
  }

  std::shared_ptr<const Corpus> Load() {
    auto corpus = LoadCorpus({dir_});
    EXPECT_TRUE(corpus.ok()) << corpus.status().ToString();
    return corpus.ok() ? *corpus : nullptr;
  }

  SiteOptions Options(int hosts, int pages) {
    SiteOptions o;
    o.hosts = hosts;
    o.pages = pages;
    o.corpus = Load();
    return o;
  }

  std::string dir_;
};

TEST_F(CorpusTest, LoadsHtmlFilesSortedAndSaysWhatItSkipped) {
  CorpusStats stats;
  auto corpus = LoadCorpus({dir_}, &stats);
  ASSERT_TRUE(corpus.ok()) << corpus.status().ToString();
  EXPECT_EQ(stats.found, 6u);  // a, b, big, notes, sub/c, tiny (not readme.txt)
  EXPECT_EQ(stats.used, 3u);
  EXPECT_EQ(stats.too_small, 1u);
  EXPECT_EQ(stats.too_large, 1u);
  EXPECT_EQ(stats.not_html, 1u);
  ASSERT_EQ((*corpus)->size(), 3u);
  EXPECT_EQ((*corpus)->document(0).name, "a.html");
  EXPECT_EQ((*corpus)->document(1).name, "b.htm");
  EXPECT_EQ((*corpus)->document(2).name, "sub/c.HTML");
  // a.html: 7 <a>/<area> hrefs (index, up, unquoted, n, #section, area, mailto); 3 self slots
  // (link next, link canonical, iframe).
  EXPECT_EQ((*corpus)->document(0).link_slots, 7u);
  EXPECT_EQ((*corpus)->document(0).kinds.size(), 10u);
  EXPECT_EQ((*corpus)->document(1).link_slots, 0u);
  EXPECT_EQ((*corpus)->document(2).link_slots, 1u);
  EXPECT_EQ(stats.links, 8u);
}

TEST_F(CorpusTest, BadDirectoriesAreErrorsNamingThem) {
  auto missing = LoadCorpus({dir_ + "/nope"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().ToString().find(dir_ + "/nope"), std::string::npos);
  fs::create_directories(dir_ + "/empty");
  std::ofstream(dir_ + "/empty/tiny.html") << "<html></html>";
  auto empty = LoadCorpus({dir_ + "/empty"});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().ToString().find("no usable HTML file"), std::string::npos);
  EXPECT_FALSE(LoadCorpus({}).ok());
}

// The crawler's own extractor finds exactly the links the site says the page has: same hrefs
// in the same order, the same nofollow; no <base>, no meta robots.
TEST_F(CorpusTest, CrawlerExtractorSeesExactlyTheRewiredLinks) {
  const Site site(Options(5, 12));
  int pages_checked = 0;
  for (int h = 0; h < 5; ++h) {
    for (int i = 0; i < 12; ++i) {
      const Rendered page = RenderTreePage(site, h, i, 0);
      const std::vector<Link> links = site.LinksOf(h, TreePath(i));
      const extract::PageInfo info = extract::ExtractHtml(page.body, page.content_type);
      ASSERT_EQ(info.links.size(), links.size()) << site.hosts()[h].name << TreePath(i);
      for (size_t k = 0; k < links.size(); ++k) {
        EXPECT_EQ(info.links[k].href, links[k].href);
        EXPECT_EQ(info.links[k].nofollow, links[k].nofollow);
      }
      EXPECT_TRUE(info.base_href.empty());
      EXPECT_FALSE(info.meta_robots.nofollow);
      EXPECT_FALSE(info.meta_robots.noindex);
      EXPECT_EQ(page.content_type, "text/html");
      ++pages_checked;
    }
  }
  EXPECT_EQ(pages_checked, 60);
}

// A file naming one original target several times names one rewired target as often.
TEST_F(CorpusTest, RepeatedOriginalHrefsStayRepeated) {
  fs::remove_all(dir_);
  fs::create_directories(dir_);
  std::string page = "<html><head><title>Nav</title></head><body>" + Filler();
  for (int i = 0; i < 6; ++i) {
    page += "<a href=\"index.html\">Home</a> <a href=\"api.html\">API</a> <a href=\"p" +
            std::to_string(i) + ".html\">page</a>\n";
  }
  Write("nav.html", page + "</body></html>\n");
  const Site site(Options(3, 30));
  const std::vector<Link> links = site.LinksOf(1, TreePath(20));  // no tree children
  ASSERT_EQ(links.size(), 18u);
  std::set<std::string> distinct;
  for (size_t k = 0; k < 6; ++k) {
    EXPECT_EQ(links[3 * k].href, links[0].href) << k;      // every "index.html"
    EXPECT_EQ(links[3 * k + 1].href, links[1].href) << k;  // every "api.html"
    distinct.insert(links[3 * k + 2].href);
  }
  EXPECT_NE(links[0].href, links[1].href);
  EXPECT_GE(distinct.size(), 2u);  // distinct originals get targets of their own
}

TEST_F(CorpusTest, OtherUrlsAreInertAndHiddenLinksStayHidden) {
  const Site site(Options(1, 1));  // h0000.test/ is a.html
  const std::string body = RenderTreePage(site, 0, 0, 0).body;
  EXPECT_EQ(body.find("<base"), std::string::npos);
  EXPECT_EQ(body.find("name=\"robots\""), std::string::npos);
  EXPECT_EQ(body.find("refresh"), std::string::npos);
  EXPECT_NE(body.find("<link rel=\"stylesheet\" href=\"data:,\">"), std::string::npos);
  EXPECT_NE(body.find("<script src=\"data:,\">"), std::string::npos);
  EXPECT_NE(body.find("<img src=\"data:,\" srcset=\"data:,\""), std::string::npos);
  EXPECT_NE(body.find("<form action=\"data:,\">"), std::string::npos);
  EXPECT_NE(body.find("<link rel=\"next\" title=\"Next\" href=\"/\">"), std::string::npos);
  EXPECT_NE(body.find("<iframe src=\"/\">"), std::string::npos);
  // Comments, scripts, styles and the title are left as they are.
  EXPECT_NE(body.find("<!-- <a href=\"ghost-comment.html\">old</a> -->"), std::string::npos);
  EXPECT_NE(body.find("'<a href=\"ghost-script.html\">x</a>'"), std::string::npos);
  EXPECT_NE(body.find("a[href=\"x\"]"), std::string::npos);
  EXPECT_NE(body.find("<a href=\"in-title.html\">"), std::string::npos);
  EXPECT_NE(body.find("<a name=\"anchor\">"), std::string::npos);
  // The identity comment right after <HEAD>.
  EXPECT_NE(body.find("<HEAD>\n<!-- harvest testweb page h0000.test/: corpus file 0 a.html -->"),
            std::string::npos);
}

TEST_F(CorpusTest, EveryPageIsReachableFromItsRoot) {
  for (int pages : {1, 2, 7, 23, 100}) {
    const Site site(Options(6, pages));
    for (int h = 0; h < 6; ++h) {
      std::set<std::string> seen{"/"};
      std::deque<std::string> queue{"/"};
      while (!queue.empty()) {
        const std::string path = queue.front();
        queue.pop_front();
        for (const Link& l : site.LinksOf(h, path)) {
          if (l.nofollow || l.host != site.hosts()[h].name) continue;
          ASSERT_NE(site.Resolve(l.host, l.target).kind, RequestKind::kUnknown) << l.href;
          if (seen.insert(l.target).second) queue.push_back(l.target);
        }
      }
      EXPECT_EQ(seen.size(), static_cast<size_t>(pages)) << "host " << h << ", pages " << pages;
    }
    // The manifest agrees: every page (and robots.txt) of every normal host must be fetched.
    const nlohmann::json manifest = nlohmann::json::parse(site.ManifestJson());
    for (const auto& host : manifest["hosts"]) {
      const std::string name = host["host"];
      if (name.size() != 10 || name[0] != 'h') continue;
      EXPECT_EQ(host["must_fetch"].size(), static_cast<size_t>(pages) + 1) << name;
    }
  }
}

TEST_F(CorpusTest, DeterministicAndEveryBodyUnique) {
  SiteOptions o = Options(8, 30);
  const Site a(o);
  o.corpus = Load();  // a second load of the same files
  const Site b(o);
  std::set<std::string> bodies;
  for (int h = 0; h < 8; ++h) {
    for (int i = 0; i < 30; ++i) {
      const std::string body = RenderTreePage(a, h, i, 0).body;
      EXPECT_EQ(body, RenderTreePage(b, h, i, 0).body);
      bodies.insert(body);
    }
  }
  EXPECT_EQ(bodies.size(), 240u);  // 3 files, 240 pages, no two bodies alike
}

TEST_F(CorpusTest, LinkCountsArePreservedAndTheShareOfOtherHostsHolds) {
  SiteOptions o = Options(20, 40);
  o.hostile = false;  // h0000.test/ would link the hostile hosts too
  const Site site(o);
  const Corpus& corpus = *site.options().corpus;
  const size_t original_a =
      extract::ExtractHtml(RichPage(), "text/html").links.size();  // 10: the hidden ones not
  EXPECT_EQ(original_a, 10u);
  size_t random_links = 0, cross = 0;
  for (int h = 0; h < 20; ++h) {
    for (int i = 0; i < 40; ++i) {
      const CorpusDocument& doc = corpus.document(corpus.FileOf(h, i, 20));
      const std::vector<Link> links = site.LinksOf(h, TreePath(i));
      const size_t children = (2 * i + 1 < 40) + (2 * i + 2 < 40);
      // A file with room for the tree links keeps its link count; others get the missing
      // tree links appended.
      const size_t expected = doc.name == "a.html"  ? original_a
                              : doc.name == "b.htm" ? children
                                                    : std::max<size_t>(children, 1);
      EXPECT_EQ(links.size(), expected) << doc.name;
      size_t followable_slots = 0;
      for (size_t k = 0; k < doc.kinds.size(); ++k) {
        if (doc.kinds[k] != SlotKind::kLink) continue;
        if (followable_slots++ < children) continue;  // a tree link
        ++random_links;
        if (links[k].host != site.hosts()[h].name) ++cross;
      }
    }
  }
  ASSERT_GT(random_links, 1000u);
  const double share = static_cast<double>(cross) / static_cast<double>(random_links);
  EXPECT_NEAR(share, 0.2, 0.04);
}

TEST_F(CorpusTest, HostsSpreadOverTheCorpusAndTheHostileHostsAreLinkedFromTheFirstRoot) {
  const Site site(Options(3, 1));
  const Corpus& corpus = *site.options().corpus;
  EXPECT_EQ(corpus.FileOf(0, 0, 3), 0u);
  EXPECT_EQ(corpus.FileOf(1, 0, 3), 1u);
  EXPECT_EQ(corpus.FileOf(2, 0, 3), 2u);
  EXPECT_EQ(corpus.FileOf(2, 5, 3), 1u);  // wraps
  int hostile = 0;
  for (const Link& l : site.LinksOf(0, "/")) hostile += l.host == "hostile.test";
  EXPECT_EQ(hostile, 1);
  SiteOptions o = Options(3, 1);
  o.hostile = false;
  const Site quiet(o);
  for (const Link& l : quiet.LinksOf(0, "/")) EXPECT_EQ(l.host.rfind("h000", 0), 0u) << l.href;
}

TEST_F(CorpusTest, ServedWithTheEpochInChangingPages) {
  const Site site(Options(2, 20));
  ASSERT_TRUE(site.PageChanges(1, 3));
  const Rendered e0 = RenderTreePage(site, 1, 3, 0), e1 = RenderTreePage(site, 1, 3, 1);
  EXPECT_TRUE(e0.changes_with_epoch);
  EXPECT_NE(e0.body, e1.body);
  EXPECT_NE(e1.body.find(", edition 1 -->"), std::string::npos);
  EXPECT_EQ(RenderTreePage(site, 1, 4, 0).body, RenderTreePage(site, 1, 4, 7).body);
  Request req;
  req.method = "GET";
  req.host = "h0001.test";
  req.target = "/p/4";
  const Response r = Handle(site, req, nullptr);
  EXPECT_EQ(r.status, 200);
  ASSERT_TRUE(r.body);
  EXPECT_EQ(*r.body, RenderTreePage(site, 1, 4, 0).body);
}

TEST_F(CorpusTest, ExportWritesTheSamePagesForAStaticServer) {
  SiteOptions o = Options(4, 6);
  o.hostile = false;
  const Site site(o);
  StaticExportOptions e;
  e.dir = dir_ + "/export";
  e.domain = "peers.test";
  e.port = 8080;
  auto stats = ExportStaticWeb(site, e);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->pages, 24u);
  EXPECT_EQ(stats->distinct_files, 3u);
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const CorpusUrlStyle style{"peers.test", 8080, false};
  uint64_t bytes = 0;
  bool cross_link = false;
  for (int h = 0; h < 4; ++h) {
    const std::string root = e.dir + "/www/h000" + std::to_string(h) + ".peers.test";
    EXPECT_EQ(read(root + "/robots.txt"), "User-agent: *\nDisallow:\n");
    for (int i = 0; i < 6; ++i) {
      const std::string body =
          read(i == 0 ? root + "/index.html" : root + "/p/" + std::to_string(i));
      EXPECT_EQ(body, RenderCorpusPage(site, h, i, 0, style).body);
      cross_link = cross_link || body.find("\"http://h000") != std::string::npos;
      for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(body.find("h000" + std::to_string(k) + ".test"), std::string::npos);
      }
      bytes += body.size();
    }
  }
  EXPECT_TRUE(cross_link);
  EXPECT_EQ(stats->bytes, bytes);
  EXPECT_EQ(read(e.dir + "/hosts.txt"),
            "h0000.peers.test\nh0001.peers.test\nh0002.peers.test\nh0003.peers.test\n");
  EXPECT_EQ(read(e.dir + "/seeds.txt").substr(0, 30), "http://h0000.peers.test:8080/\n");
  e.https = true;
  e.dir = dir_ + "/export-https";
  ASSERT_TRUE(ExportStaticWeb(site, e).ok());
  EXPECT_EQ(read(e.dir + "/seeds.txt").substr(0, 31), "https://h0000.peers.test:8080/\n");
  // Only a real-pages web.
  EXPECT_FALSE(ExportStaticWeb(Site(SiteOptions{}), e).ok());
}

// Serving is assembly from the split file: 20,000 pages of a 40 KB file with ~360 links in
// well under a second of a 2,000 pages/s crawl's budget.
TEST_F(CorpusTest, AssemblingPagesIsCheap) {
  std::string html = "<!DOCTYPE html><html><head><title>Big</title></head><body>\n";
  for (int k = 0; html.size() < 40000; ++k) {
    html += "<p>Some text of a real page, with a <a href=\"page-" + std::to_string(k) +
            ".html\">link</a> in it and some more words after the link.</p>\n";
  }
  html += "</body></html>\n";
  fs::remove_all(dir_);
  fs::create_directories(dir_);
  Write("big-page.html", html);
  const Site site(Options(100, 200));
  const auto start = std::chrono::steady_clock::now();
  size_t bytes = 0;
  for (int n = 0; n < 20000; ++n) bytes += RenderTreePage(site, n % 100, n / 100, 0).body.size();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(bytes, 20000u * 36000u);           // the rewired hrefs are shorter
  EXPECT_LT(seconds, 10.0) << "20,000 pages";  // typically ~0.5 s; generous for loaded machines
  std::printf("assembled 20,000 pages of %zu KB in %.2f s\n", bytes / 20000 / 1024, seconds);
}

}  // namespace
}  // namespace harvest::testweb
