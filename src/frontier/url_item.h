// UrlItem: one URL waiting in (or leased from) the frontier. Part of frontier.h's API.
#pragma once

#include <cstdint>
#include <string>

namespace harvest::frontier {

struct UrlItem {
  std::string url;       // canonical URL
  std::string host;      // politeness key, e.g. "h0001.test" or "h.test:8080"
  uint64_t fp = 0;       // URL fingerprint (the seen-set key)
  int depth = 0;         // links followed from a seed (seed = 0)
  int priority = 1;      // class, 0 = highest; clamped to [0, priority_classes)
  int attempts = 0;      // failed retryable attempts so far
  std::string via;       // the URL it was discovered on (empty for seeds)
  int hops = 0;          // redirect hops from the URL first linked (0 = not a redirect target)
  bool sitemap = false;  // named by robots.txt Sitemap: or a sitemap (keeps its source's depth)
  bool recrawl = false;  // fetched before: due again by the recrawl schedule (docs/freshness.md)
  // Where a persistent QueueStore keeps the item (0 = not persisted): the store's host id and
  // the item's sequence number. Set by the store's Push; carried through leases so the crawl
  // can delete the entry once the URL is done.
  uint32_t store_host = 0;
  uint64_t store_seq = 0;
};

}  // namespace harvest::frontier
