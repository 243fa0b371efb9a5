// BuildRow and its helpers (metadata.h).
#include <ctime>

#include "metadata/metadata.h"
#include "store/store.h"
#include "url/url.h"

namespace harvest::metadata {
namespace {

// Counts the `outlink:` fields of a metadata record's block (application/warc-fields).
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

// The host name of host[:port] (an IPv6 literal keeps its brackets).
std::string_view HostName(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    size_t close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  size_t colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

}  // namespace

std::string HostOf(std::string_view url) {
  size_t start = url.find("://");
  if (start == std::string_view::npos) return "";
  start += 3;
  size_t end = url.find_first_of("/?#", start);
  std::string_view authority = url.substr(start, end == std::string_view::npos ? end : end - start);
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos) authority.remove_prefix(at + 1);
  return std::string(authority);
}

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

PageRow BuildRow(const state::PageEntry& page, const std::filesystem::path& out_dir,
                 std::string_view worker) {
  PageRow row;
  row.page_id = page.id;
  row.url = page.url;
  row.host = page.host.empty() ? HostOf(page.url) : page.host;
  row.domain = url::RegistrableDomain(HostName(row.host));
  row.status = page.status;
  row.fetched_at_us = page.fetched_at_us;
  row.mime = page.mime;
  row.title = page.title;
  row.digest = page.digest;
  row.warc_file = page.warc_file;
  row.warc_offset = page.warc_offset;
  row.warc_length = page.warc_length;
  row.worker = std::string(worker);
  row.fetch_key = page.warc_file + ":" + std::to_string(page.warc_offset);
  row.outcome = page.revisit ? (page.status == 304 ? "not-modified" : "revisit") : "fetched";

  const std::filesystem::path file = out_dir / page.warc_file;
  Result<store::WarcRecord> main = store::ReadRecordAt(file, page.warc_offset);
  if (!main.ok()) return row;
  if (main->type == "revisit") {
    row.outcome = page.status == 304 ? "not-modified" : "revisit";
    row.reason = main->header("WARC-Refers-To-Target-URI");
  } else {
    row.outcome = "fetched";
    std::string truncated = main->header("WARC-Truncated");
    if (!truncated.empty()) row.reason = "truncated: " + truncated;
  }
  // The fetch's metadata record, when it has one, follows its main record in the same write.
  row.outlinks = 0;
  Result<store::WarcRecord> meta = store::ReadRecordAt(file, main->offset + main->length);
  if (meta.ok() && meta->type == "metadata" &&
      meta->header("WARC-Concurrent-To") == main->header("WARC-Record-ID")) {
    row.outlinks = CountOutlinks(meta->block);
  }
  return row;
}

}  // namespace harvest::metadata
