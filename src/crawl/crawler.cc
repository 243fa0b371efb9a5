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
      processor_(opts_),
      work_(opts_.max_pending_pages + opts_.fetch.max_concurrent + 64) {}

Crawler::Impl::~Impl() {
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
  std::lock_guard lock(stats_mu_);
  return published_;
}

Status Crawler::Impl::Setup() {
  if (Status s = CheckOutDir(); !s.ok()) return s;
  std::error_code ec;
  std::filesystem::create_directories(opts_.out_dir, ec);
  if (ec) {
    return Status::IOError("cannot create output directory " + opts_.out_dir.string() + ": " +
                           ec.message());
  }
  if (Status s = OpenState(); !s.ok()) return s;
  robots_ = std::make_unique<RobotsGate>(RobotsGate::Options{.product_token = product_token_,
                                                             .ttl = opts_.robots_ttl,
                                                             .patience = opts_.robots_patience,
                                                             .retry = opts_.frontier},
                                         clock_, db_.get());
  if (resumed_) {
    RecoverWarcs();
    RestoreState();
  }
  if (Status s = outcomes_.Open(opts_.out_dir / "outcomes.jsonl"); !s.ok()) return s;
  opts_.warc.dir = opts_.out_dir;
  Result<std::unique_ptr<store::WarcWriter>> writer = store::WarcWriter::Open(opts_.warc);
  if (!writer.ok()) return writer.status();
  sink_ =
      std::make_unique<WarcSink>(std::move(*writer), &outcomes_, db_.get(),
                                 WarcSink::Options{.flush_interval = opts_.flush_interval,
                                                   .retry_interval = opts_.output_retry_interval,
                                                   .queue_capacity = opts_.max_pending_pages},
                                 [this] {
                                   if (fetcher_) fetcher_->Wakeup();
                                 });
  if (opts_.fetcher != nullptr) {
    fetcher_ = opts_.fetcher;
  } else {
    owned_fetcher_ = std::make_unique<fetch::CurlFetcher>(opts_.fetch);
    fetcher_ = owned_fetcher_.get();
  }
  if (Status s = fetcher_->status(); !s.ok()) return s;
  sink_->Start();
  int n = opts_.workers > 0 ? opts_.workers : DefaultWorkers();
  for (int i = 0; i < n; ++i) workers_.emplace_back([this] { WorkerLoop(); });
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
  AdmitSeeds(seeds);
  while (!Finished()) {
    ConsumeInbox();
    // Paused while the output cannot be written (disk full, I/O error): nothing new starts.
    if (!stop_.load() && !page_limit_reached_ && !sink_->paused() && db_->status().ok()) {
      FillLeases();
    }
    (void)db_->Commit();  // errors are sticky in db_->status() and logged
    if (Finished()) break;
    fetcher_->Poll(PollTimeout());
    if (killed_) return AbandonAfterKill();
    Progress(false);
  }
  return Finish();
}

Status Crawler::Impl::Finish() {
  stats_.complete = !stop_.load() && !page_limit_reached_;
  stats_.interrupted = stop_.load();
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
  Status c = db_->Commit();
  if (c.ok()) c = db_->Sync();
  if (s.ok() && !c.ok()) s = c;
  Progress(true);
  return s;
}

// What a kill -9 between two loop turns leaves: the writer may have written (and flushed)
// what it was given, but nothing the I/O thread had not committed reaches the state.
Status Crawler::Impl::AbandonAfterKill() {
  work_.Close();
  for (auto& t : workers_) t.join();
  workers_.clear();
  (void)sink_->Finish();
  Progress(true);
  frontier_.reset();  // the queue store refers to the database
  admission_.reset();
  seen_.reset();
  db_->AbandonForTesting();
  return Status::Aborted("killed for testing");
}

bool Crawler::Impl::Finished() const {
  if (fetcher_->in_flight() != 0 || dispatched_ != consumed_) return false;
  if (stop_.load() || page_limit_reached_) return true;
  return frontier_->Idle();
}

std::chrono::milliseconds Crawler::Impl::PollTimeout() const {
  constexpr std::chrono::milliseconds kMax(100);
  if (stop_.load() || page_limit_reached_) return kMax;
  if (dispatched_ - consumed_ >= opts_.max_pending_pages) return kMax;  // a worker wakes us
  std::optional<Clock::TimePoint> wake = frontier_->NextWakeup();
  if (!wake) return kMax;
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(*wake - clock_->Now());
  // Round up so we do not spin for the sub-millisecond rest.
  if (*wake > clock_->Now() && wait < std::chrono::milliseconds(1)) {
    wait = std::chrono::milliseconds(1);
  }
  return std::clamp(wait, std::chrono::milliseconds(0), kMax);
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

void Crawler::Impl::HandleLease(frontier::Lease lease) {
  const HostState& host = EnsureHost(lease.item.host);
  if (!host.dead_reason.empty()) {
    Record(lease.item.url, host.dead_reason, 0, host.dead_detail);
    MarkDone(lease.item, 0);
    frontier_->Complete(lease, {.kind = frontier::CompletionKind::kNoRequest});
    return;
  }
  std::optional<url::Url> u = url::Parse(lease.item.url);
  RobotsGate::CheckResult check =
      robots_->Check(lease.item.host, u ? u->path_and_query() : std::string_view("/"));
  switch (check.gate) {
    case RobotsGate::Gate::kFetchRobots: {
      std::string robots_url = robots_->RobotsUrl(lease.item.host);
      StartFetch(std::move(lease), /*robots=*/true, std::move(robots_url));
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
      ++stats_.disallowed;
      Record(lease.item.url, "disallowed", 0, check.detail);
      MarkDone(lease.item, 0);
      frontier_->Complete(lease, {.kind = frontier::CompletionKind::kNoRequest});
      return;
    case RobotsGate::Gate::kAllowed:
      break;
  }
  ++pages_started_;
  if (opts_.max_pages > 0 && pages_started_ >= opts_.max_pages) page_limit_reached_ = true;
  std::string url = lease.item.url;
  StartFetch(std::move(lease), /*robots=*/false, std::move(url));
}

// Redirects are never followed inside a transfer: each hop is a request of its own in the
// host's slot (docs/architecture.md §1.1).
void Crawler::Impl::StartFetch(frontier::Lease lease, bool robots, std::string url) {
  fetch::FetchRequest req;
  req.id = next_fetch_id_++;
  req.url = std::move(url);
  const uint64_t id = req.id;
  in_flight_.emplace(id, InFlight{std::move(lease), robots});
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
