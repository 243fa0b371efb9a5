// SURT keys and CDXJ lines (pywb's CDXJ: "<surt> <timestamp> <json>").
#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "store/internal.h"
#include "store/store.h"
#include "url/url.h"

namespace harvest::store {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

std::string SurtKey(std::string_view uri) {
  if (std::optional<url::Url> parsed = url::Parse(uri)) return url::Surt(*parsed);
  // Not an absolute URL (a WARC-Target-URI may hold anything): the text itself, lower-cased
  // and without a fragment, still a usable sort key.
  std::string key = Lower(uri);
  key.resize(std::min(key.size(), key.find('#')));
  return key;
}

namespace internal {

std::string FormatCdxjLine(const CdxjEntry& e) {
  nlohmann::ordered_json j;
  j["url"] = e.url;
  if (!e.mime.empty()) j["mime"] = e.mime;
  if (!e.status.empty()) j["status"] = e.status;
  if (!e.digest.empty()) j["digest"] = e.digest;
  j["length"] = e.length;
  j["offset"] = e.offset;
  j["filename"] = e.filename;
  if (!e.near_dup_of.empty()) j["near_dup_of"] = e.near_dup_of;
  // Invalid UTF-8 in a URL must not throw: replace it.
  return e.surt + " " + e.timestamp + " " +
         j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
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
    if (!EqualsIgnoreCase(k, "content-type")) continue;
    std::string_view m = std::string_view(v).substr(0, v.find(';'));
    while (!m.empty() && (m.back() == ' ' || m.back() == '\t')) m.remove_suffix(1);
    while (!m.empty() && (m.front() == ' ' || m.front() == '\t')) m.remove_prefix(1);
    return Lower(m);
  }
  return {};
}

std::string CdxjLineFor(const CdxjSource& s) {
  CdxjEntry e;
  e.surt = s.surt.empty() ? SurtKey(s.target_uri) : std::string(s.surt);
  e.timestamp = Timestamp14FromWarcDate(s.warc_date);
  e.url = std::string(s.target_uri);
  if (s.revisit) {
    e.mime = "warc/revisit";
  } else if (s.metadata) {
    e.mime = "warc/metadata";
  } else if (!s.mime.empty()) {
    e.mime = std::string(s.mime);
  } else {
    e.mime = MimeFromHead(s.response_head);
  }
  if (e.mime.empty()) e.mime = "unk";
  if (s.status > 0) e.status = std::to_string(s.status);
  e.digest = std::string(s.payload_digest);
  e.length = s.length;
  e.offset = s.offset;
  e.filename = std::string(s.filename);
  e.near_dup_of = std::string(s.near_dup_of);
  return FormatCdxjLine(e);
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
