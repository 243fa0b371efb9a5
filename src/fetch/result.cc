// FetchResult helpers: response-head parsing, header lookup, Retry-After and HTTP-date.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/ascii.h"
#include "fetch/fetch.h"

namespace harvest::fetch {
namespace {

// Retry-After delay-seconds above this are clamped: a server asking for more than a year is
// asking for "never", and clamping keeps the arithmetic far from overflow.
constexpr int64_t kMaxRetryAfterSeconds = 365LL * 24 * 3600;

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int MonthIndex(const char* name) {
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; ++i) {
    if (std::strcmp(name, kMonths[i]) == 0) return i + 1;
  }
  return 0;
}

std::optional<int64_t> ToEpoch(int year, const char* month, int day, int h, int m, int s) {
  const int mon = MonthIndex(month);
  if (mon == 0 || day < 1 || day > 31 || h < 0 || h > 23 || m < 0 || m > 59 || s < 0 || s > 60 ||
      year < 1900 || year > 9999) {
    return std::nullopt;
  }
  return DaysFromCivil(year, mon, day) * 86400 + h * 3600 + m * 60 + s;
}

}  // namespace

std::string_view OutcomeName(FetchOutcome outcome) {
  switch (outcome) {
    case FetchOutcome::kOk:
      return "ok";
    case FetchOutcome::kTruncated:
      return "truncated";
    case FetchOutcome::kTimeout:
      return "timeout";
    case FetchOutcome::kConnectError:
      return "connect_error";
    case FetchOutcome::kDnsError:
      return "dns_error";
    case FetchOutcome::kTlsError:
      return "tls_error";
    case FetchOutcome::kProtocolError:
      return "protocol_error";
    case FetchOutcome::kTooManyRedirects:
      return "too_many_redirects";
    case FetchOutcome::kAborted:
      return "aborted";
    case FetchOutcome::kOtherError:
      return "other_error";
  }
  return "other_error";
}

std::vector<std::pair<std::string, std::string>> ParseResponseHeaders(std::string_view head) {
  std::vector<std::pair<std::string, std::string>> out;
  bool first = true;
  while (!head.empty()) {
    const size_t eol = head.find('\n');
    std::string_view line = head.substr(0, eol);
    head = eol == std::string_view::npos ? std::string_view() : head.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (first) {  // status line
      first = false;
      continue;
    }
    if (line.empty()) break;                            // end of the head
    if (line.front() == ' ' || line.front() == '\t') {  // obs-fold: continues the last value
      if (!out.empty()) {
        std::string_view more = TrimHttpOwsAndCr(line);
        if (!more.empty()) {
          if (!out.back().second.empty()) out.back().second += ' ';
          out.back().second.append(more);
        }
      }
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    out.emplace_back(std::string(TrimHttpOwsAndCr(line.substr(0, colon))),
                     std::string(TrimHttpOwsAndCr(line.substr(colon + 1))));
  }
  return out;
}

std::optional<int64_t> ParseHttpDate(std::string_view date) {
  date = TrimHttpOwsAndCr(date);
  if (date.empty() || date.size() > 64) return std::nullopt;
  const std::string s(date);
  char wkday[16] = {0}, month[4] = {0}, gmt[4] = {0};
  int day = 0, year = 0, h = 0, m = 0, sec = 0, used = 0;
  // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
  if (std::sscanf(s.c_str(), "%3[A-Za-z], %2d %3[A-Za-z] %4d %2d:%2d:%2d %3[A-Z]%n", wkday, &day,
                  month, &year, &h, &m, &sec, gmt, &used) == 8 &&
      static_cast<size_t>(used) == s.size() && std::strcmp(gmt, "GMT") == 0) {
    return ToEpoch(year, month, day, h, m, sec);
  }
  // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT" (two-digit year: < 70 means 20xx).
  used = 0;
  if (std::sscanf(s.c_str(), "%15[A-Za-z], %2d-%3[A-Za-z]-%2d %2d:%2d:%2d %3[A-Z]%n", wkday, &day,
                  month, &year, &h, &m, &sec, gmt, &used) == 8 &&
      static_cast<size_t>(used) == s.size() && std::strcmp(gmt, "GMT") == 0) {
    return ToEpoch(year < 70 ? 2000 + year : 1900 + year, month, day, h, m, sec);
  }
  // asctime: "Sun Nov  6 08:49:37 1994"
  used = 0;
  if (std::sscanf(s.c_str(), "%3[A-Za-z] %3[A-Za-z] %2d %2d:%2d:%2d %4d%n", wkday, month, &day, &h,
                  &m, &sec, &year, &used) == 7 &&
      static_cast<size_t>(used) == s.size()) {
    return ToEpoch(year, month, day, h, m, sec);
  }
  return std::nullopt;
}

std::optional<std::string_view> FetchResult::Header(std::string_view name) const {
  for (auto it = headers.rbegin(); it != headers.rend(); ++it) {
    if (EqualsIgnoreAsciiCase(it->first, name)) return std::string_view(it->second);
  }
  return std::nullopt;
}

std::optional<std::chrono::seconds> FetchResult::RetryAfter(int64_t now_wall_us) const {
  const std::optional<std::string_view> raw = Header("Retry-After");
  if (!raw) return std::nullopt;
  const std::string_view v = TrimHttpOwsAndCr(*raw);
  if (v.empty()) return std::nullopt;
  if (v.find_first_not_of("0123456789") == std::string_view::npos) {
    int64_t secs = 0;
    for (char c : v) {
      secs = secs * 10 + (c - '0');
      if (secs > kMaxRetryAfterSeconds) {
        secs = kMaxRetryAfterSeconds;
        break;
      }
    }
    return std::chrono::seconds(secs);
  }
  const std::optional<int64_t> when = ParseHttpDate(v);
  if (!when) return std::nullopt;
  int64_t delta = *when - now_wall_us / 1000000;
  if (delta < 0) delta = 0;
  if (delta > kMaxRetryAfterSeconds) delta = kMaxRetryAfterSeconds;
  return std::chrono::seconds(delta);
}

std::chrono::microseconds FetchResult::SinceLastByte(int64_t now_wall_us) const {
  if (last_byte_wall_us <= 0) return std::chrono::microseconds(0);
  const int64_t ago = std::clamp<int64_t>(now_wall_us - last_byte_wall_us, 0, total_time.count());
  return std::chrono::microseconds(ago);
}

std::string_view FetchResult::ContentType() const {
  return Header("Content-Type").value_or(std::string_view());
}

std::string_view FetchResult::ContentEncoding() const {
  return Header("Content-Encoding").value_or(std::string_view());
}

}  // namespace harvest::fetch
