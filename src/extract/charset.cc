// Charset detection and conversion to UTF-8 (HTML §13.2.3, WHATWG Encoding).
#include "extract/charset.h"

#include <iconv.h>
#include <uchardet/uchardet.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "base/ascii.h"
#include "extract/char_ref.h"
#include "extract/extract.h"

namespace harvest::extract {
namespace internal {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// windows-1252 bytes 0x80-0x9F (WHATWG index; undefined bytes map to the C1 control).
constexpr std::array<uint16_t, 32> kWindows1252High = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

// Length of the valid UTF-8 sequence at in[i], or 0 if invalid; *bad_len receives the
// maximal-subpart length to replace by one U+FFFD (WHATWG UTF-8 decoder).
size_t Utf8SequenceAt(std::string_view in, size_t i, size_t* bad_len) {
  unsigned char b = static_cast<unsigned char>(in[i]);
  size_t need;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) {
    need = 1;
  } else if (b >= 0xE0 && b <= 0xEF) {
    need = 2;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    need = 3;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    *bad_len = 1;
    return 0;
  }
  for (size_t k = 1; k <= need; ++k) {
    if (i + k >= in.size()) {
      *bad_len = k;
      return 0;
    }
    unsigned char c = static_cast<unsigned char>(in[i + k]);
    if (c < lo || c > hi) {
      *bad_len = k;
      return 0;
    }
    lo = 0x80;
    hi = 0xBF;
  }
  return need + 1;
}

// Index of the first byte that is not part of a run of ASCII starting at i.
size_t SkipAscii(std::string_view in, size_t i) {
  const size_t n = in.size();
  while (i + 8 <= n) {
    uint64_t w;
    std::memcpy(&w, in.data() + i, 8);
    if (w & 0x8080808080808080ULL) break;
    i += 8;
  }
  while (i < n && static_cast<unsigned char>(in[i]) < 0x80) ++i;
  return i;
}

void SanitizeUtf8(std::string_view in, std::string* out) {
  out->reserve(out->size() + in.size());
  size_t i = 0;
  while (i < in.size()) {
    size_t a = SkipAscii(in, i);
    out->append(in.substr(i, a - i));
    i = a;
    if (i >= in.size()) break;
    size_t bad = 0;
    size_t len = Utf8SequenceAt(in, i, &bad);
    if (len > 0) {
      out->append(in.substr(i, len));
      i += len;
    } else {
      out->append(kReplacement);
      i += bad;
    }
  }
}

void DecodeWindows1252(std::string_view in, std::string* out) {
  out->reserve(in.size() + in.size() / 8);
  for (char ch : in) {
    unsigned char b = static_cast<unsigned char>(ch);
    if (b < 0x80) {
      out->push_back(ch);
    } else if (b < 0xA0) {
      AppendUtf8(kWindows1252High[b - 0x80], out);
    } else {
      AppendUtf8(b, out);
    }
  }
}

void DecodeUserDefined(std::string_view in, std::string* out) {
  for (char ch : in) {
    unsigned char b = static_cast<unsigned char>(ch);
    if (b < 0x80) {
      out->push_back(ch);
    } else {
      AppendUtf8(0xF780 + b - 0x80, out);
    }
  }
}

struct IconvCloser {
  void operator()(void* cd) const { iconv_close(static_cast<iconv_t>(cd)); }
};

// Returns false when iconv cannot open the conversion.
bool DecodeWithIconv(const char* from, std::string_view in, std::string* out) {
  iconv_t raw = iconv_open("UTF-8", from);
  if (raw == reinterpret_cast<iconv_t>(-1)) return false;
  std::unique_ptr<void, IconvCloser> cd(raw);
  char* inp = const_cast<char*>(in.data());
  size_t inleft = in.size();
  char buf[16 * 1024];
  while (true) {
    char* outp = buf;
    size_t outleft = sizeof(buf);
    size_t r = iconv(raw, inleft > 0 ? &inp : nullptr, &inleft, &outp, &outleft);
    out->append(buf, outp - buf);
    if (r != static_cast<size_t>(-1)) {
      if (inleft == 0) {
        // Flush a stateful decoder (ISO-2022-JP) once, then stop.
        outp = buf;
        outleft = sizeof(buf);
        iconv(raw, nullptr, nullptr, &outp, &outleft);
        out->append(buf, outp - buf);
        return true;
      }
      continue;
    }
    if (errno == E2BIG) continue;
    out->append(kReplacement);
    if (errno == EILSEQ && inleft > 0) {
      ++inp;
      --inleft;
      continue;
    }
    return true;  // EINVAL: truncated sequence at the end
  }
}

// HTML §13.2.3.2 "get an attribute". Returns false when there is none (or at the end).
bool GetAttribute(std::string_view s, size_t* pos, std::string* name, std::string* value) {
  size_t i = *pos;
  const size_t n = s.size();
  name->clear();
  value->clear();
  while (i < n && (IsHtmlSpace(s[i]) || s[i] == '/')) ++i;
  if (i >= n || s[i] == '>') {
    *pos = i;
    return false;
  }
  // Attribute name.
  while (true) {
    if (i >= n) return false;
    char c = s[i];
    if (c == '=' && !name->empty()) {
      ++i;
      break;
    }
    if (IsHtmlSpace(c)) {
      while (i < n && IsHtmlSpace(s[i])) ++i;
      if (i < n && s[i] == '=') {
        ++i;
        break;
      }
      *pos = i;
      return true;
    }
    if (c == '/' || c == '>') {
      *pos = i;
      return true;
    }
    name->push_back(AsciiLower(c));
    ++i;
  }
  // Attribute value.
  while (i < n && IsHtmlSpace(s[i])) ++i;
  if (i >= n) return false;
  if (s[i] == '"' || s[i] == '\'') {
    char q = s[i++];
    while (i < n && s[i] != q) value->push_back(AsciiLower(s[i++]));
    if (i >= n) return false;
    *pos = i + 1;
    return true;
  }
  if (s[i] == '>') {
    *pos = i;
    return true;
  }
  while (i < n && !IsHtmlSpace(s[i]) && s[i] != '>') value->push_back(AsciiLower(s[i++]));
  *pos = i;
  return i < n;
}

// HTML §2.5.? "extracting a character encoding from a meta element".
std::string_view CharsetFromMetaContent(std::string_view s) {
  size_t i = 0;
  while (true) {
    size_t p = std::string_view::npos;
    for (size_t k = i; k + 7 <= s.size(); ++k) {
      if (EqualsIgnoreAsciiCase(s.substr(k, 7), "charset")) {
        p = k;
        break;
      }
    }
    if (p == std::string_view::npos) return {};
    i = p + 7;
    while (i < s.size() && IsHtmlSpace(s[i])) ++i;
    if (i >= s.size()) return {};
    if (s[i] != '=') continue;
    ++i;
    while (i < s.size() && IsHtmlSpace(s[i])) ++i;
    if (i >= s.size()) return {};
    if (s[i] == '"' || s[i] == '\'') {
      char q = s[i];
      size_t end = s.find(q, i + 1);
      if (end == std::string_view::npos) return {};
      return s.substr(i + 1, end - i - 1);
    }
    size_t end = i;
    while (end < s.size() && !IsHtmlSpace(s[end]) && s[end] != ';') ++end;
    return s.substr(i, end - i);
  }
}

bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Parses the attributes of a <meta> whose attributes start at *pos. Returns a canonical
// name or "".
std::string MetaCharset(std::string_view s, size_t* pos) {
  bool got_pragma = false;
  int need_pragma = -1;  // -1 null, 0 false, 1 true
  std::string charset;
  std::string name, value;
  std::string seen;  // "|name|name|" of attributes already processed
  while (GetAttribute(s, pos, &name, &value)) {
    std::string key = "|" + name + "|";
    if (seen.find(key) != std::string::npos) continue;
    seen += key;
    if (name == "http-equiv") {
      if (value == "content-type") got_pragma = true;
    } else if (name == "content") {
      std::string_view c = CharsetFromMetaContent(value);
      if (charset.empty() && !c.empty()) {
        charset = std::string(c);
        need_pragma = 1;
      }
    } else if (name == "charset") {
      charset = value;
      need_pragma = 0;
    }
  }
  if (need_pragma < 0 || (need_pragma == 1 && !got_pragma) || charset.empty()) return {};
  std::string canonical = CanonicalCharset(charset);
  if (canonical == "utf-16le" || canonical == "utf-16be") return "utf-8";
  if (canonical == "x-user-defined") return "windows-1252";
  return canonical;
}

}  // namespace

