// Character reference tests (WHATWG HTML §13.2.5.72-80).
#include "extract/char_ref.h"

#include <gtest/gtest.h>

#include <string>

namespace harvest::extract::internal {
namespace {

std::string Text(std::string_view s) {
  std::string out;
  AppendDecoded(s, /*in_attribute=*/false, &out);
  return out;
}

std::string Attr(std::string_view s) {
  std::string out;
  AppendDecoded(s, /*in_attribute=*/true, &out);
  return out;
}

TEST(CharRef, Html5_NamedCommonSet) {
  EXPECT_EQ(Text("&amp;&lt;&gt;&quot;&apos;"), "&<>\"'");
  EXPECT_EQ(Text("&nbsp;"), "\xC2\xA0");
  EXPECT_EQ(Text("&hellip;&euro;&copy;"), "\xE2\x80\xA6\xE2\x82\xAC\xC2\xA9");
}

TEST(CharRef, Html5_NamedFullTable) {
  EXPECT_EQ(Text("&CounterClockwiseContourIntegral;"), "\xE2\x88\xB3");
  EXPECT_EQ(Text("&NotNestedGreaterGreater;"), "\xE2\xAA\xA2\xCC\xB8");  // two code points
}

TEST(CharRef, Html5_NamedIsCaseSensitive) { EXPECT_EQ(Text("&AMP;&Amp;"), "&&Amp;"); }

TEST(CharRef, Html5_LegacyNoSemicolonInText) {
  EXPECT_EQ(Text("&amp &copy2020 &notit;"),
            "& \xC2\xA9"
            "2020 \xC2\xACit;");
}

TEST(CharRef, Html5_NonLegacyNeedsSemicolon) { EXPECT_EQ(Text("&hellip x"), "&hellip x"); }

TEST(CharRef, Html5_AttributeRule_NoDecodeBeforeEqualsOrAlnum) {
  EXPECT_EQ(Attr("?a=1&amp=2"), "?a=1&amp=2");
  EXPECT_EQ(Attr("?a=1&copy2"), "?a=1&copy2");
  EXPECT_EQ(Attr("?a=1&amp;b=2"), "?a=1&b=2");
  EXPECT_EQ(Attr("?a=1&amp-2"), "?a=1&-2");
  EXPECT_EQ(Attr("x&amp"), "x&");
}

TEST(CharRef, Html5_UnknownNamedIsLiteral) {
  EXPECT_EQ(Text("&bogus; & &; &#; &#x;"), "&bogus; & &; &#; &#x;");
}

TEST(CharRef, Html5_NumericDecimalAndHex) {
  EXPECT_EQ(Text("&#65;&#x42;&#X43;&#x1F600;"), "ABC\xF0\x9F\x98\x80");
  EXPECT_EQ(Text("&#65x"), "Ax");  // missing semicolon: still decoded
}

TEST(CharRef, Html5_NumericReplacementTable0x80To0x9F) {
  EXPECT_EQ(Text("&#x80;&#150;&#x9F;"), "\xE2\x82\xAC\xE2\x80\x93\xC5\xB8");
  EXPECT_EQ(Text("&#x81;"), "\xC2\x81");  // no entry: the control stays
}

TEST(CharRef, Html5_NumericInvalidCodePoints) {
  EXPECT_EQ(Text("&#0;"), "\xEF\xBF\xBD");
  EXPECT_EQ(Text("&#xD800;"), "\xEF\xBF\xBD");
  EXPECT_EQ(Text("&#x110000;"), "\xEF\xBF\xBD");
  EXPECT_EQ(Text("&#99999999999999999999;"), "\xEF\xBF\xBD");
}

TEST(CharRef, AppendUtf8) {
  std::string s;
  AppendUtf8(0x7F, &s);
  AppendUtf8(0x7FF, &s);
  AppendUtf8(0xFFFF, &s);
  AppendUtf8(0x10FFFF, &s);
  EXPECT_EQ(s, "\x7F\xDF\xBF\xEF\xBF\xBF\xF4\x8F\xBF\xBF");
}

}  // namespace
}  // namespace harvest::extract::internal
