// Tokenizer tests, named after the WHATWG HTML §13.2.5 state or rule they check.
#include "extract/tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace harvest::extract::internal {
namespace {

// Records tokens as compact strings; adjacent text pieces are merged.
class Recorder : public TokenHandler {
 public:
  explicit Recorder(bool attributes = true) : attributes_(attributes) {}
  bool WantsAttributes(TagInfo) const override { return attributes_; }
  void OnTag(const Tag& tag) override {
    std::string s = tag.is_end ? "</" : "<";
    s += tag.name;
    for (size_t i = 0; i < tag.attribute_count; ++i) {
      s += " " + tag.attributes[i].name + "=" + tag.attributes[i].value;
    }
    if (tag.self_closing) s += " /";
    s += ">";
    Push(s);
  }
  void OnText(std::string_view text, TextKind kind) override {
    std::string prefix = kind == TextKind::kData ? "T:" : kind == TextKind::kRcdata ? "R:" : "X:";
    if (last_was_text_ && events.back().rfind(prefix, 0) == 0) {
      events.back() += std::string(text);
    } else {
      events.push_back(prefix + std::string(text));
    }
    last_was_text_ = true;
  }
  void OnComment(std::string_view c) override { Push("C:" + std::string(c)); }
  void OnDoctype(std::string_view d) override { Push("D:" + std::string(d)); }

  std::vector<std::string> events;

 private:
  void Push(std::string s) {
    events.push_back(std::move(s));
    last_was_text_ = false;
  }
  bool last_was_text_ = false;
  bool attributes_;
};

std::vector<std::string> Tok(std::string_view html) {
  Recorder r;
  Tokenize(html, &r);
  return r.events;
}

using V = std::vector<std::string>;

// The token stream without attributes: what a handler that wants none of them sees.
std::vector<std::string> TokNoAttributes(std::string_view html) {
  Recorder r(/*attributes=*/false);
  Tokenize(html, &r);
  return r.events;
}

// Attributes (and the end tags' ones) removed from Tok's strings.
std::vector<std::string> StripAttributes(std::vector<std::string> events) {
  for (std::string& e : events) {
    if (e.empty() || e[0] != '<') continue;
    const size_t space = e.find(' ');
    if (space == std::string::npos) continue;
    const bool self_closing = e.size() >= 3 && e.compare(e.size() - 3, 3, " />") == 0;
    e = e.substr(0, space) + (self_closing ? " />" : ">");
  }
  return events;
}

TEST(Tokenizer, Html5_DataState_TextAndTags) {
  EXPECT_EQ(Tok("a<b>c</b>d"), (V{"T:a", "<b>", "T:c", "</b>", "T:d"}));
}

TEST(Tokenizer, Html5_TagOpenState_NonLetterIsText) {
  EXPECT_EQ(Tok("1 < 2 <3 <"), (V{"T:1 < 2 <3 <"}));
}

TEST(Tokenizer, Html5_TagNameState_Lowercased) {
  EXPECT_EQ(Tok("<DiV CLASS=X>"), (V{"<div class=X>"}));
}

TEST(Tokenizer, Html5_AttributeValueUnquoted) {
  EXPECT_EQ(Tok("<a href=/x?a=1&b=2 id=y>"), (V{"<a href=/x?a=1&b=2 id=y>"}));
}

TEST(Tokenizer, Html5_AttributeValueSingleAndDoubleQuoted) {
  EXPECT_EQ(Tok("<a x='a\"b' y=\"c'd\" z = \"e f\">"), (V{"<a x=a\"b y=c'd z=e f>"}));
}

TEST(Tokenizer, Html5_AttributeWithoutValue) {
  EXPECT_EQ(Tok("<input disabled checked=on>"), (V{"<input disabled= checked=on>"}));
}

TEST(Tokenizer, Html5_AfterAttributeValueQuoted_MissingSpace) {
  EXPECT_EQ(Tok("<a x=\"1\"y=\"2\">"), (V{"<a x=1 y=2>"}));
}

TEST(Tokenizer, Html5_DuplicateAttribute_FirstWins) {
  EXPECT_EQ(Tok("<a href=1 HREF=2 href='3'>"), (V{"<a href=1>"}));
}

TEST(Tokenizer, AttributeCapPerTag) {
  std::string html = "<a href=first";
  for (int i = 0; i < 100000; ++i) html += " x" + std::to_string(i) + "=v";
  html += " href=last>t";
  Recorder r;
  Tokenize(html, &r);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].rfind("<a href=first x0=v x1=v", 0), 0u);
  EXPECT_EQ(r.events[1], "T:t");
}

TEST(Tokenizer, Html5_BeforeAttributeName_EqualsStartsName) {
  EXPECT_EQ(Tok("<a =x>"), (V{"<a =x=>"}));
}

