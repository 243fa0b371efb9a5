#include "crawl/schedule.h"

#include <algorithm>

#include "base/ascii.h"
#include "base/host_key.h"
#include "frontier/admission.h"

namespace harvest::crawl {

bool HostPatternMatches(std::string_view pattern, std::string_view host) {
  const std::string p = ToLowerAscii(pattern);
  const std::string h = ToLowerAscii(NameOfHostKey(host));  // "http://a.test:8080" -> "a.test"
  if (p.find('*') != std::string::npos) return frontier::MatchUrlPattern(p, h);  // a glob
  return h == p || (h.size() > p.size() && h.ends_with(p) && h[h.size() - p.size() - 1] == '.');
}

SchedulePolicy PolicyFor(const FreshnessOptions& options, std::string_view host) {
  SchedulePolicy p{.window_ms = options.refresh_window.count(),
                   .max_ms = options.max_interval.count(),
                   .grow = options.grow,
                   .shrink = options.shrink};
  for (const RecrawlClass& c : options.classes) {
    if (std::none_of(c.hosts.begin(), c.hosts.end(),
                     [&](const std::string& pat) { return HostPatternMatches(pat, host); })) {
      continue;
    }
    if (c.refresh_window.count() > 0) p.window_ms = c.refresh_window.count();
    if (c.max_interval.count() > 0) p.max_ms = c.max_interval.count();
    break;
  }
  p.window_ms = std::max<int64_t>(p.window_ms, 1);
  p.max_ms = std::max(p.max_ms, p.window_ms);
  return p;
}

void ScheduleNext(const SchedulePolicy& policy, const state::SeenRecord* previous, Change change,
                  int64_t fetch_time_us, state::SeenRecord* record) {
  int64_t interval = policy.window_ms;
  if (previous != nullptr) {
    record->changes = previous->changes;
    record->unchanged = previous->unchanged;
    const int64_t last = previous->interval_ms > 0 ? previous->interval_ms : policy.window_ms;
    if (change == Change::kChanged) {
      interval = static_cast<int64_t>(static_cast<double>(last) * policy.shrink);
      ++record->changes;
    } else if (change == Change::kUnchanged) {
      interval = static_cast<int64_t>(static_cast<double>(last) * policy.grow);
      ++record->unchanged;
    } else {
      interval = last;
    }
  }
  interval = std::clamp(interval, policy.window_ms, policy.max_ms);
  record->interval_ms = interval;
  record->next_due_us = fetch_time_us + interval * 1000;
}

}  // namespace harvest::crawl
