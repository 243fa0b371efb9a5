// WarcSink: the crawl's single writer thread (docs/architecture.md §4). It appends every capture to
// the WARC files — a full response the first time a payload digest is seen, a revisit record
// (identical-payload-digest) after that — records the URL's outcome, notes near-duplicates by
// SimHash, and flushes in groups (one fsync covers many pages).
//
// Commit protocol (docs/architecture.md §1.3): a page is reported durable (TakeDurable) only after
// the flush that fsynced its records; the I/O thread then marks it done in the crawl state. Payload
// digests go to the state database as soon as their response is written, so a re-fetch after a
// crash finds them and becomes a revisit.
//
// Output errors (disk full, I/O error): the writer pauses — it keeps the capture, logs what
// failed and retries every `retry_interval` — so the bounded queues fill and the crawl stops
// taking new work until space returns. Nothing unwritten is reported durable. Abandon()
// (a stop request) ends the waiting: what cannot be written is recorded `not-stored` and
// stays queued in the crawl state for the next run.
//
// Thread-safety: Submit(), TakeDurable(), Abandon() from any thread; the rest is internal.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "crawl/outcome_log.h"
#include "crawl/page_processor.h"
#include "crawl/shared_crawl.h"
#include "crawl/work_queue.h"
#include "dedup/dedup.h"
#include "state/state.h"
#include "store/store.h"

namespace harvest::crawl {

// A page whose WARC records are durable.
struct DurablePage {
  frontier::UrlItem item;
  state::SeenRecord record;
};

// A request that left no WARC record (docs/metadata.md "What is a row"): an answer the
// crawler asks again (408, 429, 5xx), or a request that got no response (timeout, reset). The
// writer thread adds its page record — no WARC location — so page ids are given by one
// thread, in order, like those of stored fetches.
struct AttemptTask {
  std::string url;
  int status = 0;             // 0: no response
  int64_t fetched_at_us = 0;  // when the request started (wall µs)
  std::string outcome;        // "retried", or the URL's final outcome (gave-up, ...)
  std::string reason;
  // A URL given up without a response: its done mark, handed back (TakeDurable) once the
  // page record is durable, so a kill never leaves a done URL without its record.
  std::optional<DurablePage> done;
};

// The payload-digest index key of an empty payload of `uri`: empty payloads are all alike,
// so they are indexed by URL (a revisit only of the same URL's earlier empty response).
std::string EmptyPayloadKey(std::string_view uri);

class WarcSink {
 public:
  struct Options {
    std::chrono::milliseconds flush_interval{1000};
    std::chrono::milliseconds retry_interval{5000};
    size_t queue_capacity = 4096;
    NearDupOptions near_dup;
    // A new version within near_dup.max_distance of the last counts as unchanged.
    bool near_duplicate_is_unchanged = false;
    // A crawl shared by workers: its payload-digest index is asked first and told of every
    // new payload (revisits across workers). nullptr: the local state only.
    SharedCrawl* shared = nullptr;
  };
  // `db` must outlive the sink; `wake` is called (writer thread) when pages became durable
  // or the writer paused/resumed.
  WarcSink(std::unique_ptr<store::WarcWriter> writer, OutcomeLog* outcomes, state::StateDb* db,
           Options options, std::function<void()> wake);
  ~WarcSink();

  // Rebuilds the near-duplicate index from the crawl state (before Start()).
  void RestoreNearDuplicates();
  void Start();
  // Any thread (the process threads, before Submit): serialises and compresses the task's
  // response record ahead of the writer thread (store::WarcWriter::PrepareResponse), which
  // then only appends it. Left alone: a 304 (stored as a revisit), a response with a
  // Content-Encoding (stored blocks: little to gain), a payload this run has stored already.
  void Prepare(StoreTask* task) const;
  // Blocks while the queue is full (back-pressure).
  void Submit(StoreTask task);
  // Never blocks (the I/O thread; attempts are bounded by the requests in flight). Queued
  // with the captures, so written in submission order.
  void SubmitAttempt(AttemptTask attempt);
  // Pages made durable since the last call.
  std::vector<DurablePage> TakeDurable();
  // Stop waiting for a failed output to recover (see above).
  void Abandon();
  // Drains the queue, flushes and closes the WARC writer. Returns the first write error
  // that was not recovered from.
  Status Finish();

