#include "crawl/operator_control.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "base/ascii.h"
#include "base/host_key.h"
#include "crawl/admitter.h"
#include "crawl/fetch_completions.h"
#include "crawl/host_table.h"
#include "crawl/request_issuer.h"
#include "crawl/warc_sink.h"

namespace harvest::crawl {
namespace {

constexpr int64_t kMaxPolicyDelayMs = 24 * 3600 * 1000;  // one day

int64_t Ms(std::chrono::microseconds d) { return d.count() / 1000; }

}  // namespace

OperatorControl::OperatorControl(Parts parts) : parts_(std::move(parts)), opts_(*parts_.opts) {}

bool OperatorControl::paused() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return paused_;
}

bool OperatorControl::KnownHost(const std::string& origin) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return parts_.hosts->Contains(origin) || parts_.frontier->KnowsHost(origin) ||
         parts_.hosts->FindOverride(origin) != nullptr ||
         parts_.db->GetPoliteness(origin).has_value() || parts_.db->GetRobots(origin).has_value();
}

// "a.test" / "a.test:8080" means its http and https hosts; "https://a.test" only that one.
std::vector<std::string> OperatorControl::ResolveHost(const std::string& host) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  std::string h = ToLowerAscii(host);
  while (!h.empty() && h.back() == '/') h.pop_back();
  std::vector<std::string> candidates;
  if (h.find("://") != std::string::npos) {
    candidates.push_back(h);
  } else {
    candidates = {"http://" + h, "https://" + h};
  }
  std::vector<std::string> known;
  for (const std::string& c : candidates) {
    if (KnownHost(c)) known.push_back(c);
  }
  return known;
}

// ---- commands ----

Result<admin::SeedResult> OperatorControl::InjectSeeds(const admin::SeedRequest& request) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  const int classes = opts_.frontier.priority_classes;
  if (request.priority && (*request.priority < 0 || *request.priority >= classes)) {
    return Status::InvalidArgument("priority " + std::to_string(*request.priority) +
                                   " is not a priority class (0.." + std::to_string(classes - 1) +
                                   ", 0 is served first)");
  }
  admin::SeedResult result;
  for (const std::string& seed : request.urls) {
    std::optional<url::Url> u = url::ParseCanonical(seed, nullptr, opts_.canon);
    if (!u) {
      result.rejected.push_back({seed, "invalid URL"});
      continue;
    }
    if (u->scheme() != "http" && u->scheme() != "https") {
      result.rejected.push_back({seed, "invalid URL: not http or https"});
      continue;
    }
    FoundLink link = MakeFoundLink(*u);
    // An injected seed is a seed: under --scope host|site it brings its host or site in.
    const frontier::AdmitVerdict v = parts_.admitter->AdmitSeed(link, request.priority);
    switch (v) {
      case frontier::AdmitVerdict::kAccept:
      case frontier::AdmitVerdict::kDeferredRatio:  // queued in its host's backlog
      case frontier::AdmitVerdict::kDeferredQuota:
        ++result.queued;
        break;
      case frontier::AdmitVerdict::kSeen:
        result.rejected.push_back({seed, "already seen or queued"});
        break;
      case frontier::AdmitVerdict::kOutOfScope:
        result.rejected.push_back({seed, "out of scope"});
        break;
      default:
        result.rejected.push_back({seed, frontier::VerdictName(v)});
        break;
    }
  }
  // Durable before the answer: the queue entries are written and the WAL synced.
  Status s = parts_.db->Commit();
  if (s.ok()) s = parts_.db->Sync();
  if (!s.ok()) return Status::IOError("seeds not durable: " + s.ToString());
  return result;
}

