// crawl: the pipeline that wires Harvest's components into a crawler (docs/architecture.md §2, §4).
//
// Data flow: seeds -> admission (canonicalize, scope, traps, seen test) -> frontier (per-host
// queues, politeness scheduler) -> robots gate -> fetcher -> process pool (decode, extract
// links, fingerprints) -> WARC writer (response | revisit, metadata, CDXJ) and the outcome log;
// discovered links go back to admission.
//
// Threads (docs/architecture.md §4): Crawler::Run's thread is the I/O thread — it alone owns the
// frontier, the admission state, the robots cache and the fetcher's event loop. A pool of process
// threads parses and hashes; one writer thread appends to WARC files. They talk through bounded
// queues: a full queue holds back new fetches (back-pressure), it never drops.
//
// Every URL admitted ends with a recorded outcome in <out>/outcomes.jsonl (docs/architecture.md
// §1.3).
//
// Durability (docs/architecture.md §1.3, §5): the crawl's state lives in RocksDB under <out>/state
// (host queues, seen URLs, host politeness and robots.txt, payload digests; src/state). A URL is
// marked done only after its WARC records are durable; a run on an existing crawl directory
// resumes it after any stop, kill -9 included: it repairs the newest WARC files (torn tail,
// missing CDXJ lines), rebuilds the Bloom filter from the seen store, serves again the URLs
// that were leased or in flight, and holds every host with queued work for a full delay so
// a request in flight at the kill cannot be followed too soon. See docs/recovery.md.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "crawl/shared_crawl.h"
#include "dedup/dedup.h"
#include "fetch/fetch.h"
#include "fetch/resolver.h"
#include "frontier/frontier.h"
#include "state/state.h"
#include "store/store.h"
#include "url/url.h"

namespace harvest::admin {
class Backend;
}

namespace harvest::crawl {

// A class of hosts with their own refresh window and maximum interval (TOML
// [[recrawl.class]], docs/freshness.md), e.g. news sites: window 1 h, max 1 day.
struct RecrawlClass {
  // Host patterns: "news.example" matches that host and its subdomains; "*" globs
  // ("*.news.test", "news*.example"). Case-insensitive, port ignored.
  std::vector<std::string> hosts;
  std::chrono::milliseconds refresh_window{0};  // 0: the crawl's
  std::chrono::milliseconds max_interval{0};    // 0: the crawl's
};

// Continuous crawling (docs/freshness.md).
struct FreshnessOptions {
  // Keep running when the frontier runs dry: sleep until the next URL is due and recrawl
  // it, until stopped (a signal or stop_after). Default false: the crawl ends when the
  // frontier is empty, and a later run fetches only what is due.
  bool recrawl = false;
  // > 0: stop (exit 0, state saved, resumable) this long after the start. Default 0.
  std::chrono::milliseconds stop_after{0};
  // No URL is fetched twice within it; the first recrawl is due one window after the fetch.
  // Default 1 day.
  std::chrono::milliseconds refresh_window{std::chrono::hours(24)};
  // The recrawl interval never grows beyond it. Default 30 days.
  std::chrono::milliseconds max_interval{std::chrono::hours(24 * 30)};
  // The interval is multiplied by `grow` after a fetch that found the content unchanged and
  // by `shrink` after one that found it changed (bounded by the window and max_interval).
  // Defaults 2 and 0.5.
  double grow = 2.0;
  double shrink = 0.5;
  // A new version within SimHash distance 3 of the last one counts as unchanged. Default
  // false (only an identical payload digest, or a 304, is unchanged).
  bool near_duplicate_is_unchanged = false;
  // Share of page fetches that go to recrawls while new URLs also wait (0..1): due URLs
  // enter the frontier only while recrawls have taken less than this share. Default 0.5.
  double recrawl_share = 0.5;
  // Send If-None-Match / If-Modified-Since from the last stored response. Default true.
  bool conditional_get = true;
  std::vector<RecrawlClass> classes;  // first matching class wins
};

// Near-duplicate detection (docs/freshness.md, docs/warc.md).
struct NearDupOptions {
  // Hamming distance of 64-bit SimHashes that makes two pages near-duplicates (0..3).
  int max_distance = 3;
  // Store a near-duplicate's response (false, default) or only a metadata record naming
  // the page it nearly duplicates (true).
  bool metadata_only = false;
  // Fingerprints kept in the index (RAM ~ this x bytes per fingerprint, see
  // docs/benchmarks.md); the oldest are evicted. Default 2 M.
  size_t index_max = 2'000'000;
};

// The operator's weight for hosts matching a pattern (TOML [[priority.host]],
// docs/priority.md).
struct HostWeightRule {
  // "news.example" matches that host and its subdomains; "*" globs ("*.news.test"), as in
  // [[recrawl.class]]. Case-insensitive, port ignored.
  std::string pattern;
  double weight = 1.0;  // > 0; multiplies the priority score of the host's URLs
};

// URL priorities (docs/priority.md). Whether ready hosts are served by priority is
// frontier.cross_host_priority (TOML priority.across_hosts).
struct PriorityOptions {
  std::vector<HostWeightRule> hosts;  // first matching rule wins; no match: weight 1
  // Memory of the in-link count-min sketch; 0 = no in-link counting. Default 4 MiB.
  size_t inlink_sketch_bytes = size_t{4} << 20;
};

// Host weights for priorities: the configured rules plus per-host overrides (for an admin
// API; an override wins over the rules). Independent of the frontier: a weight applies to
// URLs queued after it is set. Hosts are frontier host keys ("http://a.test:8080") or
// bare names.
class HostWeights {
 public:
  explicit HostWeights(std::vector<HostWeightRule> rules = {});
  // The host's weight: its override, else the first matching rule's, else 1.
  double Weight(std::string_view host) const;
  // Sets (weight > 0) or clears (nullopt) the host's override.
  void SetOverride(std::string_view host, std::optional<double> weight);

