// AppendCollapsed: one pass over each text node of a page (a hot path of the page processor).
#include "extract/collapse.h"

#include <array>
#include <bit>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/ascii.h"

namespace harvest::extract::internal {
namespace {

// Bytes that may start collapsible whitespace: ASCII whitespace and 0xC2 (U+00A0 lead byte).
constexpr auto kMaybeSpace = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = IsHtmlSpace(static_cast<char>(c));
  t[0xC2] = true;
  return t;
}();

bool MaybeSpace(char c) { return kMaybeSpace[static_cast<unsigned char>(c)]; }

// Skips the whitespace run at *i (setting *pending_space if there is one).
void SkipSpaces(std::string_view s, size_t* i, bool* pending_space) {
  const size_t n = s.size();
  while (*i < n) {
    if (IsHtmlSpace(s[*i])) {
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
      if (w >= n || IsHtmlSpace(s[w]) || (w + 1 < n && s[w + 1] == '\xA0')) break;
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

// How many bytes from `w` on the stretch loop below may take without looking at them one
// by one: bytes that are neither whitespace nor 0xC2, and single ' ' followed by such a byte.
// 16 bytes at a time with SSE2: on text the scalar loop mispredicts a branch at nearly every
// word end.
size_t PlainRun(std::string_view s, size_t w) {
  const size_t start = w;
#if defined(__SSE2__)
  const size_t n = s.size();
  const __m128i space = _mm_set1_epi8(' ');
  const __m128i tab = _mm_set1_epi8('\t'), nl = _mm_set1_epi8('\n');
  const __m128i ff = _mm_set1_epi8('\f'), cr = _mm_set1_epi8('\r');
  const __m128i c2 = _mm_set1_epi8(static_cast<char>(0xC2));
  while (w + 16 <= n) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + w));
    const auto sp = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, space)));
    const __m128i o =
        _mm_or_si128(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, tab), _mm_cmpeq_epi8(v, nl)),
                                  _mm_or_si128(_mm_cmpeq_epi8(v, ff), _mm_cmpeq_epi8(v, cr))),
                     _mm_cmpeq_epi8(v, c2));
    const auto other = static_cast<uint32_t>(_mm_movemask_epi8(o));
    // A space is plain when the next byte is no whitespace and no 0xC2; the block's last
    // byte's successor is not looked at, so a space there is left to the scalar loop.
    const uint32_t bad = other | (sp & ((sp | other) >> 1)) | (sp & 0x8000u);
    if (bad != 0) return w + static_cast<size_t>(std::countr_zero(bad)) - start;
    w += 16;
  }
#else
  (void)s;
#endif
  return w - start;
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
      w += PlainRun(s, w);
      if (w >= n) break;
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
