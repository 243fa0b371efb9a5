// Admission of seeds and discovered links on the I/O thread (docs/architecture.md §2 [admit]).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "crawl/crawler_impl.h"

namespace harvest::crawl {

void Crawler::Impl::AdmitSeeds(const std::vector<std::string>& seeds) {
  stats_.seeds = seeds.size();
  for (const std::string& seed : seeds) {
    std::optional<url::Url> u = url::ParseCanonical(seed, nullptr, opts_.canon);
    if (!u) {
      spdlog::warn("seed is not a valid URL, skipped: {}", seed);
      continue;
    }
    FoundLink link = MakeFoundLink(*u);
    admission_->AddSeed(link.host, link.registrable_domain);  // for --scope host|site
    Admit(link, nullptr);
  }
}

// source == nullptr: a seed (depth 0).
void Crawler::Impl::Admit(const FoundLink& link, const frontier::UrlItem* source) {
  int depth = 0;
  int hops = 0;
  if (source != nullptr) {
    depth = link.redirect ? source->depth : source->depth + 1;
    if (link.sitemap || source->sitemap) depth = source->depth;
    if (link.redirect) {
      hops = source->hops + 1;
      if (hops > opts_.max_redirect_hops) {
        ++stats_.rejected;
        Record(link.url, "redirect-limit", 0,
               "more than " + std::to_string(opts_.max_redirect_hops) + " redirect hops");
        return;
      }
    }
  }
  frontier::AdmitCandidate c;
  c.canonical_url = link.url;
  c.host = link.host;
  c.path = link.path;
  c.query = link.query;
  c.registrable_domain = link.registrable_domain;
  c.fp = link.fp;
  c.depth = depth;
  frontier::AdmitVerdict v = admission_->Admit(c);
  if (v == frontier::AdmitVerdict::kSeen && (link.lastmod_us > 0 || link.changefreq_s > 0)) {
    ApplySitemapHint(link);
  }
  if (v != frontier::AdmitVerdict::kAccept) {
    ++stats_.rejected;
    switch (v) {
      case frontier::AdmitVerdict::kSeen:
      case frontier::AdmitVerdict::kOutOfScope:
      case frontier::AdmitVerdict::kTooDeep:
        break;  // counted by admission; too common to log one line each
      default:
        Record(link.url, frontier::VerdictName(v), 0,
               source != nullptr ? "linked from " + source->url : "seed");
    }
    return;
  }
  ++stats_.admitted;
  frontier::UrlItem item;
  item.url = link.url;
  item.host = link.origin;
  item.fp = link.fp;
  item.depth = depth;
  item.priority = frontier::PriorityFor(depth, source == nullptr, link.sitemap, 0);
  item.via = source != nullptr ? source->url : "";
  item.hops = hops;
  item.sitemap = link.sitemap;
  // A host first met in this run of a resumed crawl, or evicted from RAM and met again:
  // restore its delay, next-allowed time, robots rules and breaker (and mark it active).
  EnsureHost(item.host);
  frontier_->Add(std::move(item));
}

// A sitemap lists a URL fetched before, with <lastmod> or <changefreq>: hints that may
// bring its recrawl forward, never within its refresh window (docs/freshness.md). A
// <lastmod> after the last fetch makes it due as soon as the window allows; a <changefreq>
// makes it due that long after the last fetch (bounded by the window and max_interval).
void Crawler::Impl::ApplySitemapHint(const FoundLink& link) {
  std::optional<state::SeenRecord> seen = db_->GetSeen(link.fp);
  if (!seen || seen->state != state::SeenRecord::State::kDone || seen->next_due_us <= 0) return;
  const SchedulePolicy policy = PolicyFor(opts_.freshness, link.origin);
  // The schedule counts from the response's arrival: next due minus the interval.
  const int64_t base =
      seen->interval_ms > 0 ? seen->next_due_us - seen->interval_ms * 1000 : seen->fetch_time_us;
  const int64_t earliest = base + policy.window_ms * 1000;
  int64_t due = seen->next_due_us;
  if (link.changefreq_s > 0) {
    const int64_t hinted = std::clamp(link.changefreq_s * 1000, policy.window_ms, policy.max_ms);
    due = std::min(due, base + hinted * 1000);
  }
  if (link.lastmod_us > seen->fetch_time_us) due = std::min(due, std::max(earliest, WallNow()));
  due = std::max(due, earliest);
  if (due < seen->next_due_us && db_->Reschedule(link.fp, *seen, due)) ++stats_.sitemap_hints;
}

}  // namespace harvest::crawl
