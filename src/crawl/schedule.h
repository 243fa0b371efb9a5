// The recrawl schedule's policy (docs/freshness.md): when a fetched URL is due again.
//
// Each URL has an interval, starting at its host's refresh window. A fetch that finds the
// content changed (payload digest differs from the last stored one) multiplies it by
// `shrink`, one that finds it unchanged (same digest, a 304, or — if configured — a
// near-duplicate of the last version) by `grow`, bounded by [refresh window, max interval].
// The URL is next due one interval after the fetch. So no URL is fetched twice within its
// window, pages that change are visited more often than pages that do not, and static
// pages drift towards the maximum interval.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "crawl/crawl.h"
#include "state/state.h"

namespace harvest::crawl {

struct SchedulePolicy {
  int64_t window_ms = 86'400'000;      // lower bound of the interval; the first interval
  int64_t max_ms = 30 * 86'400'000LL;  // upper bound
  double grow = 2.0;
  double shrink = 0.5;
};

// The policy of a host (host name or frontier host key): the first RecrawlClass matching
// it, else the crawl's window and maximum.
SchedulePolicy PolicyFor(const FreshnessOptions& options, std::string_view host);

// True when `pattern` (see RecrawlClass::hosts) matches host name `host`.
bool HostPatternMatches(std::string_view pattern, std::string_view host);

enum class Change {
  kFirst,      // no earlier fetch
  kChanged,    // content differs from the last stored version
  kUnchanged,  // same content (digest, 304, or near-duplicate when configured)
};

// Sets record->interval_ms, next_due_us, changes and unchanged for a fetch at
// `fetch_time_us`, from the previous record (nullptr: none).
void ScheduleNext(const SchedulePolicy& policy, const state::SeenRecord* previous, Change change,
                  int64_t fetch_time_us, state::SeenRecord* record);

}  // namespace harvest::crawl
