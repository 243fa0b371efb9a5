// SURT keys and CDXJ lines (pywb's CDXJ: "<surt> <timestamp> <json>").
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "base/ascii.h"
#include "store/internal.h"
#include "store/store.h"
#include "url/url.h"

namespace harvest::store {

std::string SurtKey(std::string_view uri) {
  if (std::optional<url::Url> parsed = url::Parse(uri)) return url::Surt(*parsed);
  // Not an absolute URL (a WARC-Target-URI may hold anything): the text itself, lower-cased
  // and without a fragment, still a usable sort key.
  std::string key = ToLowerAscii(uri);
  key.resize(std::min(key.size(), key.find('#')));
  return key;
}

namespace internal {

void AppendDecimal(uint64_t v, std::string* out) {
  char buf[20];
  char* p = buf + sizeof(buf);
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  out->append(p, static_cast<size_t>(buf + sizeof(buf) - p));
}

namespace {

// The JSON object of a CDXJ line: fields in this order, empty optional ones left out.
struct CdxjJson {
  std::string_view url, mime, status, digest;
  uint64_t length = 0, offset = 0;
  std::string_view filename, near_dup_of;
};

void AppendField(std::string_view key, std::string_view value, std::string* out) {
  out->push_back('"');
  out->append(key);
  out->append("\":");
  AppendJsonString(value, out);
  out->push_back(',');
}

void AppendCdxjJson(const CdxjJson& j, std::string* out) {
  out->push_back('{');
  AppendField("url", j.url, out);
  if (!j.mime.empty()) AppendField("mime", j.mime, out);
  if (!j.status.empty()) AppendField("status", j.status, out);
  if (!j.digest.empty()) AppendField("digest", j.digest, out);
  out->append("\"length\":");
  AppendDecimal(j.length, out);
  out->append(",\"offset\":");
  AppendDecimal(j.offset, out);
  out->append(",\"filename\":");
  AppendJsonString(j.filename, out);
  if (!j.near_dup_of.empty()) {
    out->append(",\"near_dup_of\":");
    AppendJsonString(j.near_dup_of, out);
  }
  out->push_back('}');
}

// Length of the well-formed UTF-8 sequence a lead byte starts (Unicode Table 3-7), and the
// range its second byte must be in; 0 for a byte that cannot start one.
struct Utf8Lead {
  int length;
  unsigned char lo, hi;
};
Utf8Lead LeadOf(unsigned char c) {
  if (c >= 0xc2 && c <= 0xdf) return {2, 0x80, 0xbf};
  if (c == 0xe0) return {3, 0xa0, 0xbf};
  if (c == 0xed) return {3, 0x80, 0x9f};  // no surrogates
  if (c >= 0xe1 && c <= 0xef) return {3, 0x80, 0xbf};
  if (c == 0xf0) return {4, 0x90, 0xbf};
  if (c >= 0xf1 && c <= 0xf3) return {4, 0x80, 0xbf};
  if (c == 0xf4) return {4, 0x80, 0x8f};  // up to U+10FFFF
  return {0, 0, 0};
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    // A run of plain ASCII is copied at once (the common case: URLs, digests, names).
    size_t run = i;
    while (run < s.size()) {
      const unsigned char c = static_cast<unsigned char>(s[run]);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
      ++run;
    }
    out->append(s.data() + i, run - i);
    i = run;
    if (i == s.size()) break;
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out->append("\\\"");
          break;
        case '\\':
          out->append("\\\\");
          break;
        case '\b':
          out->append("\\b");
          break;
        case '\t':
          out->append("\\t");
          break;
        case '\n':
          out->append("\\n");
          break;
        case '\f':
          out->append("\\f");
          break;
        case '\r':
          out->append("\\r");
          break;
        default: {
          const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
          out->append(esc, sizeof(esc));
        }
      }
      ++i;
      continue;
    }
    // As nlohmann::json's dump with error_handler_t::replace: a well-formed sequence is
    // copied; an ill-formed one becomes one U+FFFD: a byte that cannot start a sequence,
    // or the bytes of a sequence up to (not including) the byte that breaks it — that byte
    // is read again, as a start — or a sequence cut by the end of the string.
    const Utf8Lead lead = LeadOf(c);
    if (lead.length == 0) {
      out->append(kReplacement);
      ++i;
      continue;
    }
    size_t k = 1;
    bool bad = false;
    for (; k < static_cast<size_t>(lead.length); ++k) {
      if (i + k == s.size()) break;
      const unsigned char b = static_cast<unsigned char>(s[i + k]);
      const unsigned char lo = k == 1 ? lead.lo : 0x80, hi = k == 1 ? lead.hi : 0xbf;
      if (b < lo || b > hi) {
        bad = true;
        break;
      }
    }
    if (bad) {
      out->append(kReplacement);
      i += k;
    } else if (k < static_cast<size_t>(lead.length)) {
      out->append(kReplacement);  // cut by the end of the string
      i = s.size();
    } else {
      out->append(s.data() + i, k);
      i += k;
    }
  }
  out->push_back('"');
}

