// The admin API's commands on the I/O thread (docs/architecture.md §4 "command queue";
// semantics in docs/operating.md): seed injection, status, host policies and blocks, pause,
// metrics. admin_backend.cc posts them here and waits for the answer.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "base/ascii.h"
#include "crawl/crawler_impl.h"

namespace harvest::crawl {
namespace {

constexpr int64_t kMaxPolicyDelayMs = 24 * 3600 * 1000;  // one day

int64_t Ms(std::chrono::microseconds d) { return d.count() / 1000; }

}  // namespace

// ---- plumbing ----

bool Crawler::Impl::PostCommand(Command command) {
  {
    MutexLock lock(&commands_mu_);
    if (!accepting_) return false;
    commands_.push_back(std::move(command));
  }
  fetcher_->Wakeup();  // the loop runs it at its next turn
  return true;
}

bool Crawler::Impl::OnIoThread() const { return io_thread_.load() == std::this_thread::get_id(); }

void Crawler::Impl::RunCommands() {
  std::deque<Command> batch;
  {
    MutexLock lock(&commands_mu_);
    batch.swap(commands_);
  }
  for (Command& c : batch) c(true);
}

void Crawler::Impl::CloseCommands() {
  std::deque<Command> left;
  {
    MutexLock lock(&commands_mu_);
    accepting_ = false;
    io_thread_ = std::thread::id();
    left.swap(commands_);
  }
  for (Command& c : left) c(false);
}

void Crawler::Impl::PublishFinal() {
  admin::StatusSnapshot s = AdminStatus();
  s.state = stats_.complete ? "complete" : "stopped";
  s.pages_per_sec = 0;
  MetricsSnapshot m = AdminMetrics();
  MutexLock lock(&final_mu_);
  final_status_ = std::move(s);
  final_metrics_ = std::move(m);
}

std::optional<admin::StatusSnapshot> Crawler::Impl::FinalStatus() const {
  MutexLock lock(&final_mu_);
  return final_status_;
}

std::optional<MetricsSnapshot> Crawler::Impl::FinalMetrics() const {
  MutexLock lock(&final_mu_);
  return final_metrics_;
}

// ---- overrides (policy, block) ----

void Crawler::Impl::LoadOverrides() {
  Status s =
      db_->ForEachHostOverride([this](const std::string& host, const state::HostOverride& o) {
        overrides_[host] = o;
        if (o.weight > 0) host_weights_.SetOverride(host, o.weight);
      });
  if (!s.ok()) spdlog::error("admin: host overrides: {}", s.ToString());
  if (!overrides_.empty()) spdlog::info("{} host overrides restored", overrides_.size());
}

void Crawler::Impl::ApplyOverride(const std::string& host) {
  auto it = overrides_.find(host);
  if (it == overrides_.end()) return;
  const state::HostOverride& o = it->second;
  if (o.crawl_delay_ms >= 0) {
    frontier_->SetDelayOverride(host, std::chrono::milliseconds(o.crawl_delay_ms));
  }
  if (o.blocked) frontier_->SetHeld(host, true);
}

bool Crawler::Impl::Blocked(const std::string& host) const {
  auto it = overrides_.find(host);
  return it != overrides_.end() && it->second.blocked;
}

void Crawler::Impl::SaveOverride(const std::string& host) {
  db_->PutHostOverride(host, overrides_[host]);
  if (overrides_[host].empty()) overrides_.erase(host);
}

bool Crawler::Impl::KnownHost(const std::string& origin) {
  return hosts_->Contains(origin) || frontier_->KnowsHost(origin) || overrides_.count(origin) > 0 ||
         db_->GetPoliteness(origin).has_value() || db_->GetRobots(origin).has_value();
}

// "a.test" / "a.test:8080" means its http and https hosts; "https://a.test" only that one.
std::vector<std::string> Crawler::Impl::ResolveHost(const std::string& host) {
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

Result<admin::SeedResult> Crawler::Impl::AdminInjectSeeds(const admin::SeedRequest& request) {
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
    admission_->AddSeed(link.host(), link.registrable_domain());
    const frontier::AdmitVerdict v = Admit(link, nullptr, request.priority);
    switch (v) {
      case frontier::AdmitVerdict::kAccept:
        ++result.queued;
        ++stats_.seeds;
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
  Status s = db_->Commit();
  if (s.ok()) s = db_->Sync();
  if (!s.ok()) return Status::IOError("seeds not durable: " + s.ToString());
  return result;
}

admin::StatusSnapshot Crawler::Impl::AdminStatus() const {
  admin::StatusSnapshot s;
  const Clock::TimePoint now = clock_->Now();
  const double uptime = std::chrono::duration<double>(now - started_).count();
  const int64_t second = std::chrono::duration_cast<std::chrono::seconds>(now - started_).count();
  uint64_t pages = 0, errors = 0;
  rate_.Totals(second, &pages, &errors);
  const double window = std::clamp(uptime, 1.0, double{SecondRing::kSeconds});
  s.pages_per_sec = static_cast<double>(pages) / window;
  s.error_rate_percent = pages > 0 ? 100.0 * static_cast<double>(errors) / pages : 0;
  s.queue_depth = frontier_->queued() + frontier_->retries_pending();
  const frontier::Frontier::HostStates hs = frontier_->CountHostStates();
  uint64_t blocked_with_work = 0;
  for (const auto& [host, o] : overrides_) {
    if (o.blocked && frontier_->QueuedFor(host) > 0) ++blocked_with_work;
  }
  blocked_with_work = std::min<uint64_t>(blocked_with_work, hs.held);
  s.hosts.active = hs.active;
  s.hosts.ready = hs.ready;
  s.hosts.waiting = hs.waiting + (hs.held - blocked_with_work);  // held for a DNS answer
  s.hosts.blocked = hs.paused + blocked_with_work;
  s.bytes_stored = sink_->bytes_written();
  s.pages_stored = sink_->responses() + sink_->revisits();
  s.uptime_s = uptime;
  s.state = stop_.load() ? "draining" : admin_paused_ ? "paused" : "running";
  // The busiest resident hosts by page requests in this run (docs/operating.md).
  std::vector<admin::BusyHost> busy;
  for (const auto& [name, host] : hosts_->hosts()) {
    if (!host.activity || host.activity->pages == 0) continue;
    busy.push_back({.host = name,
                    .pages = host.activity->pages,
                    .queued = frontier_->QueuedFor(name),
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

Status Crawler::Impl::AdminSetPolicy(const std::string& host, const admin::HostPolicy& policy) {
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
      const int64_t robots_delay = hosts_->Ensure(origin).crawl_delay_ms;
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
    state::HostOverride& o = overrides_[origin];
    if (policy.crawl_delay_ms) {
      o.crawl_delay_ms = *policy.crawl_delay_ms;
      frontier_->SetDelayOverride(origin, std::chrono::milliseconds(o.crawl_delay_ms));
    }
    if (policy.weight) {
      o.weight = *policy.weight;
      host_weights_.SetOverride(origin, o.weight);
    }
    SaveOverride(origin);
  }
  Status s = db_->Commit();
  if (s.ok()) s = db_->Sync();
  return s;
}

Status Crawler::Impl::AdminSetBlocked(const std::string& host, bool blocked) {
  const std::vector<std::string> origins = ResolveHost(host);
  if (origins.empty()) return Status::NotFound("unknown host " + host + ": not seen in this crawl");
  for (const std::string& origin : origins) {
    overrides_[origin].blocked = blocked;
    if (blocked) {
      frontier_->SetHeld(origin, true);  // a request in flight finishes
    } else {
      // Still waiting for its DNS answer: the lookup's end releases it.
      auto it = awaiting_dns_.find(HostNameAndPort(origin).first);
      const bool awaiting =
          it != awaiting_dns_.end() &&
          std::find(it->second.begin(), it->second.end(), origin) != it->second.end();
      if (!awaiting) frontier_->SetHeld(origin, false);
    }
    SaveOverride(origin);
  }
  Status s = db_->Commit();
  if (s.ok()) s = db_->Sync();
  return s;
}

void Crawler::Impl::AdminPause(bool pause) {
  if (admin_paused_ != pause) spdlog::info("admin: crawl {}", pause ? "paused" : "resumed");
  admin_paused_ = pause;
}

Result<nlohmann::json> Crawler::Impl::AdminHost(const std::string& host) {
  const std::vector<std::string> origins = ResolveHost(host);
  if (origins.empty()) return Status::NotFound("unknown host " + host + ": not seen in this crawl");
  const std::string& origin = origins.front();
  HostTable::Host& h = hosts_->Ensure(origin);
  const int64_t default_ms = opts_.frontier.default_delay.count();
  const int64_t effective = Ms(frontier_->HostDelay(origin));
  auto it = overrides_.find(origin);
  const state::HostOverride o = it != overrides_.end() ? it->second : state::HostOverride{};
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
                 {"weight", host_weights_.Weight(origin)},
                 {"weight_override", o.weight > 0 ? nlohmann::json(o.weight) : nlohmann::json()}};
  if (std::optional<state::RobotsRecord> r = db_->GetRobots(origin)) {
    j["robots"] = {{"status", r->status},
                   {"expires_at_unix_ms", r->expiry_us / 1000},
                   {"failures", r->failures},
                   {"bytes", r->body.size()},
                   {"crawl_delay_ms",
                    h.crawl_delay_ms >= 0 ? nlohmann::json(h.crawl_delay_ms) : nlohmann::json()}};
  } else {
    j["robots"] = nullptr;
  }
  j["queue_length"] = frontier_->QueuedFor(origin);
  j["blocked"] = o.blocked;
  j["breaker_open"] = frontier_->Breaker(origin).open;
  j["given_up"] = h.dead_reason.empty() ? nlohmann::json() : nlohmann::json(h.dead_reason);
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

void Crawler::Impl::NoteCompletion(const std::string& host, const fetch::FetchResult& r,
                                   bool got_response) {
  const Clock::TimePoint now = clock_->Now();
  const int64_t second = std::chrono::duration_cast<std::chrono::seconds>(now - started_).count();
  const bool error = !got_response || r.status >= 500 || r.status == 429;
  rate_.Add(second, 1, error ? 1 : 0);
  HostTable::Host& h = hosts_->Ensure(host);
  if (!h.activity) h.activity = std::make_unique<HostActivity>();
  HostActivity& a = *h.activity;
  ++a.pages;
  if (got_response && r.status >= 100 && r.status < 600) ++a.by_class[r.status / 100 - 1];
  if (!got_response) {
    const std::string kind(fetch::OutcomeName(r.outcome));
    ++counters_.errors_by_kind[kind];
    a.NoteError(r.url + ": " + (r.error.empty() ? kind : r.error));
  } else if (error) {
    ++counters_.errors_by_kind[r.status == 429 ? "http_429" : "http_5xx"];
    a.NoteError(r.url + ": HTTP " + std::to_string(r.status));
  }
  // Latency histogram and the delay the host is charged next (politeness wait).
  if (counters_.latency_counts.empty()) {
    counters_.latency_bounds = LatencyBounds();
    counters_.latency_counts.assign(counters_.latency_bounds.size() + 1, 0);
  }
  const double latency = std::chrono::duration<double>(r.total_time).count();
  const auto& bounds = counters_.latency_bounds;
  const size_t bucket =
      static_cast<size_t>(std::lower_bound(bounds.begin(), bounds.end(), latency) - bounds.begin());
  ++counters_.latency_counts[bucket];
  counters_.latency_sum_s += latency;
  counters_.politeness_wait_s += std::chrono::duration<double>(frontier_->HostDelay(host)).count();
}

MetricsSnapshot Crawler::Impl::AdminMetrics() const {
  MetricsSnapshot m = counters_;
  if (m.latency_counts.empty()) {
    m.latency_bounds = LatencyBounds();
    m.latency_counts.assign(m.latency_bounds.size() + 1, 0);
  }
  m.fetches_by_class = {{"2xx", stats_.http_2xx},
                        {"3xx", stats_.http_3xx},
                        {"4xx", stats_.http_4xx},
                        {"5xx", stats_.http_5xx}};
  const uint64_t classified = stats_.http_2xx + stats_.http_3xx + stats_.http_4xx + stats_.http_5xx;
  m.fetches_by_class["other"] = stats_.pages > classified ? stats_.pages - classified : 0;
  m.robots_fetches = stats_.robots_fetches;
  m.bytes_downloaded = stats_.bytes_downloaded;
  m.warc_bytes = sink_->bytes_written();
  m.pages_stored = sink_->responses() + sink_->revisits();
  const admin::StatusSnapshot s = AdminStatus();
  m.queue_depth = s.queue_depth;
  m.hosts_by_state = {{"active", s.hosts.active},
                      {"ready", s.hosts.ready},
                      {"waiting", s.hosts.waiting},
                      {"blocked", s.hosts.blocked}};
  m.dedup_url_seen = admission_->count(frontier::AdmitVerdict::kSeen);
  m.dedup_exact = sink_->revisits();
  m.dedup_near = sink_->near_duplicates();
  m.retries = stats_.retries;
  m.dns_lookups = stats_.dns_lookups;
  m.dns_failures = stats_.dns_failures;
  m.admitted = stats_.admitted;
  m.uptime_s = s.uptime_s;
  m.paused = admin_paused_;
  return m;
}

}  // namespace harvest::crawl
