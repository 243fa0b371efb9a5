// PageProcessor: the work a process thread does for one fetched response (docs/architecture.md §2
// [process]): undo Content-Encoding, detect the charset and extract links, meta robots,
// X-Robots-Tag, <base> and visible text from HTML (or URLs from a sitemap), resolve and
// canonicalize every link, fingerprint the text (SimHash) and the payload (SHA-256), and build
// the WARC capture.
//
// Thread-safety: Process() is const and reentrant; one PageProcessor serves the whole pool.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "crawl/crawl.h"
#include "crawl/schedule.h"
#include "dedup/dedup.h"
#include "fetch/fetch.h"
#include "frontier/frontier.h"
#include "store/store.h"

namespace harvest::crawl {

// A fetched response on its way to the process pool.
struct PageTask {
  frontier::UrlItem item;
  fetch::FetchResult result;
  bool is_robots = false;     // robots.txt: stored, never parsed for links here
  bool sitemap_hint = false;  // named by a robots.txt Sitemap line, a sitemap index or the probe
  std::string outcome;        // the final outcome to record once stored ("fetched", "gave-up")
  std::string detail;         // its detail (why a response was given up on)
  // Recrawl (docs/freshness.md): the URL's seen record before this fetch (a recrawl), the
  // schedule policy of its host, and whether the answer is a 304 to a conditional request.
  std::optional<state::SeenRecord> previous;
  SchedulePolicy policy;
  bool not_modified = false;
  int64_t completed_us = 0;  // wall clock when the I/O thread got the response
  // robots.txt in a shared crawl: its host and the rules saved from it, given to the shared
  // crawl once this capture is durable (a worker taking the host over then fetches no
  // robots.txt and finds this one in a WARC file).
  std::optional<std::pair<std::string, state::RobotsRecord>> shared_robots;
};

// A link found in a page, resolved and canonicalized. Its components are views of `url` (by
// offset, so copies and moves keep them): one allocation per link instead of six, made by a
// process thread and freed by the I/O thread (docs/benchmarks.md "Peers").
struct FoundLink {
  std::string url;  // canonical href
  // scheme://host[:port]: the frontier's host key (RFC 9309 §2.3)
  std::string_view origin() const {
    return own_origin.empty() ? View(0, origin_len) : std::string_view(own_origin);
  }
  std::string_view host() const { return View(host_at, host_len); }  // admission: scope, quotas
  std::string_view path() const { return View(path_at, path_len); }
  std::string_view query() const { return View(query_at, query_len); }
  std::string_view registrable_domain() const {
    return own_domain.empty() ? View(host_at + host_len - domain_len, domain_len)
                              : std::string_view(own_domain);
  }
  uint64_t fp = 0;
  bool redirect = false;  // a Location target, not a link in a body
  bool sitemap = false;   // a sitemap named by a sitemap index
  // How often the page named this href (a repeated href is handed on once; in-link
  // counting still counts each, docs/priority.md "In-link counting").
  uint32_t times = 1;
  // A sitemap's <lastmod> (µs since the epoch) and <changefreq> (s) for this URL: recrawl
  // hints (docs/freshness.md); 0 = none.
  int64_t lastmod_us = 0;
  int64_t changefreq_s = 0;
  // A sitemap's <priority> for this URL (0..1; docs/priority.md); -1 = none.
  double sitemap_priority = -1;

  // Set by MakeFoundLink. The origin is a prefix of url and the registrable domain a suffix
  // of the host except with userinfo or a trailing dot: then they are kept in own_*.
  uint32_t origin_len = 0, host_at = 0, host_len = 0, path_at = 0, path_len = 0;
  uint32_t query_at = 0, query_len = 0, domain_len = 0;
  std::string own_origin, own_domain;

 private:
  std::string_view View(uint32_t at, uint32_t len) const {
    return std::string_view(url).substr(at, len);
  }
};

// A FoundLink for a parsed canonical URL (redirect and sitemap flags false).
FoundLink MakeFoundLink(const url::Url& u);

// What the I/O thread gets back: links to admit.
struct PageLinks {
  frontier::UrlItem source;
  std::vector<FoundLink> links;
  uint64_t links_seen = 0;  // before dropping non-http(s), unparsable and nofollow links
};

// What the writer thread gets: the capture and the outcome to record.
struct StoreTask {
  store::Capture capture;
  std::string outcome;
  std::string detail;
  uint64_t simhash = 0;
  bool has_simhash = false;
  // A page (not robots.txt): once its records are durable the URL is marked done in the
  // crawl state with this item and the validators below.
  bool mark_done = false;
  frontier::UrlItem item;
  std::string etag;
  std::string last_modified;
  // When the response had arrived (wall µs): the recrawl is due one interval after it, so
  // the server sees the next request at least the interval after this one, whatever the
  // latency of either.
  int64_t fetch_end_us = 0;
  // From the PageTask: the seen record before this fetch, the policy, a 304.
  std::optional<state::SeenRecord> previous;
  SchedulePolicy policy;
  bool not_modified = false;
  std::string title;  // an HTML page's <title> (the admin API's page records)
  std::optional<std::pair<std::string, state::RobotsRecord>> shared_robots;  // see PageTask
  // The response record, serialised and compressed on the process thread (WarcSink::Prepare);
  // unused when the writer stores the page as a revisit or a near-duplicate's metadata.
  std::optional<store::PreparedResponse> prepared;
};

// What a PageProcessor needs beyond the crawl's options.
struct PageProcessorOptions {
  // The SimHash version of StoreTask::simhash: the crawl state's
  // (state::StateDb::simhash_version), so fingerprints compare like with like across runs.
  // Default: dedup::kNewestSimHash (for callers without a crawl state).
  dedup::SimHashVersion simhash_version = dedup::kNewestSimHash;
};

class PageProcessor {
 public:
  explicit PageProcessor(const CrawlOptions& options, PageProcessorOptions processor = {});
  void Process(PageTask& task, PageLinks* links, StoreTask* store) const;

 private:
  void ExtractLinks(const PageTask& task, const url::Url& page_url, std::string_view mime,
                    const std::string& content_type, PageLinks* links, StoreTask* store) const;
  void ExtractFromHtml(const PageTask& task, const url::Url& page_url, std::string_view body,
                       PageLinks* links, StoreTask* store) const;
  void ExtractFromSitemap(const PageTask& task, const url::Url& page_url, std::string_view body,
                          PageLinks* links, StoreTask* store) const;
  // False when the link was dropped (unparsable, not http(s)).
  bool AddLink(std::string_view href, const url::Url& base, bool redirect, bool sitemap,
               PageLinks* links) const;

  const CrawlOptions& options_;
  const PageProcessorOptions processor_options_;
  std::string product_token_;
};

}  // namespace harvest::crawl
