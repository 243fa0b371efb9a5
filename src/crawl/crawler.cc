// The I/O thread's loop: setup, the loop's steps, finishing (docs/architecture.md §2, §4).
// The parts it runs have their own files (crawler_impl.h lists them); resuming is in
// recovery.cc.
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
      report_(clock_, opts_.progress),
      pipeline_(std::make_unique<PagePipeline>(opts_.max_pending_pages +
                                               opts_.fetch.max_concurrent + 64)),
      admin_(std::make_unique<LiveAdminBackend>(opts_.out_dir)) {}

Crawler::Impl::~Impl() {
  admin_->ClosePages();
  pipeline_->Stop();
}

void Crawler::Impl::RequestStop() {
  stop_.store(true);
  if (sink_) sink_->Abandon();
  if (issuer_ && issuer_->fetcher()) issuer_->fetcher()->Wakeup();
}

Status Crawler::Impl::Setup() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (Status s = CheckOutDir(opts_); !s.ok()) return s;
  if (Status s = CheckShared(opts_); !s.ok()) return s;
  std::error_code ec;
  std::filesystem::create_directories(opts_.out_dir, ec);
  if (ec) {
    return Status::IOError("cannot create output directory " + opts_.out_dir.string() + ": " +
                           ec.message());
  }
  if (Status s = OpenState(); !s.ok()) return s;
  admin_->OpenPages(db_.get());
  if (!db_->created()) {
    RecoverWarcs(opts_.out_dir, db_.get(), &stats_);
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
        if (issuer_ && issuer_->fetcher()) issuer_->fetcher()->Wakeup();
      });
  completions_ =
      std::make_unique<FetchCompletions>(FetchCompletions::Parts{.opts = &opts_,
                                                                 .clock = clock_,
                                                                 .db = db_.get(),
                                                                 .frontier = frontier_.get(),
                                                                 .hosts = hosts_.get(),
                                                                 .robots = robots_.get(),
                                                                 .admitter = admitter_.get(),
                                                                 .recrawler = recrawler_.get(),
                                                                 .pipeline = pipeline_.get(),
                                                                 .sink = sink_.get(),
                                                                 .outcomes = &outcomes_});
  issuer_ = std::make_unique<RequestIssuer>(RequestIssuer::Parts{.opts = &opts_,
                                                                 .clock = clock_,
                                                                 .frontier = frontier_.get(),
                                                                 .hosts = hosts_.get(),
                                                                 .robots = robots_.get(),
                                                                 .recrawler = recrawler_.get(),
                                                                 .completions = completions_.get(),
                                                                 .admitter = admitter_.get(),
                                                                 .outcomes = &outcomes_});
  if (Status s = issuer_->Setup(); !s.ok()) return s;
  fetch::Fetcher* fetcher = issuer_->fetcher();
  control_ = std::make_unique<OperatorControl>(
      OperatorControl::Parts{.opts = &opts_,
                             .clock = clock_,
                             .db = db_.get(),
                             .frontier = frontier_.get(),
                             .hosts = hosts_.get(),
                             .admitter = admitter_.get(),
                             .issuer = issuer_.get(),
                             .completions = completions_.get(),
                             .sink = sink_.get(),
                             .stopping = &stop_,
                             .stats = [this] { return CollectStats(); }});
  sink_->RestoreNearDuplicates();
  if (opts_.shared != nullptr) {
    if (Status st = opts_.shared->Start([fetcher] { fetcher->Wakeup(); }); !st.ok()) return st;
  }
  sink_->Start();
  // Fingerprints of this crawl compare with those of its earlier runs: the state's version.
  pipeline_->Start(PageProcessor(opts_, {.simhash_version = db_->simhash_version()}), sink_.get(),
                   fetcher, opts_.workers > 0 ? opts_.workers : DefaultWorkers());
  return Status::Ok();
}

