// WHATWG host parsing: IPv6, IPv4 (with its legacy number forms), opaque hosts and domains
// (domain to ASCII through libidn2, with an all-ASCII fast path).
#include <idn2.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/hash.h"
#include "url/internal.h"

namespace harvest::url {
namespace {

// Forbidden host code points (WHATWG §3.1), ASCII only.
bool IsForbiddenHost(unsigned char c) {
  switch (c) {
    case 0:
    case '\t':
    case '\n':
    case '\r':
    case ' ':
    case '#':
    case '/':
    case ':':
    case '<':
    case '>':
    case '?':
    case '@':
    case '[':
    case '\\':
    case ']':
    case '^':
    case '|':
      return true;
    default:
      return false;
  }
}

// Forbidden domain code points: forbidden host code points, C0 controls, '%' and DEL.
bool IsForbiddenDomain(unsigned char c) {
  return IsForbiddenHost(c) || c < 0x20 || c == '%' || c == 0x7F;
}

// Parses an IPv4 number (WHATWG "IPv4 number parser"). Values saturate at 2^40 (anything
// above 2^32 fails later anyway). Returns false on failure.
bool ParseIpv4Number(std::string_view s, uint64_t& value) {
  if (s.empty()) return false;
  int radix = 10;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    radix = 16;
    s.remove_prefix(2);
  } else if (s.size() >= 2 && s[0] == '0') {
    radix = 8;
    s.remove_prefix(1);
  }
  value = 0;
  for (unsigned char c : s) {
    int d;
    if (radix == 16 && IsAsciiHex(c)) {
      d = HexValue(c);
    } else if (IsAsciiDigit(c) && c - '0' < radix) {
      d = c - '0';
    } else {
      return false;
    }
    value = value * radix + d;
    if (value > (uint64_t{1} << 40)) value = uint64_t{1} << 40;
  }
  return true;
}

}  // namespace

bool EndsInNumber(std::string_view s) {
  if (!s.empty() && s.back() == '.') {
    s.remove_suffix(1);
    if (s.empty()) return false;  // the input was "." : one empty part
  }
  size_t dot = s.rfind('.');
  std::string_view last = dot == std::string_view::npos ? s : s.substr(dot + 1);
  if (last.empty()) return false;
  bool all_digits = true;
  for (unsigned char c : last) all_digits &= IsAsciiDigit(c);
  if (all_digits) return true;
  uint64_t v;
  return ParseIpv4Number(last, v);
}

namespace {

void AppendIpv4(uint32_t v, std::string& out) {
  char buf[16];
  int n = std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", v >> 24, (v >> 16) & 255, (v >> 8) & 255,
                        v & 255);
  out.append(buf, n);
}

bool ParseIpv4(std::string_view s, std::string& out) {
  if (!s.empty() && s.back() == '.') s.remove_suffix(1);
  uint64_t numbers[4];
  int count = 0;
  while (true) {
    size_t dot = s.find('.');
    std::string_view part = s.substr(0, dot);
    if (count == 4) return false;
    if (!ParseIpv4Number(part, numbers[count])) return false;
    ++count;
    if (dot == std::string_view::npos) break;
    s.remove_prefix(dot + 1);
  }
  for (int i = 0; i + 1 < count; ++i) {
    if (numbers[i] > 255) return false;
  }
  if (numbers[count - 1] >= (uint64_t{1} << (8 * (5 - count)))) return false;
  uint64_t ipv4 = numbers[count - 1];
  for (int i = 0; i + 1 < count; ++i) ipv4 += numbers[i] << (8 * (3 - i));
  AppendIpv4(static_cast<uint32_t>(ipv4), out);
  return true;
}

