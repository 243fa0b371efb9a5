// Sitemaps (sitemaps.org protocol 0.9): W3C datetimes and the whole-document ParseSitemap;
// the parser itself is the streaming SitemapReader (sitemap_reader.cc).
#include <optional>
#include <string>

#include "extract/extract.h"

namespace harvest::extract {

std::optional<int64_t> ParseW3cDatetime(std::string_view t) {
  auto digits = [&t](size_t pos, size_t n, int* out) {
    if (pos + n > t.size()) return false;
    int v = 0;
    for (size_t i = pos; i < pos + n; ++i) {
      if (t[i] < '0' || t[i] > '9') return false;
      v = v * 10 + (t[i] - '0');
    }
    *out = v;
    return true;
  };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!digits(0, 4, &year) || t.size() < 10 || t[4] != '-' || !digits(5, 2, &month) ||
      t[7] != '-' || !digits(8, 2, &day)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31) return std::nullopt;
  size_t i = 10;
  int64_t micros = 0;
  int64_t offset_s = 0;
  if (i < t.size()) {
    if (t[i] != 'T' || !digits(i + 1, 2, &hour) || i + 3 >= t.size() || t[i + 3] != ':' ||
        !digits(i + 4, 2, &minute)) {
      return std::nullopt;
    }
    i += 6;
    if (i < t.size() && t[i] == ':') {
      if (!digits(i + 1, 2, &second)) return std::nullopt;
      i += 3;
      if (i < t.size() && t[i] == '.') {
        size_t start = ++i;
        int64_t scale = 100000;
        while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
          if (scale > 0) micros += (t[i] - '0') * scale;
          scale /= 10;
          ++i;
        }
        if (i == start) return std::nullopt;
      }
    }
    if (hour > 23 || minute > 59 || second > 60) return std::nullopt;
    // A time needs a zone (W3C datetime).
    if (i < t.size() && t[i] == 'Z') {
      ++i;
    } else if (i < t.size() && (t[i] == '+' || t[i] == '-')) {
      int oh = 0, om = 0;
      if (!digits(i + 1, 2, &oh) || i + 3 >= t.size() || t[i + 3] != ':' ||
          !digits(i + 4, 2, &om) || oh > 23 || om > 59) {
        return std::nullopt;
      }
      offset_s = (t[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
      i += 6;
    } else {
      return std::nullopt;
    }
    if (i != t.size()) return std::nullopt;
  }
  // Days since the epoch (Howard Hinnant's days_from_civil).
  const int y = year - (month <= 2 ? 1 : 0);
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = static_cast<int64_t>(era) * 146097 + doe - 719468;
  const int64_t secs = days * 86400 + hour * 3600 + minute * 60 + second - offset_s;
  return secs * 1'000'000 + micros;
}

SitemapResult ParseSitemap(std::string_view body, bool maybe_gzip) {
  SitemapResult result;
  SitemapReader reader(
      [&result](std::string_view url, const SitemapHint& hint) {
        result.urls.emplace_back(url);
        result.hints.push_back(hint);
      },
      maybe_gzip);
  reader.Feed(body);
  reader.Finish();
  result.is_index = reader.is_index();
  result.truncated = reader.truncated();
  result.skipped = reader.skipped();
  result.error = reader.error();
  return result;
}

}  // namespace harvest::extract
