// The I/O thread's loop: setup, leases, starting fetches, finishing (docs/architecture.md §2,
// §4). What happens when a fetch completes is in fetch_done.cc, the process pool in
// pipeline.cc, admission in admit.cc, durable state in recovery.cc.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/version.h"
#include "crawl/crawler_impl.h"

namespace harvest::crawl {
namespace {

int DefaultWorkers() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 2 : static_cast<int>(n);
}

// Fills the defaults that depend on other settings.
CrawlOptions WithDefaults(CrawlOptions o) {
  if (o.fetch.user_agent.empty()) {
    o.fetch.user_agent = DefaultUserAgent();
  }
  return o;
}

}  // namespace

Crawler::Impl::Impl(CrawlOptions options, Clock* clock)
    : opts_(WithDefaults(std::move(options))),
      clock_(clock != nullptr ? clock : SystemClock::Default()),
      product_token_(robots::ProductToken(opts_.fetch.user_agent)),
      work_(opts_.max_pending_pages + opts_.fetch.max_concurrent + 64) {}

Crawler::Impl::~Impl() {
  {
    WriterLock lock(&pages_mu_);
    pages_open_ = false;
  }
  work_.Close();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
}

void Crawler::Impl::RequestStop() {
  stop_.store(true);
  if (sink_) sink_->Abandon();
  if (fetcher_) fetcher_->Wakeup();
}

CrawlStats Crawler::Impl::stats() const {
  MutexLock lock(&stats_mu_);
  return published_;
}

