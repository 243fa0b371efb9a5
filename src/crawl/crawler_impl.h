// Crawler::Impl: the I/O thread's loop (private to src/crawl). It owns the crawl's parts and
// runs them in turn (docs/architecture.md §2, §4):
//
//   HostTable        per-host state beside the frontier, LRU eviction, operator overrides
//   Admitter         admission of seeds and links, priorities, parking (bounded memory)
//   Recrawler        done marks, due recrawls within the recrawl share
//   RequestIssuer    leases → DNS/addresses → robots.txt gate → requests (owns the fetcher)
//   FetchCompletions what a completed request decides; hand-off to the process pool
//   PagePipeline     the process pool's worker threads and their inbox of links
//   WarcSink         the writer thread: WARC, CDXJ, outcomes, durability
//   OperatorControl  the admin API's commands, reached through LiveAdminBackend's channel
//   RunReport        published figures and the progress line
//
// What remains here is setup and recovery, the loop (commands, lookups, due starts, the
// inbox, the shared crawl, eviction, the state commit, the poll, progress) and finishing.
//
// Thread-safety: event-loop-only — everything but RequestStop(), stats() and the admin
// backend runs on the thread that called Run() (asserted).
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/thread_checker.h"
#include "crawl/admitter.h"
#include "crawl/crawl.h"
#include "crawl/fetch_completions.h"
#include "crawl/host_table.h"
#include "crawl/live_admin_backend.h"
#include "crawl/operator_control.h"
#include "crawl/outcome_log.h"
#include "crawl/page_pipeline.h"
#include "crawl/recrawler.h"
#include "crawl/request_issuer.h"
#include "crawl/robots_gate.h"
#include "crawl/run_report.h"
#include "crawl/warc_sink.h"

namespace harvest::crawl {

class Crawler::Impl {
 public:
  Impl(CrawlOptions options, Clock* clock);
  ~Impl();
  Status Run(const std::vector<std::string>& seeds);
  void RequestStop();
  void KillForTesting() { killed_ = true; }
  CrawlStats stats() const { return report_.published(); }
  LiveAdminBackend* admin_backend() { return admin_.get(); }

 private:
  // Setup and recovery (crawler.cc, recovery.cc).
  Status Setup();
  // The crawl state and the parts over it.
  Status OpenState();
  void RestoreState();
  Status Finish();
  Status AbandonAfterKill();

  // The loop's steps (crawler.cc).
  // Due recrawls and new leases, unless the crawl is stopping, paused or over its page limit.
  void StartDue();
  // Links of processed pages are admitted; durable pages are marked done.
  void ConsumeInbox();
  // URLs of this worker's partitions of a shared crawl (docs/distributed.md): admitted by
  // some worker, taken for this one; they enter the frontier without the local seen test.
  void ConsumeShared();
  // Bounded memory: trims admission's resident counters and evicts the least recently active
  // hosts without work beyond opts_.host_cache. Called right before the state commit, so
  // what an eviction writes is handed over before any reload reads it.
  void EvictHosts();
  void CheckStopAfter();
  bool Finished() const;
  std::chrono::microseconds PollTimeout() const;
  // The figures (CrawlStats merged from the parts) to other threads and the progress line,
  // once a second or `final_line`.
  void Progress(bool final_line);
  CrawlStats CollectStats() const;
  // The admin API's final status and metrics.
  void PublishFinal();

  CrawlOptions opts_;
  Clock* clock_;
  std::atomic<bool> stop_{false};
  bool killed_ = false;  // KillForTesting(): leave as a kill -9 would
  CrawlStats stats_;     // the loop's own figures (setup, resume, how the run ended)
  RunReport report_;

  // The parts, in the order they are made. db_ first: the frontier's queue store refers to it.
  std::unique_ptr<state::StateDb> db_;
  std::unique_ptr<frontier::Frontier> frontier_;
  std::unique_ptr<RobotsGate> robots_;
  std::unique_ptr<HostTable> hosts_;
  std::unique_ptr<Admitter> admitter_;
  std::unique_ptr<Recrawler> recrawler_;
  OutcomeLog outcomes_;
  std::unique_ptr<PagePipeline> pipeline_;
  std::unique_ptr<RequestIssuer> issuer_;  // before sink_: the sink's thread wakes its fetcher
  std::unique_ptr<WarcSink> sink_;
  std::unique_ptr<FetchCompletions> completions_;
  std::unique_ptr<OperatorControl> control_;
  // Made with the Impl: the admin API may be reached before Run().
  std::unique_ptr<LiveAdminBackend> admin_;
  ThreadChecker thread_;
};

// recovery.cc: the checks of the output directory before a crawl opens it, and the recovery
// of the WARC files a crash may have left torn or unindexed (their payload digests go back
// into the state).
Status CheckOutDir(const CrawlOptions& opts);
Status CheckShared(const CrawlOptions& opts);
void RecoverWarcs(const std::filesystem::path& out_dir, state::StateDb* db, CrawlStats* stats);

}  // namespace harvest::crawl
