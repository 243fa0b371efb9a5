// Private to src/state: StateDb's commit protocol (state.h, "Commit protocol"). The I/O
// thread gathers its writes in the pending batch and hands it over; the committer thread
// writes the handed-over batches in order, so the I/O thread does not wait for RocksDB. It
// also keeps the state's sticky error: the first write error, kept until a write succeeds.
//
// Threads: the I/O thread owns the pending batch (batch(), HandOver, MaybeHandOver,
// NoteNeededByReads, WriteNeededByReads, WritePending); WaitWritten, Sync, SetError and
// error() are for any thread (the writer thread syncs and records its errors); the
// committer thread, started by Start() and joined by Stop() (I/O thread), runs Loop.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "state/state.h"

namespace harvest::state {

class Committer {
 public:
  // Writes into `db`, which outlives the committer. The pending batch is handed over by
  // MaybeHandOver once it holds `max_batch_bytes`; Sync() fsyncs the write-ahead log only
  // when `sync` is set.
  Committer(rocksdb::DB* db, size_t max_batch_bytes, bool sync)
      : db_(db), max_batch_bytes_(max_batch_bytes), sync_(sync) {}
  ~Committer() { Stop(); }
  Committer(const Committer&) = delete;
  Committer& operator=(const Committer&) = delete;

  // Starts the committer thread (once the database is open and its meta values written).
  void Start();
  // Joins the committer thread after it wrote what was handed over (unless writing fails).
  // The pending batch is not written. Does nothing when not started.
  void Stop() EXCLUDES(mu_);

  // ---- I/O thread ----
  // Called at the start of every hand-over, before the pending batch is looked at: a table
  // that gathers its writes in RAM puts them into the batch there (ParkedTable's groups).
  void SetBeforeHandOver(std::function<void()> fn) { before_hand_over_ = std::move(fn); }
  // The pending batch: the I/O thread's writes until the next hand-over. The pointer stays
  // valid (a hand-over swaps the batch's contents, not the object).
  rocksdb::WriteBatch* batch() { return &batch_; }
  // Hands the pending batch to the committer thread (blocks while 4 wait); returns the
  // sticky error. While writes fail the batch stays pending and grows.
  Status HandOver() EXCLUDES(mu_);
  // Hands the pending batch over once it holds max_batch_bytes.
  void MaybeHandOver();
  // Notes an entry in the pending batch that a disk read may need before the batch is
  // handed over (a new queue entry: RocksQueueStore reads host queues back from disk).
  void NoteNeededByReads() { ++needed_by_reads_; }
  // Hands the pending batch over and waits for it when it holds such entries, or waits
  // for the handed-over batches when one of them did and may not be written yet (during a
  // drain there are none, and a write per refill would double its cost). Returns the
  // write error.
  Status WriteNeededByReads();
  // Hands the pending batch over and waits until it is written: reads that must see it.
  Status WritePending();

  // ---- Any thread ----
  // Until every handed-over batch is written (ok) or one failed (its error).
  Status WaitWritten() const EXCLUDES(mu_);
  // Everything handed over so far written, then the write-ahead log fsynced.
  Status Sync();
  // Records the first write error (sticky until a write succeeds).
  void SetError(const Status& s) EXCLUDES(error_mu_);
  Status error() const EXCLUDES(error_mu_);
  uint64_t commits() const { return commits_.load(); }
  uint64_t syncs() const { return syncs_.load(); }

 private:
  void Loop() EXCLUDES(mu_);
  // Writes one handed-over batch (committer thread). A failure is made sticky, and RocksDB
  // is asked to resume writing.
  Status WriteHandedOver(rocksdb::WriteBatch* batch) EXCLUDES(mu_, error_mu_);

  // ---- Set at construction ----
  rocksdb::DB* const db_;
  const size_t max_batch_bytes_;
  const bool sync_;

  // ---- I/O thread ----
  rocksdb::WriteBatch batch_;  // the pending batch
  std::function<void()> before_hand_over_;
  uint64_t needed_by_reads_ = 0;  // NoteNeededByReads calls since the last hand-over
  // A batch holding such entries was handed over and not waited for since: a read must
  // wait for it (the committer thread writes it without the I/O thread waiting).
  bool needed_in_flight_ = false;
  std::thread thread_;  // started by Start, joined by Stop

  // ---- The hand-over, guarded by mu_ ----
  // The committer thread writes the batches HandOver() queues, in order.
  mutable Mutex mu_;
  CondVar work_cv_;             // work, a retry or stopping
  mutable CondVar written_cv_;  // a batch written or failed
  std::deque<rocksdb::WriteBatch> to_write_ GUARDED_BY(mu_);
  std::vector<rocksdb::WriteBatch> spare_ GUARDED_BY(mu_);  // cleared, for reuse
  bool write_failed_ GUARDED_BY(mu_) = false;               // the head of to_write_ failed
  bool retry_requested_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;

  // ---- Committer thread only ----
  bool resume_failed_logged_ = false;

  // ---- Any thread ----
  std::atomic<uint64_t> commits_{0}, syncs_{0};
  mutable Mutex error_mu_ ACQUIRED_AFTER(mu_);  // WaitWritten holds both
  Status error_ GUARDED_BY(error_mu_);
};

}  // namespace harvest::state