std::string FormatCdxjLine(const CdxjEntry& e) {
  std::string out;
  out.reserve(e.surt.size() + e.url.size() + e.filename.size() + 160);
  out.append(e.surt);
  out.push_back(' ');
  out.append(e.timestamp);
  out.push_back(' ');
  AppendCdxjJson({.url = e.url,
                  .mime = e.mime,
                  .status = e.status,
                  .digest = e.digest,
                  .length = e.length,
                  .offset = e.offset,
                  .filename = e.filename,
                  .near_dup_of = e.near_dup_of},
                 &out);
  return out;
}

std::string_view HttpHeadOf(std::string_view block) {
  size_t crlf = block.find("\r\n\r\n");
  size_t lf = block.find("\n\n");
  if (crlf == std::string_view::npos && lf == std::string_view::npos) return block;
  if (lf == std::string_view::npos || (crlf != std::string_view::npos && crlf < lf)) {
    return block.substr(0, crlf + 4);
  }
  return block.substr(0, lf + 2);
}

std::string MimeFromHead(std::string_view head) {
  head = HttpHeadOf(head);
  size_t eol = head.find('\n');
  if (eol == std::string_view::npos) return {};
  std::vector<std::pair<std::string, std::string>> headers;
  ParseHeaderLines(head.substr(eol + 1), &headers);
  for (const auto& [k, v] : headers) {
    if (!EqualsIgnoreAsciiCase(k, "content-type")) continue;
    return ToLowerAscii(TrimHttpOws(std::string_view(v).substr(0, v.find(';'))));
  }
  return {};
}

void AppendCdxjLine(const CdxjSource& s, std::string* out) {
  if (s.surt.empty()) {
    out->append(SurtKey(s.target_uri));
  } else {
    out->append(s.surt);
  }
  out->push_back(' ');
  out->append(Timestamp14FromWarcDate(s.warc_date));
  out->push_back(' ');
  std::string mime_buf;
  std::string_view mime;
  if (s.revisit) {
    mime = "warc/revisit";
  } else if (s.metadata) {
    mime = "warc/metadata";
  } else if (!s.mime.empty()) {
    mime = s.mime;
  } else {
    mime_buf = MimeFromHead(s.response_head);
    mime = mime_buf;
  }
  if (mime.empty()) mime = "unk";
  char status[16];
  size_t status_len = 0;
  if (s.status > 0) {
    status_len = static_cast<size_t>(std::snprintf(status, sizeof(status), "%d", s.status));
  }
  AppendCdxjJson({.url = s.target_uri,
                  .mime = mime,
                  .status = std::string_view(status, status_len),
                  .digest = s.payload_digest,
                  .length = s.length,
                  .offset = s.offset,
                  .filename = s.filename,
                  .near_dup_of = s.near_dup_of},
                 out);
}

std::string CdxjLineFor(const CdxjSource& s) {
  std::string out;
  AppendCdxjLine(s, &out);
  return out;
}

Result<CdxjEntry> ParseCdxjLine(std::string_view line) {
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return Status::InvalidArgument("not a CDXJ line");
  CdxjEntry e;
  e.surt = std::string(line.substr(0, sp1));
  e.timestamp = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  nlohmann::json j = nlohmann::json::parse(line.substr(sp2 + 1), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument("bad CDXJ JSON");
  auto str = [&j](const char* k) -> std::string {
    auto it = j.find(k);
    if (it == j.end()) return {};
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number()) return it->dump();
    return {};
  };
  auto num = [&str](const char* k) -> uint64_t {
    std::string s = str(k);
    uint64_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return 0;
      v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    return v;
  };
  e.url = str("url");
  e.mime = str("mime");
  e.status = str("status");
  e.digest = str("digest");
  e.length = num("length");
  e.offset = num("offset");
  e.filename = str("filename");
  e.near_dup_of = str("near_dup_of");
  if (e.url.empty() || e.filename.empty())
    return Status::InvalidArgument("CDXJ line lacks url/filename");
  return e;
}

}  // namespace internal
}  // namespace harvest::store
