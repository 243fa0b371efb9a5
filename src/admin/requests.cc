// Request parsing and answer rendering for the admin API (requests.h).
#include "admin/requests.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "base/ascii.h"

namespace harvest::admin {
namespace {

using nlohmann::json;

Status Bad(std::string msg) { return Status::InvalidArgument(std::move(msg)); }

// A short, printable rendering of user input for error messages.
std::string Quote(std::string_view s) {
  std::string out = "'";
  size_t n = 0;
  for (char c : s) {
    if (++n > 64) {
      out += "...";
      break;
    }
    unsigned char u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u >= 0x7f) ? '?' : c;
  }
  out += "'";
  return out;
}

Result<json> ParseObject(std::string_view body) {
  json j = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Bad("malformed JSON body");
  if (!j.is_object()) return Bad("the JSON body must be an object");
  return j;
}

const char* TypeName(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

// An integer in [lo, hi], or the error naming `field`.
Result<int64_t> GetInt(const json& v, std::string_view field, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) {
    return Bad(std::string(field) + " must be an integer, not " + TypeName(v));
  }
  bool in_range;
  int64_t x = 0;
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    in_range = u <= static_cast<uint64_t>(hi) && (lo <= 0 || u >= static_cast<uint64_t>(lo));
    x = in_range ? static_cast<int64_t>(u) : 0;
  } else {
    x = v.get<int64_t>();
    in_range = x >= lo && x <= hi;
  }
  if (!in_range) {
    return Bad(std::string(field) + " must be between " + std::to_string(lo) + " and " +
               std::to_string(hi));
  }
  return x;
}

bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The parse-level check of a seed URL: absolute http(s) with a host. Full parsing,
// canonicalization and scope belong to the crawl (it reports those in `rejected`).
Status CheckSeedUrl(std::string_view url) {
  if (url.empty()) return Bad("empty URL");
  if (url.size() > kMaxUrlLength) {
    return Bad("URL longer than " + std::to_string(kMaxUrlLength) + " bytes");
  }
  for (char c : url) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return Bad("URL contains whitespace or a control character");
  }
  size_t colon = url.find(':');
  if (colon == std::string_view::npos || colon == 0 || !IsAsciiAlpha(url[0])) {
    return Bad("not an absolute URL (no scheme)");
  }
  const std::string scheme = ToLowerAscii(url.substr(0, colon));
  if (scheme != "http" && scheme != "https") {
    return Bad("scheme " + Quote(scheme) + " is not http or https");
  }
  std::string_view rest = url.substr(colon + 1);
  if (rest.substr(0, 2) != "//") return Bad("no '//' after the scheme");
  rest.remove_prefix(2);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos) authority.remove_prefix(at + 1);
  std::string_view host = authority;
  if (!host.empty() && host[0] == '[') {
    if (host.find(']') == std::string_view::npos) return Bad("unterminated IPv6 address");
  } else {
    host = host.substr(0, host.find(':'));
  }
  if (host.empty()) return Bad("no host");
  return Status::Ok();
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool LeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// Reads exactly `n` digits at `*pos`.
bool Digits(std::string_view s, size_t* pos, size_t n, int* out) {
  if (*pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[*pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t* pos, std::string_view chars) {
  if (*pos >= s.size() || chars.find(s[*pos]) == std::string_view::npos) return false;
  ++*pos;
  return true;
}

Result<int64_t> ParseRfc3339(std::string_view s) {
  const Status bad =
      Bad("since: " + Quote(s) + " is neither RFC 3339 (2024-05-01T12:00:00Z) nor unix seconds");
  size_t p = 0;
  int year, month, day, hour, minute, second;
  if (!Digits(s, &p, 4, &year) || !Expect(s, &p, "-") || !Digits(s, &p, 2, &month) ||
      !Expect(s, &p, "-") || !Digits(s, &p, 2, &day) || !Expect(s, &p, "Tt ") ||
      !Digits(s, &p, 2, &hour) || !Expect(s, &p, ":") || !Digits(s, &p, 2, &minute) ||
      !Expect(s, &p, ":") || !Digits(s, &p, 2, &second)) {
    return bad;
  }
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12) return bad;
  int mdays = kDays[month - 1] + (month == 2 && LeapYear(year) ? 1 : 0);
  if (day < 1 || day > mdays || hour > 23 || minute > 59 || second > 60) return bad;
  int64_t ms = 0;
  if (p < s.size() && s[p] == '.') {
    ++p;
    size_t start = p;
    int64_t scale = 100;
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
      ms += (s[p] - '0') * scale;
      scale /= 10;
      ++p;
    }
    if (p == start) return bad;
  }
  int64_t offset_min = 0;
  if (p < s.size() && (s[p] == 'Z' || s[p] == 'z')) {
    ++p;
  } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    int sign = s[p] == '-' ? -1 : 1;
    ++p;
    int oh, om;
    if (!Digits(s, &p, 2, &oh) || !Expect(s, &p, ":") || !Digits(s, &p, 2, &om) || oh > 23 ||
        om > 59) {
      return bad;
    }
    offset_min = sign * (oh * 60 + om);
  } else {
    return bad;  // RFC 3339 requires an offset
  }
  if (p != s.size()) return bad;
  if (second == 60) second = 59;  // a leap second: close enough for a filter
  int64_t secs =
      DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
      hour * 3600 + minute * 60 + second - offset_min * 60;
  return secs * 1000 + ms;
}

