// SitemapReader tests: the streaming sitemap parser (sitemaps.org protocol 0.9). The
// whole-document cases are in sitemap_test.cc (ParseSitemap runs on the reader).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "extract/extract.h"
#include "extract/test_util.h"

namespace harvest::extract {
namespace {

using V = std::vector<std::string>;

// What a reader gave, for comparing feeds.
struct Seen {
  std::vector<std::string> urls;
  std::vector<SitemapHint> hints;
  bool is_index = false;
  bool truncated = false;
  size_t skipped = 0;
  std::string error;
};

bool SameHints(const std::vector<SitemapHint>& a, const std::vector<SitemapHint>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].lastmod_us != b[i].lastmod_us || a[i].changefreq_s != b[i].changefreq_s ||
        a[i].priority != b[i].priority) {
      return false;
    }
  }
  return true;
}

// Feeds `body` in chunks of the sizes `next_size` returns.
template <class NextSize>
Seen Read(std::string_view body, NextSize next_size, bool input_cut = false) {
  Seen s;
  SitemapReader reader([&s](std::string_view url, const SitemapHint& hint) {
    s.urls.emplace_back(url);
    s.hints.push_back(hint);
  });
  while (!body.empty()) {
    const size_t n = std::min(body.size(), next_size());
    reader.Feed(body.substr(0, n));
    body.remove_prefix(n);
  }
  reader.Finish(input_cut);
  s.is_index = reader.is_index();
  s.truncated = reader.truncated();
  s.skipped = reader.skipped();
  s.error = reader.error();
  EXPECT_EQ(reader.urls(), s.urls.size());
  return s;
}

Seen OneShot(std::string_view body) {
  return Read(body, [&] { return body.size(); });
}
Seen ByteByByte(std::string_view body) {
  return Read(body, [] { return size_t{1}; });
}

void ExpectSame(const Seen& a, const Seen& b, const std::string& what) {
  EXPECT_EQ(a.urls, b.urls) << what;
  EXPECT_TRUE(SameHints(a.hints, b.hints)) << what;
  EXPECT_EQ(a.is_index, b.is_index) << what;
  EXPECT_EQ(a.truncated, b.truncated) << what;
  EXPECT_EQ(a.skipped, b.skipped) << what;
  EXPECT_EQ(a.error, b.error) << what;
}

// Documents with every construct a chunk boundary may split.
std::vector<std::string> Documents() {
  return {
      "\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE urlset>\n"
      "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" a='x>y'>\n"
      "<url><loc>\n  http://e.com/catalog?item=12&amp;desc=vacation&#x41;&#66;\n</loc>"
      "<lastmod>2004-12-23T18:00:15+00:00</lastmod><changefreq>Daily</changefreq>"
      "<priority> 0.8 </priority></url>\n"
      "<!-- <url><loc>http://e.com/commented</loc></url> -- - --->"
      "<url><loc><![CDATA[http://e.com/a?x=1&y=2]]]]></loc></url>"
      "<url><loc>http://e.com/&lt;&gt;&quot;&apos;&bogus;</loc><priority>7</priority></url>"
      "<url/><url><loc></loc></url></urlset>\n",
      "<sm:urlset xmlns:sm='http://www.sitemaps.org/schemas/sitemap/0.9'>"
      "<sm:url><sm:loc>http://e.com/a</sm:loc><image:image><image:loc>http://e.com/i.png"
      "</image:loc></image:image><sm:lastmod>2005-01-01</sm:lastmod></sm:url></sm:urlset>",
      "<sitemapindex><sitemap><loc>http://e.com/s1.xml.gz</loc><lastmod>2004-10-01</lastmod>"
      "</sitemap><sitemap><loc>http://e.com/s2.xml</loc></sitemap></sitemapindex>",
      "http://e.com/1\r\n\n  http://e.com/2  \nhttp://e.com/3",
      "<urlset><url><loc>http://e.com/unclosed</loc>",
      "<html><body><a href=x>hi</a></body></html>",
      "<urlset><url><loc>http://e.com/a</loc></url>" + std::string(100, 'x') + "<x><x><x>",
      "<urlset><url><loc>http://e.com/" + std::string(3000, 'a') + "</loc></url>" +
          "<url><loc>http://e.com/b</loc></url></urlset>",
      "<!><!-x><![CDAT><?pi?><urlset><url><loc>http://e.com/p</loc></url></urlset>",
      "",
      "   \n ",
  };
}

