#include "crawl/recrawler.h"

#include <algorithm>
#include <chrono>

#include "crawl/admitter.h"
#include "crawl/schedule.h"

namespace harvest::crawl {

Recrawler::Recrawler(const CrawlOptions& opts, Clock* clock, state::StateDb* db,
                     frontier::Frontier* frontier, Admitter* admitter)
    : opts_(opts), clock_(clock), db_(db), frontier_(frontier), admitter_(admitter) {}

bool Recrawler::DueNow() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  std::optional<int64_t> due = NextDue();
  return due && *due <= clock_->WallMicros();
}

std::optional<int64_t> Recrawler::NextDue() const {
  if (opts_.shared != nullptr) return std::nullopt;  // the shared crawl hands due URLs out
  return db_->NextDue();
}

// Due URLs enter the frontier in batches. While new URLs wait too, recrawls may take only
// `recrawl_share` of the page fetches: released recrawls (started or queued) are held to
// share / (1 - share) times the new fetches started, plus a little slack, so neither
// kind starves the other (docs/freshness.md).
void Recrawler::ReleaseDue() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  constexpr uint64_t kBatch = 256;
  constexpr double kSlack = 16;  // recrawls allowed before any new fetch started
  if (!DueNow() || recrawl_queued_ >= kBatch) return;
  uint64_t room = kBatch - recrawl_queued_;
  const size_t queued = frontier_->queued();
  const bool new_waiting = queued > recrawl_queued_;
  const double share = opts_.freshness.recrawl_share;
  if (new_waiting && share < 1.0) {
    const double allowed = share / (1.0 - share) * static_cast<double>(new_started_) + kSlack;
    const double used = static_cast<double>(recrawl_started_ + recrawl_queued_);
    if (used >= allowed) return;
    room = std::min<uint64_t>(room, static_cast<uint64_t>(allowed - used) + 1);
  }
  db_->TakeDue(clock_->WallMicros(), room, [this](frontier::UrlItem item) {
    ++recrawl_queued_;
    admitter_->AddOrPark(std::move(item));
  });
}

void Recrawler::NoteStarted(const frontier::UrlItem& item) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (item.recrawl) {
    ++recrawl_started_;
    LeftFrontier(item);
  } else {
    ++new_started_;
  }
}

void Recrawler::LeftFrontier(const frontier::UrlItem& item) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (item.recrawl && recrawl_queued_ > 0) --recrawl_queued_;
}

std::optional<state::SeenRecord> Recrawler::Previous(const frontier::UrlItem& item) const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  std::optional<state::SeenRecord> previous;
  if (opts_.shared != nullptr) {
    auto it = shared_previous_.find(item.fp);
    if (it != shared_previous_.end()) previous = it->second;
  } else {
    previous = db_->GetSeen(item.fp);
  }
  if (previous && previous->state != state::SeenRecord::State::kDone) previous.reset();
  return previous;
}

void Recrawler::KeepPrevious(uint64_t fp, state::SeenRecord record) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  shared_previous_.insert_or_assign(fp, std::move(record));
}

// A final outcome without a stored response (disallowed, given up, host given up): asked
// again one refresh window later, when robots.txt or the host may have changed.
state::SeenRecord Recrawler::DoneRecordNow(const frontier::UrlItem& item, int status) const {
  state::SeenRecord record{.state = state::SeenRecord::State::kDone,
                           .status = status,
                           .fetch_time_us = clock_->WallMicros()};
  ScheduleNext(PolicyFor(opts_.freshness, item.host), nullptr, Change::kFirst, record.fetch_time_us,
               &record);
  return record;
}

void Recrawler::MarkDone(const frontier::UrlItem& item, int status) {
  RecordDone(item, DoneRecordNow(item, status));
}

// The done mark, in the local state and — a worker of a shared crawl — in the shared crawl,
// which keeps a continuous crawl's recrawl schedule (the local state gets no schedule entry:
// whoever holds the host when the URL is due recrawls it).
void Recrawler::RecordDone(const frontier::UrlItem& item, const state::SeenRecord& record) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (opts_.shared == nullptr) {
    db_->MarkDone(item, record);
    return;
  }
  state::SeenRecord local = record;
  local.next_due_us = 0;
  db_->MarkDone(item, local);
  shared_previous_.erase(item.fp);
  opts_.shared->Done(item,
                     std::chrono::ceil<std::chrono::milliseconds>(frontier_->HostDelay(item.host)),
                     opts_.freshness.recrawl ? &record : nullptr);
}

}  // namespace harvest::crawl