TEST(Tokenizer, Html5_SelfClosingStartTag) {
  EXPECT_EQ(Tok("<br/><img src=a /><p / x>"), (V{"<br />", "<img src=a />", "<p x=>"}));
  // '/' not directly followed by '>' is ignored (reconsumed in before attribute name).
  EXPECT_EQ(Tok("<img src=a / >"), (V{"<img src=a>"}));
  // An unquoted value swallows the '/'.
  EXPECT_EQ(Tok("<a href=v/>"), (V{"<a href=v/>"}));
}

TEST(Tokenizer, Html5_BeforeAttributeValue_MissingValue) {
  EXPECT_EQ(Tok("<a href=>x"), (V{"<a href=>", "T:x"}));
}

TEST(Tokenizer, Html5_UnquotedValueEndsAtGreaterThan) {
  EXPECT_EQ(Tok("<a href=x>y"), (V{"<a href=x>", "T:y"}));
}

TEST(Tokenizer, Html5_EofInTag_TagDropped) {
  EXPECT_EQ(Tok("x<a href='y"), (V{"T:x"}));
  EXPECT_EQ(Tok("x<a href=y"), (V{"T:x"}));
  EXPECT_EQ(Tok("x<a"), (V{"T:x"}));
}

TEST(Tokenizer, Html5_EndTagOpen_EmptyEndTagIgnored) { EXPECT_EQ(Tok("a</>b"), (V{"T:ab"})); }

TEST(Tokenizer, Html5_EndTagOpen_NonLetterIsBogusComment) {
  EXPECT_EQ(Tok("a</ x>b"), (V{"T:a", "C: x", "T:b"}));
}

TEST(Tokenizer, Html5_BogusComment_ProcessingInstruction) {
  EXPECT_EQ(Tok("<?xml version='1.0'?><p>"), (V{"C:?xml version='1.0'?", "<p>"}));
}

TEST(Tokenizer, Html5_MarkupDeclaration_BogusComment) {
  EXPECT_EQ(Tok("<!foo><p>"), (V{"C:foo", "<p>"}));
}

TEST(Tokenizer, Html5_CommentState) { EXPECT_EQ(Tok("<!-- a <b> -->c"), (V{"C: a <b> ", "T:c"})); }

TEST(Tokenizer, Html5_CommentStart_AbruptClosing) {
  EXPECT_EQ(Tok("<!-->a"), (V{"C:", "T:a"}));
  EXPECT_EQ(Tok("<!--->a"), (V{"C:", "T:a"}));
}

TEST(Tokenizer, Html5_CommentEndBang) { EXPECT_EQ(Tok("<!-- x --!>a"), (V{"C: x ", "T:a"})); }

TEST(Tokenizer, Html5_CommentEnd_ExtraDashes) {
  EXPECT_EQ(Tok("<!-- x --->a"), (V{"C: x -", "T:a"}));
}

TEST(Tokenizer, Html5_Comment_DashDashNotFollowedByGt) {
  EXPECT_EQ(Tok("<!-- a -- b --!- c -->d"), (V{"C: a -- b --!- c ", "T:d"}));
}

TEST(Tokenizer, Html5_EofInComment_Emitted) {
  EXPECT_EQ(Tok("<!-- <a href=x>"), (V{"C: <a href=x>"}));
}

TEST(Tokenizer, Html5_Doctype) {
  EXPECT_EQ(Tok("<!DOCTYPE html><p>"), (V{"D: html", "<p>"}));
  EXPECT_EQ(Tok("<!doctype html PUBLIC \"a>b\">x"), (V{"D: html PUBLIC \"a", "T:b\">x"}));
}

TEST(Tokenizer, Html5_CdataOutsideForeignContentIsBogusComment) {
  EXPECT_EQ(Tok("<![CDATA[ <a> ]]>x"), (V{"C:[CDATA[ <a", "T: ]]>x"}));
}

TEST(Tokenizer, Html5_CdataInForeignContentIsText) {
  EXPECT_EQ(Tok("<svg><![CDATA[<a href=x>]]></svg>"), (V{"<svg>", "X:<a href=x>", "</svg>"}));
}

TEST(Tokenizer, Html5_RawtextState_Style) {
  EXPECT_EQ(Tok("<style>a<b>&amp;</style >c"), (V{"<style>", "X:a<b>&amp;", "</style>", "T:c"}));
}

TEST(Tokenizer, Html5_RawtextState_EndTagNeedsDelimiter) {
  EXPECT_EQ(Tok("<style></styles></STYLE>"), (V{"<style>", "X:</styles>", "</style>"}));
}

