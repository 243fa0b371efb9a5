// AppendCollapsed: one pass over each text node of a page (a hot path of the page processor).
#include "extract/collapse.h"

#include <array>

namespace harvest::extract::internal {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }

// Bytes that may start collapsible whitespace: ASCII whitespace and 0xC2 (U+00A0 lead byte).
constexpr auto kMaybeSpace = [] {
  std::array<bool, 256> t{};
  for (unsigned char c : {' ', '\t', '\n', '\f', '\r'}) t[c] = true;
  t[0xC2] = true;
  return t;
}();

bool MaybeSpace(char c) { return kMaybeSpace[static_cast<unsigned char>(c)]; }

// Skips the whitespace run at *i (setting *pending_space if there is one).
void SkipSpaces(std::string_view s, size_t* i, bool* pending_space) {
  const size_t n = s.size();
  while (*i < n) {
    if (IsSpace(s[*i])) {
      ++*i;
    } else if (s[*i] == '\xC2' && *i + 1 < n && s[*i + 1] == '\xA0') {
      *i += 2;
    } else {
      break;
    }
    *pending_space = true;
  }
}

// Word by word, with the cap.
void AppendCollapsedCapped(std::string_view s, size_t max, bool* pending_space, std::string* out) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    SkipSpaces(s, &i, pending_space);
    if (i >= n) return;
    // Find the end of the word: scan for a byte that may start whitespace.
    size_t w = i;
    while (true) {
      while (w < n && !MaybeSpace(s[w])) ++w;
      if (w >= n || IsSpace(s[w]) || (w + 1 < n && s[w + 1] == '\xA0')) break;
      ++w;  // a 0xC2 that does not start U+00A0
    }
    if (*pending_space && !out->empty()) {
      if (out->size() + 1 > max) return;
      out->push_back(' ');
    }
    *pending_space = false;
    std::string_view word = s.substr(i, w - i);
    if (out->size() + word.size() > max) {
      // Cut on a UTF-8 boundary: never leave a partial sequence behind.
      size_t room = max - out->size();
      while (room > 0 && (static_cast<unsigned char>(word[room]) & 0xC0) == 0x80) --room;
      out->append(word.substr(0, room));
      return;
    }
    out->append(word);
    i = w;
  }
}

}  // namespace

void AppendCollapsed(std::string_view s, size_t max, bool* pending_space, std::string* out) {
  // The output of one call is at most 1 + s.size() bytes (a pending space, then s with runs
  // shrunk). When that cannot reach the cap, copy whole stretches of words separated by
  // single ' ' (already collapsed) in one append instead of word by word.
  if (out->size() > max || max - out->size() < s.size() + 1) {
    AppendCollapsedCapped(s, max, pending_space, out);
    return;
  }
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    SkipSpaces(s, &i, pending_space);
    if (i >= n) return;
    if (*pending_space && !out->empty()) out->push_back(' ');
    *pending_space = false;
    size_t w = i;
    while (w < n) {
      if (!MaybeSpace(s[w])) {
        ++w;
      } else if (s[w] == ' ' && w + 1 < n && !MaybeSpace(s[w + 1])) {
        w += 2;  // a lone ' ' between two word bytes stays as it is
      } else if (s[w] == '\xC2' && !(w + 1 < n && s[w + 1] == '\xA0')) {
        ++w;  // a 0xC2 that does not start U+00A0
      } else {
        break;
      }
    }
    out->append(s.data() + i, w - i);
    i = w;
  }
}

}  // namespace harvest::extract::internal