std::string_view ContentTypeCharset(std::string_view ct) {
  size_t semi = ct.find(';');
  while (semi != std::string_view::npos) {
    size_t i = semi + 1;
    while (i < ct.size() && IsHtmlSpace(ct[i])) ++i;
    size_t eq = ct.find('=', i);
    size_t next = ct.find(';', i);
    if (eq == std::string_view::npos) return {};
    if (next != std::string_view::npos && next < eq) {
      semi = next;
      continue;
    }
    std::string_view key = ct.substr(i, eq - i);
    while (!key.empty() && IsHtmlSpace(key.back())) key.remove_suffix(1);
    size_t v = eq + 1;
    while (v < ct.size() && IsHtmlSpace(ct[v])) ++v;
    std::string_view value;
    if (v < ct.size() && ct[v] == '"') {
      size_t close = ct.find('"', v + 1);
      value = ct.substr(v + 1, (close == std::string_view::npos ? ct.size() : close) - v - 1);
      next = close == std::string_view::npos ? std::string_view::npos : ct.find(';', close);
    } else {
      size_t end = next == std::string_view::npos ? ct.size() : next;
      value = ct.substr(v, end - v);
      while (!value.empty() && IsHtmlSpace(value.back())) value.remove_suffix(1);
    }
    if (EqualsIgnoreAsciiCase(key, "charset")) return value;
    semi = next;
  }
  return {};
}

