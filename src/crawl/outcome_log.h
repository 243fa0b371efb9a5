// OutcomeLog: <out>/outcomes.jsonl, one JSON object per final outcome of a URL
// (docs/architecture.md §1.3: every admitted URL is fetched, retried, or given a final recorded
// outcome).
//
// Line format: {"url":...,"outcome":...,"status":N,"detail":...,"time_us":N}
// Outcomes: the names in kOutcomeNames (documented in docs/crawling.md; a test compares the
// two). Every outcome but fetched and revisit carries a detail naming its cause.
//
// Durability: a line recorded with Write::kNow is appended with one write(2) as it is
// recorded, so it survives a kill -9 of the process; one recorded with Write::kWithFlush
// waits in memory for the next Flush() (which writes and fsyncs everything pending). The
// writer thread records a stored page's outcome kWithFlush: the page is marked done only
// after that flush, so a kill that loses the line also leaves the page to be fetched again
// (docs/recovery.md). robots.txt, whose rules the crawl keeps at once, is recorded kNow. Open() on
// an existing log cuts a torn last line (a kill during the write) and appends after it.
//
// Thread-safety: Record() is safe from any thread (internally locked).
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "base/status.h"

namespace harvest::crawl {

// Every outcome the crawl records, spelled as in outcomes.jsonl.
inline constexpr std::array<std::string_view, 15> kOutcomeNames = {"fetched",
                                                                   "revisit",
                                                                   "not-modified",
                                                                   "disallowed",
                                                                   "gave-up",
                                                                   "robots-unavailable",
                                                                   "crawl-delay-too-long",
                                                                   "blocked-address",
                                                                   "upgraded",
                                                                   "redirect-limit",
                                                                   "trap-long-url",
                                                                   "trap-many-params",
                                                                   "trap-repeated-segment",
                                                                   "trap-backlog-cap",
                                                                   "not-stored"};
bool IsOutcomeName(std::string_view name);

class OutcomeLog {
 public:
  OutcomeLog() = default;
  ~OutcomeLog();
  OutcomeLog(const OutcomeLog&) = delete;
  OutcomeLog& operator=(const OutcomeLog&) = delete;

  // When a recorded line is written (see "Durability" above). Lines reach the file in the
  // order they were recorded either way: a kNow line writes the kWithFlush lines before it.
  enum class Write {
    kNow,        // one write(2) before Record returns
    kWithFlush,  // at the next Flush(), or once kMaxDeferredBytes are waiting
  };
  static constexpr size_t kMaxDeferredBytes = 64 * 1024;

  Status Open(const std::filesystem::path& file);
  // REQUIRES: IsOutcomeName(outcome) (checked in debug builds).
  void Record(std::string_view url, std::string_view outcome, int status, std::string_view detail,
              int64_t time_us, Write write = Write::kNow);
  Status Flush();
  uint64_t count() const;

 private:
  Status WritePending() REQUIRES(mu_);

  mutable Mutex mu_;
  int fd_ GUARDED_BY(mu_) = -1;
  std::string path_ GUARDED_BY(mu_);
  std::string pending_ GUARDED_BY(mu_);  // lines not yet written (kWithFlush, or an output error)
  uint64_t count_ GUARDED_BY(mu_) = 0;
};

}  // namespace harvest::crawl