// WHATWG IPv6 parser; `s` is the text between the brackets.
bool ParseIpv6(std::string_view s, uint16_t (&address)[8]) {
  for (auto& a : address) a = 0;
  int piece = 0;
  int compress = -1;
  size_t p = 0;
  auto c = [&](size_t i) -> int { return i < s.size() ? static_cast<unsigned char>(s[i]) : -1; };
  if (c(p) == ':') {
    if (c(p + 1) != ':') return false;
    p += 2;
    compress = ++piece;
  }
  while (c(p) != -1) {
    if (piece == 8) return false;
    if (c(p) == ':') {
      if (compress != -1) return false;
      ++p;
      compress = ++piece;
      continue;
    }
    int value = 0, length = 0;
    while (length < 4 && c(p) != -1 && IsAsciiHex(c(p))) {
      value = value * 16 + HexValue(c(p));
      ++p;
      ++length;
    }
    if (c(p) == '.') {
      if (length == 0) return false;
      p -= length;
      if (piece > 6) return false;
      int numbers_seen = 0;
      while (c(p) != -1) {
        int ipv4_piece = -1;
        if (numbers_seen > 0) {
          if (c(p) == '.' && numbers_seen < 4) {
            ++p;
          } else {
            return false;
          }
        }
        if (c(p) == -1 || !IsAsciiDigit(c(p))) return false;
        while (c(p) != -1 && IsAsciiDigit(c(p))) {
          int number = c(p) - '0';
          if (ipv4_piece == -1) {
            ipv4_piece = number;
          } else if (ipv4_piece == 0) {
            return false;
          } else {
            ipv4_piece = ipv4_piece * 10 + number;
          }
          if (ipv4_piece > 255) return false;
          ++p;
        }
        address[piece] = static_cast<uint16_t>(address[piece] * 0x100 + ipv4_piece);
        ++numbers_seen;
        if (numbers_seen == 2 || numbers_seen == 4) ++piece;
      }
      if (numbers_seen != 4) return false;
      break;
    } else if (c(p) == ':') {
      ++p;
      if (c(p) == -1) return false;
    } else if (c(p) != -1) {
      return false;
    }
    address[piece] = static_cast<uint16_t>(value);
    ++piece;
  }
  if (compress != -1) {
    int swaps = piece - compress;
    piece = 7;
    while (piece != 0 && swaps > 0) {
      std::swap(address[piece], address[compress + swaps - 1]);
      --piece;
      --swaps;
    }
  } else if (piece != 8) {
    return false;
  }
  return true;
}

