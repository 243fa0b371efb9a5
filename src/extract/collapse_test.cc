#include "extract/collapse.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>
#include <vector>

#include "base/ascii.h"

namespace harvest::extract::internal {
namespace {

// The original word-by-word AppendCollapsed, kept as the reference for the fast path.
namespace reference {

constexpr auto kMaybeSpace = [] {
  std::array<bool, 256> t{};
  for (unsigned char c : {' ', '\t', '\n', '\f', '\r'}) t[c] = true;
  t[0xC2] = true;
  return t;
}();

void AppendCollapsed(std::string_view s, size_t max, bool* pending_space, std::string* out) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    while (i < n) {
      if (IsHtmlSpace(s[i])) {
        ++i;
      } else if (s[i] == '\xC2' && i + 1 < n && s[i + 1] == '\xA0') {
        i += 2;
      } else {
        break;
      }
      *pending_space = true;
    }
    if (i >= n) return;
    size_t w = i;
    while (true) {
      while (w < n && !kMaybeSpace[static_cast<unsigned char>(s[w])]) ++w;
      if (w >= n || IsHtmlSpace(s[w]) || (w + 1 < n && s[w + 1] == '\xA0')) break;
      ++w;
    }
    if (*pending_space && !out->empty()) {
      if (out->size() + 1 > max) return;
      out->push_back(' ');
    }
    *pending_space = false;
    std::string_view word = s.substr(i, w - i);
    if (out->size() + word.size() > max) {
      size_t room = max - out->size();
      while (room > 0 && (static_cast<unsigned char>(word[room]) & 0xC0) == 0x80) --room;
      out->append(word.substr(0, room));
      return;
    }
    out->append(word);
    i = w;
  }
}

}  // namespace reference

struct Collapsed {
  std::string out;
  bool pending = false;
};

// Feeds the pieces in order to both implementations and checks output and state after each.
void ExpectSame(const std::vector<std::string>& pieces, size_t max) {
  Collapsed got, want;
  for (const std::string& piece : pieces) {
    AppendCollapsed(piece, max, &got.pending, &got.out);
    reference::AppendCollapsed(piece, max, &want.pending, &want.out);
    ASSERT_EQ(got.out, want.out) << "max " << max << " piece '" << piece << "'";
    ASSERT_EQ(got.pending, want.pending) << "max " << max << " piece '" << piece << "'";
  }
}

TEST(AppendCollapsed, Basics) {
  Collapsed c;
  AppendCollapsed("  a  b\t\n c ", 100, &c.pending, &c.out);
  EXPECT_EQ(c.out, "a b c");
  EXPECT_TRUE(c.pending);
  AppendCollapsed(
      "d\xC2\xA0\xC2\xA0"
      "e\xC2\xA9 f\xC2",
      100, &c.pending, &c.out);
  EXPECT_EQ(c.out,
            "a b c d e\xC2\xA9"
            " f\xC2");
  EXPECT_FALSE(c.pending);
  // At the cap: the space fits, the word is cut before its partial UTF-8 sequence.
  Collapsed d;
  AppendCollapsed("ab \xC3\xA9\xC3\xA9", 5, &d.pending, &d.out);
  EXPECT_EQ(d.out, "ab \xC3\xA9");
}

TEST(AppendCollapsed, EdgeCasesMatchReference) {
  const std::vector<std::string> texts = {"",
                                          " ",
                                          "a",
                                          " a",
                                          "a ",
                                          "a b",
                                          "a  b",
                                          " a b ",
                                          "\xC2\xA0",
                                          "\xC2",
                                          "a\xC2",
                                          "\xC2 a",
                                          "a \xC2\xA0 b",
                                          "a\xC2\xA0",
                                          "\xC2\xA0"
                                          "a",
                                          "a \xC2\xA9 b",
                                          "a \xC2",
                                          "\xC3\xA9 \xC3\xA9",
                                          "ab\xC3\xA9\xC3\xA9",
                                          "a\tb\nc\fd\re",
                                          "a b c d e f g h",
                                          "\x80\x80 \x80"};
  for (size_t max = 0; max < 12; ++max) {
    for (const std::string& a : texts) {
      ExpectSame({a}, max);
      for (const std::string& b : texts) ExpectSame({a, b, a}, max);
    }
  }
}

TEST(AppendCollapsed, RandomTextsMatchReference) {
  std::mt19937 rng(77);
  static const char* kPieces[] = {" ",        "  ",   "\n",   "\t",       "\r\n",     "\f",
                                  "\xC2\xA0", "\xC2", "\xA0", "\xC2\xA9", "\xC3\xA9", "a",
                                  "bc",       "def",  "\x80", "x"};
  for (int t = 0; t < 3000; ++t) {
    std::vector<std::string> pieces(1 + rng() % 6);
    for (std::string& p : pieces) {
      const int parts = static_cast<int>(rng() % 30);
      for (int k = 0; k < parts; ++k) p += kPieces[rng() % (sizeof(kPieces) / sizeof(*kPieces))];
    }
    const size_t max = t % 3 == 0 ? 1000 : rng() % 60;
    ExpectSame(pieces, max);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// Long runs of words and single spaces (the 16-byte fast path) broken now and then by
// every kind of whitespace, at every alignment.
TEST(AppendCollapsed, LongWordyTextsMatchReference) {
  std::mt19937 rng(78);
  static const char* kRare[] = {"  ",   "\n",       "\t",        "\r\n", "\f",   "\xC2\xA0",
                                "\xC2", "\xC2\xA9", " \xC2\xA0", " \n",  "\xA0", " "};
  for (int t = 0; t < 2000; ++t) {
    std::string text(static_cast<size_t>(rng() % 17), 'q');  // shifts the alignment
    const int words = 5 + static_cast<int>(rng() % 300);
    for (int k = 0; k < words; ++k) {
      text += std::string(1 + rng() % 9, static_cast<char>('a' + rng() % 26));
      text += rng() % 12 == 0 ? kRare[rng() % (sizeof(kRare) / sizeof(*kRare))] : " ";
    }
    ExpectSame({text, text.substr(0, text.size() / 3)}, t % 2 == 0 ? 100000 : 50 + rng() % 2000);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace harvest::extract::internal