TEST(SitemapReader, ChunkBoundariesAnywhere) {
  std::mt19937 rng(41);
  for (const std::string& doc : Documents()) {
    const Seen whole = OneShot(doc);
    ExpectSame(whole, ByteByByte(doc), "bytes: " + doc.substr(0, 60));
    for (int round = 0; round < 20; ++round) {
      ExpectSame(whole, Read(doc, [&] { return size_t{1} + rng() % 13; }),
                 "chunks: " + doc.substr(0, 60));
    }
    // The same through gzip, split anywhere, and gzip twice (Content-Encoding over .gz).
    const std::string gz = testing::Gzip(doc);
    ExpectSame(whole, ByteByByte(gz), "gzip bytes: " + doc.substr(0, 60));
    ExpectSame(whole, ByteByByte(testing::Gzip(gz)), "gzip twice: " + doc.substr(0, 60));
  }
}

TEST(SitemapReader, WholeDocumentResults) {
  const std::vector<std::string> docs = Documents();
  Seen s = OneShot(docs[0]);
  EXPECT_EQ(s.error, "");
  EXPECT_EQ(s.urls, (V{"http://e.com/catalog?item=12&desc=vacationAB", "http://e.com/a?x=1&y=2]]",
                       "http://e.com/<>\"'&bogus;"}));
  ASSERT_EQ(s.hints.size(), 3u);
  EXPECT_EQ(s.hints[0].lastmod_us, int64_t{1103824815} * 1'000'000);
  EXPECT_EQ(s.hints[0].changefreq_s, 86400);
  EXPECT_DOUBLE_EQ(s.hints[0].priority, 0.8);
  EXPECT_EQ(s.hints[2].priority, -1);
  EXPECT_EQ(OneShot(docs[1]).urls, (V{"http://e.com/a"}));
  EXPECT_EQ(OneShot(docs[1]).hints[0].lastmod_us, int64_t{1104537600} * 1'000'000);
  s = OneShot(docs[2]);
  EXPECT_TRUE(s.is_index);
  EXPECT_EQ(s.urls, (V{"http://e.com/s1.xml.gz", "http://e.com/s2.xml"}));
  EXPECT_EQ(s.hints[0].lastmod_us, 0) << "an index entry has no hints";
  EXPECT_EQ(OneShot(docs[3]).urls, (V{"http://e.com/1", "http://e.com/2", "http://e.com/3"}));
  EXPECT_EQ(OneShot(docs[4]).urls, (V{"http://e.com/unclosed"}));
  EXPECT_NE(OneShot(docs[5]).error.find("not a sitemap"), std::string::npos);
  s = OneShot(docs[6]);
  EXPECT_EQ(s.urls, (V{"http://e.com/a"}));
  s = OneShot(docs[7]);
  EXPECT_EQ(s.urls, (V{"http://e.com/b"}));
  EXPECT_EQ(s.skipped, 1u) << "a URL over 2 KiB is skipped";
  EXPECT_EQ(OneShot(docs[8]).urls, (V{"http://e.com/p"}));
  EXPECT_EQ(OneShot(docs[9]).error, "");
}

TEST(SitemapReader, EmitsEachUrlWhenItsEntryEnds) {
  std::vector<std::string> urls;
  SitemapReader reader([&](std::string_view url, const SitemapHint&) { urls.emplace_back(url); });
  reader.Feed("<urlset><url><loc>http://e.com/a</loc><lastmod>2005-01-01</lastm");
  EXPECT_TRUE(urls.empty()) << "its hints may follow the <loc>";
  reader.Feed("od></url><url><loc>http://e.com/b</loc>");
  EXPECT_EQ(urls, (V{"http://e.com/a"}));
  reader.Feed("</url>");
  EXPECT_EQ(urls, (V{"http://e.com/a", "http://e.com/b"}));
  reader.Finish();
  EXPECT_EQ(reader.error(), "");
}

TEST(SitemapReader, TextLineCutByTheFetchIsDropped) {
  Seen s = Read(
      "http://e.com/1\nhttp://e.com/tr", [] { return size_t{5}; }, /*input_cut=*/true);
  EXPECT_EQ(s.urls, (V{"http://e.com/1"}));
}

TEST(SitemapReader, SitemapsOrg_50000UrlsStreamed) {
  std::string doc = "<urlset>";
  for (int i = 0; i < 50005; ++i) {
    doc += "<url><loc>https://e.com/p/" + std::to_string(i) + "</loc></url>";
  }
  doc += "</urlset>";
  std::mt19937 rng(7);
  Seen s = Read(testing::Gzip(doc), [&] { return size_t{1} + rng() % 5000; });
  EXPECT_EQ(s.urls.size(), 50000u);
  EXPECT_EQ(s.urls.back(), "https://e.com/p/49999");
  EXPECT_TRUE(s.truncated);
  EXPECT_EQ(s.error, "");
  // Exactly 50,000 is not truncated.
  std::string exact = "<sitemapindex>";
  for (int i = 0; i < 50000; ++i) {
    exact += "<sitemap><loc>https://e.com/s" + std::to_string(i) + ".xml</loc></sitemap>";
  }
  s = OneShot(exact + "</sitemapindex>");
  EXPECT_TRUE(s.is_index);
  EXPECT_EQ(s.urls.size(), 50000u);
  EXPECT_FALSE(s.truncated);
}

