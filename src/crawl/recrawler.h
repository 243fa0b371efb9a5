// Recrawler: what is done and when it comes due again (docs/freshness.md). It writes the done
// mark of every URL that got its final outcome — in the crawl state with the URL's next due
// time, and in a shared crawl also in the shared store, which keeps a continuous crawl's
// schedule there — and releases due URLs into the frontier within the recrawl share of the
// fetch budget: while new URLs wait too, recrawls get at most `recrawl_share` of the page
// fetches. It also knows the last fetch of a URL being recrawled (its validators make the
// request conditional; its digest and interval decide change and the next interval).
//
// Thread-safety: event-loop-only; every method asserts it runs on the crawl's I/O thread.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "base/clock.h"
#include "base/thread_checker.h"
#include "crawl/crawl.h"
#include "frontier/frontier.h"
#include "state/state.h"

namespace harvest::crawl {

class Admitter;

class Recrawler {
 public:
  // Everything given must outlive the recrawler.
  Recrawler(const CrawlOptions& opts, Clock* clock, state::StateDb* db,
            frontier::Frontier* frontier, Admitter* admitter);
  Recrawler(const Recrawler&) = delete;
  Recrawler& operator=(const Recrawler&) = delete;

  // A recrawl is due now (never in a shared crawl: the shared crawl hands due URLs out).
  bool DueNow() const;
  // When the next recrawl of this crawl comes due (wall µs); nullopt in a shared crawl or with
  // nothing scheduled.
  std::optional<int64_t> NextDue() const;
  // Moves due URLs into the frontier (Admitter::AddOrPark), in batches, within the share.
  void ReleaseDue();
  // A page fetch of `item` starts (a recrawl leaves the frontier's count of queued recrawls).
  void NoteStarted(const frontier::UrlItem& item);
  // A leased item left the frontier for good (fetched or given its outcome).
  void LeftFrontier(const frontier::UrlItem& item);

  // A recrawl's seen record before this fetch: the last stored version (nullopt: none).
  std::optional<state::SeenRecord> Previous(const frontier::UrlItem& item) const;
  // Shared crawl: the record of the last fetch (by any worker) of a recrawl URL taken, kept
  // until the URL is done.
  void KeepPrevious(uint64_t fp, state::SeenRecord record);

  // The done mark of a URL finished now without a stored capture (disallowed, given up):
  // asked again one refresh window later.
  state::SeenRecord DoneRecordNow(const frontier::UrlItem& item, int status) const;
  void MarkDone(const frontier::UrlItem& item, int status);
  // Writes the done mark `record` (the local state; a worker of a shared crawl: the shared
  // crawl too, which keeps the recrawl schedule).
  void RecordDone(const frontier::UrlItem& item, const state::SeenRecord& record);

 private:
  const CrawlOptions& opts_;
  Clock* const clock_;
  state::StateDb* const db_;
  frontier::Frontier* const frontier_;
  Admitter* const admitter_;
  ThreadChecker thread_;
  // Recrawl items put in the frontier and not yet leased, and page fetches started for new
  // URLs and for recrawls (ReleaseDue's budget).
  uint64_t recrawl_queued_ = 0;
  uint64_t new_started_ = 0;
  uint64_t recrawl_started_ = 0;
  std::unordered_map<uint64_t, state::SeenRecord> shared_previous_;  // KeepPrevious
};

}  // namespace harvest::crawl