  uint64_t responses() const { return responses_.load(); }
  uint64_t revisits() const { return revisits_.load(); }
  uint64_t near_duplicates() const { return near_duplicates_.load(); }
  uint64_t not_modified() const { return not_modified_.load(); }
  uint64_t changed() const { return changed_.load(); }
  uint64_t unchanged() const { return unchanged_.load(); }
  uint64_t bytes_written() const { return bytes_written_.load(); }
  size_t backlog() const { return queue_.size(); }
  bool paused() const { return paused_.load(); }
  // The error that made the writer give up (ok while none).
  Status error() const;

 private:
  void Loop();
  void Write(StoreTask& task);
  void WriteAttempt(AttemptTask& attempt);
  std::optional<state::DigestRecord> FindDigest(const std::string& digest);
  // Looks for a near-duplicate of the task's page; tags the capture and the detail.
  void FindNearDuplicate(StoreTask& task);
  // Adds a stored response to the near-duplicate index in RAM; returns the record for the
  // crawl state (written with the fetch's other records).
  std::pair<uint64_t, state::SimHashRecord> IndexNearDuplicates(const StoreTask& task,
                                                                const store::RecordLocation& loc);
  // Deletes the index records evicted from RAM from the crawl state, in ranges.
  void TrimNearDuplicates(uint64_t seq);
  // The done record of a stored page, with its next recrawl.
  state::SeenRecord DoneRecord(StoreTask& task, Change change);
  bool FlushAll();  // false: not durable (error logged)
  // Waits retry_interval (or until Abandon); false when abandoned.
  bool PauseAfter(const Status& s);
  void Resumed();
  void SetError(const Status& s);

  std::unique_ptr<store::WarcWriter> writer_;
  OutcomeLog* outcomes_;
  state::StateDb* db_;
  Options options_;
  std::function<void()> wake_;
  WorkQueue<std::variant<StoreTask, AttemptTask>> queue_;
  std::thread thread_;

  // Writer-thread state.
  dedup::SimHashIndex simhashes_;
  uint64_t next_simhash_seq_ = 1;     // sequence of the next index record
  uint64_t trimmed_below_ = 1;        // index records below it are deleted from the state
  std::vector<DurablePage> written_;  // since the last successful flush
  // robots.txt records for the shared crawl whose captures were written since then.
  std::vector<std::pair<std::string, state::RobotsRecord>> robots_written_;

  // Payload digests this run has stored (responses and revisits), as a direct-mapped table
  // of their hashes: written by the writer thread, read by Prepare(), which does not prepare
  // a page whose payload is in it (it will be a revisit). Only a hint: a lost or colliding
  // entry costs or saves one prepared record; the writer decides what is stored.
  static constexpr size_t kStoredDigestSlots = size_t{1} << 18;
  static uint64_t DigestKey(const std::string& digest);
  void NoteStoredDigest(const std::string& digest);
  bool MaybeStoredDigest(const std::string& digest) const;
  std::unique_ptr<std::atomic<uint64_t>[]> stored_digests_;

  Mutex durable_mu_;
  std::vector<DurablePage> durable_ GUARDED_BY(durable_mu_);
  std::atomic<bool> abandon_{false};
  std::atomic<bool> paused_{false};
  std::atomic<uint64_t> responses_{0}, revisits_{0}, near_duplicates_{0}, bytes_written_{0};
  std::atomic<uint64_t> not_modified_{0}, changed_{0}, unchanged_{0};
  mutable Mutex error_mu_;
  Status error_ GUARDED_BY(error_mu_);
};

}  // namespace harvest::crawl