admin::StatusSnapshot OperatorControl::GetStatus() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  admin::StatusSnapshot s;
  const double uptime = parts_.stats().elapsed_s;
  uint64_t pages = 0, errors = 0;
  parts_.completions->RecentTotals(&pages, &errors);
  const double window = std::clamp(uptime, 1.0, double{SecondRing::kSeconds});
  s.pages_per_sec = static_cast<double>(pages) / window;
  s.error_rate_percent = pages > 0 ? 100.0 * static_cast<double>(errors) / pages : 0;
  s.queue_depth = parts_.frontier->queued() + parts_.frontier->retries_pending();
  const frontier::Frontier::HostStates hs = parts_.frontier->CountHostStates();
  uint64_t blocked_with_work = 0;
  for (const auto& [host, o] : parts_.hosts->overrides()) {
    if (o.blocked && parts_.frontier->QueuedFor(host) > 0) ++blocked_with_work;
  }
  blocked_with_work = std::min<uint64_t>(blocked_with_work, hs.held);
  s.hosts.active = hs.active;
  s.hosts.ready = hs.ready;
  s.hosts.waiting = hs.waiting + (hs.held - blocked_with_work);  // held for a DNS answer
  s.hosts.blocked = hs.paused + blocked_with_work;
  const Admitter::Counters& ac = parts_.admitter->counters();
  s.budgets = {.deferred = parts_.admitter->deferred(),
               .hosts_throttled = parts_.admitter->hosts_throttled(),
               .hosts_over_quota = parts_.admitter->hosts_over_quota(),
               .deferred_total = ac.deferred,
               .released_total = ac.released,
               .backlog_refused = ac.backlog_refused};
  s.bytes_stored = parts_.sink->bytes_written();
  s.pages_stored = parts_.sink->responses() + parts_.sink->revisits();
  s.uptime_s = uptime;
  s.state = parts_.stopping->load() ? "draining" : paused_ ? "paused" : "running";
  // The busiest resident hosts by page requests in this run (docs/operating.md).
  std::vector<admin::BusyHost> busy;
  for (const auto& [name, host] : parts_.hosts->hosts()) {
    if (!host.activity || host.activity->pages == 0) continue;
    busy.push_back({.host = name,
                    .pages = host.activity->pages,
                    .queued = parts_.frontier->QueuedFor(name),
                    .errors = host.activity->errors});
  }
  const size_t top = std::min<size_t>(busy.size(), 10);
  std::partial_sort(busy.begin(), busy.begin() + static_cast<ptrdiff_t>(top), busy.end(),
                    [](const admin::BusyHost& a, const admin::BusyHost& b) {
                      return a.pages != b.pages ? a.pages > b.pages : a.host < b.host;
                    });
  busy.resize(top);
  s.busiest_hosts = std::move(busy);
  if (opts_.shared != nullptr) {
    const SharedCrawl::Share share = opts_.shared->share();
    s.shared = admin::SharedShare{.worker = share.worker,
                                  .partitions_held = share.partitions_held,
                                  .partitions = share.partitions,
                                  .taken = share.taken,
                                  .done = share.done,
                                  .admitted_new = share.admitted_new};
  }
  return s;
}

