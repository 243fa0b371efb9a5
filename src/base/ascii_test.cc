#include "base/ascii.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

namespace harvest {
namespace {

// Every byte: the 26 letters change case, nothing else does (not '@', '[', '`', '{' next to
// them, not a byte >= 0x80 such as Latin-1 or UTF-8 letters, whatever the locale).
TEST(Ascii, CaseChangesOnlyAsciiLetters) {
  constexpr std::string_view kUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  constexpr std::string_view kLower = "abcdefghijklmnopqrstuvwxyz";
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    const size_t up = kUpper.find(c), low = kLower.find(c);
    EXPECT_EQ(AsciiLower(c), up == std::string_view::npos ? c : kLower[up]) << "byte " << b;
    EXPECT_EQ(AsciiUpper(c), low == std::string_view::npos ? c : kUpper[low]) << "byte " << b;
    EXPECT_EQ(IsAsciiUpper(c), up != std::string_view::npos) << "byte " << b;
  }
  EXPECT_EQ(ToLowerAscii("Hello, WORLD \xC3\x89t\xC3\xA9 123"),
            "hello, world \xC3\x89t\xC3\xA9 123");
  EXPECT_EQ(ToUpperAscii("jsessionid-9f"), "JSESSIONID-9F");
  std::string s = "MiXeD.Test:8080";
  LowerAsciiInPlace(s);
  EXPECT_EQ(s, "mixed.test:8080");
}

TEST(Ascii, CaseInsensitiveComparisons) {
  EXPECT_TRUE(EqualsIgnoreAsciiCase("Content-Type", "content-TYPE"));
  EXPECT_TRUE(EqualsIgnoreAsciiCase("", ""));
  EXPECT_FALSE(EqualsIgnoreAsciiCase("content-type", "content-typ"));
  EXPECT_FALSE(EqualsIgnoreAsciiCase("a", "b"));
  EXPECT_FALSE(EqualsIgnoreAsciiCase("@", "`"));                // 0x40 and 0x60: not a case pair
  EXPECT_FALSE(EqualsIgnoreAsciiCase("\xC3\xA9", "\xC3\x89"));  // é, É: not ASCII
  EXPECT_TRUE(EqualsIgnoreAsciiCase(std::string_view("a\0B", 3), std::string_view("A\0b", 3)));
  EXPECT_FALSE(EqualsIgnoreAsciiCase(std::string_view("a\0b", 3), std::string_view("a\0c", 3)));

  EXPECT_TRUE(StartsWithIgnoreAsciiCase("User-Agent: x", "user-agent"));
  EXPECT_TRUE(StartsWithIgnoreAsciiCase("DOCTYPE html", "doctype"));
  EXPECT_TRUE(StartsWithIgnoreAsciiCase("abc", ""));
  EXPECT_TRUE(StartsWithIgnoreAsciiCase("abc", "ABC"));
  EXPECT_FALSE(StartsWithIgnoreAsciiCase("ab", "abc"));
  EXPECT_FALSE(StartsWithIgnoreAsciiCase("disalow", "disallow"));
}

// Each set, checked over every byte against the list of its members.
void ExpectSet(bool (*pred)(char), std::string_view members) {
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    EXPECT_EQ(pred(c), members.find(c) != std::string_view::npos) << "byte " << b;
  }
}

TEST(Ascii, WhitespaceSetsHaveTheirStandardsMembers) {
  ExpectSet(IsHtmlSpace, " \t\n\f\r");
  ExpectSet(IsHttpOws, " \t");
  ExpectSet(IsCSpace, " \t\n\v\f\r");
  // The differences, spelled out.
  EXPECT_FALSE(IsHtmlSpace('\v'));
  EXPECT_TRUE(IsCSpace('\v'));
  EXPECT_FALSE(IsHttpOws('\n'));
  EXPECT_FALSE(IsHttpOws('\r'));
  EXPECT_TRUE(IsHtmlSpace('\f'));
  EXPECT_FALSE(IsHtmlSpace('\xA0'));  // NBSP (Latin-1) is not ASCII whitespace
  EXPECT_FALSE(IsCSpace('\0'));
}

// One trim over inputs: what each leaves of them.
struct TrimCase {
  std::string_view in, out;
};

void ExpectTrims(std::string_view (*trim)(std::string_view),
                 std::initializer_list<TrimCase> cases) {
  for (const TrimCase& c : cases) EXPECT_EQ(trim(c.in), c.out) << "input '" << c.in << "'";
}

TEST(Ascii, TrimsRemoveOnlyTheirSetAtBothEnds) {
  ExpectTrims(TrimHtmlSpace,
              {{" \t\n\f\r a b \r\n", "a b"}, {"\va\v", "\va\v"}, {" \n ", ""}, {"", ""}});
  ExpectTrims(
      TrimHttpOws,
      {{" \t text/html \t", "text/html"}, {"\r\nvalue\r\n", "\r\nvalue\r\n"}, {" a  b ", "a  b"}});
  ExpectTrims(TrimCSpace,
              {{" \t\n\v\f\r1700000000\v\r\n", "1700000000"}, {"\xA0x\xA0", "\xA0x\xA0"}});
  EXPECT_EQ(TrimLeadingIf("  a  ", IsHttpOws), "a  ");
  EXPECT_EQ(TrimTrailingIf("  a  ", IsHttpOws), "  a");
}

TEST(Ascii, TrimHttpOwsAndCrTakesCrsOnlyAtTheEnd) {
  ExpectTrims(TrimHttpOwsAndCr, {{" \tvalue \t\r", "value"},
                                 {"value\r \r", "value"},
                                 {"\rvalue", "\rvalue"},
                                 {"value\n", "value\n"},
                                 {" \r", ""}});
}

static_assert(AsciiLower('Q') == 'q' && EqualsIgnoreAsciiCase("GZIP", "gzip") &&
              TrimHttpOws(" x ") == "x");

}  // namespace
}  // namespace harvest
