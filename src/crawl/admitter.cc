#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>

#include "base/ascii.h"
#include "base/host_key.h"
#include "crawl/admitter.h"
#include "crawl/schedule.h"

namespace harvest::crawl {

HostWeights::HostWeights(std::vector<HostWeightRule> rules) : rules_(std::move(rules)) {}

double HostWeights::Weight(std::string_view host) const {
  if (!overrides_.empty()) {
    const std::string name = ToLowerAscii(NameOfHostKey(host));
    if (auto it = overrides_.find(name); it != overrides_.end()) return it->second;
  }
  for (const HostWeightRule& r : rules_) {
    if (HostPatternMatches(r.pattern, host)) return r.weight;
  }
  return 1.0;
}

void HostWeights::SetOverride(std::string_view host, std::optional<double> weight) {
  std::string name = ToLowerAscii(NameOfHostKey(host));
  if (weight && *weight > 0) {
    overrides_[std::move(name)] = *weight;
  } else {
    overrides_.erase(name);
  }
}

Admitter::Admitter(const CrawlOptions& opts, Clock* clock, state::StateDb* db,
                   frontier::Frontier* frontier, HostTable* hosts, OutcomeLog* outcomes)
    : opts_(opts),
      clock_(clock),
      db_(db),
      frontier_(frontier),
      hosts_(hosts),
      outcomes_(outcomes),
      resumed_(!db->created()),
      seen_(opts.seen, db->seen()),
      counter_store_(db, resumed_),
      admission_(opts.scope, opts.traps, &seen_, clock),
      inlinks_(opts.priority.inlink_sketch_bytes > 0
                   ? std::make_unique<dedup::CountMinSketch>(opts.priority.inlink_sketch_bytes)
                   : nullptr),
      host_weights_(opts.priority.hosts),
      admitted_depth_(std::bit_ceil(std::max<size_t>(opts.seen.recent_cache, 1))) {
  admission_.SetCounterStore(&counter_store_, opts.host_cache);
  // A shared crawl's worker admits links to hosts other workers fetch: its counters do not
  // see their fetches, so it defers nothing (the daily quota holds where the host is
  // fetched, MayFetch). docs/distributed.md.
  if (opts.shared != nullptr) admission_.SetDeferOverBudget(false);
  // A resumed crawl's backlogs: looked at in the first loop turn.
  for (const auto& [name, n] : db->DeferredHosts()) {
    admission_.RestoreBacklog(name, n);
    release_check_.insert(name);
  }
}

void Admitter::Counters::AddTo(CrawlStats* stats) const {
  stats->seeds += seeds;
  stats->admitted += admitted;
  stats->rejected += rejected;
  stats->depth_lowered += depth_lowered;
  stats->sitemap_hints += sitemap_hints;
  stats->unparked += unparked;
  stats->deferred += deferred;
  stats->released += released;
  stats->backlog_refused += backlog_refused;
  stats->hosts_deferred += hosts_deferred;
}

void Admitter::NoteFetched(std::string_view host_name) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  admission_.NoteFetched(host_name);
  if (opts_.shared != nullptr && opts_.traps.host_daily_quota > 0) {
    // The quota is counted per host across workers: the counters go with the host's
    // partition to whichever worker fetches it next (HandOverCounters), once per loop turn.
    shared_counters_.emplace(host_name);
  }
  if (!admission_.backlogs().empty() && admission_.backlogs().contains(host_name)) {
    release_check_.emplace(host_name);
  }
}

void Admitter::HandOverCounters(std::string_view host_name, const frontier::HostCounters& c) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  admission_.HandOverCounters(host_name, c);
}

bool Admitter::MayFetch(std::string_view host_name) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return admission_.MayFetch(host_name);
}

int64_t Admitter::NextDayMicros() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return admission_.NextDayMicros();
}

uint64_t Admitter::deferred() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return db_->deferred();
}

size_t Admitter::hosts_throttled() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return admission_.backlogs().size();
}

size_t Admitter::hosts_over_quota() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return admission_.hosts_over_quota();
}

