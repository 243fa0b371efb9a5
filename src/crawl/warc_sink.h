// WarcSink: the crawl's single writer thread (DESIGN §4). It appends every capture to the
// WARC files — a full response the first time a payload digest is seen, a revisit record
// (identical-payload-digest) after that — records the URL's outcome, notes near-duplicates by
// SimHash, and flushes in groups (one fsync covers many pages).
//
// Thread-safety: Submit() from any thread; everything else is internal to the writer thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>

#include "base/clock.h"
#include "crawl/outcome_log.h"
#include "crawl/page_processor.h"
#include "crawl/work_queue.h"
#include "dedup/dedup.h"
#include "store/store.h"

namespace harvest::crawl {

class WarcSink {
 public:
  WarcSink(std::unique_ptr<store::WarcWriter> writer, OutcomeLog* outcomes,
           std::chrono::milliseconds flush_interval, size_t queue_capacity);
  ~WarcSink();

  void Start();
  // Blocks while the queue is full (back-pressure).
  void Submit(StoreTask task);
  // Drains the queue, flushes and closes the WARC writer. Returns the first write error.
  Status Finish();

  uint64_t responses() const { return responses_.load(); }
  uint64_t revisits() const { return revisits_.load(); }
  uint64_t near_duplicates() const { return near_duplicates_.load(); }
  uint64_t bytes_written() const { return bytes_written_.load(); }
  size_t backlog() const { return queue_.size(); }
  // The first error the writer met (ok while none).
  Status error() const;

 private:
  void Loop();
  void Write(StoreTask& task);
  void FlushAll();
  void SetError(const Status& s);

  std::unique_ptr<store::WarcWriter> writer_;
  OutcomeLog* outcomes_;
  std::chrono::milliseconds flush_interval_;
  WorkQueue<StoreTask> queue_;
  std::thread thread_;

  // Writer-thread state.
  struct Original {
    std::string uri;
    int64_t date_us;
    std::string record_id;
  };
  std::unordered_map<std::string, Original> digests_;
  dedup::SimHashIndex simhashes_;
  uint64_t next_page_id_ = 0;

  std::atomic<uint64_t> responses_{0}, revisits_{0}, near_duplicates_{0}, bytes_written_{0};
  mutable std::mutex error_mu_;
  Status error_;
};

}  // namespace harvest::crawl