void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

}  // namespace

Result<SeedRequest> ParseSeedRequest(std::string_view body) {
  Result<json> parsed = ParseObject(body);
  if (!parsed.ok()) return parsed.status();
  const json& j = *parsed;
  SeedRequest req;
  bool have_urls = false;
  for (const auto& [key, v] : j.items()) {
    if (key == "urls") {
      if (!v.is_array()) return Bad(std::string("urls must be an array, not ") + TypeName(v));
      if (v.empty()) return Bad("urls is empty");
      if (v.size() > kMaxSeedUrls) {
        return Bad("urls has more than " + std::to_string(kMaxSeedUrls) + " entries");
      }
      for (size_t i = 0; i < v.size(); ++i) {
        std::string where = "urls[" + std::to_string(i) + "]";
        if (!v[i].is_string()) return Bad(where + " must be a string, not " + TypeName(v[i]));
        const std::string& url = v[i].get_ref<const std::string&>();
        Status s = CheckSeedUrl(url);
        if (!s.ok()) return Bad(where + " " + Quote(url) + ": " + s.message());
        req.urls.push_back(url);
      }
      have_urls = true;
    } else if (key == "priority") {
      Result<int64_t> p = GetInt(v, "priority", 0, 1000);
      if (!p.ok()) return p.status();
      req.priority = static_cast<int>(*p);
    } else {
      return Bad("unknown field " + Quote(key) + " (expected urls, priority)");
    }
  }
  if (!have_urls) return Bad("missing field 'urls'");
  return req;
}

Result<HostPolicy> ParsePolicyRequest(std::string_view body) {
  Result<json> parsed = ParseObject(body);
  if (!parsed.ok()) return parsed.status();
  HostPolicy policy;
  for (const auto& [key, v] : parsed->items()) {
    if (key == "crawl_delay_ms") {
      Result<int64_t> d = GetInt(v, "crawl_delay_ms", 0, kMaxCrawlDelayMs);
      if (!d.ok()) return d.status();
      policy.crawl_delay_ms = *d;
    } else if (key == "max_concurrent") {
      Result<int64_t> c = GetInt(v, "max_concurrent", 1, 1000);
      if (!c.ok()) return c.status();
      policy.max_concurrent = static_cast<int>(*c);
    } else if (key == "weight") {
      if (!v.is_number()) return Bad(std::string("weight must be a number, not ") + TypeName(v));
      double w = v.get<double>();
      if (!std::isfinite(w) || w <= 0 || w > 1000) {
        return Bad("weight must be greater than 0 and at most 1000");
      }
      policy.weight = w;
    } else {
      return Bad("unknown field " + Quote(key) +
                 " (expected crawl_delay_ms, max_concurrent, weight)");
    }
  }
  if (!policy.crawl_delay_ms && !policy.max_concurrent && !policy.weight) {
    return Bad("empty policy: give crawl_delay_ms, max_concurrent or weight");
  }
  return policy;
}

