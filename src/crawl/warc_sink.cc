#include "crawl/warc_sink.h"

#include <spdlog/spdlog.h>

namespace harvest::crawl {

WarcSink::WarcSink(std::unique_ptr<store::WarcWriter> writer, OutcomeLog* outcomes,
                   std::chrono::milliseconds flush_interval, size_t queue_capacity)
    : writer_(std::move(writer)),
      outcomes_(outcomes),
      flush_interval_(flush_interval),
      queue_(queue_capacity) {}

WarcSink::~WarcSink() {
  queue_.Close();
  if (thread_.joinable()) thread_.join();
}

void WarcSink::Start() { thread_ = std::thread([this] { Loop(); }); }

void WarcSink::Submit(StoreTask task) { queue_.Push(std::move(task)); }

Status WarcSink::error() const {
  std::lock_guard lock(error_mu_);
  return error_;
}

void WarcSink::Loop() {
  auto last_flush = std::chrono::steady_clock::now();
  for (;;) {
    std::optional<StoreTask> task = queue_.PopFor(flush_interval_);
    if (task) Write(*task);
    auto now = std::chrono::steady_clock::now();
    if (now - last_flush >= flush_interval_) {
      FlushAll();
      last_flush = now;
    }
    if (!task && queue_.ClosedAndEmpty()) break;
  }
  FlushAll();
}

void WarcSink::FlushAll() {
  Status s = writer_->Flush();
  if (s.ok()) s = outcomes_->Flush();
  if (!s.ok()) SetError(s);
}

void WarcSink::SetError(const Status& s) {
  spdlog::error("writer: {}", s.ToString());
  std::lock_guard lock(error_mu_);
  if (error_.ok()) error_ = s;
}

void WarcSink::Write(StoreTask& task) {
  store::Capture& c = task.capture;
  std::string outcome = task.outcome;
  Result<store::RecordLocation> loc = Status::Internal("not written");
  auto it = c.payload.empty() ? digests_.end() : digests_.find(c.payload_digest);
  // Near-duplicates: same text up to SimHash distance 3 but a different payload (an exact
  // duplicate is a revisit, not a near-duplicate).
  if (task.has_simhash && it == digests_.end()) {
    if (simhashes_.FindNear(task.simhash, 3)) {
      ++near_duplicates_;
      if (task.detail.empty()) task.detail = "near-duplicate";
    }
    simhashes_.Insert(task.simhash, next_page_id_++);
  }
  if (it != digests_.end()) {
    loc = writer_->WriteRevisit(c, {it->second.uri, it->second.date_us, it->second.record_id});
    if (loc.ok()) {
      ++revisits_;
      if (outcome == "fetched") outcome = "revisit";
    }
  } else {
    loc = writer_->WriteResponse(c);
    if (loc.ok()) {
      ++responses_;
      if (!c.payload.empty()) {
        digests_.emplace(c.payload_digest, Original{c.target_uri, c.fetch_time_us, loc->record_id});
      }
    }
  }
  if (!loc.ok()) {
    SetError(loc.status());
    outcome = "not-stored";
    task.detail = loc.status().ToString();
  }
  bytes_written_ = writer_->bytes_written();
  outcomes_->Record(c.target_uri, outcome, c.status, task.detail, c.fetch_time_us);
}

Status WarcSink::Finish() {
  queue_.Close();
  if (thread_.joinable()) thread_.join();
  Status s = writer_->Close();
  if (!s.ok()) SetError(s);
  return error();
}

}  // namespace harvest::crawl
