#include "robots/pattern.h"

namespace harvest::robots {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Octets never valid unescaped in a URI path: they are encoded on both sides, so a rule
// "/a b" matches the path "/a%20b".
bool MustEscape(unsigned char c) { return c <= 0x20 || c >= 0x7F; }

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

void AppendEscape(unsigned char c, std::string* out) {
  out->push_back('%');
  out->push_back(kHex[c >> 4]);
  out->push_back(kHex[c & 0xF]);
}

// Shared by paths and patterns. `literal_specials` says whether '*' and '$' are data (paths)
// rather than syntax; for patterns the caller handles the anchor.
void Normalize(std::string_view in, bool literal_specials, std::string* out) {
  out->reserve(in.size() + 8);
  for (size_t i = 0; i < in.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(in[i]);
    if (c == '%' && i + 2 < in.size() && HexValue(in[i + 1]) >= 0 && HexValue(in[i + 2]) >= 0) {
      unsigned char v = static_cast<unsigned char>(HexValue(in[i + 1]) * 16 + HexValue(in[i + 2]));
      if (IsUnreserved(v)) {
        out->push_back(static_cast<char>(v));
      } else {
        AppendEscape(v, out);
      }
      i += 2;
    } else if (MustEscape(c) || (literal_specials && (c == '*' || c == '$'))) {
      AppendEscape(c, out);
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
}

}  // namespace

bool NormalizePath(std::string_view path, std::string* out) {
  bool needed = false;
  for (char ch : path) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '%' || c == '*' || c == '$' || MustEscape(c)) {
      needed = true;
      break;
    }
  }
  if (!needed) return false;
  out->clear();
  Normalize(path, /*literal_specials=*/true, out);
  return true;
}

std::string NormalizePattern(std::string_view pattern) {
  bool anchored = !pattern.empty() && pattern.back() == '$';
  if (anchored) pattern.remove_suffix(1);
  std::string out;
  out.reserve(pattern.size() + 8);
  size_t start = 0;
  // '*' stays syntax; '$' before the end is a literal (google/robotstxt) and is encoded so
  // that it matches a path's '$' (which NormalizePath encodes).
  for (size_t i = 0; i <= pattern.size(); ++i) {
    if (i == pattern.size() || pattern[i] == '$') {
      Normalize(pattern.substr(start, i - start), /*literal_specials=*/false, &out);
      if (i < pattern.size()) out += "%24";
      start = i + 1;
    }
  }
  if (anchored) out.push_back('$');
  return out;
}

PathPattern::PathPattern(std::string_view pattern) : priority_(pattern.size()) {
  std::string_view body = pattern;
  anchored_ = !body.empty() && body.back() == '$';
  if (anchored_) body.remove_suffix(1);
  glob_.reserve(body.size());
  for (char c : body) {
    if (c == '*' && !glob_.empty() && glob_.back() == '*') continue;
    glob_.push_back(c);
  }
  // A trailing '*' matches anything, including the end: the anchor is moot.
  if (!glob_.empty() && glob_.back() == '*') {
    glob_.pop_back();
    anchored_ = false;
  }
  if (glob_.find('*') != std::string::npos) {
    kind_ = Kind::kWildcard;
  } else {
    kind_ = anchored_ ? Kind::kExact : Kind::kPrefix;
  }
  glob_.shrink_to_fit();
  ByteMask all = ByteMask::Of(glob_);
  ByteMask star = ByteMask::Of("*");
  mask_.lo = all.lo & ~star.lo;
  mask_.hi = all.hi & ~star.hi;
}

ByteMask ByteMask::Of(std::string_view s) {
  ByteMask m;
  for (char ch : s) {
    unsigned c = static_cast<unsigned char>(ch) & 0x7F;
    if (c < 64) {
      m.lo |= uint64_t{1} << c;
    } else {
      m.hi |= uint64_t{1} << (c - 64);
    }
  }
  return m;
}

size_t PathPattern::memory_bytes() const { return sizeof(*this) + glob_.capacity(); }

bool PathPattern::Matches(std::string_view path) const {
  std::string_view pat = glob_;
  switch (kind_) {
    case Kind::kPrefix:
      return path.starts_with(pat);
    case Kind::kExact:
      return path == pat;
    case Kind::kWildcard:
      break;
  }
  size_t star = pat.find('*');
  if (!path.starts_with(pat.substr(0, star))) return false;
  size_t pos = star;
  pat.remove_prefix(star + 1);
  while (true) {
    size_t next = pat.find('*');
    std::string_view segment = pat.substr(0, next);
    if (next == std::string_view::npos) {
      if (anchored_) return path.size() - pos >= segment.size() && path.ends_with(segment);
      return path.find(segment, pos) != std::string_view::npos;
    }
    size_t at = path.find(segment, pos);
    if (at == std::string_view::npos) return false;
    pos = at + segment.size();
    pat.remove_prefix(next + 1);
  }
}

}  // namespace harvest::robots