Result<int64_t> ParseSince(std::string_view text) {
  if (text.empty()) return Bad("since is empty");
  if (text.find_first_not_of("0123456789") == std::string_view::npos) {
    int64_t secs = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), secs);
    // Up to year 9999: keeps the milliseconds well inside int64.
    if (ec != std::errc() || end != text.data() + text.size() || secs > 253402300799) {
      return Bad("since: " + Quote(text) + " is out of range");
    }
    return secs * 1000;
  }
  return ParseRfc3339(text);
}

Result<PageQuery> ParsePageQuery(const QueryParams& params) {
  PageQuery q;
  std::set<std::string> seen;
  for (const auto& [key, value] : params) {
    if (!seen.insert(key).second) return Bad("query parameter " + Quote(key) + " given twice");
    if (key == "host") {
      Result<std::string> h = NormalizeHost(value);  // httplib decoded the query
      if (!h.ok()) return Bad("host: " + h.status().message());
      q.host = *h;
    } else if (key == "status") {
      int s = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), s);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size() || s < 100 ||
          s > 599) {
        return Bad("status: " + Quote(value) + " is not an HTTP status code (100..599)");
      }
      q.status = s;
    } else if (key == "since") {
      Result<int64_t> since = ParseSince(value);
      if (!since.ok()) return since.status();
      q.since_unix_ms = *since;
    } else if (key == "limit") {
      int n = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size() || n < 1 ||
          n > kMaxLimit) {
        return Bad("limit: " + Quote(value) + " is not an integer in 1..1000");
      }
      q.limit = n;
    } else if (key == "cursor") {
      if (value.empty() || value.size() > kMaxCursorLength) {
        return Bad("cursor must be 1.." + std::to_string(kMaxCursorLength) + " characters");
      }
      q.cursor = value;
    } else {
      return Bad("unknown query parameter " + Quote(key) +
                 " (expected host, status, since, limit, cursor)");
    }
  }
  return q;
}

Result<std::string> PercentDecode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out += in[i];
      continue;
    }
    if (i + 2 >= in.size()) return Bad("bad percent-escape");
    int hi = hex(in[i + 1]), lo = hex(in[i + 2]);
    if (hi < 0 || lo < 0) return Bad("bad percent-escape");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

Result<std::string> NormalizeHost(std::string host) {
  if (host.empty()) return Bad("empty host name");
  if (host.size() > kMaxHostLength) {
    return Bad("host name longer than " + std::to_string(kMaxHostLength) + " characters");
  }
  for (char& c : host) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) {
      return Bad("host name " + Quote(host) +
                 " has a space, control or non-ASCII character (use the punycode form)");
    }
    c = AsciiLower(c);
  }
  return host;
}

Result<std::string> ParseHostSegment(std::string_view raw_segment) {
  Result<std::string> decoded = PercentDecode(raw_segment);
  if (!decoded.ok()) return Bad("host name has a " + decoded.status().message());
  return NormalizeHost(std::move(*decoded));
}

Result<uint64_t> ParsePageId(std::string_view raw_segment) {
  uint64_t id = 0;
  auto [end, ec] = std::from_chars(raw_segment.data(), raw_segment.data() + raw_segment.size(), id);
  if (raw_segment.empty() || ec != std::errc() || end != raw_segment.data() + raw_segment.size()) {
    return Bad("page id " + Quote(raw_segment) + " is not a decimal number");
  }
  return id;
}

