#include "crawl/run_report.h"

#include <unistd.h>

#include <cstdio>
#include <sstream>

namespace harvest::crawl {
namespace {

std::string HumanBytes(uint64_t bytes) {
  char buf[32];
  if (bytes >= (1ull << 30)) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  } else if (bytes >= (1ull << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1ull << 20));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  }
  return buf;
}

}  // namespace

void RunReport::Start(Clock::TimePoint start) { started_ = last_ = start; }

bool RunReport::Due(bool final_line) const {
  return final_line || clock_->Now() - last_ >= std::chrono::seconds(1);
}

void RunReport::Publish(const CrawlStats& stats, const Line& line, bool final_line) {
  {
    MutexLock lock(&mu_);
    published_ = stats;
  }
  const auto now = clock_->Now();
  double interval = std::chrono::duration<double>(now - last_).count();
  double rate = interval > 0 ? (stats.pages - last_pages_) / interval : 0;
  last_ = now;
  last_pages_ = stats.pages;
  if (!progress_line_ || isatty(STDERR_FILENO) == 0) return;
  if (final_line) {
    if (shown_) std::fputs("\n", stderr);
    return;
  }
  std::fprintf(stderr,
               "\r\033[K[%6.1fs] pages %llu (%.0f/s)  queued %zu  hosts %zu (ready %zu)  "
               "in flight %zu  errors %llu  stored %s%s",
               stats.elapsed_s, static_cast<unsigned long long>(stats.pages), rate, line.queued,
               line.hosts, line.hosts_ready, line.in_flight,
               static_cast<unsigned long long>(stats.fetch_errors + stats.http_5xx),
               HumanBytes(stats.warc_bytes).c_str(),
               stats.output_paused ? "  PAUSED (output error, see log)" : "");
  std::fflush(stderr);
  shown_ = true;
}

CrawlStats RunReport::published() const {
  MutexLock lock(&mu_);
  return published_;
}

std::string FormatSummary(const CrawlStats& s) {
  std::ostringstream out;
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  const char* state = s.complete             ? "complete"
                      : s.page_limit_reached ? "stopped at the page limit"
                      : s.stopped_after      ? "stopped after --stop-after"
                      : s.interrupted        ? "interrupted"
                                             : "stopped";
  out << "crawl " << state << " in " << s.elapsed_s << " s\n";
  if (s.resumed) {
    out << "  resumed: " << u(s.resumed_queued) << " URLs were queued or in flight (over "
        << u(s.resumed_hosts) << " hosts), " << u(s.resumed_seen)
        << " seen (Bloom filter restored in " << s.bloom_restore_s << " s); WARC recovery cut "
        << u(s.recovered_bytes_cut) << " bytes, indexed " << u(s.recovered_cdxj_lines)
        << " records\n";
  }
  out << "  seeds " << u(s.seeds) << ", admitted " << u(s.admitted) << ", links refused "
      << u(s.rejected) << "\n";
  out << "  requests " << u(s.fetches) << " (robots.txt " << u(s.robots_fetches) << ", pages "
      << u(s.pages) << ")";
  if (s.elapsed_s > 0) out << ", " << static_cast<uint64_t>(s.pages / s.elapsed_s) << " pages/s";
  out << "\n";
  out << "  status 2xx " << u(s.http_2xx) << ", 3xx " << u(s.http_3xx) << ", 4xx " << u(s.http_4xx)
      << ", 5xx " << u(s.http_5xx) << "; errors " << u(s.fetch_errors) << ", retries "
      << u(s.retries) << ", gave up " << u(s.gave_up) << ", truncated " << u(s.truncated) << "\n";
  out << "  robots.txt disallowed " << u(s.disallowed) << "\n";
  out << "  stored " << u(s.responses_stored) << " responses, " << u(s.revisits_stored)
      << " revisits (duplicate payloads), " << u(s.near_duplicates) << " near-duplicates\n";
  if (s.recrawls > 0 || s.scheduled > 0) {
    out << "  recrawls " << u(s.recrawls) << " (conditional " << u(s.conditional) << ", 304 "
        << u(s.not_modified) << ", changed " << u(s.changed) << ", unchanged " << u(s.unchanged)
        << "); scheduled " << u(s.scheduled);
    if (s.next_due_in_s >= 0) out << ", next due in " << s.next_due_in_s << " s";
    out << "\n";
  }
  out << "  downloaded " << HumanBytes(s.bytes_downloaded) << ", WARC " << HumanBytes(s.warc_bytes)
      << ", outcomes " << u(s.outcomes) << "\n";
  for (const auto& [reason, given_up] : s.hosts_given_up) {
    out << "  gave up " << u(given_up.hosts) << (given_up.hosts == 1 ? " host" : " hosts") << ": "
        << reason << " (e.g. " << given_up.example << ")\n";
  }
  if (s.still_queued > 0) {
    out << "  " << u(s.still_queued)
        << " URLs still queued: run the same command again to resume the crawl\n";
  }
  return out.str();
}

}  // namespace harvest::crawl
