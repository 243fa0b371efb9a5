// The commit protocol of StateDb (state.h, "Commit protocol"): the I/O thread hands its
// pending batch to the committer thread, which writes the batches in order; the admitted
// set is ingested as sorted table files; Sync() fsyncs the write-ahead log.
#include <rocksdb/sst_file_writer.h>
#include <spdlog/spdlog.h>

#include <system_error>

#include "state/state_db_impl.h"

namespace harvest::state {

// ---- I/O thread ----

Status StateDb::Impl::HandOver() {
  // Handed to the committer thread, which writes batches in order: the I/O thread does not
  // wait for RocksDB (writing would take about half of its admission time).
  constexpr size_t kMaxWaiting = 4;
  {
    MutexLock lock(&commit_mu_);
    if (write_failed_) {
      retry_requested_ = true;
      commit_cv_.Signal();
    }
    if (batch_.Count() > 0) {
      // Back-pressure: at most kMaxWaiting batches wait. While writes fail the batch stays
      // here and grows (the crawl takes no new work then).
      while (!(to_write_.size() < kMaxWaiting || write_failed_)) written_cv_.Wait(&commit_mu_);
      if (to_write_.size() < kMaxWaiting) {
        to_write_.push_back(std::move(batch_));
        if (spare_.empty()) {
          batch_ = rocksdb::WriteBatch();
        } else {
          batch_ = std::move(spare_.back());
          spare_.pop_back();
        }
        queue_puts_pending_ = 0;
        commit_cv_.Signal();
      }
    }
  }
  return error();
}

void StateDb::Impl::MaybeCommit() {
  if (batch_.GetDataSize() >= options_.max_batch_bytes) (void)HandOver();
}

Status StateDb::Impl::WriteQueueEntries() {
  if (queue_puts_pending_ == 0) return Status::Ok();
  (void)HandOver();
  return WaitWritten();
}

Status StateDb::Impl::Commit() {
  Status s = HandOver();
  if (!s.ok() || recent_.size() < next_ingest_at_) return s;
  s = WaitWritten();
  if (!s.ok()) return s;
  // Fingerprints go to the admitted set only after their queue entries are durable: an
  // admitted fingerprint without its entry would be a URL refused as seen and never
  // fetched. Commit() runs between admissions (an admission's seen insert and its queue
  // entry are made in one step of the I/O thread), so every entry is in the batch just
  // written; the WAL is synced first because the ingested file is.
  if (options_.sync) {
    s = FromRocks(db_->SyncWAL(), "state: sync");
    if (!s.ok()) {
      SetError(s);
      return s;
    }
  }
  return Ingest();
}

void StateDb::Impl::Close() {
  Status s = HandOver();
  if (s.ok()) s = Sync();
  if (s.ok()) s = Ingest();
  if (s.ok()) s = HandOver();
  if (s.ok()) s = Sync();
  if (!s.ok()) spdlog::error("state: closing: {}", s.ToString());
}

Status StateDb::Impl::Ingest() {
  // One sorted table file of the admissions since the last ingest costs a fraction of a
  // seen-store insert per admission (a random 64-bit key into a skip list and then through
  // every compaction level, the largest cost of admission at scale: docs/benchmarks.md,
  // "Durable frontier at scale").
  next_ingest_at_ = recent_.size() + std::max<size_t>(options_.ingest_every / 4, 1);
  // Every queue entry up to `through` has its fingerprint in `recent_` or ingested already.
  const uint64_t through = last_queue_seq_;
  if (recent_.size() > 0) {
    if (Status s = IngestRecent(); !s.ok()) {
      SetError(s);
      return s;
    }
    recent_.Clear();  // in place: no second table while the first is freed
    next_ingest_at_ = std::max<size_t>(options_.ingest_every, 1);
    ++ingests_;
  }
  AdvanceAdmittedThrough(through);
  return Status::Ok();
}

// Writes `recent_` to a table file and moves the file into the admitted column family.
Status StateDb::Impl::IngestRecent() {
  const std::filesystem::path file = options_.dir / "admitted-ingest.sst";
  std::error_code ec;
  std::filesystem::remove(file, ec);
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), admitted_options_, admitted_);
  rocksdb::Status rs = writer.Open(file.string());
  std::string key;
  for (uint64_t fp : recent_.SortedKeys()) {
    if (!rs.ok()) break;
    key.clear();
    PutBigEndian(&key, fp, 8);
    rs = writer.Put(key, rocksdb::Slice());
  }
  if (rs.ok()) rs = writer.Finish();
  if (rs.ok()) {
    rocksdb::IngestExternalFileOptions io;
    io.move_files = true;
    rs = db_->IngestExternalFile(admitted_, {file.string()}, io);
  }
  std::filesystem::remove(file, ec);
  return FromRocks(rs, "state: ingesting admitted URLs");
}

// Records (in the pending batch) that every queue entry up to `through` has its
// fingerprint in the admitted set.
void StateDb::Impl::AdvanceAdmittedThrough(uint64_t through) {
  if (through <= admitted_through_) return;
  admitted_through_ = through;
  std::string v;
  PutBigEndian(&v, through, 8);
  batch_.Put(meta_, "admitted_through", v);
}

// ---- The committer thread ----

void StateDb::Impl::StartCommitter() {
  committer_ = std::thread([this] { CommitterLoop(); });
}

void StateDb::Impl::StopCommitter() {
  if (!committer_.joinable()) return;
  {
    MutexLock lock(&commit_mu_);
    stopping_ = true;
  }
  commit_cv_.SignalAll();
  committer_.join();
}

void StateDb::Impl::CommitterLoop() {
  for (;;) {
    rocksdb::WriteBatch* b;
    {
      MutexLock lock(&commit_mu_);
      while (!(stopping_ || (!to_write_.empty() && (!write_failed_ || retry_requested_)))) {
        commit_cv_.Wait(&commit_mu_);
      }
      // Closing: what was handed over is still written, unless writing fails.
      if (to_write_.empty() || (stopping_ && write_failed_ && !retry_requested_)) return;
      retry_requested_ = false;
      b = &to_write_.front();  // deque: stays put while others are added
    }
    const Status s = WriteHandedOver(b);  // without the lock
    MutexLock lock(&commit_mu_);
    write_failed_ = !s.ok();
    if (s.ok()) {
      b->Clear();
      spare_.push_back(std::move(*b));
      to_write_.pop_front();
    }
    written_cv_.SignalAll();
  }
}

Status StateDb::Impl::WriteHandedOver(rocksdb::WriteBatch* batch) {
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

Status StateDb::Impl::WaitWritten() const {
  MutexLock lock(&commit_mu_);
  while (!(to_write_.empty() || write_failed_)) written_cv_.Wait(&commit_mu_);
  if (!write_failed_) return Status::Ok();
  MutexLock error_lock(&error_mu_);
  return error_.ok() ? Status::IOError("state: write failed") : error_;
}

Status StateDb::Impl::Sync() {
  // Everything committed so far: written by the committer thread, then the WAL fsynced.
  if (Status w = WaitWritten(); !w.ok()) return w;
  if (!options_.sync) return Status::Ok();
  Status s = FromRocks(db_->SyncWAL(), "state: sync");
  if (!s.ok()) {
    SetError(s);
  } else {
    ++syncs_;
  }
  return s;
}

void StateDb::Impl::SetError(const Status& s) {
  MutexLock lock(&error_mu_);
  if (error_.ok()) {
    spdlog::error("state: {}", s.ToString());
    error_ = s;
  }
}

Status StateDb::Impl::error() const {
  MutexLock lock(&error_mu_);
  return error_;
}

}  // namespace harvest::state