 private:
  std::vector<HostWeightRule> rules_;
  std::map<std::string, double, std::less<>> overrides_;  // by lower-case bare host name
};

struct CrawlOptions {
  // Output directory for WARC files, the CDXJ index and outcomes.jsonl. Required.
  std::filesystem::path out_dir;
  // Stop leasing new pages after this many page fetches (robots.txt not counted). 0 = no limit.
  uint64_t max_pages = 0;
  // Process threads (decode, extract, hash). Default: number of cores.
  int workers = 0;
  // Follow rel=nofollow links? Default false: rel=nofollow links are not followed.
  bool follow_rel_nofollow = false;
  // When a host's robots.txt comes into force and names no Sitemap, admit
  // <origin>/sitemap.xml as a sitemap (once per origin). Default false: on a broad crawl of
  // small hosts it is one more request per host, mostly answered 404, for a convention the
  // sitemaps.org protocol does not define; a focused crawl gains the URLs links do not reach
  // (docs/configuration.md "sitemap_probe").
  bool sitemap_probe = false;
  // Redirect targets are admitted like links, at most this many hops from the first URL.
  int max_redirect_hops = 5;
  // How long a host's robots.txt stays valid. Default 24 h (RFC 9309 §2.4).
  std::chrono::seconds robots_ttl{24 * 3600};
  // A host whose robots.txt fails (5xx, 429, timeouts) with no cached copy is disallowed and
  // retried on the outage schedule; after this much outage its URLs get robots-unavailable.
  // 0: never given up (retried every 6 h at most). Default 30 min (docs/politeness.md).
  std::chrono::seconds robots_patience{1800};
  // Cap on a decoded (Content-Encoding undone) body; larger ones are recorded, not parsed.
  size_t max_decoded_bytes = 50u << 20;
  // Pages dispatched to the process pool but not yet consumed; above it no new fetch starts.
  // Also the writer's queue. 1024: about a quarter second of pages at 4,000 pages/s, enough to
  // ride out a group flush's fsync; 4096 doubled the crawl's peak RSS and its first-touch page
  // faults for nothing (docs/benchmarks.md "Pipeline depth").
  size_t max_pending_pages = 1024;
  // Group commit: the writer flushes (and fsyncs) at least this often.
  std::chrono::milliseconds flush_interval{1000};
  // Print a live progress line on stderr when it is a terminal.
  bool progress = true;
  // Refuse an existing output directory instead of resuming the crawl it holds.
  bool fresh = false;
  // Output errors: the writer retries this often while the crawl is paused.
  std::chrono::milliseconds output_retry_interval{5000};
  // Hosts whose state (politeness, robots rules, breaker, admission counters, queue head) is
  // in RAM: above it, the least recently active hosts without work are evicted, their state
  // kept in the crawl state and reloaded when they get a URL again; while every host in RAM
  // has work, URLs of other hosts wait on disk (parked) until one leaves
  // (docs/architecture.md §1.5). 0: no limit. Default 20 000.
  size_t host_cache = 20'000;

