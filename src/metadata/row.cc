// BuildRow and its helpers (metadata.h).
#include <ctime>

#include "base/host_key.h"
#include "metadata/metadata.h"
#include "metadata/row_parse.h"
#include "store/store.h"
#include "url/url.h"

namespace harvest::metadata {
namespace internal {

int CountOutlinks(std::string_view block) {
  int n = 0;
  size_t pos = 0;
  while (pos < block.size()) {
    size_t end = block.find('\n', pos);
    if (end == std::string_view::npos) end = block.size();
    if (block.compare(pos, 8, "outlink:") == 0) ++n;
    pos = end + 1;
  }
  return n;
}

std::optional<int64_t> ParseWarcDate(std::string_view d) {
  // Fixed positions of "YYYY-MM-DDThh:mm:ss", then an optional fraction, then "Z".
  if (d.size() < 20 || d[4] != '-' || d[7] != '-' || d[10] != 'T' || d[13] != ':' || d[16] != ':' ||
      d.back() != 'Z') {
    return std::nullopt;
  }
  auto num = [&](size_t pos, size_t len) -> int {
    int v = 0;
    for (size_t i = pos; i < pos + len; ++i) {
      if (d[i] < '0' || d[i] > '9') return -1;
      v = v * 10 + (d[i] - '0');
    }
    return v;
  };
  const int year = num(0, 4), mon = num(5, 2), day = num(8, 2);
  const int hour = num(11, 2), min = num(14, 2), sec = num(17, 2);
  if (year < 1970 || mon < 1 || mon > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 ||
      min < 0 || min > 59 || sec < 0 || sec > 60) {
    return std::nullopt;
  }
  int64_t micros = 0;
  std::string_view frac = d.substr(19, d.size() - 20);
  if (!frac.empty()) {
    if (frac[0] != '.' || frac.size() < 2 || frac.size() > 10) return std::nullopt;
    int64_t scale = 100'000;
    for (size_t i = 1; i < frac.size(); ++i) {
      if (frac[i] < '0' || frac[i] > '9') return std::nullopt;
      micros += (frac[i] - '0') * scale;
      scale /= 10;
    }
  }
  struct tm tm {};
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  const time_t t = timegm(&tm);
  if (t == static_cast<time_t>(-1)) return std::nullopt;
  return static_cast<int64_t>(t) * 1'000'000 + micros;
}

}  // namespace internal

std::string HostOf(std::string_view url) { return std::string(AuthorityOfUrl(url)); }

std::string TimestampLiteral(int64_t unix_us) {
  int64_t secs = unix_us / 1'000'000;
  int64_t micros = unix_us % 1'000'000;
  if (micros < 0) {
    micros += 1'000'000;
    --secs;
  }
  const time_t t = static_cast<time_t>(secs);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[64];
  snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%06lld+00", tm.tm_year + 1900,
           tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
           static_cast<long long>(micros));
  return buf;
}

std::string AttemptKey(std::string_view source, uint64_t page_id) {
  return std::string(source) + "#" + std::to_string(page_id);
}

PageRow BuildRow(const state::PageEntry& page, const std::filesystem::path& out_dir,
                 std::string_view worker, std::string_view source) {
  PageRow row;
  row.page_id = page.id;
  row.url = page.url;
  row.host = page.host.empty() ? HostOf(page.url) : page.host;
  row.domain = url::RegistrableDomain(NameOfAuthority(row.host));  // "[::1]" keeps its brackets
  row.status = page.status;
  row.fetched_at_us = page.fetched_at_us;
  row.mime = page.mime;
  row.title = page.title;
  row.digest = page.digest;
  row.worker = std::string(worker);
  // The crawler's outcome and reason (page record format 2). A record without one (read
  // through an older admin API) gets the outcome its WARC record implies, as format 1 did.
  row.outcome = page.outcome;
  row.reason = page.reason;
  if (page.attempt()) {
    // No WARC record to name or read: the key is the record's place in its crawl state.
    row.fetch_key = AttemptKey(source, page.id);
    row.outlinks = 0;  // an attempt's links are never extracted
    if (row.outcome.empty()) row.outcome = "retried";
    return row;
  }
  row.warc_file = page.warc_file;
  row.warc_offset = page.warc_offset;
  row.warc_length = page.warc_length;
  row.fetch_key = page.warc_file + ":" + std::to_string(page.warc_offset);
  const bool derive = row.outcome.empty();
  if (derive)
    row.outcome = page.revisit ? (page.status == 304 ? "not-modified" : "revisit") : "fetched";

  const std::filesystem::path file = out_dir / page.warc_file;
  Result<store::WarcRecord> main = store::ReadRecordAt(file, page.warc_offset);
  if (!main.ok()) return row;
  // The record's date has microseconds; a page record read through the admin API only ms.
  if (std::optional<int64_t> date = internal::ParseWarcDate(main->date)) row.fetched_at_us = *date;
  // Without the crawler's reason, what the record says: the URI a revisit repeats, a
  // truncation.
  if (main->type == "revisit") {
    if (derive) row.outcome = page.status == 304 ? "not-modified" : "revisit";
    if (row.reason.empty()) row.reason = main->header("WARC-Refers-To-Target-URI");
  } else {
    if (derive) row.outcome = "fetched";
    std::string truncated = main->header("WARC-Truncated");
    if (row.reason.empty() && !truncated.empty()) row.reason = "truncated: " + truncated;
  }
  // The fetch's metadata record, when it has one, follows its main record in the same write.
  row.outlinks = 0;
  Result<store::WarcRecord> meta = store::ReadRecordAt(file, main->offset + main->length);
  if (meta.ok() && meta->type == "metadata" &&
      meta->header("WARC-Concurrent-To") == main->header("WARC-Record-ID")) {
    row.outlinks = internal::CountOutlinks(meta->block);
  }
  return row;
}

}  // namespace harvest::metadata
