// Sitemap tests (sitemaps.org protocol 0.9).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "extract/extract.h"
#include "extract/test_util.h"

namespace harvest::extract {
namespace {

using V = std::vector<std::string>;

TEST(ParseSitemap, SitemapsOrg_Urlset) {
  SitemapResult r = ParseSitemap(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
      "  <url><loc>http://www.example.com/</loc><lastmod>2005-01-01</lastmod></url>\n"
      "  <url>\n    <loc>\n  http://www.example.com/catalog?item=12&amp;desc=vacation_hawaii\n"
      "</loc>\n  </url>\n</urlset>\n");
  EXPECT_EQ(r.error, "");
  EXPECT_FALSE(r.is_index);
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.urls, (V{"http://www.example.com/",
                       "http://www.example.com/catalog?item=12&desc=vacation_hawaii"}));
}

TEST(ParseSitemap, SitemapsOrg_Index) {
  SitemapResult r = ParseSitemap(
      "<sitemapindex xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
      "<sitemap><loc>http://e.com/s1.xml.gz</loc></sitemap>"
      "<sitemap><loc>http://e.com/s2.xml</loc><lastmod>2004-10-01</lastmod></sitemap>"
      "</sitemapindex>");
  EXPECT_TRUE(r.is_index);
  EXPECT_EQ(r.urls, (V{"http://e.com/s1.xml.gz", "http://e.com/s2.xml"}));
}

TEST(ParseSitemap, NamespacePrefixesAndExtensions) {
  SitemapResult r = ParseSitemap(
      "<sm:urlset xmlns:sm='http://www.sitemaps.org/schemas/sitemap/0.9' "
      "xmlns:image='http://www.google.com/schemas/sitemap-image/1.1'>"
      "<sm:url><sm:loc>http://e.com/a</sm:loc>"
      "<image:image><image:loc>http://e.com/img.png</image:loc></image:image></sm:url>"
      "</sm:urlset>");
  EXPECT_EQ(r.urls, (V{"http://e.com/a"}));
}

TEST(ParseSitemap, CdataCommentsAndEntities) {
  SitemapResult r = ParseSitemap(
      "<urlset><!-- <url><loc>http://e.com/commented</loc></url> -->"
      "<url><loc><![CDATA[http://e.com/a?x=1&y=2]]></loc></url>"
      "<url><loc>http://e.com/&#x41;&#66;&lt;&gt;&quot;&apos;</loc></url></urlset>");
  EXPECT_EQ(r.urls, (V{"http://e.com/a?x=1&y=2", "http://e.com/AB<>\"'"}));
}

TEST(ParseSitemap, TextSitemap) {
  SitemapResult r = ParseSitemap("http://e.com/1\r\n\n  http://e.com/2  \nhttp://e.com/3");
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.urls, (V{"http://e.com/1", "http://e.com/2", "http://e.com/3"}));
}

TEST(ParseSitemap, GzipSitemap) {
  std::string xml = "<urlset><url><loc>http://e.com/z</loc></url></urlset>";
  SitemapResult r = ParseSitemap(testing::Gzip(xml));
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.urls, (V{"http://e.com/z"}));
  // Without maybe_gzip the bytes are parsed as they are (binary text lines).
  EXPECT_NE(ParseSitemap(testing::Gzip(xml), false).urls, (V{"http://e.com/z"}));
}

TEST(ParseSitemap, SitemapsOrg_50000UrlLimit) {
  std::string text;
  for (int i = 0; i < 50010; ++i) text += "http://e.com/" + std::to_string(i) + "\n";
  SitemapResult r = ParseSitemap(text);
  EXPECT_EQ(r.urls.size(), 50000u);
  EXPECT_TRUE(r.truncated);
  std::string xml = "<urlset>";
  for (int i = 0; i < 50001; ++i)
    xml += "<url><loc>http://e.com/" + std::to_string(i) + "</loc></url>";
  r = ParseSitemap(xml + "</urlset>");
  EXPECT_EQ(r.urls.size(), 50000u);
  EXPECT_TRUE(r.truncated);
}

TEST(ParseSitemap, SitemapsOrg_GzipBombCappedAt50MiB) {
  // 60 MiB of spaces inside <urlset> compress to ~60 KiB.
  std::string big = "<urlset><url><loc>http://e.com/first</loc></url>" +
                    std::string(60u << 20, ' ') +
                    "<url><loc>http://e.com/late</loc></url></urlset>";
  std::string gz = testing::Gzip(big);
  big.clear();
  big.shrink_to_fit();
  EXPECT_LT(gz.size(), 1u << 20);
  SitemapResult r = ParseSitemap(gz);
  EXPECT_TRUE(r.truncated);
  EXPECT_NE(r.error.find("50 MiB"), std::string::npos);
  EXPECT_EQ(r.urls, (V{"http://e.com/first"}));
}

TEST(ParseSitemap, CorruptGzipReported) {
  std::string gz = testing::Gzip("<urlset><url><loc>http://e.com/a</loc></url></urlset>");
  gz.resize(gz.size() / 2);
  SitemapResult r = ParseSitemap(gz);
  EXPECT_FALSE(r.error.empty());
}