Admitter::HostBudget Admitter::BudgetOf(std::string_view host_name) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  const std::string name = ToLowerAscii(host_name);
  HostBudget b;
  b.counters = admission_.CountersOf(name);
  b.budget = admission_.BudgetOf(name);
  if (auto it = admission_.backlogs().find(name); it != admission_.backlogs().end()) {
    b.backlog = it->second;
  }
  return b;
}

void Admitter::Defer(frontier::UrlItem item, frontier::AdmitVerdict why) {
  const std::string name(NameOfHostKey(item.host));
  auto [it, first] = backlog_origin_.try_emplace(name, item.host);
  if (first) {
    ++counters_.hosts_deferred;
    spdlog::info(
        "host {} is over its {} budget: its new URLs are deferred on disk and "
        "admitted as its fetches catch up{}",
        name,
        why == frontier::AdmitVerdict::kDeferredQuota ? "daily fetch quota" : "discovery ratio",
        why == frontier::AdmitVerdict::kDeferredQuota ? " (the next UTC day)" : "");
  } else if (it->second != item.host) {
    it->second = item.host;
  }
  ++counters_.deferred;
  db_->Defer(name, item);
}

std::string Admitter::BacklogFullDetail(std::string_view name) {
  const HostBudget b = BudgetOf(name);
  return "the backlog of " + std::string(name) + " is full (" + std::to_string(b.backlog) +
         " URLs deferred, limit traps.max_backlog " + std::to_string(opts_.traps.max_backlog) +
         "; budget " + frontier::BudgetName(b.budget) + ": " + std::to_string(b.counters.admitted) +
         " admitted, " + std::to_string(b.counters.fetched) + " fetched, " +
         std::to_string(b.counters.fetched_today) + " today)";
}

void Admitter::ReleaseDeferred() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (admission_.backlogs().empty()) {
    release_check_.clear();
    return;
  }
  const int64_t day = clock_->WallMicros() / (int64_t{86'400} * 1'000'000);
  if (day != release_day_) {
    // A new day: every daily quota starts again.
    release_day_ = day;
    for (const auto& [name, n] : admission_.backlogs()) release_check_.insert(name);
  }
  if (release_check_.empty()) return;
  // A batch per host and turn: a big backlog comes in as its host's fetches go on.
  constexpr uint64_t kBatch = 1000;
  std::vector<std::string> again;
  for (const std::string& name : release_check_) {
    auto origin = backlog_origin_.find(name);
    // After a restart the origin is not known until a URL is deferred again: an unknown
    // host counts as idle (it has a batch at most).
    const bool idle = origin == backlog_origin_.end() || frontier_->HostIdle(origin->second);
    const uint64_t n = std::min(admission_.Releasable(name, idle), kBatch);
    if (n == 0) continue;
    const size_t taken =
        db_->TakeDeferred(name, n, [this](frontier::UrlItem item) { AddOrPark(std::move(item)); });
    counters_.released += taken;
    admission_.NoteReleased(name, taken);
    if (taken < n) {
      admission_.ClearBacklog(name);  // the disk had fewer than counted
    } else if (n == kBatch) {
      again.push_back(name);  // more may be allowed
    }
  }
  release_check_.clear();
  for (std::string& name : again) release_check_.insert(std::move(name));
  for (auto it = backlog_origin_.begin(); it != backlog_origin_.end();) {
    it = admission_.backlogs().contains(it->first) ? std::next(it) : backlog_origin_.erase(it);
  }
}

void Admitter::PutSharedCounters() {
  for (const std::string& name : shared_counters_) {
    opts_.shared->PutHost(name, {.counters = admission_.CountersOf(name)});
  }
  shared_counters_.clear();
}

void Admitter::SaveChanged() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  PutSharedCounters();
  admission_.SaveChanged();
}

void Admitter::TrimResident() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  PutSharedCounters();
  admission_.TrimResident();
}

void Admitter::PreloadSeen(uint64_t fp) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  seen_.Preload(fp);
}