Status OperatorControl::SetPolicy(const std::string& host, const admin::HostPolicy& policy) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  const std::vector<std::string> origins = ResolveHost(host);
  if (origins.empty()) return Status::NotFound("unknown host " + host + ": not seen in this crawl");
  if (policy.max_concurrent && *policy.max_concurrent != 1) {
    return Status::InvalidArgument("max_concurrent " + std::to_string(*policy.max_concurrent) +
                                   ": Harvest keeps one request in flight per host; only 1 is "
                                   "accepted");
  }
  if (policy.weight && (!std::isfinite(*policy.weight) || *policy.weight <= 0)) {
    return Status::InvalidArgument("weight must be a finite number above 0");
  }
  if (policy.crawl_delay_ms) {
    const int64_t d = *policy.crawl_delay_ms;
    if (d > kMaxPolicyDelayMs) {
      return Status::InvalidArgument("crawl_delay_ms " + std::to_string(d) +
                                     " is above the maximum of 86400000 (one day)");
    }
    for (const std::string& origin : origins) {
      // The floor: the crawl's default delay and the host's robots.txt Crawl-delay. A
      // policy may only make Harvest politer (docs/operating.md).
      int64_t floor = opts_.frontier.default_delay.count();
      const int64_t robots_delay = parts_.hosts->Ensure(origin).crawl_delay_ms;
      floor = std::max(floor, robots_delay);
      if (d < floor) {
        return Status::InvalidArgument(
            "crawl_delay_ms " + std::to_string(d) + " is shorter than the host's delay " +
            std::to_string(floor) +
            " ms (default delay / robots.txt Crawl-delay): a policy may only make Harvest "
            "politer");
      }
    }
  }
  for (const std::string& origin : origins) {
    state::HostOverride& o = parts_.hosts->Override(origin);
    if (policy.crawl_delay_ms) {
      o.crawl_delay_ms = *policy.crawl_delay_ms;
      parts_.frontier->SetDelayOverride(origin, std::chrono::milliseconds(o.crawl_delay_ms));
    }
    if (policy.weight) {
      o.weight = *policy.weight;
      parts_.admitter->weights().SetOverride(origin, o.weight);
    }
    parts_.hosts->SaveOverride(origin);
  }
  Status s = parts_.db->Commit();
  if (s.ok()) s = parts_.db->Sync();
  return s;
}

Status OperatorControl::SetBlocked(const std::string& host, bool blocked) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  const std::vector<std::string> origins = ResolveHost(host);
  if (origins.empty()) return Status::NotFound("unknown host " + host + ": not seen in this crawl");
  for (const std::string& origin : origins) {
    parts_.hosts->Override(origin).blocked = blocked;
    if (blocked) {
      parts_.frontier->SetHeld(origin, true);  // a request in flight finishes
    } else {
      // Still waiting for its DNS answer: the lookup's end releases it.
      if (!parts_.issuer->AwaitingLookup(origin)) parts_.frontier->SetHeld(origin, false);
    }
    parts_.hosts->SaveOverride(origin);
  }
  Status s = parts_.db->Commit();
  if (s.ok()) s = parts_.db->Sync();
  return s;
}

void OperatorControl::Pause(bool pause) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (paused_ != pause) spdlog::info("admin: crawl {}", pause ? "paused" : "resumed");
  paused_ = pause;
}