TEST(ParseSitemap, DeepNestingStops) {
  std::string xml = "<urlset><url><loc>http://e.com/a</loc></url>";
  for (int i = 0; i < 100; ++i) xml += "<x>";
  xml += "<url><loc>http://e.com/deep</loc></url>";
  SitemapResult r = ParseSitemap(xml);
  EXPECT_EQ(r.urls, (V{"http://e.com/a"}));
  EXPECT_NE(r.error, "");
}

TEST(ParseSitemap, NotASitemap) {
  EXPECT_NE(ParseSitemap("<html><body>hi</body></html>").error, "");
  EXPECT_TRUE(ParseSitemap("<html><a><loc>x</loc></a></html>").urls.empty());
  EXPECT_TRUE(ParseSitemap("").urls.empty());
}

}  // namespace
}  // namespace harvest::extract

namespace harvest::extract {
namespace {

TEST(ParseSitemap, SitemapsOrg_LastmodAndChangefreqAreHints) {
  SitemapResult r = ParseSitemap(
      "<?xml version=\"1.0\"?>\n"
      "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
      "<url><loc>http://a.test/1</loc><lastmod>2005-01-01</lastmod>"
      "<changefreq>Daily</changefreq></url>\n"
      "<url><changefreq>hourly</changefreq><loc>http://a.test/2</loc>"
      "<lastmod>2004-12-23T18:00:15+00:00</lastmod></url>\n"
      "<url><loc>http://a.test/3</loc><lastmod>not a date</lastmod>"
      "<changefreq>never</changefreq></url>\n"
      "<url><loc>http://a.test/4</loc></url>\n"
      "</urlset>\n");
  ASSERT_EQ(r.urls.size(), 4u);
  ASSERT_EQ(r.hints.size(), 4u);
  EXPECT_EQ(r.hints[0].lastmod_us, int64_t{1104537600} * 1'000'000);
  EXPECT_EQ(r.hints[0].changefreq_s, 86400);
  EXPECT_EQ(r.hints[1].lastmod_us, int64_t{1103824815} * 1'000'000);
  EXPECT_EQ(r.hints[1].changefreq_s, 3600);
  EXPECT_EQ(r.hints[2].lastmod_us, 0);
  EXPECT_EQ(r.hints[2].changefreq_s, 0);
  EXPECT_EQ(r.hints[3].lastmod_us, 0);
}

TEST(ParseSitemap, SitemapsOrg_PriorityIsAHint) {
  SitemapResult r = ParseSitemap(
      "<?xml version=\"1.0\"?>\n"
      "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
      "<url><loc>http://a.test/1</loc><priority>0.8</priority></url>\n"
      "<url><priority> 1.0 </priority><loc>http://a.test/2</loc></url>\n"
      "<url><loc>http://a.test/3</loc><priority>.25</priority></url>\n"
      "<url><loc>http://a.test/4</loc></url>\n"
      "<url><loc>http://a.test/5</loc><priority>1.5</priority></url>\n"
      "<url><loc>http://a.test/6</loc><priority>-0.5</priority></url>\n"
      "<url><loc>http://a.test/7</loc><priority>high</priority></url>\n"
      "<url><loc>http://a.test/8</loc><priority>0</priority></url>\n"
      "<url><loc>http://a.test/9</loc><x:priority>0.9</x:priority></url>\n"
      "</urlset>\n");
  ASSERT_EQ(r.urls.size(), 9u);
  ASSERT_EQ(r.hints.size(), 9u);
  EXPECT_DOUBLE_EQ(r.hints[0].priority, 0.8);
  EXPECT_DOUBLE_EQ(r.hints[1].priority, 1.0);
  EXPECT_DOUBLE_EQ(r.hints[2].priority, 0.25);
  EXPECT_EQ(r.hints[3].priority, -1) << "absent";
  EXPECT_EQ(r.hints[4].priority, -1) << "out of range";
  EXPECT_EQ(r.hints[5].priority, -1) << "negative";
  EXPECT_EQ(r.hints[6].priority, -1) << "not a number";
  EXPECT_EQ(r.hints[7].priority, 0);
  EXPECT_EQ(r.hints[8].priority, -1) << "another namespace's element";
  // A text sitemap has no hints.
  SitemapResult text = ParseSitemap("http://a.test/1\nhttp://a.test/2\n");
  ASSERT_EQ(text.hints.size(), 2u);
  EXPECT_EQ(text.hints[0].priority, -1);
}

TEST(ParseW3cDatetime, Forms) {
  EXPECT_EQ(ParseW3cDatetime("1970-01-01"), 0);
  EXPECT_EQ(ParseW3cDatetime("1970-01-01T00:01Z"), 60'000'000);
  EXPECT_EQ(ParseW3cDatetime("1970-01-01T01:00:00+01:00"), 0);
  EXPECT_EQ(ParseW3cDatetime("1970-01-01T00:00:00.25-00:30"), 1800'250'000);
  EXPECT_EQ(ParseW3cDatetime("2000-02-29T12:00:00Z"), int64_t{951825600} * 1'000'000);
  for (const char* bad : {"", "2005", "2005-13-01", "2005-01-01T10:00", "2005-01-01T25:00Z",
                          "2005-01-01 10:00Z", "2005-01-01T10:00:00Zjunk", "2005-1-1"}) {
    EXPECT_FALSE(ParseW3cDatetime(bad)) << bad;
  }
}

}  // namespace
}  // namespace harvest::extract
