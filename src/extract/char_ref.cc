#include "extract/char_ref.h"

#include <algorithm>
#include <cstring>

#include "extract/named_entities.h"

namespace harvest::extract::internal {
namespace {

// The longest name in the table is "CounterClockwiseContourIntegral;" (32 bytes).
constexpr size_t kMaxEntityName = 32;

// HTML §13.2.5.80: numeric references to C1 controls mean the windows-1252 character.
// Entries of 0 keep the control character.
constexpr uint16_t kC1Replacement[32] = {
    0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0,      0x017D, 0,      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};

bool IsAsciiAlnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

const NamedEntity* FindEntity(std::string_view name) {
  const NamedEntity* begin = kNamedEntities;
  const NamedEntity* end = kNamedEntities + kNamedEntityCount;
  const NamedEntity* it = std::lower_bound(
      begin, end, name, [](const NamedEntity& e, std::string_view n) { return e.name < n; });
  if (it != end && std::string_view(it->name) == name) return it;
  return nullptr;
}

size_t DecodeNumeric(std::string_view in, size_t pos, std::string* out) {
  size_t i = pos + 2;  // after "&#"
  bool hex = i < in.size() && (in[i] == 'x' || in[i] == 'X');
  if (hex) ++i;
  size_t digits_start = i;
  uint64_t value = 0;
  while (i < in.size()) {
    int d = hex ? HexValue(in[i]) : (in[i] >= '0' && in[i] <= '9' ? in[i] - '0' : -1);
    if (d < 0) break;
    // Saturate: anything above 0x10FFFF is replaced anyway.
    value = std::min<uint64_t>(value * (hex ? 16 : 10) + d, 0x110000);
    ++i;
  }
  if (i == digits_start) return 0;  // "&#" / "&#x" with no digits: not a reference
  if (i < in.size() && in[i] == ';') ++i;
  AppendUtf8(NumericRefCodePoint(value), out);
  return i - pos;
}

size_t DecodeNamed(std::string_view in, size_t pos, bool in_attribute, std::string* out) {
  size_t start = pos + 1;
  size_t end = start;
  while (end < in.size() && end - start < kMaxEntityName && IsAsciiAlnum(in[end])) ++end;
  if (end < in.size() && in[end] == ';' && end - start < kMaxEntityName) ++end;
  // Longest match: try the candidate, then ever shorter prefixes.
  for (size_t len = end - start; len > 0; --len) {
    const NamedEntity* e = FindEntity(in.substr(start, len));
    if (e == nullptr) continue;
    bool has_semicolon = in[start + len - 1] == ';';
    if (!has_semicolon && in_attribute) {
      size_t next = start + len;
      if (next < in.size() && (in[next] == '=' || IsAsciiAlnum(in[next]))) return 0;
    }
    out->append(e->value);
    return len + 1;
  }
  return 0;
}

}  // namespace

uint32_t NumericRefCodePoint(uint64_t value) {
  if (value == 0 || value > 0x10FFFF) return 0xFFFD;
  if (value >= 0xD800 && value <= 0xDFFF) return 0xFFFD;
  if (value >= 0x80 && value <= 0x9F) {
    uint16_t r = kC1Replacement[value - 0x80];
    return r != 0 ? r : static_cast<uint32_t>(value);
  }
  return static_cast<uint32_t>(value);
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

size_t DecodeCharRef(std::string_view in, size_t pos, bool in_attribute, std::string* out) {
  if (pos + 1 >= in.size()) return 0;
  if (in[pos + 1] == '#') return DecodeNumeric(in, pos, out);
  if (!IsAsciiAlnum(in[pos + 1])) return 0;
  return DecodeNamed(in, pos, in_attribute, out);
}

void AppendDecoded(std::string_view raw, bool in_attribute, std::string* out) {
  size_t i = 0;
  while (i < raw.size()) {
    const void* amp = std::memchr(raw.data() + i, '&', raw.size() - i);
    if (amp == nullptr) {
      out->append(raw.substr(i));
      return;
    }
    size_t a = static_cast<const char*>(amp) - raw.data();
    out->append(raw.substr(i, a - i));
    size_t used = DecodeCharRef(raw, a, in_attribute, out);
    if (used == 0) {
      out->push_back('&');
      i = a + 1;
    } else {
      i = a + used;
    }
  }
}

}  // namespace harvest::extract::internal
