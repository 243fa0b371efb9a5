#include "crawl/warc_sink.h"

#include <spdlog/spdlog.h>

namespace harvest::crawl {

WarcSink::WarcSink(std::unique_ptr<store::WarcWriter> writer, OutcomeLog* outcomes,
                   state::StateDb* db, Options options, std::function<void()> wake)
    : writer_(std::move(writer)),
      outcomes_(outcomes),
      db_(db),
      options_(options),
      wake_(std::move(wake)),
      queue_(options.queue_capacity) {}

WarcSink::~WarcSink() {
  abandon_ = true;
  queue_.Close();
  if (thread_.joinable()) thread_.join();
}

void WarcSink::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void WarcSink::Submit(StoreTask task) { queue_.Push(std::move(task)); }

void WarcSink::Abandon() { abandon_ = true; }

std::vector<DurablePage> WarcSink::TakeDurable() {
  std::vector<DurablePage> out;
  std::lock_guard lock(durable_mu_);
  out.swap(durable_);
  return out;
}

Status WarcSink::error() const {
  std::lock_guard lock(error_mu_);
  return error_;
}

void WarcSink::SetError(const Status& s) {
  spdlog::error("writer: {}", s.ToString());
  std::lock_guard lock(error_mu_);
  if (error_.ok()) error_ = s;
}

bool WarcSink::PauseAfter(const Status& s) {
  if (!paused_.exchange(true)) {
    spdlog::error(
        "writer: {} — crawl paused: no new fetches until the output can be written "
        "again (retrying every {} s)",
        s.ToString(), options_.retry_interval.count() / 1000.0);
    if (wake_) wake_();
  }
  auto until = std::chrono::steady_clock::now() + options_.retry_interval;
  while (!abandon_.load() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return !abandon_.load();
}

void WarcSink::Resumed() {
  if (paused_.exchange(false)) {
    spdlog::warn("writer: output writable again — crawl resumed");
    if (wake_) wake_();
  }
}

void WarcSink::Loop() {
  auto last_flush = std::chrono::steady_clock::now();
  for (;;) {
    std::optional<StoreTask> task = queue_.PopFor(options_.flush_interval);
    if (task) Write(*task);
    auto now = std::chrono::steady_clock::now();
    if (now - last_flush >= options_.flush_interval) {
      FlushAll();
      last_flush = now;
    }
    if (!task && queue_.ClosedAndEmpty()) break;
  }
  FlushAll();
}

bool WarcSink::FlushAll() {
  for (;;) {
    Status s = writer_->Flush();
    if (s.ok()) s = outcomes_->Flush();
    if (s.ok()) s = db_->Sync();
    if (s.ok()) break;
    if (!PauseAfter(s)) {
      SetError(s);
      written_.clear();  // not durable: stays queued in the crawl state for the next run
      return false;
    }
  }
  Resumed();
  if (!written_.empty()) {
    {
      std::lock_guard lock(durable_mu_);
      if (durable_.empty()) {
        durable_.swap(written_);
      } else {
        for (auto& p : written_) durable_.push_back(std::move(p));
      }
    }
    written_.clear();
    if (wake_) wake_();
  }
  return true;
}

void WarcSink::Write(StoreTask& task) {
  store::Capture& c = task.capture;
  std::string outcome = task.outcome;
  std::optional<state::DigestRecord> original;
  if (!c.payload.empty()) {
    if (c.payload_digest.empty()) c.payload_digest = store::PayloadDigest(c.payload);
    original = db_->FindDigest(c.payload_digest);
  }
  // Near-duplicates: same text up to SimHash distance 3 but a different payload (an exact
  // duplicate is a revisit, not a near-duplicate).
  if (task.has_simhash && !original) {
    if (simhashes_.FindNear(task.simhash, 3).has_value()) {
      ++near_duplicates_;
      if (task.detail.empty()) task.detail = "near-duplicate";
    }
    simhashes_.Insert(task.simhash, next_page_id_++);
  }
  Result<store::RecordLocation> loc = Status::Internal("not written");
  for (;;) {
    if (original) {
      loc = writer_->WriteRevisit(c, {original->uri, original->date_us, original->record_id});
    } else {
      loc = writer_->WriteResponse(c);
    }
    if (loc.ok() || !PauseAfter(loc.status())) break;
  }
  if (loc.ok()) {
    Resumed();
    if (original) {
      ++revisits_;
      if (outcome == "fetched") outcome = "revisit";
    } else {
      ++responses_;
      if (!c.payload.empty()) {
        Status s =
            db_->PutDigest(c.payload_digest, {c.target_uri, c.fetch_time_us, loc->record_id});
        if (!s.ok()) spdlog::error("writer: {}", s.ToString());
      }
    }
    if (task.mark_done) {
      written_.push_back({std::move(task.item),
                          {.state = state::SeenRecord::State::kDone,
                           .status = c.status,
                           .fetch_time_us = c.fetch_time_us,
                           .next_due_us = 0,
                           .etag = std::move(task.etag),
                           .last_modified = std::move(task.last_modified)}});
    }
  } else {
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