TEST(SitemapReader, SitemapsOrg_50MiBUncompressedCap) {
  // 60 MiB fed 1 MiB at a time (never held whole): the reader stops at 50 MiB.
  size_t urls = 0;
  SitemapReader reader([&](std::string_view, const SitemapHint&) { ++urls; });
  const std::string filler(1u << 20, ' ');
  reader.Feed("<urlset><url><loc>http://e.com/first</loc></url>");
  size_t fed = 0;
  for (int i = 0; i < 60 && reader.Feed(filler); ++i) fed += filler.size();
  EXPECT_LT(fed, 51u << 20);
  EXPECT_FALSE(reader.Feed("<url><loc>http://e.com/late</loc></url></urlset>"));
  reader.Finish();
  EXPECT_EQ(urls, 1u);
  EXPECT_TRUE(reader.truncated());
  EXPECT_EQ(reader.bytes(), kMaxSitemapBytes);
  EXPECT_NE(reader.error().find("50 MiB"), std::string::npos);
}

TEST(SitemapReader, HugeElementTextIsBounded) {
  // A 20 MiB <loc> (fed in pieces) is skipped, and the next entry still counts.
  size_t urls = 0;
  SitemapReader reader([&](std::string_view, const SitemapHint&) { ++urls; });
  reader.Feed("<urlset><url><loc>http://e.com/");
  const std::string piece(1u << 20, 'a');
  for (int i = 0; i < 20; ++i) reader.Feed(piece);
  reader.Feed("</loc><lastmod>" + piece + "</lastmod></url>");
  reader.Feed("<url><loc>http://e.com/ok</loc></url></urlset>");
  reader.Finish();
  EXPECT_EQ(urls, 1u);
  EXPECT_EQ(reader.skipped(), 1u);
  EXPECT_EQ(reader.error(), "");
}

TEST(SitemapReader, GzipMembersAndFaults) {
  // Two gzip members are one file.
  const std::string two = testing::Gzip("http://e.com/1\n") + testing::Gzip("http://e.com/2\n");
  EXPECT_EQ(ByteByByte(two).urls, (V{"http://e.com/1", "http://e.com/2"}));
  // Cut: what came before the cut is kept, the cut is reported.
  std::string doc = "<urlset>";
  for (int i = 0; i < 2000; ++i)
    doc += "<url><loc>http://e.com/" + std::to_string(i) + "</loc></url>";
  std::string gz = testing::Gzip(doc + "</urlset>");
  gz.resize(gz.size() / 2);
  Seen s = ByteByByte(gz);
  EXPECT_EQ(s.error, "truncated gzip sitemap");
  EXPECT_GT(s.urls.size(), 100u);
  EXPECT_LT(s.urls.size(), 2000u);
  // Corrupt: stops with an error, no crash.
  std::string bad = testing::Gzip(doc);
  for (size_t i = 20; i < bad.size(); i += 97) bad[i] ^= 0x5a;
  EXPECT_FALSE(OneShot(bad).error.empty());
  // Garbage after a member.
  EXPECT_EQ(OneShot(testing::Gzip("http://e.com/1\n") + "junk").error, "corrupt gzip sitemap");
  // Without maybe_gzip the bytes are not inflated.
  std::vector<std::string> urls;
  SitemapReader raw([&](std::string_view u, const SitemapHint&) { urls.emplace_back(u); },
                    /*maybe_gzip=*/false);
  raw.Feed(testing::Gzip("<urlset><url><loc>http://e.com/z</loc></url></urlset>"));
  raw.Finish();
  EXPECT_EQ(std::find(urls.begin(), urls.end(), "http://e.com/z"), urls.end());
}

TEST(SitemapReader, RandomBytesNeverCrash) {
  std::mt19937 rng(3);
  for (int round = 0; round < 300; ++round) {
    std::string doc = round % 2 == 0 ? "<urlset>" : "";
    const size_t n = rng() % 400;
    static constexpr char kAlphabet[] = "<>/!?-[]CDAT&;#x'\"=: \nurlsetloc\x1f\x8b";
    for (size_t i = 0; i < n; ++i) doc.push_back(kAlphabet[rng() % (sizeof(kAlphabet) - 1)]);
    const Seen whole = OneShot(doc);
    ExpectSame(whole, ByteByByte(doc), "random");
    for (const std::string& url : whole.urls) {
      EXPECT_FALSE(url.empty());
      EXPECT_LE(url.size(), kMaxSitemapUrlBytes);
    }
  }
}

}  // namespace
}  // namespace harvest::extract
