// Admission: scope, depth, trap guards and the seen test.
#include "frontier/admission.h"

#include <algorithm>

#include "base/ascii.h"
#include "base/hash.h"
#include "base/host_key.h"

namespace harvest::frontier {
namespace {

constexpr int64_t kMicrosPerDay = int64_t{86'400} * 1'000'000;

bool HostInDomain(std::string_view host, std::string_view domain) {
  if (host.size() == domain.size()) return host == domain;
  return host.size() > domain.size() && host.ends_with(domain) &&
         host[host.size() - domain.size() - 1] == '.';
}

// Glob with '*' only, anchored at both ends; iterative with one backtrack point (linear
// enough for URLs, no recursion on hostile patterns).
bool GlobMatch(std::string_view p, std::string_view s) {
  size_t pi = 0, si = 0, star = std::string_view::npos, mark = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = si;
    } else if (pi < p.size() && p[pi] == s[si]) {
      ++pi;
      ++si;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      si = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

size_t CountParams(std::string_view query) {
  size_t n = 0;
  size_t start = 0;
  while (start <= query.size()) {
    size_t amp = query.find('&', start);
    if (amp == std::string_view::npos) amp = query.size();
    if (amp > start) ++n;  // empty parameters ("a=1&&b=2") do not count
    start = amp + 1;
  }
  return n;
}

// The largest number of times any non-empty path segment occurs.
int MaxSegmentRepeats(std::string_view path) {
  std::vector<std::string_view> segments;
  size_t start = 0;
  while (start < path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) segments.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  std::sort(segments.begin(), segments.end());
  int best = 0;
  for (size_t i = 0; i < segments.size();) {
    size_t j = i;
    while (j < segments.size() && segments[j] == segments[i]) ++j;
    best = std::max(best, static_cast<int>(j - i));
    i = j;
  }
  return best;
}

// The name a host is compared by in ScopeMode::kSite: its registrable domain, or for a host
// without one (an IP address, "localhost") the host name itself, so that two IP addresses
// are not one site.
std::string_view SiteName(std::string_view host, std::string_view registrable_domain) {
  return registrable_domain.empty() ? NameOfAuthority(host) : registrable_domain;
}

// True if `set` holds `name`, compared case-insensitively (the set holds lower-case names).
// Candidate names are lower-case already (canonical URLs): lowered only when they are not.
// A 64-bit key of a lower-cased name (std::hash of the name, mixed).
uint64_t NameKey(std::string_view name) {
  const bool lower = std::none_of(name.begin(), name.end(), IsAsciiUpper);
  if (lower) return Mix64(std::hash<std::string_view>()(name));
  const std::string lowered = ToLowerAscii(name);
  return Mix64(std::hash<std::string_view>()(lowered));
}

}  // namespace

const char* ScopeModeName(ScopeMode mode) {
  switch (mode) {
    case ScopeMode::kAny:
      return "any";
    case ScopeMode::kHost:
      return "host";
    case ScopeMode::kSite:
      return "site";
  }
  return "unknown";
}

bool ParseScopeMode(std::string_view name, ScopeMode* mode) {
  for (ScopeMode m : {ScopeMode::kAny, ScopeMode::kHost, ScopeMode::kSite}) {
    if (name == ScopeModeName(m)) {
      *mode = m;
      return true;
    }
  }
  return false;
}

const char* BudgetName(Budget b) {
  switch (b) {
    case Budget::kOpen:
      return "open";
    case Budget::kDiscoveryRatio:
      return "discovery-ratio";
    case Budget::kDailyQuota:
      return "daily-quota";
  }
  return "unknown";
}

const char* VerdictName(AdmitVerdict v) {
  switch (v) {
    case AdmitVerdict::kAccept:
      return "accept";
    case AdmitVerdict::kSeen:
      return "seen";
    case AdmitVerdict::kOutOfScope:
      return "out-of-scope";
    case AdmitVerdict::kTooDeep:
      return "too-deep";
    case AdmitVerdict::kTrapLongUrl:
      return "trap-long-url";
    case AdmitVerdict::kTrapManyParams:
      return "trap-many-params";
    case AdmitVerdict::kTrapRepeatedSegment:
      return "trap-repeated-segment";
    case AdmitVerdict::kDeferredRatio:
      return "deferred-discovery-ratio";
    case AdmitVerdict::kDeferredQuota:
      return "deferred-quota";
    case AdmitVerdict::kTrapBacklogCap:
      return "trap-backlog-cap";
  }
  return "unknown";
}

bool MatchUrlPattern(std::string_view pattern, std::string_view url) {
  if (pattern.find('*') == std::string_view::npos) return url.find(pattern) != url.npos;
  return GlobMatch(pattern, url);
}

Admission::Admission(ScopeOptions scope, TrapOptions traps, dedup::SeenSet* seen, Clock* clock)
    : scope_(std::move(scope)),
      traps_(traps),
      seen_(seen),
      clock_(clock != nullptr ? clock : SystemClock::Default()) {
  for (std::string& d : scope_.allowed_domains) {
    LowerAsciiInPlace(d);
    while (d.starts_with('.')) d.erase(0, 1);
  }
}

void Admission::AddSeed(std::string_view host, std::string_view registrable_domain) {
  // Only the active mode's set is kept (the mode is fixed for the life of the Admission).
  if (scope_.mode == ScopeMode::kHost) seed_names_.insert(NameKey(NameOfAuthority(host)));
  if (scope_.mode == ScopeMode::kSite) {
    seed_names_.insert(NameKey(SiteName(host, registrable_domain)));
  }
}

bool Admission::InModeScope(const AdmitCandidate& c) const {
  switch (scope_.mode) {
    case ScopeMode::kAny:
      return true;
    case ScopeMode::kHost:
      return seed_names_.contains(NameKey(NameOfAuthority(c.host)));
    case ScopeMode::kSite:
      return seed_names_.contains(NameKey(SiteName(c.host, c.registrable_domain)));
  }
  return false;
}

bool Admission::InScope(const AdmitCandidate& c) const {
  if (!InModeScope(c)) return false;
  if (!scope_.allowed_domains.empty()) {
    const std::string host = ToLowerAscii(NameOfAuthority(c.host));
    const bool ok = std::any_of(scope_.allowed_domains.begin(), scope_.allowed_domains.end(),
                                [&](const std::string& d) { return HostInDomain(host, d); });
    if (!ok) return false;
  }
  if (!scope_.include_patterns.empty() &&
      std::none_of(scope_.include_patterns.begin(), scope_.include_patterns.end(),
                   [&](const std::string& p) { return MatchUrlPattern(p, c.canonical_url); })) {
    return false;
  }
  return std::none_of(scope_.exclude_patterns.begin(), scope_.exclude_patterns.end(),
                      [&](const std::string& p) { return MatchUrlPattern(p, c.canonical_url); });
}

AdmitVerdict Admission::ShapeTrap(const AdmitCandidate& c) const {
  if (c.canonical_url.size() > traps_.max_url_length) return AdmitVerdict::kTrapLongUrl;
  if (CountParams(c.query) > traps_.max_query_params) return AdmitVerdict::kTrapManyParams;
  // A path of fewer segments than the limit cannot repeat one that often: most links are
  // judged without splitting their path. Its segments are at most its slashes (plus one
  // when it does not start with one).
  const auto segments_at_most =
      std::count(c.path.begin(), c.path.end(), '/') + (c.path.starts_with('/') ? 0 : 1);
  if (traps_.max_repeated_segment > 0 && segments_at_most >= traps_.max_repeated_segment &&
      MaxSegmentRepeats(c.path) >= traps_.max_repeated_segment) {
    return AdmitVerdict::kTrapRepeatedSegment;
  }
  return AdmitVerdict::kAccept;
}

AdmitVerdict Admission::Judge(const AdmitCandidate& c) {
  if (c.depth > scope_.max_depth) return AdmitVerdict::kTooDeep;
  if (!InScope(c)) return AdmitVerdict::kOutOfScope;
  if (AdmitVerdict v = ShapeTrap(c); v != AdmitVerdict::kAccept) return v;
  if (seen_ != nullptr && seen_->Contains(c.fp)) return AdmitVerdict::kSeen;

  const std::string_view name = NameOfAuthority(c.host);
  const uint64_t key = HostHash(name);
  if (CertainlyOpen(key)) {
    // A host whose counters are not in RAM, within every budget for certain: counted without
    // reading them (docs/admission.md "Budgets"; a broad crawl's links mostly go to such hosts).
    if (seen_ != nullptr && !seen_->InsertIfNew(c.fp)) return AdmitVerdict::kSeen;
    ++blind_admitted_[key];
    activity_->Add(key);
    ++admitted_blind_;
    return AdmitVerdict::kAccept;
  }
  Resident& r = CountersFor(key);
  HostCounters& h = r.counters;
  RollDay(&h);
  const Budget budget = defer_over_budget_ ? BudgetFor(h) : Budget::kOpen;
  if (budget == Budget::kOpen) {
    if (seen_ != nullptr && !seen_->InsertIfNew(c.fp)) return AdmitVerdict::kSeen;
    ++h.admitted;
    NoteChanged(key, &r);
    return AdmitVerdict::kAccept;
  }
  // Over budget: into the backlog, unless it is full.
  auto it = backlogs_.find(name);
  if (it != backlogs_.end() && it->second >= traps_.max_backlog) {
    return AdmitVerdict::kTrapBacklogCap;
  }
  if (traps_.max_backlog == 0) return AdmitVerdict::kTrapBacklogCap;
  if (seen_ != nullptr && !seen_->InsertIfNew(c.fp)) return AdmitVerdict::kSeen;
  if (it == backlogs_.end()) it = backlogs_.emplace(std::string(name), 0).first;
  ++it->second;
  ++backlog_total_;
  return budget == Budget::kDailyQuota ? AdmitVerdict::kDeferredQuota
                                       : AdmitVerdict::kDeferredRatio;
}

void Admission::RollDay(HostCounters* h) const {
  const int64_t day = clock_->WallMicros() / kMicrosPerDay;
  if (h->day != day) {
    h->day = day;
    h->fetched_today = 0;
  }
}

Budget Admission::BudgetFor(const HostCounters& h) const {
  if (traps_.host_daily_quota > 0 && h.fetched_today >= traps_.host_daily_quota) {
    return Budget::kDailyQuota;
  }
  if (traps_.max_discovery_ratio > 0 && h.admitted >= traps_.discovery_ratio_after &&
      static_cast<double>(h.admitted) >
          traps_.max_discovery_ratio * static_cast<double>(std::max<uint64_t>(h.fetched, 1))) {
    return Budget::kDiscoveryRatio;
  }
  return Budget::kOpen;
}

AdmitVerdict Admission::Admit(const AdmitCandidate& c) {
  const AdmitVerdict v = Judge(c);
  ++counts_[static_cast<size_t>(v)];
  return v;
}

void Admission::Prefetch(uint64_t fp) const {
  if (seen_ != nullptr) seen_->Prefetch(fp);
}

uint64_t Admission::HostHash(std::string_view host) { return Fnv1a64(host); }

void Admission::SetCounterStore(CounterStore* store, size_t max_resident) {
  counter_store_ = store;
  max_resident_ = max_resident;
  activity_.reset();
  blind_admitted_.clear();
  if (store == nullptr) return;
  // 4 rows of 2^20 16-bit counters (8 MiB, touched as hosts come): estimates stay near the
  // true counts until the crawl's admissions and fetches number several hundred million,
  // after which more hosts take the loading path.
  constexpr size_t kActivityBoundBytes = size_t{8} << 20;
  activity_.emplace(kActivityBoundBytes);
  const bool blind =
      store->ListSaved([this](uint64_t key, const HostCounters& c) { RaiseBound(key, c); });
  if (!blind) activity_.reset();
}

bool Admission::CertainlyOpen(uint64_t key) const {
  if (!activity_ || hosts_.contains(key)) return false;
  // A bound of 0: a new host (or one with no activity), whose load finds nothing and costs
  // no read; it enters RAM, and is fetched while there in a focused crawl. Counted blind, it
  // would be read when fetched. The activity bound is >= the admitted count and >= today's
  // fetches; a saturated counter (kMaxCount) never passes.
  const uint32_t bound = activity_->Estimate(key);
  if (bound == 0) return false;
  if (!defer_over_budget_) return true;  // no budget is judged at admission
  uint64_t below = dedup::CountMinSketch::kMaxCount;
  if (traps_.max_discovery_ratio > 0) below = std::min(below, traps_.discovery_ratio_after);
  if (traps_.host_daily_quota > 0) below = std::min(below, traps_.host_daily_quota);
  return bound < below;
}

void Admission::RaiseBound(uint64_t key, const HostCounters& c) {
  if (!activity_) return;
  const uint64_t activity = c.admitted + c.fetched;
  const uint32_t bound = activity_->Estimate(key);
  if (activity > bound) {
    activity_->Add(key, static_cast<uint32_t>(std::min<uint64_t>(
                            activity - bound, dedup::CountMinSketch::kMaxCount)));
  }
}

Admission::Resident& Admission::CountersFor(std::string_view host, uint64_t* key_out) {
  *key_out = HostHash(host);
  return CountersFor(*key_out);
}

Admission::Resident& Admission::CountersFor(uint64_t key) {
  auto [it, inserted] = hosts_.try_emplace(key);
  if (!inserted || counter_store_ == nullptr) return it->second;
  (void)counter_store_->Load(key, &it->second.counters);
  order_.push_back(key);
  // Admissions counted blind since the last save are not in the store yet: they join the
  // counters now (and are saved with them).
  if (auto b = blind_admitted_.find(key); b != blind_admitted_.end()) {
    it->second.counters.admitted += b->second;
    blind_admitted_.erase(b);
    NoteChanged(key, &it->second);
  }
  return it->second;
}

void Admission::NoteChanged(uint64_t key, Resident* r) {
  if (counter_store_ == nullptr || r->changed) return;
  r->changed = true;
  changed_.push_back(key);
}

void Admission::SaveChanged() {
  for (const uint64_t key : changed_) {
    // Every listed host is resident: TrimResident saves before it evicts.
    auto it = hosts_.find(key);
    if (it == hosts_.end()) continue;
    counter_store_->Save(key, it->second.counters);
    it->second.changed = false;
  }
  changed_.clear();
  for (const auto& [key, n] : blind_admitted_) counter_store_->AddAdmitted(key, n);
  blind_admitted_.clear();
}

void Admission::TrimResident() {
  SaveChanged();
  // Every change was saved: the oldest counters leave RAM at no cost (FIFO, O(1) each).
  while (max_resident_ > 0 && hosts_.size() > max_resident_ && !order_.empty()) {
    const uint64_t old = order_.front();
    order_.pop_front();
    auto it = hosts_.find(old);
    if (it == hosts_.end()) continue;
    RaiseBound(old, it->second.counters);  // judged by its bound while out of RAM
    hosts_.erase(it);
    if (counter_store_ != nullptr) counter_store_->Evicted(old);
  }
}

void Admission::NoteFetched(std::string_view name) {
  uint64_t key = 0;
  Resident& r = CountersFor(name, &key);
  RollDay(&r.counters);
  ++r.counters.fetched;
  ++r.counters.fetched_today;
  if (traps_.host_daily_quota > 0 && r.counters.fetched_today >= traps_.host_daily_quota) {
    RollQuotaDay();
    over_quota_.emplace(name);
  }
  NoteChanged(key, &r);
}

bool Admission::MayFetch(std::string_view name) {
  if (traps_.host_daily_quota == 0) return true;
  uint64_t key = 0;
  Resident& r = CountersFor(name, &key);
  RollDay(&r.counters);
  return r.counters.fetched_today < traps_.host_daily_quota;
}

int64_t Admission::NextDayMicros() const {
  return (clock_->WallMicros() / kMicrosPerDay + 1) * kMicrosPerDay;
}

void Admission::RollQuotaDay() {
  const int64_t day = clock_->WallMicros() / kMicrosPerDay;
  if (day == quota_day_) return;
  quota_day_ = day;
  over_quota_.clear();
}

size_t Admission::hosts_over_quota() const {
  return clock_->WallMicros() / kMicrosPerDay == quota_day_ ? over_quota_.size() : 0;
}

uint64_t Admission::Releasable(std::string_view name, bool host_idle) {
  auto it = backlogs_.find(name);
  if (it == backlogs_.end()) return 0;
  uint64_t key = 0;
  HostCounters& h = CountersFor(name, &key).counters;
  RollDay(&h);
  if (traps_.host_daily_quota > 0 && h.fetched_today >= traps_.host_daily_quota) return 0;
  uint64_t room = it->second;
  if (traps_.max_discovery_ratio > 0) {
    const double allowed = std::max(
        static_cast<double>(traps_.discovery_ratio_after),
        traps_.max_discovery_ratio * static_cast<double>(std::max<uint64_t>(h.fetched, 1)));
    room = allowed > static_cast<double>(h.admitted)
               ? static_cast<uint64_t>(allowed - static_cast<double>(h.admitted))
               : 0;
    if (host_idle) room = std::max(room, std::max<uint64_t>(traps_.discovery_ratio_after, 1));
  }
  return std::min(room, it->second);
}

void Admission::NoteReleased(std::string_view name, uint64_t n) {
  if (n == 0) return;
  auto it = backlogs_.find(name);
  const uint64_t taken = it == backlogs_.end() ? 0 : std::min(n, it->second);
  if (it != backlogs_.end()) {
    it->second -= taken;
    if (it->second == 0) backlogs_.erase(it);
  }
  backlog_total_ -= std::min(backlog_total_, taken);
  released_total_ += n;
  uint64_t key = 0;
  Resident& r = CountersFor(name, &key);
  r.counters.admitted += n;
  NoteChanged(key, &r);
}

void Admission::ClearBacklog(std::string_view name) {
  auto it = backlogs_.find(name);
  if (it == backlogs_.end()) return;
  backlog_total_ -= std::min(backlog_total_, it->second);
  backlogs_.erase(it);
}

void Admission::RestoreBacklog(std::string_view name, uint64_t n) {
  if (n == 0) return;
  backlogs_[std::string(name)] += n;
  backlog_total_ += n;
}

void Admission::HandOverCounters(std::string_view name, const HostCounters& c) {
  uint64_t key = 0;
  Resident& r = CountersFor(name, &key);
  r.counters = c;
  NoteChanged(key, &r);
}

Budget Admission::BudgetOf(std::string_view name) {
  uint64_t key = 0;
  HostCounters& h = CountersFor(name, &key).counters;
  RollDay(&h);
  return BudgetFor(h);
}

HostCounters Admission::CountersOf(std::string_view name) {
  uint64_t key = 0;
  HostCounters& h = CountersFor(name, &key).counters;
  RollDay(&h);
  return h;
}

}  // namespace harvest::frontier
