#include "crawl/warc_sink.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

namespace harvest::crawl {
namespace {

// host[:port] of an absolute URL ("" if it has none).
std::string AuthorityOf(std::string_view url) {
  size_t start = url.find("://");
  if (start == std::string_view::npos) return "";
  start += 3;
  size_t end = url.find_first_of("/?#", start);
  std::string a(url.substr(start, end == std::string_view::npos ? url.npos : end - start));
  for (char& ch : a) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return a;
}

}  // namespace

WarcSink::WarcSink(std::unique_ptr<store::WarcWriter> writer, OutcomeLog* outcomes,
                   state::StateDb* db, Options options, std::function<void()> wake)
    : writer_(std::move(writer)),
      outcomes_(outcomes),
      db_(db),
      options_(options),
      wake_(std::move(wake)),
      queue_(options.queue_capacity),
      simhashes_(options.near_dup.index_max),
      stored_digests_(new std::atomic<uint64_t>[kStoredDigestSlots]) {
  for (size_t i = 0; i < kStoredDigestSlots; ++i) stored_digests_[i].store(0);
}

uint64_t WarcSink::DigestKey(const std::string& digest) {
  const uint64_t h = std::hash<std::string>{}(digest);
  return h == 0 ? 1 : h;  // 0 marks an empty slot
}

void WarcSink::NoteStoredDigest(const std::string& digest) {
  const uint64_t key = DigestKey(digest);
  stored_digests_[key % kStoredDigestSlots].store(key, std::memory_order_relaxed);
}

bool WarcSink::MaybeStoredDigest(const std::string& digest) const {
  const uint64_t key = DigestKey(digest);
  return stored_digests_[key % kStoredDigestSlots].load(std::memory_order_relaxed) == key;
}

WarcSink::~WarcSink() {
  abandon_ = true;
  queue_.Close();
  if (thread_.joinable()) thread_.join();
}

void WarcSink::RestoreNearDuplicates() {
  uint64_t last = 0, first = 0;
  Status s = db_->ForEachSimHash(options_.near_dup.index_max,
                                 [&](uint64_t seq, const state::SimHashRecord& r) {
                                   if (first == 0) first = seq;
                                   simhashes_.Insert(r.hash, seq);
                                   last = seq;
                                 });
  if (!s.ok()) spdlog::error("near-duplicate index: {}", s.ToString());
  next_simhash_seq_ = last + 1;
  trimmed_below_ = first > 0 ? first : 1;
  if (last > 0) spdlog::info("near-duplicate index: {} fingerprints restored", simhashes_.size());
}

void WarcSink::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void WarcSink::Prepare(StoreTask* task) const {
  if (task->not_modified && task->previous) return;
  if (task->capture.response_header.empty()) return;  // the writer reports it
  const std::string& digest = task->capture.payload_digest;
  if (!task->capture.payload.empty() && !digest.empty() && MaybeStoredDigest(digest)) return;
  if (store::WarcWriter::StoresPayloadAsIs(task->capture)) return;
  Result<store::PreparedResponse> p = writer_->PrepareResponse(task->capture);
  if (p.ok()) task->prepared = std::move(*p);  // else the writer builds the record itself
}

void WarcSink::Submit(StoreTask task) { queue_.Push(std::move(task)); }

void WarcSink::SubmitAttempt(AttemptTask attempt) { queue_.PushNoWait(std::move(attempt)); }

void WarcSink::Abandon() { abandon_ = true; }

std::vector<DurablePage> WarcSink::TakeDurable() {
  std::vector<DurablePage> out;
  MutexLock lock(&durable_mu_);
  out.swap(durable_);
  return out;
}

Status WarcSink::error() const {
  MutexLock lock(&error_mu_);
  return error_;
}

void WarcSink::SetError(const Status& s) {
  spdlog::error("writer: {}", s.ToString());
  MutexLock lock(&error_mu_);
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
    std::optional<std::variant<StoreTask, AttemptTask>> task =
        queue_.PopFor(options_.flush_interval);
    if (task) {
      if (StoreTask* store = std::get_if<StoreTask>(&*task)) {
        Write(*store);
      } else {
        WriteAttempt(std::get<AttemptTask>(*task));
      }
    }
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
      written_.clear();         // not durable: stays queued in the crawl state for the next run
      robots_written_.clear();  // the next owner fetches robots.txt again
      return false;
    }
  }
  Resumed();
  if (options_.shared != nullptr) {
    for (const auto& [host, robots] : robots_written_)
      options_.shared->PutHost(host, {.robots = robots});
  }
  robots_written_.clear();
  if (!written_.empty()) {
    {
      MutexLock lock(&durable_mu_);
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

void WarcSink::FindNearDuplicate(StoreTask& task) {
  std::optional<dedup::SimHashIndex::Match> near =
      simhashes_.FindNear(task.simhash, options_.near_dup.max_distance);
  if (!near) return;
  std::optional<state::SimHashRecord> rec = db_->GetSimHash(near->id);
  if (!rec) return;  // trimmed meanwhile
  ++near_duplicates_;
  store::Capture::NearDuplicate nd;
  nd.uri = rec->uri;
  nd.record_id = rec->record_id;
  nd.date_us = rec->date_us;
  nd.distance = near->distance;
  task.capture.near_duplicate_of = nd;
  task.detail += (task.detail.empty() ? "" : "; ") + std::string("near-duplicate of ") + rec->uri;
}

std::pair<uint64_t, state::SimHashRecord> WarcSink::IndexNearDuplicates(
    const StoreTask& task, const store::RecordLocation& loc) {
  const uint64_t seq = next_simhash_seq_++;
  const store::Capture& c = task.capture;
  simhashes_.Insert(task.simhash, seq);
  return {seq,
          {.hash = task.simhash,
           .uri = c.target_uri,
           .record_id = loc.record_id,
           .date_us = c.fetch_time_us}};
}

void WarcSink::TrimNearDuplicates(uint64_t seq) {
  // Records evicted from the RAM index leave the state in ranges of 1024.
  const size_t max = options_.near_dup.index_max;
  if (max > 0 && seq > max && seq - max >= trimmed_below_ + 1024) {
    trimmed_below_ = seq - max;
    (void)db_->TrimSimHashes(trimmed_below_);
  }
}

state::SeenRecord WarcSink::DoneRecord(StoreTask& task, Change change) {
  const store::Capture& c = task.capture;
  const state::SeenRecord* prev = task.previous ? &*task.previous : nullptr;
  state::SeenRecord r{.state = state::SeenRecord::State::kDone,
                      .status = c.status,
                      .fetch_time_us = c.fetch_time_us,
                      .etag = std::move(task.etag),
                      .last_modified = std::move(task.last_modified)};
  if (task.not_modified && prev != nullptr) {
    // A 304 may leave out the validators; the stored version's still apply.
    if (r.etag.empty()) r.etag = prev->etag;
    if (r.last_modified.empty()) r.last_modified = prev->last_modified;
    r.payload_digest = prev->payload_digest;
    r.simhash = prev->simhash;
  } else {
    r.payload_digest = c.payload_digest;
    r.simhash = task.has_simhash ? task.simhash : 0;
  }
  ScheduleNext(task.policy, prev, change, std::max(task.fetch_end_us, c.fetch_time_us), &r);
  if (prev != nullptr && change == Change::kChanged) ++changed_;
  if (prev != nullptr && change == Change::kUnchanged) ++unchanged_;
  return r;
}

std::string EmptyPayloadKey(std::string_view uri) { return "empty " + std::string(uri); }

// The local index first (this worker's own payloads), then the shared one.
std::optional<state::DigestRecord> WarcSink::FindDigest(const std::string& digest) {
  if (std::optional<state::DigestRecord> d = db_->FindDigest(digest)) return d;
  if (options_.shared != nullptr) return options_.shared->FindDigest(digest);
  return std::nullopt;
}

void WarcSink::Write(StoreTask& task) {
  store::Capture& c = task.capture;
  std::string outcome = task.outcome;
  const state::SeenRecord* prev = task.previous ? &*task.previous : nullptr;
  const bool not_modified = task.not_modified && prev != nullptr;
  Change change = prev != nullptr ? Change::kChanged : Change::kFirst;
  std::optional<store::Revisit> revisit;
  if (not_modified) {
    // 304: a server-not-modified revisit pointing at the last stored version.
    store::Revisit r;
    r.profile = store::RevisitProfile::kServerNotModified;
    r.refers_to_uri = c.target_uri;
    r.refers_to_date_us = prev->fetch_time_us;
    r.refers_to_digest = prev->payload_digest;
    if (!prev->payload_digest.empty()) {
      if (std::optional<state::DigestRecord> d = FindDigest(prev->payload_digest)) {
        r.refers_to_uri = d->uri;
        r.refers_to_date_us = d->date_us;
        r.refers_to_record_id = d->record_id;
      }
    }
    revisit = std::move(r);
    change = Change::kUnchanged;
    outcome = "not-modified";
    if (task.detail.empty()) {
      task.detail = "HTTP 304: unchanged since " + store::WarcDate(revisit->refers_to_date_us);
    }
  } else {
    // An empty payload (a redirect, most often) is the same as every other: only the same
    // URL's earlier empty response makes it a revisit — e.g. one stored just before a crash
    // and asked again after the restart, as the crawl does with what was not marked done.
    const std::string digest_key = c.payload.empty() ? EmptyPayloadKey(c.target_uri) : "";
    if (c.payload.empty()) {
      if (std::optional<state::DigestRecord> same = FindDigest(digest_key)) {
        store::Revisit r;
        r.refers_to_uri = same->uri;
        r.refers_to_date_us = same->date_us;
        r.refers_to_record_id = same->record_id;
        revisit = std::move(r);
      }
    } else {
      if (c.payload_digest.empty()) c.payload_digest = store::PayloadDigest(c.payload);
      if (std::optional<state::DigestRecord> original = FindDigest(c.payload_digest)) {
        store::Revisit r;
        r.refers_to_uri = original->uri;
        r.refers_to_date_us = original->date_us;
        r.refers_to_record_id = original->record_id;
        revisit = std::move(r);
      }
    }
    if (prev != nullptr) {
      const bool same_digest =
          !prev->payload_digest.empty() && prev->payload_digest == c.payload_digest;
      const bool near_last =
          options_.near_duplicate_is_unchanged && task.has_simhash && prev->simhash != 0 &&
          dedup::HammingDistance(prev->simhash, task.simhash) <= options_.near_dup.max_distance;
      if (same_digest || near_last) change = Change::kUnchanged;
    }
  }
  // Near-duplicates: same text up to the SimHash distance but a different payload (an
  // exact duplicate is a revisit, not a near-duplicate).
  if (task.has_simhash && !revisit) FindNearDuplicate(task);
  const bool metadata_only = c.near_duplicate_of.has_value() && options_.near_dup.metadata_only;
  Result<store::RecordLocation> loc = Status::Internal("not written");
  for (;;) {
    if (revisit) {
      loc = writer_->WriteRevisit(c, *revisit);
    } else if (metadata_only) {
      loc = writer_->WriteNearDuplicateMetadata(c);
    } else {
      loc = writer_->WriteResponse(c, task.prepared ? &*task.prepared : nullptr);
    }
    if (loc.ok() || !PauseAfter(loc.status())) break;
  }
  if (loc.ok()) {
    Resumed();
    if (!not_modified && !c.payload.empty() && !c.payload_digest.empty()) {
      NoteStoredDigest(c.payload_digest);
    }
    if (revisit) {
      ++revisits_;
      if (not_modified) ++not_modified_;
      if (outcome == "fetched") outcome = "revisit";
    } else if (!metadata_only) {
      ++responses_;
    }
    // The payload digest (a new payload), the near-duplicate index record (a new response)
    // and the admin API's page record (docs/operating.md "Pages"): one state write, right
    // after the WARC records, durable with the next flush's sync.
    state::StoredFetchRecords records;
    if (!revisit && !metadata_only) {
      if (!c.payload.empty()) {
        records.digest.emplace(c.payload_digest,
                               state::DigestRecord{c.target_uri, c.fetch_time_us, loc->record_id});
      } else if (!not_modified) {
        records.digest.emplace(EmptyPayloadKey(c.target_uri),
                               state::DigestRecord{c.target_uri, c.fetch_time_us, loc->record_id});
      }
      if (task.has_simhash) records.simhash = IndexNearDuplicates(task, *loc);
    }
    // Every request has one page record (docs/metadata.md): a near-duplicate kept as a
    // metadata record only has one without a WARC location, as an attempt.
    records.page = state::PageEntry{.url = c.target_uri,
                                    .host = AuthorityOf(c.target_uri),
                                    .status = c.status,
                                    .fetched_at_us = c.fetch_time_us,
                                    .mime = c.mime,
                                    .title = task.title,
                                    .digest = c.payload_digest,
                                    .revisit = revisit.has_value(),
                                    .outcome = outcome,
                                    .reason = task.detail};
    if (!metadata_only) {
      records.page->warc_file = loc->filename;
      records.page->warc_offset = loc->offset;
      records.page->warc_length = loc->length;
    }
    // Shared with the other workers right after the record's write(2): a worker that takes
    // this host over after a kill stores a refetch of this page as a revisit.
    if (options_.shared != nullptr && records.digest) {
      options_.shared->PutDigest(records.digest->first, records.digest->second);
    }
    Result<uint64_t> put = db_->PutStoredFetch(records);
    if (!put.ok()) spdlog::error("writer: {}", put.status().ToString());
    if (records.simhash) TrimNearDuplicates(records.simhash->first);
    if (task.mark_done) {
      state::SeenRecord record = DoneRecord(task, change);
      written_.push_back({std::move(task.item), std::move(record)});
    }
    if (task.shared_robots) robots_written_.push_back(std::move(*task.shared_robots));
  } else {
    SetError(loc.status());
    outcome = "not-stored";
    task.detail = loc.status().ToString();
  }
  bytes_written_ = writer_->bytes_written();
  // A page marked done only after the group's flush (FlushAll) has its line written with
  // that flush: a kill before it loses both, and the page is fetched again. Anything else
  // (robots.txt, whose rules the crawl keeps at once) is written now.
  outcomes_->Record(
      c.target_uri, outcome, c.status, task.detail, c.fetch_time_us,
      task.mark_done && loc.ok() ? OutcomeLog::Write::kWithFlush : OutcomeLog::Write::kNow);
}

void WarcSink::WriteAttempt(AttemptTask& a) {
  Result<uint64_t> put = db_->AddPage({.url = a.url,
                                       .host = AuthorityOf(a.url),
                                       .status = a.status,
                                       .fetched_at_us = a.fetched_at_us,
                                       .outcome = std::move(a.outcome),
                                       .reason = std::move(a.reason)});
  if (!put.ok()) {
    // The state's write error is sticky and stops the crawl; the URL stays queued.
    spdlog::error("writer: {}", put.status().ToString());
    return;
  }
  if (a.done) written_.push_back(std::move(*a.done));
}

Status WarcSink::Finish() {
  queue_.Close();
  if (thread_.joinable()) thread_.join();
  Status s = writer_->Close();
  if (!s.ok()) SetError(s);
  return error();
}

}  // namespace harvest::crawl
