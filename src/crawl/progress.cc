// The live progress line, stats publication, the Crawler facade and the final summary.
#include <unistd.h>

#include <cstdio>
#include <sstream>

#include "crawl/crawler_impl.h"

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

void Crawler::Impl::Progress(bool final_line) {
  auto now = clock_->Now();
  if (!final_line && now - last_progress_ < std::chrono::seconds(1)) return;
  stats_.responses_stored = sink_->responses();
  stats_.revisits_stored = sink_->revisits();
  stats_.near_duplicates = sink_->near_duplicates();
  stats_.not_modified = sink_->not_modified();
  stats_.changed = sink_->changed();
  stats_.unchanged = sink_->unchanged();
  stats_.scheduled = db_->scheduled();
  if (std::optional<int64_t> due = db_->NextDue()) {
    stats_.next_due_in_s = std::max<int64_t>(0, (*due - WallNow()) / 1'000'000);
  } else {
    stats_.next_due_in_s = -1;
  }
  stats_.warc_bytes = sink_->bytes_written();
  stats_.outcomes = outcomes_.count();
  stats_.output_paused = sink_->paused();
  stats_.elapsed_s = std::chrono::duration<double>(now - started_).count();
  const HostTable::Stats& hs = hosts_->stats();
  stats_.hosts_evicted = hs.evicted;
  stats_.hosts_reloaded = hs.reloaded;
  stats_.hosts_resident = hs.resident;
  stats_.hosts_resident_peak = hs.resident_peak;
  {
    MutexLock lock(&stats_mu_);
    published_ = stats_;
  }
  double interval = std::chrono::duration<double>(now - last_progress_).count();
  double rate = interval > 0 ? (stats_.pages - last_progress_pages_) / interval : 0;
  last_progress_ = now;
  last_progress_pages_ = stats_.pages;
  if (!opts_.progress || isatty(STDERR_FILENO) == 0) return;
  if (final_line) {
    if (progress_shown_) std::fputs("\n", stderr);
    return;
  }
  std::fprintf(stderr,
               "\r\033[K[%6.1fs] pages %llu (%.0f/s)  queued %zu  hosts %zu (ready %zu)  "
               "in flight %zu  errors %llu  stored %s%s",
               stats_.elapsed_s, static_cast<unsigned long long>(stats_.pages), rate,
               frontier_->queued(), frontier_->hosts(), frontier_->hosts_ready(),
               fetcher_->in_flight(),
               static_cast<unsigned long long>(stats_.fetch_errors + stats_.http_5xx),
               HumanBytes(stats_.warc_bytes).c_str(),
               stats_.output_paused ? "  PAUSED (output error, see log)" : "");
  std::fflush(stderr);
  progress_shown_ = true;
}

Crawler::Crawler(CrawlOptions options, Clock* clock)
    : impl_(std::make_unique<Impl>(std::move(options), clock)) {}
Crawler::~Crawler() = default;
Status Crawler::Run(const std::vector<std::string>& seeds) { return impl_->Run(seeds); }
void Crawler::RequestStop() { impl_->RequestStop(); }
void Crawler::KillForTesting() { impl_->KillForTesting(); }
CrawlStats Crawler::stats() const { return impl_->stats(); }

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
    out << "  resumed: " << u(s.resumed_queued) << " URLs were queued or in flight, "
        << u(s.resumed_seen) << " seen (Bloom filter restored in " << s.bloom_restore_s
        << " s); WARC recovery cut " << u(s.recovered_bytes_cut) << " bytes, indexed "
        << u(s.recovered_cdxj_lines) << " records\n";
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