TEST(Tokenizer, Html5_RawtextState_OtherElements) {
  for (std::string name : {"xmp", "iframe", "noembed", "noframes"}) {
    EXPECT_EQ(Tok("<" + name + "><a href=x></" + name + ">"),
              (V{"<" + name + ">", "X:<a href=x>", "</" + name + ">"}))
        << name;
  }
}

TEST(Tokenizer, Html5_RcdataState_TitleAndTextarea) {
  EXPECT_EQ(Tok("<title><b>&amp;</title>"), (V{"<title>", "R:<b>&amp;", "</title>"}));
  EXPECT_EQ(Tok("<textarea></p></textarea>"), (V{"<textarea>", "R:</p>", "</textarea>"}));
}

TEST(Tokenizer, Html5_ScriptDataState) {
  EXPECT_EQ(Tok("<script>if (a<b) x='</a>';</script>y"),
            (V{"<script>", "X:if (a<b) x='</a>';", "</script>", "T:y"}));
}

TEST(Tokenizer, Html5_ScriptDataDoubleEscaped) {
  // Inside "<!--", a "<script>" makes the next "</script>" part of the script.
  EXPECT_EQ(Tok("<script><!--<script></script><a href=x>--></script>z"),
            (V{"<script>", "X:<!--<script></script><a href=x>-->", "</script>", "T:z"}));
}

TEST(Tokenizer, Html5_ScriptDataEscaped_EndTagStillCloses) {
  EXPECT_EQ(Tok("<script><!-- x </script><a>"), (V{"<script>", "X:<!-- x ", "</script>", "<a>"}));
}

TEST(Tokenizer, Html5_ScriptDataEscaped_AbruptEscapeEnd) {
  EXPECT_EQ(Tok("<script><!--><script></script>x"),
            (V{"<script>", "X:<!--><script>", "</script>", "T:x"}));
}

TEST(Tokenizer, Html5_PlaintextState) {
  EXPECT_EQ(Tok("<plaintext></plaintext><a>"), (V{"<plaintext>", "X:</plaintext><a>"}));
}

TEST(Tokenizer, Html5_ForeignContent_NoRawtext) {
  EXPECT_EQ(Tok("<svg><style><a href=x></style></svg>"),
            (V{"<svg>", "<style>", "<a href=x>", "</style>", "</svg>"}));
}

TEST(Tokenizer, Html5_ForeignContent_BreakoutTag) {
  EXPECT_EQ(Tok("<svg><p><style><a></style>"), (V{"<svg>", "<p>", "<style>", "X:<a>", "</style>"}));
}

TEST(Tokenizer, Html5_CharRefInAttribute) {
  EXPECT_EQ(Tok("<a href='?a=1&amp;b=2&lt;&#x41;&#66;'>"), (V{"<a href=?a=1&b=2<AB>"}));
}

TEST(Tokenizer, Html5_CharRefInAttribute_LegacyNoSemicolon) {
  // "&amp" before '=' or an alphanumeric stays literal in attributes; elsewhere it decodes.
  EXPECT_EQ(Tok("<a href='?x=1&amp=2&copy3&amp;&amp'>"), (V{"<a href=?x=1&amp=2&copy3&&>"}));
  EXPECT_EQ(Tok("<a href='&lt-'>"), (V{"<a href=<->"}));
}

TEST(Tokenizer, Html5_NullInTagNameAndAttribute) {
  EXPECT_EQ(Tok(std::string_view("<a\0b x='\0'>", 11)), (V{"<a\xEF\xBF\xBD"
                                                           "b x=\xEF\xBF\xBD>"}));
}

// A handler that wants no attributes gets the same tokens, tag extents and self-closing
// flags; only the attributes are missing.
TEST(Tokenizer, SkippedAttributesLeaveTheSameTokens) {
  const std::vector<std::string> inputs = {
      "<div class=\"a>b\" id='c>d'>text</div>",
      "<p a=b c = d e=\"f\" g>x</p><br/><img src=x />y",
      "<span title=a&gt;b data-x=&amp;>z</span>",
      "<b =x ==y/a/ /><i/ x>w</i>",
      "<div a=\"unterminated>rest",
      "<div a='x' b",
      "<div a=",
      "<td x=1>1</td><td y=\"2\">2",
      "<script type=\"text/javascript\">if (a < b) { x = '</scr' + 'ipt>'; }</script>after",
      "<style media=all>p{}</style><title lang=en>t</title>",
      "<svg viewBox=\"0 0 1 1\"><path d=\"M0 0\"/></svg>",
      "</div class=x>after</p foo='>'>z",
      "<DIV CLASS=X>upper</DIV>",
      "<a\tb\nc\fd\re=f>g",
  };
  for (const std::string& in : inputs) {
    EXPECT_EQ(TokNoAttributes(in), StripAttributes(Tok(in))) << in;
  }
}

}  // namespace
}  // namespace harvest::extract::internal
