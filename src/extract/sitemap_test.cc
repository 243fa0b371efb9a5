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