std::string FormatRfc3339Ms(int64_t unix_ms) {
  int64_t secs = unix_ms / 1000, ms = unix_ms % 1000;
  if (ms < 0) {
    ms += 1000;
    secs -= 1;
  }
  int64_t days = secs / 86400, rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    days -= 1;
  }
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[64];
  snprintf(buf, sizeof(buf), "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<long long>(y), m,
           d, static_cast<int>(rem / 3600), static_cast<int>(rem / 60 % 60),
           static_cast<int>(rem % 60), static_cast<int>(ms));
  return buf;
}

json ToJson(const SeedResult& result) {
  json rejected = json::array();
  for (const SeedRejection& r : result.rejected) {
    rejected.push_back({{"url", r.url}, {"reason", r.reason}});
  }
  return {{"queued", result.queued}, {"rejected", std::move(rejected)}};
}

json ToJson(const StatusSnapshot& s) {
  json busiest = json::array();
  for (const BusyHost& b : s.busiest_hosts) {
    busiest.push_back(
        {{"host", b.host}, {"pages", b.pages}, {"queued", b.queued}, {"errors", b.errors}});
  }
  json j = {{"pages_per_sec", s.pages_per_sec},
            {"busiest_hosts", std::move(busiest)},
            {"queue_depth", s.queue_depth},
            {"hosts",
             {{"active", s.hosts.active},
              {"ready", s.hosts.ready},
              {"waiting", s.hosts.waiting},
              {"blocked", s.hosts.blocked}}},
            {"budgets",
             {{"deferred", s.budgets.deferred},
              {"hosts_throttled", s.budgets.hosts_throttled},
              {"hosts_over_quota", s.budgets.hosts_over_quota},
              {"deferred_total", s.budgets.deferred_total},
              {"released_total", s.budgets.released_total},
              {"backlog_refused", s.budgets.backlog_refused}}},
            {"error_rate_percent", s.error_rate_percent},
            {"bytes_stored", s.bytes_stored},
            {"pages_stored", s.pages_stored},
            {"uptime_s", s.uptime_s},
            {"state", s.state}};
  if (s.shared) {
    j["shared"] = {{"worker", s.shared->worker},
                   {"partitions_held", s.shared->partitions_held},
                   {"partitions", s.shared->partitions},
                   {"taken", s.shared->taken},
                   {"done", s.shared->done},
                   {"admitted_new", s.shared->admitted_new}};
  }
  if (s.metadata) {
    j["metadata"] = {{"database_up", s.metadata->database_up},
                     {"outage_seconds", s.metadata->outage_seconds},
                     {"rows_written", s.metadata->rows_written},
                     {"failures", s.metadata->failures},
                     {"cursor", s.metadata->cursor},
                     {"last_error", s.metadata->last_error}};
  }
  return j;
}

json ToJson(const PageRecord& p) {
  return {{"id", p.id},
          {"url", p.url},
          {"status", p.status},
          {"fetched_at", FormatRfc3339Ms(p.fetched_at_unix_ms)},
          {"fetched_at_unix_ms", p.fetched_at_unix_ms},
          {"mime", p.mime},
          {"title", p.title},
          {"digest", p.digest},
          {"warc_file", p.warc_file},
          {"warc_offset", p.warc_offset},
          {"warc_length", p.warc_length},
          {"outcome", p.outcome},
          {"reason", p.reason}};
}

json ToJson(const PageList& list) {
  json pages = json::array();
  for (const PageRecord& p : list.pages) pages.push_back(ToJson(p));
  json out = {{"pages", std::move(pages)}};
  out["next_cursor"] = list.next_cursor ? json(*list.next_cursor) : json(nullptr);
  return out;
}

json ErrorJson(std::string_view message) { return {{"error", std::string(message)}}; }

std::string DumpJson(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace harvest::admin