Status Crawler::Impl::Run(const std::vector<std::string>& seeds) {
  if (Status s = Setup(); !s.ok()) return s;
  stats_.started = true;
  const Clock::TimePoint start = clock_->Now();
  report_.Start(start);
  hosts_->SetRunStart(start);
  completions_->SetRunStart(start);
  admitter_->AdmitSeeds(seeds);
  CommandChannel& commands = admin_->channel();
  commands.Open(control_.get(), [f = issuer_->fetcher()] { f->Wakeup(); });
  while (!Finished()) {
    commands.RunAll();
    issuer_->ConsumeResolved();
    // Requests due now start before the turn's admissions: a host's next request waits for
    // its delay, not for the links of the pages processed meanwhile.
    StartDue();
    ConsumeInbox();
    ConsumeShared();
    CheckStopAfter();
    StartDue();
    EvictHosts();
    if (!stop_.load() && !issuer_->page_limit_reached()) {
      admitter_->ReleaseDeferred();
      admitter_->ActivateParked();
    }
    (void)db_->Commit();  // errors are sticky in db_->status() and logged
    commands.RunAll();    // e.g. seeds injected while the crawl was about to finish
    if (Finished()) break;
    issuer_->fetcher()->Poll(PollTimeout());
    if (killed_) return AbandonAfterKill();
    Progress(false);
  }
  return Finish();
}

Status Crawler::Impl::Finish() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  admin_->channel().Close();
  const bool page_limit = issuer_->page_limit_reached();
  stats_.complete = !stop_.load() && !page_limit;
  stats_.interrupted = stop_.load() && !stats_.stopped_after;
  stats_.page_limit_reached = page_limit;
  pipeline_->Stop();
  ConsumeInbox();
  if (!stats_.complete) {
    // Stopped early (page limit, signal): what is still queued stays queued in the crawl
    // state — it is not final, the next run of the same command crawls it — so it is counted
    // for the summary, not drained (a large crawl may hold millions of queued URLs on disk).
    stats_.still_queued =
        frontier_->queued() + frontier_->retries_pending() + db_->parked() + db_->deferred();
    if (stats_.still_queued > 0) {
      spdlog::info("{} URLs still queued in {}; run the same command again to resume",
                   stats_.still_queued, opts_.out_dir.string());
    }
  }
  Status s = sink_->Finish();
  if (!s.ok() && stop_.load()) {
    // Stopped while paused on an output error: not fatal — what could not be written is
    // recorded not-stored and stays queued in the crawl state for the next run.
    spdlog::warn("stopped while the output was failing ({}); unwritten pages stay queued",
                 s.ToString());
    s = Status::Ok();
  }
  ConsumeInbox();  // pages made durable by the last flush
  admitter_->SaveChanged();
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
  HARVEST_ASSERT_ON_THREAD(thread_);
  admin_->channel().Close();
  pipeline_->Stop();
  (void)sink_->Finish();
  Progress(true);
  frontier_.reset();  // the queue store refers to the database
  admitter_.reset();  // the seen set's store too
  admin_->ClosePages();
  db_->AbandonForTesting();
  return Status::Aborted("killed for testing");
}

void Crawler::Impl::StartDue() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  // Paused while the output cannot be written (disk full, I/O error) or by the operator
  // (admin API): nothing new starts.
  if (stop_.load() || issuer_->page_limit_reached() || sink_->paused() || !db_->status().ok() ||
      control_->paused()) {
    return;
  }
  recrawler_->ReleaseDue();
  const fetch::Fetcher* fetcher = issuer_->fetcher();
  while (pipeline_->pending() < opts_.max_pending_pages &&
         fetcher->in_flight() < opts_.fetch.max_concurrent) {
    std::optional<frontier::Lease> lease = frontier_->Next();
    if (!lease) break;
    issuer_->HandleLease(std::move(*lease));
    if (issuer_->page_limit_reached() || stop_.load()) break;
  }
}