void AppendIpv6(const uint16_t (&address)[8], std::string& out) {
  // Compress the first longest run of two or more zero pieces.
  int best = -1, best_len = 1;
  for (int i = 0; i < 8;) {
    if (address[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && address[j] == 0) ++j;
    if (j - i > best_len) {
      best = i;
      best_len = j - i;
    }
    i = j;
  }
  out.push_back('[');
  bool ignore0 = false;
  char buf[8];
  for (int i = 0; i < 8; ++i) {
    if (ignore0 && address[i] == 0) continue;
    ignore0 = false;
    if (best == i) {
      out.append(i == 0 ? "::" : ":");
      ignore0 = true;
      continue;
    }
    int n = std::snprintf(buf, sizeof buf, "%x", address[i]);
    out.append(buf, n);
    if (i != 7) out.push_back(':');
  }
  out.push_back(']');
}

bool ParseOpaqueHost(std::string_view s, std::string& out) {
  for (unsigned char c : s) {
    if (IsForbiddenHost(c)) return false;
  }
  for (unsigned char c : s) AppendEncoded(out, c, kC0ControlSet);
  return true;
}

// Percent-decodes `s` into `out` (WHATWG percent-decode: invalid escapes stay as they are).
void PercentDecode(std::string_view s, std::string& out) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && IsAsciiHex(s[i + 1]) && IsAsciiHex(s[i + 2])) {
      out.push_back(static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
}

// Label separators that UTS #46 maps to '.': U+3002, U+FF0E, U+FF61 (UTF-8 encoded).
bool IsDotVariant(std::string_view s, size_t i) {
  if (i + 2 >= s.size()) return false;
  auto b0 = static_cast<unsigned char>(s[i]), b1 = static_cast<unsigned char>(s[i + 1]),
       b2 = static_cast<unsigned char>(s[i + 2]);
  return (b0 == 0xE3 && b1 == 0x80 && b2 == 0x82) ||  // U+3002
         (b0 == 0xEF && b1 == 0xBC && b2 == 0x8E) ||  // U+FF0E
         (b0 == 0xEF && b1 == 0xBD && b2 == 0xA1);    // U+FF61
}

// A small per-thread memo of recent IDNA conversions: links on a page share their hosts, and
// a libidn2 call costs microseconds. Direct-mapped, kIdnaCacheSize entries of short labels.
constexpr size_t kIdnaCacheSize = 64;
constexpr size_t kIdnaCacheMaxLabel = 64;  // longer labels are not memoized
struct IdnaCacheEntry {
  std::string label;
  std::string ascii;
  bool ok = false;
  bool used = false;
};
thread_local IdnaCacheEntry tls_idna_cache[kIdnaCacheSize];

size_t LabelHash(std::string_view s) { return static_cast<size_t>(Fnv1a64(s) % kIdnaCacheSize); }

bool IdnaLabelUncached(std::string_view label, std::string& out);

// UTS #46 ToASCII of one label through libidn2 (non-transitional), memoized. Appends to out.
bool IdnaLabel(std::string_view label, std::string& out) {
  if (label.size() > kIdnaCacheMaxLabel) return IdnaLabelUncached(label, out);
  IdnaCacheEntry& e = tls_idna_cache[LabelHash(label)];
  if (!e.used || e.label != label) {
    e.label.assign(label);
    e.ascii.clear();
    e.ok = IdnaLabelUncached(label, e.ascii);
    e.used = true;
  }
  if (e.ok) out.append(e.ascii);
  return e.ok;
}

bool IdnaLabelUncached(std::string_view label, std::string& out) {
  std::string z(label);
  char* result = nullptr;
  int rc = idn2_to_ascii_8z(z.c_str(), &result, IDN2_NONTRANSITIONAL | IDN2_NFC_INPUT);
  if (rc != IDN2_OK) {
    if (result) idn2_free(result);
    return false;
  }
  out.append(result);
  idn2_free(result);
  return true;
}

// WHATWG "domain to ASCII" with beStrict = false. Appends to out.
bool DomainToAscii(std::string_view domain, std::string& out) {
  size_t start = out.size();
  size_t i = 0;
  while (true) {
    // Find the end of the label.
    size_t j = i;
    bool ascii = true;
    size_t sep_len = 0;
    while (j < domain.size()) {
      if (domain[j] == '.') {
        sep_len = 1;
        break;
      }
      if (static_cast<unsigned char>(domain[j]) >= 0x80) {
        if (IsDotVariant(domain, j)) {
          sep_len = 3;
          break;
        }
        ascii = false;
      }
      ++j;
    }
    std::string_view label = domain.substr(i, j - i);
    bool punycode = label.size() >= 4 && EqualsIgnoreAsciiCase(label.substr(0, 4), "xn--");
    (void)punycode;
    if (ascii) {
      // UTS #46 maps ASCII to lowercase and keeps it; an all-ASCII "xn--" label is kept
      // as it is too (libidn2 would reject A-labels that UTS #46 accepts, e.g. "xn--").
      for (char c : label) out.push_back(AsciiLower(c));
    } else if (!IdnaLabel(label, out)) {
      return false;
    }
    if (j >= domain.size()) break;
    out.push_back('.');
    i = j + sep_len;
  }
  if (out.size() == start) return false;
  for (size_t k = start; k < out.size(); ++k) {
    if (IsForbiddenDomain(static_cast<unsigned char>(out[k]))) return false;
  }
  return true;
}

thread_local std::string tls_decoded;

}  // namespace

bool ParseHost(std::string_view input, bool special, std::string& out) {
  out.clear();
  if (!input.empty() && input[0] == '[') {
    if (input.back() != ']' || input.size() < 2) return false;
    uint16_t address[8];
    if (!ParseIpv6(input.substr(1, input.size() - 2), address)) return false;
    AppendIpv6(address, out);
    return true;
  }
  if (!special) return ParseOpaqueHost(input, out);
  std::string_view domain = input;
  if (input.find('%') != std::string_view::npos) {
    tls_decoded.clear();
    PercentDecode(input, tls_decoded);
    domain = tls_decoded;
  }
  if (!DomainToAscii(domain, out)) return false;
  if (EndsInNumber(out)) {
    std::string ascii;
    ascii.swap(out);
    return ParseIpv4(ascii, out);
  }
  return true;
}

bool IsIpHost(std::string_view host) {
  if (host.empty()) return false;
  if (host.front() == '[') return true;
  for (unsigned char c : host) {
    if (!IsAsciiDigit(c) && c != '.') return false;
  }
  return true;
}

}  // namespace harvest::url