std::string PrescanMetaCharset(std::string_view body) {
  std::string_view s = body.substr(0, kPrescanBytes);
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    if (s.compare(i, 4, "<!--") == 0) {
      size_t end = s.find("-->", i + 2);
      if (end == std::string_view::npos) return {};
      i = end + 3;
      continue;
    }
    if (i + 5 < n && EqualsIgnoreAsciiCase(s.substr(i, 5), "<meta") &&
        (IsHtmlSpace(s[i + 5]) || s[i + 5] == '/')) {
      size_t pos = i + 6;
      std::string cs = MetaCharset(s, &pos);
      if (!cs.empty()) return cs;
      i = pos + 1;
      continue;
    }
    if (s[i] == '<' && i + 1 < n &&
        (IsAsciiAlpha(s[i + 1]) || (s[i + 1] == '/' && i + 2 < n && IsAsciiAlpha(s[i + 2])))) {
      size_t pos = i + 1;
      while (pos < n && !IsHtmlSpace(s[pos]) && s[pos] != '>') ++pos;
      std::string name, value;
      while (GetAttribute(s, &pos, &name, &value)) {
      }
      i = pos + 1;
      continue;
    }
    if (s[i] == '<' && i + 1 < n && (s[i + 1] == '!' || s[i + 1] == '/' || s[i + 1] == '?')) {
      size_t gt = s.find('>', i + 2);
      if (gt == std::string_view::npos) return {};
      i = gt + 1;
      continue;
    }
    ++i;
  }
  return {};
}

size_t SniffBom(std::string_view body, std::string* charset) {
  if (body.size() >= 3 && body.compare(0, 3, "\xEF\xBB\xBF") == 0) {
    *charset = "utf-8";
    return 3;
  }
  if (body.size() >= 2 && body.compare(0, 2, "\xFE\xFF") == 0) {
    *charset = "utf-16be";
    return 2;
  }
  if (body.size() >= 2 && body.compare(0, 2, "\xFF\xFE") == 0) {
    *charset = "utf-16le";
    return 2;
  }
  return 0;
}

bool IsValidUtf8(std::string_view in) {
  size_t i = 0;
  while (true) {
    i = SkipAscii(in, i);
    if (i >= in.size()) return true;
    size_t bad = 0;
    size_t len = Utf8SequenceAt(in, i, &bad);
    if (len == 0) return false;
    i += len;
  }
}

std::string_view DecodeToUtf8(std::string_view body, std::string_view charset,
                              std::string* storage) {
  std::string bom_charset;
  size_t bom = SniffBom(body, &bom_charset);
  if (bom > 0 && bom_charset == charset) body.remove_prefix(bom);
  storage->clear();
  if (charset == "utf-8") {
    if (IsValidUtf8(body)) return body;
    SanitizeUtf8(body, storage);
    return *storage;
  }
  if (charset == "x-user-defined") {
    DecodeUserDefined(body, storage);
    return *storage;
  }
  const char* iconv_name = IconvName(charset);
  if (iconv_name != nullptr && DecodeWithIconv(iconv_name, body, storage)) return *storage;
  storage->clear();
  DecodeWindows1252(body, storage);
  return *storage;
}

}  // namespace internal

std::string DetectCharset(std::string_view body, std::string_view content_type) {
  std::string charset;
  if (internal::SniffBom(body, &charset) > 0) return charset;
  charset = CanonicalCharset(internal::ContentTypeCharset(content_type));
  if (!charset.empty()) return charset;
  charset = internal::PrescanMetaCharset(body);
  if (!charset.empty()) return charset;
  if (internal::IsValidUtf8(body)) return "utf-8";
  uchardet_t ud = uchardet_new();
  std::string_view sample = body.substr(0, internal::kDetectorBytes);
  if (uchardet_handle_data(ud, sample.data(), sample.size()) == 0) {
    uchardet_data_end(ud);
    charset = CanonicalCharset(uchardet_get_charset(ud));
  }
  uchardet_delete(ud);
  return charset.empty() ? "windows-1252" : charset;
}

std::string ConvertToUtf8(std::string_view body, std::string_view charset) {
  std::string canonical = CanonicalCharset(charset);
  if (canonical.empty()) canonical = "windows-1252";
  std::string storage;
  std::string_view out = internal::DecodeToUtf8(body, canonical, &storage);
  if (out.data() != storage.data()) return std::string(out);
  return storage;
}

}  // namespace harvest::extract