// Durable pages are taken before the links: a page's links entered the inbox before its
// capture reached the writer, so every page in `durable` has its links in `batch` (or in an
// earlier one), and its done mark lands in the state after their queue entries.
void Crawler::Impl::ConsumeInbox() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  std::vector<DurablePage> durable = sink_->TakeDurable();
  std::vector<PageLinks> batch = pipeline_->TakeLinks();
  admitter_->AdmitLinks(&batch);
  for (const DurablePage& page : durable) recrawler_->RecordDone(page.item, page.record);
}

void Crawler::Impl::ConsumeShared() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (opts_.shared == nullptr) return;
  if (Status s = opts_.shared->status(); !s.ok() && !stop_.load()) {
    spdlog::error("shared crawl: {}; stopping this worker", s.ToString());
    RequestStop();
    return;
  }
  SharedCrawl::Taken in;
  opts_.shared->TakeReady(&in);
  // A host's saved state first: its URLs must not find it without it.
  for (SharedCrawl::HostHandover& h : in.hosts) {
    if (h.records.counters) {
      // By host name, nothing else with it: the budget counters its last owner kept.
      admitter_->HandOverCounters(h.host, *h.records.counters);
      continue;
    }
    hosts_->HandOver(std::move(h));
  }
  for (auto& [fp, record] : in.previous) recrawler_->KeepPrevious(fp, std::move(record));
  for (frontier::UrlItem& item : in.urls) admitter_->AddOrPark(std::move(item));
}

void Crawler::Impl::EvictHosts() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  admitter_->TrimResident();
  // With URLs parked for want of room, idle hosts make way below the cap (a sixteenth of
  // it, at least one), so parked hosts come in by batches instead of one per eviction.
  // host_cache 0: no bound (nothing is evicted; the table's figures are kept).
  const size_t cap = opts_.host_cache == 0 ? SIZE_MAX
                     : db_->parked() > 0
                         ? opts_.host_cache - std::max<size_t>(opts_.host_cache / 16, 1)
                         : opts_.host_cache;
  hosts_->Evict(cap);
}

void Crawler::Impl::CheckStopAfter() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  const auto limit = opts_.freshness.stop_after;
  if (limit.count() <= 0 || stop_.load()) return;
  if (clock_->Now() - report_.started() < std::chrono::duration_cast<Clock::Duration>(limit)) {
    return;
  }
  spdlog::info("--stop-after {} ms reached: stopping (the state is saved; run again to resume)",
               limit.count());
  stats_.stopped_after = true;
  RequestStop();
}

bool Crawler::Impl::Finished() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (issuer_->fetcher()->in_flight() != 0 || pipeline_->pending() != 0) return false;
  if (stop_.load() || issuer_->page_limit_reached()) return true;
  if (control_->paused()) return false;       // paused by the operator: not complete
  if (opts_.freshness.recrawl) return false;  // runs until stopped
  if (opts_.shared != nullptr) {
    // A worker of a shared crawl ends with the whole crawl, not when its own queues run dry.
    return frontier_->Idle() && db_->parked() == 0 && opts_.shared->Complete();
  }
  // Deferred URLs are admitted as their hosts' budgets allow (a host idle at once; one at
  // its daily quota the next UTC day): not complete before.
  return frontier_->Idle() && db_->parked() == 0 && db_->deferred() == 0 && !recrawler_->DueNow();
}

