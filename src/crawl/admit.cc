// Admission of seeds and discovered links on the I/O thread (docs/architecture.md §2 [admit]).
#include <spdlog/spdlog.h>

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
  // A host first met in this run of a resumed crawl: restore its delay and next-allowed time.
  if (resumed_) EnsureHost(item.host);
  frontier_->Add(std::move(item));
}

}  // namespace harvest::crawl
