// PagePipeline: the process pool (docs/architecture.md §1.3, §4). The I/O thread dispatches
// fetched responses; worker threads process them (decode, extract links, digests, the WARC
// records: PageProcessor), put the page's links in the inbox, wake the fetcher's poll, and
// hand the records to the WARC sink. Links go in before the records, so a page is marked done
// (once its records are durable) only after the I/O thread took its links.
//
// Thread-safety: Start, Dispatch, TakeLinks, pending and Stop on the I/O thread (asserted);
// the inbox is shared with the workers under its mutex.
#pragma once

#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/thread_checker.h"
#include "crawl/page_processor.h"
#include "crawl/warc_sink.h"
#include "crawl/work_queue.h"
#include "fetch/fetch.h"

namespace harvest::crawl {

class PagePipeline {
 public:
  // `capacity`: tasks the queue holds before Dispatch blocks.
  explicit PagePipeline(size_t capacity);
  // Stops the workers (what they hold is processed first).
  ~PagePipeline();
  PagePipeline(const PagePipeline&) = delete;
  PagePipeline& operator=(const PagePipeline&) = delete;

  // Starts `workers` threads; `sink` gets the records, `fetcher` is woken when links come in.
  // Both must outlive the workers (Stop).
  void Start(PageProcessor processor, WarcSink* sink, fetch::Fetcher* fetcher, int workers);
  void Dispatch(PageTask task);
  // The links of the pages processed since the last call, in the order they were processed.
  std::vector<PageLinks> TakeLinks() EXCLUDES(inbox_mu_);
  // Pages dispatched whose links were not taken yet.
  uint64_t pending() const;
  // No more tasks: the workers finish the queue and end.
  void Stop();

 private:
  void WorkerLoop() EXCLUDES(inbox_mu_);

  ThreadChecker thread_;
  WorkQueue<PageTask> work_;
  // Set by Start before the workers start, then constant.
  std::optional<PageProcessor> processor_;
  WarcSink* sink_ = nullptr;
  fetch::Fetcher* fetcher_ = nullptr;
  std::vector<std::thread> workers_;
  Mutex inbox_mu_;
  std::vector<PageLinks> inbox_ GUARDED_BY(inbox_mu_);
  uint64_t dispatched_ = 0;  // I/O thread
  uint64_t taken_ = 0;       // I/O thread
};

}  // namespace harvest::crawl