Result<nlohmann::json> OperatorControl::GetHost(const std::string& host) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  const std::vector<std::string> origins = ResolveHost(host);
  if (origins.empty()) return Status::NotFound("unknown host " + host + ": not seen in this crawl");
  const std::string& origin = origins.front();
  HostTable::Host& h = parts_.hosts->Ensure(origin);
  const int64_t default_ms = opts_.frontier.default_delay.count();
  const int64_t effective = Ms(parts_.frontier->HostDelay(origin));
  const state::HostOverride* found = parts_.hosts->FindOverride(origin);
  const state::HostOverride o = found != nullptr ? *found : state::HostOverride{};
  const char* source = "default";
  if (o.crawl_delay_ms >= 0 && o.crawl_delay_ms >= effective) {
    source = "operator";
  } else if (h.crawl_delay_ms > default_ms && h.crawl_delay_ms >= effective) {
    source = "robots.txt";
  } else if (effective > default_ms) {
    source = "adaptive";
  }
  nlohmann::json j;
  j["host"] = origin;
  if (origins.size() > 1)
    j["other_hosts"] = std::vector<std::string>(origins.begin() + 1, origins.end());
  j["policy"] = {{"crawl_delay_ms", effective},
                 {"source", source},
                 {"default_delay_ms", default_ms},
                 {"robots_crawl_delay_ms",
                  h.crawl_delay_ms >= 0 ? nlohmann::json(h.crawl_delay_ms) : nlohmann::json()},
                 {"override_delay_ms",
                  o.crawl_delay_ms >= 0 ? nlohmann::json(o.crawl_delay_ms) : nlohmann::json()},
                 {"max_concurrent", 1},
                 {"weight", parts_.admitter->weights().Weight(origin)},
                 {"weight_override", o.weight > 0 ? nlohmann::json(o.weight) : nlohmann::json()}};
  if (std::optional<state::RobotsRecord> r = parts_.db->GetRobots(origin)) {
    j["robots"] = {{"status", r->status},
                   {"expires_at_unix_ms", r->expiry_us / 1000},
                   {"failures", r->failures},
                   {"bytes", r->body.size()},
                   {"crawl_delay_ms",
                    h.crawl_delay_ms >= 0 ? nlohmann::json(h.crawl_delay_ms) : nlohmann::json()}};
  } else {
    j["robots"] = nullptr;
  }
  j["queue_length"] = parts_.frontier->QueuedFor(origin);
  j["blocked"] = o.blocked;
  j["breaker_open"] = parts_.frontier->Breaker(origin).open;
  j["given_up"] = h.dead_reason.empty() ? nlohmann::json() : nlohmann::json(h.dead_reason);
  // The name's budget (docs/admission.md "Budgets"): flagged when not "open".
  const Admitter::HostBudget b = parts_.admitter->BudgetOf(NameOfHostKey(origin));
  j["budget"] = {{"state", frontier::BudgetName(b.budget)},
                 {"deferred", b.backlog},
                 {"fetched_today", b.counters.fetched_today},
                 {"daily_quota", opts_.traps.host_daily_quota},
                 {"admitted", b.counters.admitted},
                 {"fetched", b.counters.fetched},
                 {"max_discovery_ratio", opts_.traps.max_discovery_ratio}};
  nlohmann::json counters = {{"pages", 0}, {"errors", 0}};
  nlohmann::json recent = nlohmann::json::array();
  if (h.activity) {
    counters["pages"] = h.activity->pages;
    counters["errors"] = h.activity->errors;
    for (size_t i = 0; i < h.activity->by_class.size(); ++i) {
      counters[std::to_string(i + 1) + "xx"] = h.activity->by_class[i];
    }
    for (const std::string& e : h.activity->recent_errors) recent.push_back(e);
  }
  j["counters"] = std::move(counters);
  j["recent_errors"] = std::move(recent);
  return j;
}

MetricsSnapshot OperatorControl::Metrics() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  const CrawlStats stats = parts_.stats();
  MetricsSnapshot m = parts_.completions->metrics();
  if (m.latency_counts.empty()) {
    m.latency_bounds = LatencyBounds();
    m.latency_counts.assign(m.latency_bounds.size() + 1, 0);
  }
  m.fetches_by_class = {{"2xx", stats.http_2xx},
                        {"3xx", stats.http_3xx},
                        {"4xx", stats.http_4xx},
                        {"5xx", stats.http_5xx}};
  const uint64_t classified = stats.http_2xx + stats.http_3xx + stats.http_4xx + stats.http_5xx;
  m.fetches_by_class["other"] = stats.pages > classified ? stats.pages - classified : 0;
  m.robots_fetches = stats.robots_fetches;
  m.bytes_downloaded = stats.bytes_downloaded;
  m.warc_bytes = parts_.sink->bytes_written();
  m.pages_stored = parts_.sink->responses() + parts_.sink->revisits();
  const admin::StatusSnapshot s = GetStatus();
  m.queue_depth = s.queue_depth;
  m.hosts_by_state = {{"active", s.hosts.active},
                      {"ready", s.hosts.ready},
                      {"waiting", s.hosts.waiting},
                      {"blocked", s.hosts.blocked}};
  m.dedup_url_seen = parts_.admitter->seen_refusals();
  m.dedup_exact = parts_.sink->revisits();
  m.dedup_near = parts_.sink->near_duplicates();
  m.retries = stats.retries;
  m.dns_lookups = stats.dns_lookups;
  m.dns_failures = stats.dns_failures;
  m.admitted = stats.admitted;
  m.budgets = s.budgets;
  m.uptime_s = s.uptime_s;
  m.paused = paused_;
  return m;
}

}  // namespace harvest::crawl