std::chrono::microseconds Crawler::Impl::PollTimeout() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  constexpr std::chrono::milliseconds kMax(100);
  if (stop_.load() || issuer_->page_limit_reached() || control_->paused()) {
    return kMax;  // commands wake us
  }
  if (pipeline_->pending() >= opts_.max_pending_pages) return kMax;  // a worker wakes us
  std::optional<Clock::TimePoint> wake = frontier_->NextWakeup();
  // Recrawling with nothing to do but wait for the next due URL: sleep longer (a stop
  // request wakes the fetcher).
  const bool idle = opts_.freshness.recrawl && frontier_->Idle() &&
                    issuer_->fetcher()->in_flight() == 0 && pipeline_->pending() == 0;
  // A recrawl coming due wakes us. One already due is waiting for the recrawl share of the
  // budget (ReleaseDue), which only a fetch frees: no timer for it, or we would spin.
  if (std::optional<int64_t> due = recrawler_->NextDue(); due && *due > clock_->WallMicros()) {
    Clock::TimePoint at = hosts_->SteadyFromWall(*due);
    if (!wake || at < *wake) wake = at;
  }
  if (opts_.freshness.stop_after.count() > 0) {
    Clock::TimePoint at =
        report_.started() + std::chrono::duration_cast<Clock::Duration>(opts_.freshness.stop_after);
    if (!wake || at < *wake) wake = at;
  }
  const std::chrono::milliseconds cap = idle ? std::chrono::milliseconds(1000) : kMax;
  if (!wake) return cap;
  // To the microsecond, rounded up: rounded down, the poll would end just before the
  // wake-up and cost a loop turn for nothing.
  auto wait = std::chrono::ceil<std::chrono::microseconds>(*wake - clock_->Now());
  return std::clamp<std::chrono::microseconds>(wait, std::chrono::microseconds(0), cap);
}

void Crawler::Impl::Progress(bool final_line) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (!report_.Due(final_line)) return;
  report_.Publish(CollectStats(),
                  {.queued = frontier_->queued(),
                   .hosts = frontier_->hosts(),
                   .hosts_ready = frontier_->hosts_ready(),
                   .in_flight = issuer_->fetcher()->in_flight()},
                  final_line);
}

CrawlStats Crawler::Impl::CollectStats() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  CrawlStats s = stats_;
  admitter_->counters().AddTo(&s);
  issuer_->counters().AddTo(&s);
  completions_->counters().AddTo(&s);
  s.responses_stored = sink_->responses();
  s.revisits_stored = sink_->revisits();
  s.near_duplicates = sink_->near_duplicates();
  s.not_modified = sink_->not_modified();
  s.changed = sink_->changed();
  s.unchanged = sink_->unchanged();
  s.scheduled = db_->scheduled();
  if (std::optional<int64_t> due = db_->NextDue()) {
    s.next_due_in_s = std::max<int64_t>(0, (*due - clock_->WallMicros()) / 1'000'000);
  } else {
    s.next_due_in_s = -1;
  }
  s.deferred_waiting = db_->deferred();
  s.hosts_over_quota = admitter_->hosts_over_quota();
  s.warc_bytes = sink_->bytes_written();
  s.outcomes = outcomes_.count();
  s.output_paused = sink_->paused();
  s.elapsed_s = std::chrono::duration<double>(clock_->Now() - report_.started()).count();
  const HostTable::Stats& hs = hosts_->stats();
  s.hosts_evicted = hs.evicted;
  s.hosts_reloaded = hs.reloaded;
  s.hosts_resident = hs.resident;
  s.hosts_resident_peak = hs.resident_peak;
  const HttpsUpgrades::Stats& us = hosts_->upgrades().stats();
  s.upgraded = us.rewritten;
  s.hsts_hosts = us.hsts_hosts;
  s.learnt_hosts = us.learnt_hosts;
  return s;
}

void Crawler::Impl::PublishFinal() {
  admin::StatusSnapshot s = control_->GetStatus();
  s.state = stats_.complete ? "complete" : "stopped";
  s.pages_per_sec = 0;
  admin_->PublishFinal(std::move(s), control_->Metrics());
}

Crawler::Crawler(CrawlOptions options, Clock* clock)
    : impl_(std::make_unique<Impl>(std::move(options), clock)) {}
Crawler::~Crawler() = default;
Status Crawler::Run(const std::vector<std::string>& seeds) { return impl_->Run(seeds); }
void Crawler::RequestStop() { impl_->RequestStop(); }
void Crawler::KillForTesting() { impl_->KillForTesting(); }
CrawlStats Crawler::stats() const { return impl_->stats(); }
admin::Backend* Crawler::admin_backend() { return impl_->admin_backend(); }
Result<state::PageScan> Crawler::ScanPageRecords(const state::PageFilter& filter) const {
  return impl_->admin_backend()->ScanPageRecords(filter);
}

}  // namespace harvest::crawl
