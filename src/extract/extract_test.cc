// ExtractHtml, ParseXRobotsTag and IsHtml tests.
#include "extract/extract.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace harvest::extract {
namespace {

std::vector<std::string> Hrefs(const PageInfo& p) {
  std::vector<std::string> out;
  for (const Link& l : p.links) out.push_back(l.href);
  return out;
}

using V = std::vector<std::string>;

TEST(ExtractHtml, LinksFromAllSources) {
  PageInfo p = ExtractHtml(
      "<a href=a1>x</a><map><area href=a2></map><link rel=next href=l1>"
      "<link rel=stylesheet href=ignored.css><frameset><frame src=f1></frameset>"
      "<iframe src=i1></iframe><a name=noref>",
      "text/html");
  EXPECT_EQ(Hrefs(p), (V{"a1", "a2", "l1", "f1", "i1"}));
  ASSERT_EQ(p.links.size(), 5u);
  EXPECT_EQ(p.links[0].source, LinkSource::kAnchor);
  EXPECT_EQ(p.links[1].source, LinkSource::kArea);
  EXPECT_EQ(p.links[2].source, LinkSource::kLink);
  EXPECT_EQ(p.links[3].source, LinkSource::kFrame);
  EXPECT_EQ(p.links[4].source, LinkSource::kIframe);
  EXPECT_EQ(LinkSourceName(LinkSource::kIframe), "iframe");
}

TEST(ExtractHtml, LinkRelTokensCaseInsensitive) {
  PageInfo p = ExtractHtml(
      "<link rel='  Alternate\tHREFLANG ' href=/de><link rel=PREV href=/p>"
      "<link rel='canonical' href=/c><link rel='icon' href=/i>",
      "");
  EXPECT_EQ(Hrefs(p), (V{"/de", "/p", "/c"}));
  EXPECT_EQ(p.links[0].rel, "alternate hreflang");
  EXPECT_EQ(p.canonical, "/c");
}

TEST(ExtractHtml, NofollowPerLink) {
  PageInfo p = ExtractHtml(
      "<a href=1 rel='NoFollow'>x</a><a href=2 rel='external nofollow'>y</a>"
      "<a href=3 rel=nofollowx>z</a><area href=4 rel=nofollow><link rel='next nofollow' href=5>",
      "");
  ASSERT_EQ(p.links.size(), 5u);
  EXPECT_TRUE(p.links[0].nofollow);
  EXPECT_TRUE(p.links[1].nofollow);
  EXPECT_EQ(p.links[1].rel, "external nofollow");
  EXPECT_FALSE(p.links[2].nofollow);
  EXPECT_TRUE(p.links[3].nofollow);
  EXPECT_TRUE(p.links[4].nofollow);
}

TEST(ExtractHtml, HrefWhitespaceTrimmedEmptySkipped) {
  PageInfo p = ExtractHtml("<a href='  /a\n/b\t '>x</a><a href=''>e</a><a href='  \n'>w</a>", "");
  EXPECT_EQ(Hrefs(p), (V{"/a/b"}));
}

TEST(ExtractHtml, HrefRawValuesKept) {
  PageInfo p = ExtractHtml(
      "<a href='javascript:void(0)'>j</a><a href='mailto:x@y'>m</a><a href='#top'>t</a>", "");
  EXPECT_EQ(Hrefs(p), (V{"javascript:void(0)", "mailto:x@y", "#top"}));
}

TEST(ExtractHtml, HrefCharRefsDecoded) {
  PageInfo p = ExtractHtml("<a href='/s?q=1&amp;r=2&copy=3'>x</a>", "");
  EXPECT_EQ(Hrefs(p), (V{"/s?q=1&r=2&copy=3"}));
}

TEST(ExtractHtml, BaseHrefFirstWins) {
  PageInfo p = ExtractHtml(
      "<head><base target=_top><base href=' http://a/b/ '><base href=http://c/></head>", "");
  EXPECT_EQ(p.base_href, "http://a/b/");
  EXPECT_EQ(ExtractHtml("<p>", "").base_href, "");
}

TEST(ExtractHtml, CanonicalFirstWins) {
  PageInfo p = ExtractHtml(
      "<link rel=canonical href=''><link rel=canonical href=/one><link rel=canonical href=/two>",
      "");
  EXPECT_EQ(p.canonical, "/one");
}

TEST(ExtractHtml, LinksInScriptStyleCommentsIgnored) {
  PageInfo p = ExtractHtml(
      "<script>document.write('<a href=s>')</script><style>a{}</style><!-- <a href=c> -->"
      "<textarea><a href=t></textarea><title><a href=ti></title><a href=real>r</a>",
      "");
  EXPECT_EQ(Hrefs(p), (V{"real"}));
}

TEST(ExtractHtml, MaxLinksDropsAndCounts) {
  std::string html;
  for (int i = 0; i < 10; ++i) html += "<a href=/" + std::to_string(i) + ">x</a>";
  ExtractOptions o;
  o.max_links = 3;
  PageInfo p = ExtractHtml(html, "", o);
  EXPECT_EQ(p.links.size(), 3u);
  EXPECT_EQ(p.links_dropped, 7u);
}

TEST(ExtractHtml, MetaRobots) {
  EXPECT_TRUE(ExtractHtml("<meta name=robots content=noindex>", "").meta_robots.noindex);
  EXPECT_FALSE(ExtractHtml("<meta name=robots content=noindex>", "").meta_robots.nofollow);
  RobotsDirectives d =
      ExtractHtml("<meta name='ROBOTS' content='NoIndex,NOFOLLOW'>", "").meta_robots;
  EXPECT_TRUE(d.noindex);
  EXPECT_TRUE(d.nofollow);
  d = ExtractHtml("<meta name=robots content=none>", "").meta_robots;
  EXPECT_TRUE(d.noindex && d.nofollow);
  d = ExtractHtml("<meta name=robots content='index, follow'>", "").meta_robots;
  EXPECT_FALSE(d.noindex || d.nofollow);
}

TEST(ExtractHtml, MetaRobotsProductToken) {
  EXPECT_TRUE(ExtractHtml("<meta name=Harvest content=nofollow>", "").meta_robots.nofollow);
  EXPECT_FALSE(ExtractHtml("<meta name=googlebot content=nofollow>", "").meta_robots.nofollow);
  ExtractOptions o;
  o.product_token = "MyBot";
  EXPECT_TRUE(ExtractHtml("<meta name=mybot content=noindex>", "", o).meta_robots.noindex);
  EXPECT_FALSE(ExtractHtml("<meta name=harvest content=noindex>", "", o).meta_robots.noindex);
}

TEST(ExtractHtml, TitleCollapsedAndDecoded) {
  PageInfo p = ExtractHtml("<title>\n  A &amp;  B\t</title><title>second</title>", "");
  EXPECT_EQ(p.title, "A & B");
}

TEST(ExtractHtml, SvgTitleIsNotDocumentTitle) {
  PageInfo p = ExtractHtml("<body><svg><title>icon</title></svg><title>Doc</title>", "");
  EXPECT_EQ(p.title, "Doc");
}

TEST(ExtractHtml, VisibleText) {
  PageInfo p = ExtractHtml(
      "<html><head><title>T</title><style>x{}</style><script>var a;</script></head>"
      "<body><h1>Hello</h1><p>big&nbsp; <b>wo</b>rld &amp; more</p>"
      "<noscript>js</noscript><template>tpl</template><div>end</div></body>",
      "");
  EXPECT_EQ(p.text, "Hello big world & more end");
}

TEST(ExtractHtml, VisibleTextWhitespaceCollapse) {
  // U+00A0 collapses; other characters with a 0xC2 lead byte (U+00A9 ©) do not.
  PageInfo p = ExtractHtml(
      "<p> a\xC2\xA0\xC2\xA0"
      "b\xC2\xA9"
      "c \n\t d&nbsp;</p><p>e</p>",
      "text/html; charset=utf-8");
  EXPECT_EQ(p.text,
            "a b\xC2\xA9"
            "c d e");
}

TEST(ExtractHtml, VisibleTextCapOnUtf8Boundary) {
  ExtractOptions o;
  o.max_text_bytes = 5;
  PageInfo p = ExtractHtml("<p>ab\xC3\xA9\xC3\xA9</p>", "text/html; charset=utf-8", o);
  EXPECT_EQ(p.text, "ab\xC3\xA9");
  o.want_text = false;
  EXPECT_EQ(ExtractHtml("<p>abc</p>", "", o).text, "");
}

TEST(ExtractHtml, GarbageNeverCrashes) {
  PageInfo p = ExtractHtml(std::string_view("\0\xff<<<a href='\0\xfe", 16), "");
  EXPECT_TRUE(p.links.empty());
}

TEST(ParseXRobotsTag, PlainDirectives) {
  RobotsDirectives d = ParseXRobotsTag("noindex", "harvest");
  EXPECT_TRUE(d.noindex);
  EXPECT_FALSE(d.nofollow);
  d = ParseXRobotsTag("NOINDEX, NoFollow", "harvest");
  EXPECT_TRUE(d.noindex && d.nofollow);
  d = ParseXRobotsTag("none", "harvest");
  EXPECT_TRUE(d.noindex && d.nofollow);
  d = ParseXRobotsTag("noarchive, nosnippet", "harvest");
  EXPECT_FALSE(d.noindex || d.nofollow);
}

TEST(ParseXRobotsTag, AgentPrefix) {
  EXPECT_FALSE(ParseXRobotsTag("googlebot: noindex", "harvest").noindex);
  EXPECT_TRUE(ParseXRobotsTag("Harvest: noindex", "harvest").noindex);
  RobotsDirectives d = ParseXRobotsTag("googlebot: noindex, nofollow", "harvest");
  EXPECT_FALSE(d.noindex || d.nofollow);  // the prefix scopes the rest of the list
  d = ParseXRobotsTag("otherbot: noindex, harvest: nofollow", "harvest");
  EXPECT_FALSE(d.noindex);
  EXPECT_TRUE(d.nofollow);
}

TEST(ParseXRobotsTag, ValuedDirectivesAreNotAgents) {
  RobotsDirectives d =
      ParseXRobotsTag("unavailable_after: 25 Jun 2010 15:00:00 PST, noindex", "harvest");
  EXPECT_TRUE(d.noindex);
  d = ParseXRobotsTag("max-snippet: 20, nofollow", "harvest");
  EXPECT_TRUE(d.nofollow);
}

TEST(IsHtml, ByContentType) {
  EXPECT_TRUE(IsHtml("text/html", ""));
  EXPECT_TRUE(IsHtml("Text/HTML; charset=utf-8", ""));
  EXPECT_TRUE(IsHtml("application/xhtml+xml", ""));
  EXPECT_FALSE(IsHtml("text/plain", "<html>"));
  EXPECT_FALSE(IsHtml("application/pdf", "<html>"));
}

TEST(IsHtml, MimeSniffing_HtmlPatterns) {
  EXPECT_TRUE(IsHtml("", "  \n<!DOCTYPE html><p>"));
  EXPECT_TRUE(IsHtml("", "<HTML>"));
  EXPECT_TRUE(IsHtml("", "\xEF\xBB\xBF<p>x"));
  EXPECT_TRUE(IsHtml("", "<!-- x -->"));
  EXPECT_TRUE(IsHtml("*/*", "<a href=x>"));
  EXPECT_FALSE(IsHtml("", "<htmlx>"));
  EXPECT_FALSE(IsHtml("", "%PDF-1.4"));
  EXPECT_FALSE(IsHtml("", "<?xml version='1.0'?><urlset>"));
}

}  // namespace
}  // namespace harvest::extract
