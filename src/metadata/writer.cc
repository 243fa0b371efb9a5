// MetadataWriter (metadata.h).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include <spdlog/spdlog.h>

#include "metadata/metadata.h"

namespace harvest::metadata {
namespace {

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// fsync of a WARC file the crawl's writer may still be appending to: the records the rows
// name were appended before their page records, so after this they are durable.
Status SyncFile(const std::filesystem::path& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open " + file.string() + ": " + strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return Status::IOError("fsync " + file.string() + ": " + strerror(err));
  return Status::Ok();
}

}  // namespace

MetadataWriter::MetadataWriter(MetadataOptions options, PageSource source)
    : options_(std::move(options)), source_(std::move(source)) {
  if (options_.batch_rows == 0) options_.batch_rows = 1;
}

MetadataWriter::~MetadataWriter() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void MetadataWriter::Start() {
  thread_ = std::thread([this] { Loop(); });
}

WriterStats MetadataWriter::stats() const {
  MutexLock lock(&stats_mu_);
  return stats_;
}

bool MetadataWriter::SleepFor(std::chrono::milliseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (!stop_.load()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(until - now, std::chrono::milliseconds(50)));
  }
  return false;
}

void MetadataWriter::Failed(const Status& s) {
  db_.reset();  // reconnect next round: the transaction, if any, was rolled back
  backoff_ =
      backoff_.count() == 0 ? options_.min_backoff : std::min(options_.max_backoff, backoff_ * 2);
  bool first;
  {
    MutexLock lock(&stats_mu_);
    ++stats_.failures;
    stats_.connected = false;
    stats_.last_error = s.ToString();
    first = stats_.outage_since_us == 0;
    if (first) stats_.outage_since_us = NowUs();
  }
  if (first) {
    spdlog::warn("metadata: database unavailable, rows wait in the crawl state and are retried: {}",
                 s.ToString());
  }
}

Result<size_t> MetadataWriter::Step(PageSource& source) {
  if (db_ == nullptr) {
    Result<std::unique_ptr<Database>> db = Database::Connect(options_);
    if (!db.ok()) return db.status();
    Result<int> found = (*db)->Migrate();
    if (!found.ok()) return found.status();
    Result<uint64_t> cursor = (*db)->ReadCursor(options_.source);
    if (!cursor.ok()) return cursor.status();
    db_ = std::move(*db);
    int64_t outage_us;
    {
      MutexLock lock(&stats_mu_);
      stats_.cursor = std::max(stats_.cursor, *cursor);
      stats_.connected = true;
      outage_us = stats_.outage_since_us;
      stats_.outage_since_us = 0;
    }
    if (outage_us != 0) {
      spdlog::warn("metadata: database reachable again after {:.1f} s",
                   static_cast<double>(NowUs() - outage_us) / 1e6);
    }
  }
  const uint64_t after = stats().cursor;
  Result<std::vector<state::PageEntry>> pages = source(after, options_.batch_rows);
  if (!pages.ok()) return pages.status();
  if (pages->empty()) return size_t{0};
  std::vector<PageRow> rows;
  rows.reserve(pages->size());
  std::set<std::string> files;
  for (const state::PageEntry& p : *pages) {
    rows.push_back(BuildRow(p, options_.out_dir, options_.worker, options_.source));
    if (!p.attempt()) files.insert(p.warc_file);
  }
  for (const std::string& f : files) {
    if (Status s = SyncFile(options_.out_dir / f); !s.ok()) return s;
  }
  const uint64_t cursor = pages->back().id;
  Result<uint64_t> inserted = db_->WriteBatch(rows, options_.source, cursor);
  if (!inserted.ok()) return inserted.status();
  backoff_ = std::chrono::milliseconds(0);
  MutexLock lock(&stats_mu_);
  stats_.cursor = cursor;
  stats_.rows_written += *inserted;
  stats_.rows_existing += rows.size() - *inserted;
  ++stats_.batches;
  return rows.size();
}

void MetadataWriter::Loop() {
  while (!stop_.load()) {
    Result<size_t> n = Step(source_);
    if (!n.ok()) {
      Failed(n.status());
      if (!SleepFor(backoff_)) return;
      continue;
    }
    if (*n < options_.batch_rows && !SleepFor(options_.poll_interval)) return;
  }
}

Status MetadataWriter::Finish(PageSource final_source, std::chrono::milliseconds limit) {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  stop_.store(false);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  Status last;
  while (true) {
    Result<size_t> n = Step(final_source);
    if (n.ok() && *n == 0) return Status::Ok();
    if (!n.ok()) {
      last = n.status();
      Failed(last);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Unavailable("metadata: gave up after " + std::to_string(limit.count()) +
                                 " ms with rows after page " + std::to_string(stats().cursor) +
                                 " not written; last error: " + last.ToString());
    }
    if (!n.ok()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      std::this_thread::sleep_for(std::min(backoff_, left));
    }
  }
}

}  // namespace harvest::metadata