  FreshnessOptions freshness;
  NearDupOptions near_dup;
  PriorityOptions priority;
  fetch::FetchOptions fetch;
  // The fetcher the crawl drives. nullptr (default): a fetch::HttpFetcher built from
  // `fetch` (the own HTTP/1.1 client for plain http, libcurl for the rest). Tests pass a scripted
  // fake (src/fetch/testing/fake_fetcher.h). Not owned; it must outlive the Crawler and serve no
  // one else while Run() runs.
  fetch::Fetcher* fetcher = nullptr;
  // DNS (docs/politeness.md "DNS and per-IP limits"): Harvest resolves host names itself
  // before a host's first request, with a bounded cache honouring record TTLs.
  fetch::ResolverOptions dns;
  // Address ranges the crawl may connect to although they are private or special (loopback,
  // RFC 1918, CGNAT, link-local, unique-local, multicast, unspecified, reserved), as CIDRs
  // ("10.0.0.0/8", "127.0.0.1"): --allow-address, fetch.allow_addresses. Every other
  // address in those ranges is never connected to: the host's URLs get blocked-address
  // (fetch::AddressFilter, docs/politeness.md "Private networks").
  std::vector<std::string> allow_addresses;
  // Pinned addresses, lines "HOST ADDRESS[:PORT]" (--resolve-file, dns.resolve_file); pinned
  // hosts and hosts routed by fetch.connect_to are never looked up. "" = none.
  std::filesystem::path resolve_file;
  // The resolver the crawl uses. nullptr (default): Harvest's own (c-ares, from `dns`) —
  // unless `fetcher` is set (tests): then names are left to that fetcher unless a resolver
  // is given too (src/fetch/testing/fake_resolver.h). Not owned.
  fetch::Resolver* resolver = nullptr;
  // A worker of a crawl shared with other processes (src/cluster: `harvest crawl --redis`;
  // docs/distributed.md). nullptr (default): a single-process crawl. Not owned; it must
  // outlive the Crawler. Needs a new output directory (the shared store keeps the work; a
  // continuous crawl's recrawl schedule lives there too).
  SharedCrawl* shared = nullptr;
  frontier::FrontierOptions
      frontier;  // politeness scheduler: delays, per-IP limit, retries, breaker
  frontier::ScopeOptions scope;
  frontier::TrapOptions traps;
  dedup::SeenSetOptions seen;
  url::CanonOptions canon;
  store::WarcOptions warc;    // warc.dir is set from out_dir
  state::StateOptions state;  // state.dir is set to out_dir/state
};

// Loads a TOML config file into *options (keys documented in docs/configuration.md). Unknown
// keys and wrong types are errors naming the line.
Status LoadConfigFile(const std::filesystem::path& path, CrawlOptions* options);
// The same for TOML text (tests); `source` names it in messages.
Status LoadConfigString(std::string_view toml, std::string_view source, CrawlOptions* options);

// Reads a seed file: one absolute http(s) URL per line; blank lines and lines starting with
// '#' are skipped. Every bad line is reported with its line number.
Result<std::vector<std::string>> ReadSeedsFile(const std::filesystem::path& path);
Result<std::vector<std::string>> ParseSeeds(std::string_view text, std::string_view source);
// The crawl directory `harvest crawl URL...` uses when no --out is given: named after the
// seed's host, as wget names its directories — "example.com", "example.com_8080" with a
// port; characters other than letters, digits, '.' and '-' become '_' (an IPv6 address's
// brackets and colons). "crawl" when the seed has no host.
std::filesystem::path DefaultOutDir(std::string_view seed);

// Hosts the crawl gave up on, for one reason (an outcome name such as robots-unavailable).
struct HostsGivenUp {
  uint64_t hosts = 0;
  std::string example;  // one host and its detail, e.g. "http://a.test: robots.txt: HTTP 503"
};

struct CrawlStats {
  bool started = false;  // setup succeeded (output and state opened)
  uint64_t seeds = 0;
  uint64_t admitted = 0;  // URLs accepted into the frontier
  uint64_t rejected = 0;  // links refused by admission (seen, scope, traps)
  uint64_t fetches = 0;   // HTTP requests completed (pages + robots.txt)
  uint64_t pages = 0;     // page fetches that produced an HTTP response
  uint64_t robots_fetches = 0;
  uint64_t disallowed = 0;  // URLs not requested because robots.txt disallows them
  uint64_t http_2xx = 0, http_3xx = 0, http_4xx = 0, http_5xx = 0;
  uint64_t fetch_errors = 0;  // timeouts, connection errors, ... (each try)
  uint64_t retries = 0;
  uint64_t gave_up = 0;  // retryable errors that exhausted their attempts
  uint64_t truncated = 0;
  uint64_t dns_lookups = 0;       // names Harvest looked up (cache misses)
  uint64_t dns_failures = 0;      // requests not made because the host name did not resolve
  uint64_t responses_stored = 0;  // WARC response records
  uint64_t revisits_stored = 0;   // WARC revisit records (payload already stored)
  uint64_t near_duplicates = 0;   // SimHash within distance 3 of an earlier page
  // Recrawling (docs/freshness.md).
  uint64_t recrawls = 0;       // page fetches of URLs fetched before (scheduled recrawls)
  uint64_t conditional = 0;    // requests sent with If-None-Match / If-Modified-Since
  uint64_t not_modified = 0;   // 304 answers (stored as server-not-modified revisits)
  uint64_t changed = 0;        // recrawls that found the content changed
  uint64_t unchanged = 0;      // recrawls that found it unchanged (304 included)
  uint64_t scheduled = 0;      // URLs scheduled for a recrawl at the end of the run
  uint64_t sitemap_hints = 0;  // recrawls brought forward by a sitemap lastmod/changefreq
  int64_t next_due_in_s = -1;  // seconds until the next recrawl is due (-1: none)
  bool stopped_after = false;  // stopped by FreshnessOptions::stop_after (not a failure)
  // Bounded host memory (docs/architecture.md §1.5).
  uint64_t hosts_resident = 0;       // hosts with state in RAM (the crawl's host table)
  uint64_t hosts_resident_peak = 0;  // its largest size after an eviction pass
  uint64_t hosts_evicted = 0;        // evictions from RAM in this run
  uint64_t hosts_reloaded = 0;       // evicted hosts met again and reloaded from the state
  uint64_t unparked = 0;             // URLs that waited on disk for room in the host table (parked)
  // Budgets (docs/admission.md "Budgets"): URLs of hosts over their discovery ratio or
  // daily fetch quota wait on disk (deferred) and are admitted later (released).
  uint64_t deferred = 0;          // URLs deferred in this run
  uint64_t released = 0;          // deferred URLs admitted in this run
  uint64_t deferred_waiting = 0;  // deferred URLs still waiting on disk at the end
  uint64_t backlog_refused = 0;   // URLs refused because their host's backlog was full
  uint64_t hosts_deferred = 0;    // hosts that had URLs deferred in this run
  uint64_t hosts_over_quota = 0;  // hosts that reached their daily fetch quota (today)
  uint64_t quota_waits = 0;       // leases put back until the next day (daily quota reached)
  uint64_t depth_lowered = 0;     // pages whose links were followed from a shorter path than
                                  // the one they were admitted by (docs/architecture.md §1.5)
  // http -> https without a request (docs/politeness.md "http and https").
  uint64_t upgraded = 0;      // http URLs rewritten to their https twin (admission, leases)
  uint64_t hsts_hosts = 0;    // host names that sent HSTS
  uint64_t learnt_hosts = 0;  // host names learnt to redirect http to https
  uint64_t lease_waits = 0;   // shared crawl: leases put back while a partition lease renewal
                              // was late (docs/distributed.md)
  uint64_t bytes_downloaded = 0;
  uint64_t warc_bytes = 0;
  uint64_t outcomes = 0;  // lines in outcomes.jsonl
  double elapsed_s = 0;
  bool complete = false;     // frontier drained, nothing in flight
  bool interrupted = false;  // stopped by RequestStop() / a signal
  bool page_limit_reached = false;
  // Resume of an existing crawl directory.
  bool resumed = false;
  uint64_t resumed_queued = 0;  // URLs queued (or in flight) when the last run stopped
  // Hosts of those URLs, all in RAM from the start of this run: more than crawl.host_cache
  // when pages of hosts already done were still in the pipeline at a kill.
  uint64_t resumed_hosts = 0;
  uint64_t resumed_seen = 0;  // fingerprints restored into the Bloom filter
  double bloom_restore_s = 0;
  uint64_t recovered_bytes_cut = 0;   // torn WARC tail removed
  uint64_t recovered_cdxj_lines = 0;  // CDXJ lines written for unindexed records
  uint64_t still_queued = 0;          // URLs left queued in the state (stop, page limit)
  bool output_paused = false;         // the writer is waiting for the output to recover
  // Hosts whose URLs got a final outcome without a request (robots.txt unavailable, a
  // Crawl-delay above the maximum), by outcome name; in this run.
  std::map<std::string, HostsGivenUp> hosts_given_up;
};

class Crawler {
 public:
  // clock: nullptr = SystemClock.
  explicit Crawler(CrawlOptions options, Clock* clock = nullptr);
  ~Crawler();
  Crawler(const Crawler&) = delete;
  Crawler& operator=(const Crawler&) = delete;

  // Crawls from the seeds until the frontier is drained, the page limit is reached or
  // RequestStop() is called. Runs on the calling thread (the I/O thread). Returns an error
  // only for fatal problems (output not writable, fetcher setup failed).
  Status Run(const std::vector<std::string>& seeds);
  // Any thread (also a signal handler: it only sets an atomic flag).
  void RequestStop();
  // Testing, on the I/O thread (e.g. from a fake fetcher's hook): Run() returns at its next
  // loop turn leaving the crawl directory as a kill -9 there would — state not committed
  // since the last commit, pages written but not marked done. Run() then returns Aborted.
  void KillForTesting();
  CrawlStats stats() const;
  // The admin API's view of this crawl (crawl/admin_backend.h): owned by the Crawler and
  // valid for its whole life; callable from any thread.
  admin::Backend* admin_backend();
  // The crawl's page records (docs/metadata.md "What is a row"), as the crawl state holds
  // them, while Run() is between its setup and its end; Unavailable before and after. Any
  // thread (the metadata writer's).
  Result<state::PageScan> ScanPageRecords(const state::PageFilter& filter) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Formats the final summary printed by `harvest crawl`.
std::string FormatSummary(const CrawlStats& stats);

}  // namespace harvest::crawl