uint64_t Admitter::seen_refusals() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return admission_.count(frontier::AdmitVerdict::kSeen);
}

HostWeights& Admitter::weights() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return host_weights_;
}

const Admitter::Counters& Admitter::counters() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return counters_;
}

void Admitter::Record(std::string_view url, std::string_view outcome, std::string_view detail) {
  outcomes_->Record(url, outcome, 0, detail, clock_->WallMicros());
}

void Admitter::CountInlinks(const std::vector<PageLinks>& batch) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (!inlinks_) return;
  for (const PageLinks& page : batch) {
    // A sitemap lists URLs; it does not link to them. A redirect is not a link either.
    if (page.source.sitemap) continue;
    for (const FoundLink& link : page.links) {
      if (!link.redirect && !link.sitemap) inlinks_->Add(link.fp, link.times);
    }
  }
}

int Admitter::PriorityOf(const FoundLink& link, int depth, bool seed) const {
  frontier::PriorityInputs in;
  in.depth = depth;
  in.seed = seed;
  // A sitemap document (named by robots.txt or an index) lists many URLs: fetch it early.
  in.sitemap_priority = link.sitemap ? 1.0 : link.sitemap_priority;
  in.inlinks = inlinks_ ? inlinks_->Estimate(link.fp) : 0;
  in.host_weight = host_weights_.Weight(link.origin());
  return frontier::PriorityFor(in, opts_.frontier.priority_classes);
}

void Admitter::AdmitSeeds(const std::vector<std::string>& seeds) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  counters_.seeds += seeds.size();
  for (const std::string& seed : seeds) {
    std::optional<url::Url> u = url::ParseCanonical(seed, nullptr, opts_.canon);
    if (!u) {
      spdlog::warn("seed is not a valid URL, skipped: {}", seed);
      continue;
    }
    FoundLink link = MakeFoundLink(*u);
    admission_.AddSeed(link.host(), link.registrable_domain());  // for --scope host|site
    AdmitFrom(link, nullptr, std::nullopt);
  }
}

frontier::AdmitVerdict Admitter::AdmitSeed(const FoundLink& link, std::optional<int> priority) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  // A seed: under --scope host|site it brings its host or site in.
  admission_.AddSeed(link.host(), link.registrable_domain());
  const frontier::AdmitVerdict v = AdmitFrom(link, nullptr, priority);
  if (v == frontier::AdmitVerdict::kAccept || v == frontier::AdmitVerdict::kDeferredRatio ||
      v == frontier::AdmitVerdict::kDeferredQuota) {
    ++counters_.seeds;
  }
  return v;
}

frontier::AdmitVerdict Admitter::Admit(const FoundLink& link, const frontier::UrlItem& source) {
  return AdmitFrom(link, &source, std::nullopt);
}

// Links are followed from the shortest path known to the page (AdmitFrom notes shorter
// paths found while it waited).
void Admitter::AdmitLinks(std::vector<PageLinks>* batch) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  CountInlinks(*batch);
  for (PageLinks& page : *batch) {
    if (page.source.depth > 0 && !page.links.empty()) {
      if (std::optional<int> d = db_->NotedDepth(page.source.fp); d && *d < page.source.depth) {
        page.source.depth = *d;
        ++counters_.depth_lowered;
      }
    }
    for (const FoundLink& link : page.links) admission_.Prefetch(link.fp);
    for (const FoundLink& link : page.links) AdmitFrom(link, &page.source, std::nullopt);
  }
}

std::optional<FoundLink> Admitter::UpgradedTwin(const FoundLink& link) {
  if (!link.url.starts_with("http://")) return std::nullopt;
  const bool default_port = link.origin().size() == 7 + link.host().size();
  std::optional<std::string> https =
      hosts_->upgrades().UpgradeParsed(link.url, link.host(), default_port);
  if (!https) return std::nullopt;
  std::optional<url::Url> u = url::ParseCanonical(*https, nullptr, opts_.canon);
  if (!u) return std::nullopt;
  FoundLink twin = MakeFoundLink(*u);
  twin.redirect = link.redirect;
  twin.sitemap = link.sitemap;
  twin.lastmod_us = link.lastmod_us;
  twin.changefreq_s = link.changefreq_s;
  twin.sitemap_priority = link.sitemap_priority;
  return twin;
}

