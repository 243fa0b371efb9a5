// ASCII helpers: case, comparisons ignoring case, and whitespace, each set named for the
// standard it comes from. They never look at the locale: a byte >= 0x80 is neither a letter
// nor whitespace here, whatever setlocale() said.
//
// Which whitespace set a parser trims is part of the format it reads; pick the predicate
// named for it, and keep a set that only one format has local to that format (named for its
// set, built on TrimLeadingIf / TrimTrailingIf).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace harvest {

// ---- case ----

constexpr bool IsAsciiUpper(char c) { return c >= 'A' && c <= 'Z'; }
constexpr bool IsAsciiLower(char c) { return c >= 'a' && c <= 'z'; }
constexpr char AsciiLower(char c) {
  return IsAsciiUpper(c) ? static_cast<char>(c + ('a' - 'A')) : c;
}
constexpr char AsciiUpper(char c) {
  return IsAsciiLower(c) ? static_cast<char>(c - ('a' - 'A')) : c;
}

inline void LowerAsciiInPlace(std::string& s) {
  for (char& c : s) c = AsciiLower(c);
}
inline std::string ToLowerAscii(std::string_view s) {
  std::string out(s);
  LowerAsciiInPlace(out);
  return out;
}
inline std::string ToUpperAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiUpper(c);
  return out;
}

// Equal but for the case of ASCII letters ("Content-Type" and "content-type").
constexpr bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

// `s` starts with `prefix`, ignoring the case of ASCII letters.
constexpr bool StartsWithIgnoreAsciiCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreAsciiCase(s.substr(0, prefix.size()), prefix);
}

// ---- whitespace sets ----

// HTML's whitespace: WHATWG Infra "ASCII whitespace", U+0009 TAB, U+000A LF, U+000C FF,
// U+000D CR and U+0020 SPACE (not U+000B VT). HTML attribute values, tokens and text, the
// WHATWG Encoding label trim, and sitemaps (this set is XML's S plus FF).
constexpr bool IsHtmlSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

// HTTP's optional whitespace: RFC 9110 §5.6.3 OWS, SP and HTAB. The same set is robots.txt's
// WS (RFC 9309 §2.2).
constexpr bool IsHttpOws(char c) { return c == ' ' || c == '\t'; }

// C's isspace() in the "C" locale: space, \t, \n, \v, \f and \r.
constexpr bool IsCSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// ---- trimming ----

// `s` without the characters at its start (end, both ends) for which `pred` is true.
template <typename Pred>
constexpr std::string_view TrimLeadingIf(std::string_view s, Pred pred) {
  while (!s.empty() && pred(s.front())) s.remove_prefix(1);
  return s;
}
template <typename Pred>
constexpr std::string_view TrimTrailingIf(std::string_view s, Pred pred) {
  while (!s.empty() && pred(s.back())) s.remove_suffix(1);
  return s;
}
template <typename Pred>
constexpr std::string_view TrimIf(std::string_view s, Pred pred) {
  return TrimTrailingIf(TrimLeadingIf(s, pred), pred);
}

constexpr std::string_view TrimHtmlSpace(std::string_view s) { return TrimIf(s, IsHtmlSpace); }
constexpr std::string_view TrimHttpOws(std::string_view s) { return TrimIf(s, IsHttpOws); }
constexpr std::string_view TrimCSpace(std::string_view s) { return TrimIf(s, IsCSpace); }

// An HTTP field name or value from a head split at LF: without the OWS around it, and
// without the CRs at its end (the CR of a CRLF line end, and stray ones: RFC 9112 §2.2 lets a
// recipient ignore a CR before the LF). Leading CRs stay.
constexpr std::string_view TrimHttpOwsAndCr(std::string_view s) {
  return TrimTrailingIf(TrimLeadingIf(s, IsHttpOws),
                        [](char c) { return IsHttpOws(c) || c == '\r'; });
}

}  // namespace harvest
