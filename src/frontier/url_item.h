// UrlItem: one URL waiting in (or leased from) the frontier. Part of frontier.h's API.
#pragma once

#include <cstdint>
#include <string>

namespace harvest::frontier {

struct UrlItem {
  std::string url;   // canonical URL
  std::string host;  // politeness key, e.g. "h0001.test" or "h.test:8080"
  uint64_t fp = 0;   // URL fingerprint (the seen-set key)
  int depth = 0;     // links followed from a seed (seed = 0)
  int priority = 1;  // class, 0 = highest; clamped to [0, priority_classes)
  int attempts = 0;  // failed retryable attempts so far
  std::string via;   // the URL it was discovered on (empty for seeds)
};

}  // namespace harvest::frontier
