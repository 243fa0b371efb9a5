// Committer (committer.h): the commit protocol of StateDb (state.h, "Commit protocol"). The
// I/O thread hands its pending batch to the committer thread, which writes the batches in
// order; Sync() fsyncs the write-ahead log.
#include <spdlog/spdlog.h>

#include "state/committer.h"
#include "state/internal.h"

namespace harvest::state {

// ---- I/O thread ----

Status Committer::HandOver() {
  // Handed to the committer thread, which writes batches in order: the I/O thread does not
  // wait for RocksDB (writing would take about half of its admission time).
  constexpr size_t kMaxWaiting = 4;
  if (before_hand_over_) before_hand_over_();
  {
    MutexLock lock(&mu_);
    if (write_failed_) {
      retry_requested_ = true;
      work_cv_.Signal();
    }
    if (batch_.Count() > 0) {
      // Back-pressure: at most kMaxWaiting batches wait. While writes fail the batch stays
      // here and grows (the crawl takes no new work then).
      while (!(to_write_.size() < kMaxWaiting || write_failed_)) written_cv_.Wait(&mu_);
      if (to_write_.size() < kMaxWaiting) {
        to_write_.push_back(std::move(batch_));
        if (spare_.empty()) {
          batch_ = rocksdb::WriteBatch();
        } else {
          batch_ = std::move(spare_.back());
          spare_.pop_back();
        }
        if (needed_by_reads_ > 0) needed_in_flight_ = true;
        needed_by_reads_ = 0;
        work_cv_.Signal();
      }
    }
  }
  return error();
}

void Committer::MaybeHandOver() {
  if (batch_.GetDataSize() >= max_batch_bytes_) (void)HandOver();
}

Status Committer::WriteNeededByReads() {
  if (needed_by_reads_ == 0 && !needed_in_flight_) return Status::Ok();
  if (needed_by_reads_ > 0) (void)HandOver();
  Status s = WaitWritten();
  if (s.ok()) needed_in_flight_ = false;
  return s;
}

Status Committer::WritePending() {
  if (Status s = HandOver(); !s.ok()) return s;
  Status s = WaitWritten();
  if (s.ok()) needed_in_flight_ = false;
  return s;
}

// ---- The committer thread ----

void Committer::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void Committer::Stop() {
  if (!thread_.joinable()) return;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  work_cv_.SignalAll();
  thread_.join();
}

void Committer::Loop() {
  for (;;) {
    rocksdb::WriteBatch* b;
    {
      MutexLock lock(&mu_);
      while (!(stopping_ || (!to_write_.empty() && (!write_failed_ || retry_requested_)))) {
        work_cv_.Wait(&mu_);
      }
      // Closing: what was handed over is still written, unless writing fails.
      if (to_write_.empty() || (stopping_ && write_failed_ && !retry_requested_)) return;
      retry_requested_ = false;
      b = &to_write_.front();  // deque: stays put while others are added
    }
    const Status s = WriteHandedOver(b);  // without the lock
    MutexLock lock(&mu_);
    write_failed_ = !s.ok();
    if (s.ok()) {
      b->Clear();
      spare_.push_back(std::move(*b));
      to_write_.pop_front();
    }
    written_cv_.SignalAll();
  }
}

Status Committer::WriteHandedOver(rocksdb::WriteBatch* batch) {
  const Status s = FromRocks(db_->Write(rocksdb::WriteOptions(), batch), "state: write");
  if (!s.ok()) {
    // Kept at the head and retried at the next Commit() (e.g. once disk space returns);
    // later batches wait behind it. RocksDB refuses writes after a failed one until resumed.
    SetError(s);
    const rocksdb::Status resumed = db_->Resume();
    if (!resumed.ok() && !resume_failed_logged_) {
      // RocksDB 7.x keeps a failed write-ahead-log file failed (facebook/rocksdb#11643):
      // after a WAL write error no later write succeeds in this process.
      spdlog::error(
          "state: the database cannot write again in this process ({}); the "
          "crawl stays paused: stop it and run the same command again once the "
          "disk has space — nothing written before the error is lost",
          resumed.ToString());
      resume_failed_logged_ = true;
    }
    return s;
  }
  ++commits_;
  MutexLock error_lock(&error_mu_);
  if (!error_.ok()) {
    spdlog::warn("state: writable again after: {}", error_.ToString());
    error_ = Status::Ok();
  }
  return s;
}

// ---- Any thread ----

Status Committer::WaitWritten() const {
  MutexLock lock(&mu_);
  while (!(to_write_.empty() || write_failed_)) written_cv_.Wait(&mu_);
  if (!write_failed_) return Status::Ok();
  MutexLock error_lock(&error_mu_);
  return error_.ok() ? Status::IOError("state: write failed") : error_;
}

Status Committer::Sync() {
  // Everything committed so far: written by the committer thread, then the WAL fsynced.
  if (Status w = WaitWritten(); !w.ok()) return w;
  if (!sync_) return Status::Ok();
  Status s = FromRocks(db_->SyncWAL(), "state: sync");
  if (!s.ok()) {
    SetError(s);
  } else {
    ++syncs_;
  }
  return s;
}

void Committer::SetError(const Status& s) {
  MutexLock lock(&error_mu_);
  if (error_.ok()) {
    spdlog::error("state: {}", s.ToString());
    error_ = s;
  }
}

Status Committer::error() const {
  MutexLock lock(&error_mu_);
  return error_;
}

}  // namespace harvest::state