Status Crawler::Impl::Setup() {
  if (Status s = CheckOutDir(); !s.ok()) return s;
  if (Status s = CheckShared(); !s.ok()) return s;
  std::error_code ec;
  std::filesystem::create_directories(opts_.out_dir, ec);
  if (ec) {
    return Status::IOError("cannot create output directory " + opts_.out_dir.string() + ": " +
                           ec.message());
  }
  if (Status s = OpenState(); !s.ok()) return s;
  // Fingerprints of this crawl compare with those of its earlier runs: the state's version.
  processor_.emplace(opts_, PageProcessorOptions{.simhash_version = db_->simhash_version()});
  {
    WriterLock lock(&pages_mu_);
    pages_open_ = true;
  }
  LoadOverrides();  // before any host is restored: the host table applies them on arrival
  robots_ = std::make_unique<RobotsGate>(
      RobotsGate::Options{
          .product_token = product_token_,
          .ttl = opts_.robots_ttl,
          .patience = opts_.freshness.recrawl ? std::chrono::seconds(0) : opts_.robots_patience,
          .retry = opts_.frontier},
      clock_, db_.get());
  hosts_ = std::make_unique<HostTable>(HostTable::Options{.resumed = resumed_}, clock_, db_.get(),
                                       frontier_.get(), robots_.get(), opts_.shared);
  hosts_->SetOnArrival([this](const std::string& host) {
    if (!overrides_.empty()) ApplyOverride(host);  // the operator's policy and block
  });
  if (resumed_) {
    RecoverWarcs();
    RestoreState();
  }
  if (Status s = outcomes_.Open(opts_.out_dir / "outcomes.jsonl"); !s.ok()) return s;
  opts_.warc.dir = opts_.out_dir;
  Result<std::unique_ptr<store::WarcWriter>> writer = store::WarcWriter::Open(opts_.warc);
  if (!writer.ok()) return writer.status();
  sink_ = std::make_unique<WarcSink>(
      std::move(*writer), &outcomes_, db_.get(),
      WarcSink::Options{.flush_interval = opts_.flush_interval,
                        .retry_interval = opts_.output_retry_interval,
                        .queue_capacity = opts_.max_pending_pages,
                        .near_dup = opts_.near_dup,
                        .near_duplicate_is_unchanged = opts_.freshness.near_duplicate_is_unchanged,
                        .shared = opts_.shared},
      [this] {
        if (fetcher_) fetcher_->Wakeup();
      });
  if (opts_.fetcher != nullptr) {
    fetcher_ = opts_.fetcher;
  } else {
    owned_fetcher_ = std::make_unique<fetch::HttpFetcher>(opts_.fetch);
    fetcher_ = owned_fetcher_.get();
  }
  if (Status s = fetcher_->status(); !s.ok()) return s;
  if (Status s = SetupAddresses(); !s.ok()) return s;
  sink_->RestoreNearDuplicates();
  if (opts_.shared != nullptr) {
    if (Status st = opts_.shared->Start([f = fetcher_] { f->Wakeup(); }); !st.ok()) return st;
  }
  sink_->Start();
  int n = opts_.workers > 0 ? opts_.workers : DefaultWorkers();
  for (int i = 0; i < n; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  return Status::Ok();
}

// Resolve file, --connect-to routes and the resolver (address_gate.h), after the fetcher:
// the resolver's thread wakes it.
Status Crawler::Impl::SetupAddresses() {
  fetch::PinTable pins;
  if (!opts_.resolve_file.empty()) {
    Result<fetch::PinTable> table = fetch::PinTable::Load(opts_.resolve_file.string());
    if (!table.ok()) return Status::InvalidArgument("resolve file: " + table.status().message());
    pins = std::move(*table);
  }
  fetch::Resolver* resolver = opts_.resolver;
  if (resolver == nullptr && opts_.fetcher == nullptr) {
    Result<std::unique_ptr<fetch::Resolver>> r =
        fetch::NewAresResolver(opts_.dns, clock_, [f = fetcher_] { f->Wakeup(); });
    if (!r.ok()) return r.status();
    owned_resolver_ = std::move(*r);
    resolver = owned_resolver_.get();
  }
  addresses_ = std::make_unique<AddressGate>(std::move(pins), opts_.fetch.connect_to, resolver);
  return Status::Ok();
}

void Crawler::Impl::Record(std::string_view url, std::string_view outcome, int status,
                           std::string_view detail) {
  outcomes_.Record(url, outcome, status, detail, WallNow());
}

Status Crawler::Impl::Run(const std::vector<std::string>& seeds) {
  if (Status s = Setup(); !s.ok()) return s;
  stats_.started = true;
  started_ = last_progress_ = clock_->Now();
  hosts_->SetRunStart(started_);
  AdmitSeeds(seeds);
  {
    MutexLock lock(&commands_mu_);
    io_thread_ = std::this_thread::get_id();
    accepting_ = true;
  }
  while (!Finished()) {
    RunCommands();
    ConsumeResolved();
    // Requests due now start before the turn's admissions: a host's next request waits for
    // its delay, not for the links of the pages processed meanwhile.
    StartDue();
    ConsumeInbox();
    ConsumeShared();
    CheckStopAfter();
    StartDue();
    EvictHosts();
    if (!stop_.load() && !page_limit_reached_) ActivateParked();
    (void)db_->Commit();  // errors are sticky in db_->status() and logged
    RunCommands();        // e.g. seeds injected while the crawl was about to finish
    if (Finished()) break;
    fetcher_->Poll(PollTimeout());
    if (killed_) return AbandonAfterKill();
    Progress(false);
  }
  return Finish();
}

Status Crawler::Impl::Finish() {
  CloseCommands();
  stats_.complete = !stop_.load() && !page_limit_reached_;
  stats_.interrupted = stop_.load() && !stopped_after_;
  stats_.stopped_after = stopped_after_;
  stats_.page_limit_reached = page_limit_reached_;
  work_.Close();
  for (auto& t : workers_) t.join();
  workers_.clear();
  ConsumeInbox();
  if (!stats_.complete) RecordUnreached();
  Status s = sink_->Finish();
  if (!s.ok() && stop_.load()) {
    // Stopped while paused on an output error: not fatal — what could not be written is
    // recorded not-stored and stays queued in the crawl state for the next run.
    spdlog::warn("stopped while the output was failing ({}); unwritten pages stay queued",
                 s.ToString());
    s = Status::Ok();
  }
  ConsumeInbox();  // pages made durable by the last flush
  admission_->SaveChanged();
  Status c = db_->Commit();
  if (c.ok()) c = db_->Sync();
  if (s.ok() && !c.ok()) s = c;
  if (opts_.shared != nullptr) {
    // What the shared crawl knows of this worker's work must be written before it exits;
    // a shared crawl that failed is this run's error.
    Status st = opts_.shared->Stop();
    if (st.ok()) st = opts_.shared->status();
    if (s.ok() && !st.ok()) s = st;
  }
  Progress(true);
  PublishFinal();
  return s;
}

// What a kill -9 between two loop turns leaves: the writer may have written (and flushed)
// what it was given, but nothing the I/O thread had not committed reaches the state.
Status Crawler::Impl::AbandonAfterKill() {
  CloseCommands();
  work_.Close();
  for (auto& t : workers_) t.join();
  workers_.clear();
  (void)sink_->Finish();
  Progress(true);
  frontier_.reset();  // the queue store refers to the database
  admission_.reset();
  seen_.reset();
  {
    WriterLock lock(&pages_mu_);
    pages_open_ = false;
  }
  db_->AbandonForTesting();
  return Status::Aborted("killed for testing");
}

bool Crawler::Impl::Finished() const {
  if (fetcher_->in_flight() != 0 || dispatched_ != consumed_) return false;
  if (stop_.load() || page_limit_reached_) return true;
  if (admin_paused_) return false;            // paused by the operator: not complete
  if (opts_.freshness.recrawl) return false;  // runs until stopped
  if (opts_.shared != nullptr) {
    // A worker of a shared crawl ends with the whole crawl, not when its own queues run dry.
    return frontier_->Idle() && db_->parked() == 0 && opts_.shared->Complete();
  }
  return frontier_->Idle() && db_->parked() == 0 && !DueNow();
}

bool Crawler::Impl::DueNow() const {
  if (opts_.shared != nullptr) return false;  // the shared crawl hands due URLs out
  std::optional<int64_t> due = db_->NextDue();
  return due && *due <= WallNow();
}

void Crawler::Impl::CheckStopAfter() {
  const auto limit = opts_.freshness.stop_after;
  if (limit.count() <= 0 || stop_.load()) return;
  if (clock_->Now() - started_ < std::chrono::duration_cast<Clock::Duration>(limit)) return;
  spdlog::info("--stop-after {} ms reached: stopping (the state is saved; run again to resume)",
               limit.count());
  stopped_after_ = true;
  RequestStop();
}

// Due URLs enter the frontier in batches. While new URLs wait too, recrawls may take only
// `recrawl_share` of the page fetches: released recrawls (started or queued) are held to
// share / (1 - share) times the new fetches started, plus a little slack, so neither
// kind starves the other (docs/freshness.md).
void Crawler::Impl::ReleaseDue() {
  constexpr uint64_t kBatch = 256;
  constexpr double kSlack = 16;  // recrawls allowed before any new fetch started
  if (!DueNow() || recrawl_queued_ >= kBatch) return;
  uint64_t room = kBatch - recrawl_queued_;
  const size_t queued = frontier_->queued();
  const bool new_waiting = queued > recrawl_queued_;
  const double share = opts_.freshness.recrawl_share;
  if (new_waiting && share < 1.0) {
    const double allowed = share / (1.0 - share) * static_cast<double>(new_started_) + kSlack;
    const double used = static_cast<double>(recrawl_started_ + recrawl_queued_);
    if (used >= allowed) return;
    room = std::min<uint64_t>(room, static_cast<uint64_t>(allowed - used) + 1);
  }
  db_->TakeDue(WallNow(), room, [this](frontier::UrlItem item) {
    ++recrawl_queued_;
    AddOrPark(std::move(item));
  });
}

std::chrono::microseconds Crawler::Impl::PollTimeout() const {
  constexpr std::chrono::milliseconds kMax(100);
  if (stop_.load() || page_limit_reached_ || admin_paused_) return kMax;  // commands wake us
  if (dispatched_ - consumed_ >= opts_.max_pending_pages) return kMax;    // a worker wakes us
  std::optional<Clock::TimePoint> wake = frontier_->NextWakeup();
  // Recrawling with nothing to do but wait for the next due URL: sleep longer (a stop
  // request wakes the fetcher).
  const bool idle = opts_.freshness.recrawl && frontier_->Idle() && fetcher_->in_flight() == 0 &&
                    dispatched_ == consumed_;
  // A recrawl coming due wakes us. One already due is waiting for the recrawl share of the
  // budget (ReleaseDue), which only a fetch frees: no timer for it, or we would spin.
  if (std::optional<int64_t> due = opts_.shared ? std::nullopt : db_->NextDue();
      due && *due > WallNow()) {
    Clock::TimePoint at = hosts_->SteadyFromWall(*due);
    if (!wake || at < *wake) wake = at;
  }
  if (opts_.freshness.stop_after.count() > 0) {
    Clock::TimePoint at =
        started_ + std::chrono::duration_cast<Clock::Duration>(opts_.freshness.stop_after);
    if (!wake || at < *wake) wake = at;
  }
  const std::chrono::milliseconds cap = idle ? std::chrono::milliseconds(1000) : kMax;
  if (!wake) return cap;
  // To the microsecond, rounded up: rounded down, the poll would end just before the
  // wake-up and cost a loop turn for nothing.
  auto wait = std::chrono::ceil<std::chrono::microseconds>(*wake - clock_->Now());
  return std::clamp<std::chrono::microseconds>(wait, std::chrono::microseconds(0), cap);
}

void Crawler::Impl::StartDue() {
  // Paused while the output cannot be written (disk full, I/O error) or by the operator
  // (admin API): nothing new starts.
  if (!stop_.load() && !page_limit_reached_ && !sink_->paused() && db_->status().ok() &&
      !admin_paused_) {
    ReleaseDue();
    FillLeases();
  }
}

void Crawler::Impl::FillLeases() {
  while (dispatched_ - consumed_ < opts_.max_pending_pages &&
         fetcher_->in_flight() < opts_.fetch.max_concurrent) {
    std::optional<frontier::Lease> lease = frontier_->Next();
    if (!lease) break;
    HandleLease(std::move(*lease));
    if (page_limit_reached_ || stop_.load()) break;
  }
}

void Crawler::Impl::LeftFrontier(const frontier::UrlItem& item) {
  if (item.recrawl && recrawl_queued_ > 0) --recrawl_queued_;
}

void Crawler::Impl::HandleLease(frontier::Lease lease) {
  if (!overrides_.empty() && Blocked(lease.item.host)) {
    // Blocked by the operator after a DNS answer released the host: held again, no loss.
    frontier_->Complete(lease, {.kind = frontier::CompletionKind::kPutBack});
    frontier_->SetHeld(lease.item.host, true);
    return;
  }
  if (opts_.shared != nullptr && !opts_.shared->MayFetch(lease.item.host)) {
    // The lease on the host's partition is not known to be valid for the safety margin
    // (a renewal is late, e.g. during a Redis failover): no request; the URL goes back to
    // the front of its queue and the host waits. A lease found lost fails the shared crawl,
    // which stops this worker (ConsumeShared).
    frontier_->Complete(lease, {.kind = frontier::CompletionKind::kRequeue,
                                .retry_after = std::chrono::milliseconds(500)});
    ++stats_.lease_waits;
    return;
  }
  const HostTable::Host& host = hosts_->Ensure(lease.item.host);
  if (!host.dead_reason.empty()) {
    LeftFrontier(lease.item);
    Record(lease.item.url, host.dead_reason, 0, host.dead_detail);
    MarkDone(lease.item, 0);
    frontier_->Complete(lease, {.kind = frontier::CompletionKind::kNoRequest});
    return;
  }
  if (!host.ip_known && !KnowIp(lease)) return;
  std::optional<url::Url> u = url::Parse(lease.item.url);
  RobotsGate::CheckResult check =
      robots_->Check(lease.item.host, u ? u->path_and_query() : std::string_view("/"));
  switch (check.gate) {
    case RobotsGate::Gate::kFetchRobots: {
      std::string robots_url = robots_->RobotsUrl(lease.item.host);
      fetch::FetchRequest req;
      if (!Reachable(lease, /*robots=*/true, robots_url, &req)) return;
      StartFetch(std::move(lease), /*robots=*/true, std::move(robots_url), std::move(req));
      return;
    }
    case RobotsGate::Gate::kWait:
      // No rules yet and the next robots.txt attempt not due: back to the front of the
      // queue, the host held until then (no request was made).
      frontier_->Complete(
          lease, {.kind = frontier::CompletionKind::kRequeue,
                  .retry_after = std::chrono::ceil<std::chrono::milliseconds>(check.wait)});
      return;
    case RobotsGate::Gate::kDisallowed:
      LeftFrontier(lease.item);
      ++stats_.disallowed;
      Record(lease.item.url, "disallowed", 0, check.detail);
      MarkDone(lease.item, 0);
      frontier_->Complete(lease, {.kind = frontier::CompletionKind::kNoRequest});
      return;
    case RobotsGate::Gate::kAllowed:
      break;
  }
  fetch::FetchRequest req;
  if (!Reachable(lease, /*robots=*/false, lease.item.url, &req)) return;
  ++pages_started_;
  if (lease.item.recrawl) {
    ++recrawl_started_;
    LeftFrontier(lease.item);
  } else {
    ++new_started_;
  }
  if (opts_.max_pages > 0 && pages_started_ >= opts_.max_pages) page_limit_reached_ = true;
  std::string url = lease.item.url;
  StartFetch(std::move(lease), /*robots=*/false, std::move(url), std::move(req));
}

// Redirects are never followed inside a transfer: each hop is a request of its own in the
// host's slot (docs/architecture.md §1.1).
void Crawler::Impl::StartFetch(frontier::Lease lease, bool robots, std::string url,
                               fetch::FetchRequest req) {
  req.id = next_fetch_id_++;
  req.url = std::move(url);
  const uint64_t id = req.id;
  // Every response leaves its connection open for the host's next request, even when
  // nothing is queued yet: a page's links are admitted only after it has been processed.
  // The fetcher bounds what stays open (fetch.max_idle_connections hosts, 30 s each) and
  // keeps one connection cache per host, so idle connections cost no lookups.
  req.reuse_connection = true;
  InFlight flight{.lease = std::move(lease), .robots = robots};
  if (!robots && flight.lease.item.recrawl) {
    // A recrawl: the last stored version decides change and interval; its validators make
    // the request conditional (docs/freshness.md).
    if (opts_.shared != nullptr) {
      auto it = shared_previous_.find(flight.lease.item.fp);
      if (it != shared_previous_.end()) flight.previous = it->second;
    } else {
      flight.previous = db_->GetSeen(flight.lease.item.fp);
    }
    if (flight.previous && flight.previous->state != state::SeenRecord::State::kDone) {
      flight.previous.reset();
    }
    if (flight.previous && opts_.freshness.conditional_get) {
      if (!flight.previous->etag.empty()) {
        req.headers.emplace_back("If-None-Match", flight.previous->etag);
      }
      if (!flight.previous->last_modified.empty()) {
        req.headers.emplace_back("If-Modified-Since", flight.previous->last_modified);
      }
      flight.conditional = !req.headers.empty();
      if (flight.conditional) ++stats_.conditional;
    }
    ++stats_.recrawls;
  }
  in_flight_.emplace(id, std::move(flight));
  fetcher_->Start(std::move(req), [this, id](fetch::FetchResult&& r) {
    auto it = in_flight_.find(id);
    InFlight flight = std::move(it->second);
    in_flight_.erase(it);
    if (flight.robots) {
      OnRobotsDone(std::move(flight), std::move(r));
    } else {
      OnPageDone(std::move(flight), std::move(r));
    }
  });
}

}  // namespace harvest::crawl