// source == nullptr: a seed (depth 0).
frontier::AdmitVerdict Admitter::AdmitFrom(const FoundLink& found, const frontier::UrlItem* source,
                                           std::optional<int> priority) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  // An http:// URL of a host known to upgrade to https (HSTS, or learnt from its redirects)
  // is admitted as its https:// twin: one URL for the seen set, no request for the http one.
  std::optional<FoundLink> twin = UpgradedTwin(found);
  const FoundLink& link = twin ? *twin : found;
  int depth = 0;
  int hops = 0;
  if (source != nullptr) {
    depth = link.redirect ? source->depth : source->depth + 1;
    if (link.sitemap || source->sitemap) depth = source->depth;
    if (link.redirect) {
      hops = source->hops + 1;
      if (hops > opts_.max_redirect_hops) {
        ++counters_.rejected;
        Record(link.url, "redirect-limit",
               "more than " + std::to_string(opts_.max_redirect_hops) + " redirect hops");
        return frontier::AdmitVerdict::kTooDeep;
      }
    }
  }
  frontier::AdmitCandidate c;
  c.canonical_url = link.url;
  c.host = link.host();
  c.path = link.path();
  c.query = link.query();
  c.registrable_domain = link.registrable_domain();
  c.fp = link.fp;
  c.depth = depth;
  frontier::AdmitVerdict v = admission_.Admit(c);
  // A hint can only bring forward a schedule that grew past one refresh window, i.e. one
  // set by a recrawl. In a fresh one-shot crawl every seen record comes from this run's first
  // fetches (next due = fetch + window, the earliest a hint may set): skip the state read.
  if (v == frontier::AdmitVerdict::kSeen && (link.lastmod_us > 0 || link.changefreq_s > 0) &&
      (resumed_ || opts_.freshness.recrawl)) {
    ApplySitemapHint(link);
  }
  // A URL admitted before, reached now by a path short enough to follow its links: the
  // shortest such path counts when the URL is fetched (AdmitLinks), so a page first found
  // through a long chain of other hosts is not cut off at the chain's depth.
  // A resumed crawl's URLs admitted before this run are not in admitted_depth_: always noted.
  uint8_t& admitted_depth = admitted_depth_[link.fp & (admitted_depth_.size() - 1)];
  if (v == frontier::AdmitVerdict::kSeen && depth < opts_.scope.max_depth &&
      (resumed_ || depth < admitted_depth || admitted_depth == 255)) {
    db_->NoteDepth(link.fp, depth);
  }
  const bool deferred =
      v == frontier::AdmitVerdict::kDeferredRatio || v == frontier::AdmitVerdict::kDeferredQuota;
  if (v == frontier::AdmitVerdict::kAccept || deferred) {
    admitted_depth = static_cast<uint8_t>(std::max<int>(admitted_depth, std::min(depth, 255)));
  }
  if (v != frontier::AdmitVerdict::kAccept && !deferred) {
    ++counters_.rejected;
    switch (v) {
      case frontier::AdmitVerdict::kSeen:
      case frontier::AdmitVerdict::kOutOfScope:
      case frontier::AdmitVerdict::kTooDeep:
        break;  // counted by admission; too common to log one line each
      case frontier::AdmitVerdict::kTrapBacklogCap:
        ++counters_.backlog_refused;
        Record(link.url, frontier::VerdictName(v), BacklogFullDetail(NameOfHostKey(link.origin())));
        break;
      default:
        Record(link.url, frontier::VerdictName(v),
               source != nullptr ? "linked from " + source->url : "seed");
    }
    return v;
  }
  if (!deferred) ++counters_.admitted;
  frontier::UrlItem item;
  item.url = link.url;
  item.host = link.origin();
  item.fp = link.fp;
  item.depth = depth;
  item.priority = priority ? *priority : PriorityOf(link, depth, source == nullptr);
  item.via = source != nullptr ? source->url : "";
  item.hops = hops;
  item.sitemap = link.sitemap;
  if (deferred) {
    Defer(std::move(item), v);
    return v;
  }
  if (opts_.shared != nullptr) {
    opts_.shared->Admit(std::move(item));  // its owner's frontier takes it (ConsumeShared)
  } else {
    AddOrPark(std::move(item));
  }
  return v;
}

void Admitter::AddOrPark(frontier::UrlItem item) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  const size_t cap = opts_.host_cache;
  // A host not in RAM waits its turn while anything is parked, even if there is room: it
  // may have parked URLs itself (its seed), which must come in with it — a host let in by
  // a link alone would be done and evicted before its seed's turn, and the pages it fetched
  // first, reached through other hosts, may have had their links cut at that path's depth.
  if (cap > 0 && !hosts_->Contains(item.host) && (hosts_->size() >= cap || db_->parked() > 0)) {
    db_->Park(item);
    return;
  }
  // A host first met in this run of a resumed crawl, or evicted from RAM and met again:
  // restore its delay, next-allowed time, robots rules and breaker (and mark it active).
  hosts_->Ensure(item.host);
  frontier_->Add(std::move(item));
}

void Admitter::ActivateParked() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  const size_t cap = opts_.host_cache;
  if (db_->parked() == 0) return;
  // A host comes in with all its parked URLs (every class): once done it is not brought
  // back for the rest.
  const size_t room = cap == 0 ? SIZE_MAX : (hosts_->size() < cap ? cap - hosts_->size() : 0);
  if (room == 0) return;
  // By batches of a sixteenth of the cache (the room EvictHosts makes while URLs are
  // parked): each take first waits for the state's pending writes, which should not stall
  // every loop turn for the few hosts one turn evicts. Less room is taken only when nothing
  // else is queued. (The order hosts come in changes which path first reaches a page; the
  // shortest path noted before its fetch counts, see Admit.)
  if (room < std::max<size_t>(cap / 16, 1) && frontier_->queued() > 0) return;
  const int classes = opts_.frontier.priority_classes;
  counters_.unparked += db_->TakeParked(room, classes, [this](frontier::UrlItem item) {
    hosts_->Ensure(item.host);
    frontier_->Add(std::move(item));
  });
}

// A sitemap lists a URL fetched before, with <lastmod> or <changefreq>: hints that may
// bring its recrawl forward, never within its refresh window (docs/freshness.md). A
// <lastmod> after the last fetch makes it due as soon as the window allows; a <changefreq>
// makes it due that long after the last fetch (bounded by the window and max_interval).
void Admitter::ApplySitemapHint(const FoundLink& link) {
  if (opts_.shared != nullptr) return;  // the schedule is the shared crawl's (not built there)
  std::optional<state::SeenRecord> seen = db_->GetSeen(link.fp);
  if (!seen || seen->state != state::SeenRecord::State::kDone || seen->next_due_us <= 0) return;
  const SchedulePolicy policy = PolicyFor(opts_.freshness, link.origin());
  // The schedule counts from the response's arrival: next due minus the interval.
  const int64_t base =
      seen->interval_ms > 0 ? seen->next_due_us - seen->interval_ms * 1000 : seen->fetch_time_us;
  const int64_t earliest = base + policy.window_ms * 1000;
  int64_t due = seen->next_due_us;
  if (link.changefreq_s > 0) {
    const int64_t hinted = std::clamp(link.changefreq_s * 1000, policy.window_ms, policy.max_ms);
    due = std::min(due, base + hinted * 1000);
  }
  if (link.lastmod_us > seen->fetch_time_us)
    due = std::min(due, std::max(earliest, clock_->WallMicros()));
  due = std::max(due, earliest);
  if (due < seen->next_due_us && db_->Reschedule(link.fp, *seen, due)) ++counters_.sitemap_hints;
}

}  // namespace harvest::crawl
