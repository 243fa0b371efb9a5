// Audit: the instrument that proves a crawl was polite, robots-compliant, duplicate-free and
// complete, from the test web's request log and manifest alone.
//
// It shares no code with the crawler's scheduler, robots matcher or URL canonicalizer
// (docs/architecture.md §7): an instrument that reuses what it measures proves nothing. It reads
//   * the request log: JSON lines, one per request the test web served —
//     {"host","path","page"(string|null),"start_us","end_us","status","bytes","conn","kind",
//      "disallowed", optional "retry_after_s", "cond", "inm", "ims", "ip", "scheme", "proto",
//      "upgrade"} (inm/ims are ignored; "ip" is the server-side address the request arrived
//      at; "scheme" "http"|"https" and "proto" "1.1"|"2" default to http and 1.1 when absent;
//      "upgrade": true marks the plain-HTTP 301 of --http-redirect to the https:// twin);
//   * the manifest: {"hosts":[{"host","crawl_delay_ms","must_fetch":[...],
//                              "must_not_fetch_prefixes":[...], "trap"}...]} (unknown fields
//     ignored; "trap": true marks a host whose URL space is endless, absent = false).
// and counts, per host and in total (exact rules in docs/audit.md):
//   concurrency  a request to a host starting before an earlier-started request to that host
//                ended (strictly: start < max end so far);
//   delay        no overlap, but start < previous end + expected delay − tolerance, where the
//                expected delay = max(default delay, manifest crawl_delay_ms, 1000 ×
//                retry_after_s of the previous response); each is attributed to the largest term;
//   robots       a request logged with "disallowed": true;
//   must_not_fetch  (opt-in, AuditOptions::check_must_not_fetch) a request whose path matches
//                one of the host's manifest must_not_fetch_prefixes, not already counted as
//                robots (pattern syntax in docs/audit.md);
//   duplicate    a request for a page identity that an earlier request already got a final
//                answer for (final = status 200–499 except 408 and 429); a conditional
//                request ("cond": true) answered 304 is never a duplicate; a re-fetch just
//                after a crawler restart (AuditOptions::restarts_us) is not a duplicate but a
//                *refetch after restart*, counted apart and not a violation;
//   within_window  (only with AuditOptions::refresh_window, continuous crawling) a request for
//                an identity whose latest earlier final answer (a 304 included) started less
//                than refresh_window before it; counted *instead of* duplicate, which that
//                mode replaces (a re-fetch after the window is a legitimate recrawl);
//                robots.txt is exempt, the restart excuse applies;
//   per_ip_concurrency  (opt-in, AuditOptions::per_ip_limit) a request starting while more
//                than the limit requests, itself included, are in flight at its "ip";
//   per_ip_gap   (opt-in, AuditOptions::per_ip_gap) a request starting less than the gap
//                (minus per_ip_gap_tolerance) after the previous start at its "ip";
//   http_requests  (opt-in, AuditOptions::max_http_per_host) a host name that got more than
//                the limit requests with scheme http (absent = http), counted once per host;
//   after_hsts   (opt-in, AuditOptions::hsts) a request with scheme http to a host name that
//                starts after the end of an earlier https request to that name that got a
//                response (status > 0): the crawler should have switched to https;
//   coverage     fraction of manifest must_fetch identities requested at least once.
// Per-IP figures (addresses, most requests in flight at one address, smallest start gap) are
// reported whenever the log carries "ip"; per-IP violations count in the totals, not per host.
// Scheme figures (requests by scheme and by proto, upgrade answers, the most http requests to
// one host) are reported whenever the log carries "scheme" or "proto".
// The report also counts conditional requests, 304 answers and fetches per must_fetch page,
// and the requests each trap host of the manifest received (in all and in its busiest UTC
// day): what a crawler's per-host budgets must bound. They are figures, not violations.
// Malformed log lines are counted with their line number; any malformed line fails the audit.
//
// Identities: a request's identity is its "page" when non-null, else host + path; an upgrade
// answer ("upgrade": true) is "http://" + host + path whatever its page, a namespace of its own,
// so that the https fetch it redirects to is not its duplicate but a second 301 for the same
// http:// URL is. The host part (of hosts, pages and must_fetch entries) is compared
// ASCII-case-insensitively with any ":port" removed; paths are compared byte for byte. So the
// origins of one host name (http://h, https://h, https://h:8443) are one host for every check.
//
// Departures: the log's clock is the server's; the crawler's own notion of "end" is later than
// the server's, so a correct crawler passes with tolerance 0.
//
// Performance: the log is streamed line by line with a small dedicated JSON-object parser
// (not a DOM); memory is O(requests) for a compact record (~64 bytes + path) per request.
//
// Thread-safety: RunAudit is a pure function of its inputs; reports are value types.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace harvest::audit {

struct AuditOptions {
  // Minimum delay between the end of one request to a host and the start of the next.
  // Default: 1000 ms (docs/architecture.md §1, the crawler's configured default).
  std::chrono::milliseconds default_delay{1000};
  // Slack subtracted from the expected delay before a gap counts as a violation. Does not
  // apply to concurrency. Default: 0 (a correct crawler needs none, see header comment).
  std::chrono::milliseconds tolerance{0};
  // The audit passes only when coverage >= min_coverage (0.0–1.0). Default: 1.0.
  double min_coverage = 1.0;
  // Examples kept per violation kind (earliest by start time). Default: 20.
  size_t max_examples = 20;
  // Also check paths against the manifest's must_not_fetch_prefixes, an independent
  // cross-check of the log's "disallowed" flag. The test web writes those patterns for
  // people ("/private/ (but /private/open/)", "*.pdf"), so matching them is approximate.
  // Default: false (the brief's robots check is the "disallowed" flag).
  bool check_must_not_fetch = false;
  // Missing must_fetch identities listed, in total and per host. Default: 20.
  size_t max_missing = 20;
  // Malformed lines listed (all are counted). Default: 20.
  size_t max_malformed = 20;
  // Times, in the log's microsecond clock, at which the crawler was killed and restarted
  // (docs/architecture.md §1.3: a page fetched but not yet durably committed is legitimately
  // fetched again). Any order; duplicates are harmless. Default: none (every re-fetch of a settled
  // page is a duplicate violation).
  std::vector<int64_t> restarts_us;
  // How long before a kill a final answer may have come and still not have been committed.
  // A would-be duplicate D of the page's latest earlier final answer E is a refetch after
  // restart, not a violation, iff some restart r has E.start_us < r <= D.start_us and
  // r − E.end_us <= restart_window. Must be >= 0. Default: 10 000 ms (a generous bound on
  // the crawler's group-commit interval). Concurrency, delay and robots are unaffected.
  std::chrono::milliseconds restart_window{10000};
  // Continuous crawling: a page may be fetched again once this long has passed since the
  // start of its latest final answer; earlier is a within_window violation (conditional
  // requests answered 304 included), later is a legitimate recrawl, never a duplicate.
  // robots.txt requests (log kind "robots") are exempt: robots.txt has its own cache
  // lifetime. Must be >= 0. Default: 0 = off (the duplicate rule applies instead).
  std::chrono::milliseconds refresh_window{0};
  // Per-IP politeness, judged on the log's "ip" (requests without it are left out). More
  // than this many requests in flight at one address at one moment (server-side start..end
  // intervals; touching is not overlapping) is a per_ip_concurrency violation, counted for
  // each request that starts while the address is over the limit. 0 = not judged (the
  // figures are reported anyway). Must be >= 0. Default 0.
  int64_t per_ip_limit = 0;
  // Two request starts at one address closer than per_ip_gap − tolerance is a per_ip_gap
  // violation of the later one, where tolerance = min(per_ip_gap_tolerance, per_ip_gap / 2).
  // Start to start, as a crawler spaces its request starts. 0 = not judged. Must be >= 0.
  // Default 0.
  std::chrono::milliseconds per_ip_gap{0};
  // Slack for per_ip_gap: the server sees a start when the request head has arrived, after
  // the crawler's connect (new connections) and its thread's scheduling, so a crawler that
  // spaces its own starts exactly by the gap can show slightly closer starts in the log
  // (docs/audit.md). Capped at half the gap so the check never becomes vacuous. Must be >= 0.
  // Default 10 ms.
  std::chrono::milliseconds per_ip_gap_tolerance{10};
  // HTTPS crawls: a host name that got more than this many requests with scheme http (lines
  // without "scheme" count as http) is one http_requests violation. A crawler that learns a
  // host serves https (an upgrade 301, HSTS) should stop using http there soon. Must be >= 0.
  // Default: not judged (the figures are reported anyway when the log has schemes).
  std::optional<int> max_http_per_host;
  // A request with scheme http to a host name that starts after the end of an earlier https
  // request to that name with a response (status > 0) is an after_hsts violation: the test
  // web's https answers carry Strict-Transport-Security, after which RFC 6797 §8.3 requires
  // https for the name. Strict: a start equal to that end is not after it. Default: false.
  bool hsts = false;
};

enum class ViolationKind {
  kConcurrency,
  kDelay,
  kRobots,
  kMustNotFetch,
  kDuplicate,
  kWithinWindow,
  kPerIpConcurrency,
  kPerIpGap,
  kHttpRequests,
  kAfterHsts
};
// "concurrency", "delay", "robots", "must_not_fetch", "duplicate", "within_window",
// "per_ip_concurrency", "per_ip_gap", "http_requests", "after_hsts".
const char* ViolationKindName(ViolationKind kind);

// Which term of the expected delay was the largest (the one a delay violation broke).
enum class DelaySource { kDefault, kCrawlDelay, kRetryAfter };
// "default", "crawl_delay", "retry_after".
const char* DelaySourceName(DelaySource source);

// One request as logged (only what a report needs to show).
struct RequestRef {
  int64_t line = 0;  // 1-based line number in the log
  std::string host;  // normalised: lower case, no port
  std::string path;
  int64_t start_us = 0;
  int64_t end_us = 0;
  int status = 0;
  std::string ip;        // the log's "ip"; empty when absent
  std::string scheme;    // the log's "scheme" ("http" or "https"); empty when absent
  bool upgrade = false;  // the log's "upgrade"
};

struct Violation {
  ViolationKind kind = ViolationKind::kConcurrency;
  RequestRef request;  // the offending request
  // concurrency / delay: the request it is measured against (the one with the latest end so
  // far); duplicate: the earlier request that got the final answer; within_window: the
  // latest earlier final answer; per_ip_concurrency: the other request in flight at that
  // address that ends first; per_ip_gap: the previous start at that address; after_hsts:
  // the https request to the host name with a response that ended first. Unset for robots
  // kinds and http_requests.
  std::optional<RequestRef> previous;
  // concurrency / delay / per_ip_concurrency: request.start − previous end (< 0: overlap);
  // within_window / per_ip_gap: request.start − previous start; after_hsts: request.start −
  // previous end (> 0).
  int64_t gap_us = 0;
  // delay: the expected delay; within_window: the refresh window; per_ip_gap: the gap
  // required (AuditOptions::per_ip_gap, before the tolerance).
  int64_t required_us = 0;
  DelaySource delay_source = DelaySource::kDefault;  // delay only
  // per_ip_concurrency: requests in flight at the address when this one started, itself
  // included (> the limit).
  int64_t in_flight = 0;
  // http_requests: the host's requests with scheme http in the whole log (> the limit);
  // `request` is the first one over the limit.
  int64_t http_requests = 0;
};

struct ViolationCounts {
  int64_t concurrency = 0;
  int64_t delay = 0;  // = delay_default + delay_crawl_delay + delay_retry_after
  int64_t delay_default = 0;
  int64_t delay_crawl_delay = 0;
  int64_t delay_retry_after = 0;
  int64_t robots = 0;
  int64_t must_not_fetch = 0;
  int64_t duplicate = 0;
  int64_t within_window = 0;  // only with AuditOptions::refresh_window
  // Per address, not per host: always 0 in a HostReport, counted in AuditReport::totals.
  int64_t per_ip_concurrency = 0;  // only with AuditOptions::per_ip_limit
  int64_t per_ip_gap = 0;          // only with AuditOptions::per_ip_gap
  // Per host name: 0 or 1 (only with AuditOptions::max_http_per_host).
  int64_t http_requests = 0;
  int64_t after_hsts = 0;  // only with AuditOptions::hsts
  // Not a violation: would-be duplicates (or within_window requests) excused by a restart
  // (AuditOptions::restarts_us). Excluded from Total() and so from Passed().
  int64_t refetched_after_restart = 0;
  int64_t Total() const {
    return concurrency + delay + robots + must_not_fetch + duplicate + within_window +
           per_ip_concurrency + per_ip_gap + http_requests + after_hsts;
  }
  void Add(const ViolationCounts& other);
};

// Requests per page identity (any status, 304s included) over a set of must_fetch
// identities, robots.txt files excluded; 0 for an identity never requested.
struct FetchStats {
  int64_t pages = 0;  // identities counted
  int64_t min = 0;
  int64_t median = 0;  // the lower median
  int64_t max = 0;
};

struct HostReport {
  std::string host;  // normalised
  bool in_manifest = false;
  int64_t requests = 0;
  ViolationCounts violations;
  int64_t must_fetch = 0;            // distinct must_fetch identities for this host
  int64_t covered = 0;               // of those, requested at least once
  std::vector<std::string> missing;  // first max_missing, manifest order
  int64_t conditional = 0;           // requests logged with "cond": true
  int64_t not_modified = 0;          // requests answered 304
  FetchStats fetches;                // over this host's must_fetch identities
  int64_t http_requests = 0;         // requests with scheme http (absent = http)
  double Coverage() const { return must_fetch == 0 ? 1.0 : double(covered) / double(must_fetch); }
};

// A request excused as a re-fetch after a crawler restart (not a violation).
struct Refetch {
  RequestRef request;      // the re-fetch
  RequestRef previous;     // the page's latest earlier final answer, lost with the restart
  int64_t restart_us = 0;  // the earliest restart r with previous.start_us < r
};

// Per-IP figures of one address (the log's "ip").
struct IpReport {
  std::string ip;
  int64_t requests = 0;
  int64_t max_in_flight = 0;        // most requests in flight at once at this address
  int64_t max_in_flight_at_us = 0;  // start of the request that first reached it
  int64_t min_start_gap_us = -1;    // smallest gap between consecutive starts; -1: < 2 requests
  int64_t min_start_gap_at_us = 0;  // start of the later request of that pair
  int64_t per_ip_concurrency = 0;   // violations at this address
  int64_t per_ip_gap = 0;
};

struct PerIpReport {
  bool available = false;           // some well-formed line carried a non-empty "ip"
  int64_t requests_without_ip = 0;  // well-formed lines without one (not judged per IP)
  int64_t limit = 0;                // AuditOptions::per_ip_limit; 0 = not judged
  int64_t gap_us = 0;               // AuditOptions::per_ip_gap; 0 = not judged
  int64_t gap_tolerance_us = 0;     // the tolerance applied (capped at gap_us / 2)
  // Over all addresses: the largest max_in_flight (first address in address order on ties)
  // and the smallest min_start_gap_us (-1 when no address had two requests).
  int64_t max_in_flight = 0;
  std::string max_in_flight_ip;
  int64_t min_start_gap_us = -1;
  std::string min_start_gap_ip;
  std::vector<IpReport> addresses;  // sorted by address (numerically for IPv4)
};

// Scheme and protocol figures of the whole log.
struct SchemeReport {
  bool available = false;  // some well-formed line carried "scheme" or "proto"
  int64_t http = 0;        // requests with scheme http, lines without "scheme" included
  int64_t https = 0;
  int64_t http1_1 = 0;  // requests with proto 1.1, lines without "proto" included
  int64_t http2 = 0;
  int64_t upgrades = 0;  // requests logged with "upgrade": true
  // The most http requests to one host name (first host in name order on ties; "" when none).
  int64_t max_http_per_host = 0;
  std::string max_http_host;
  std::optional<int> http_limit;  // AuditOptions::max_http_per_host; nullopt = not judged
  bool hsts = false;              // AuditOptions::hsts
};

// Requests to one host the manifest marks "trap": true (an endless URL space that only the
// crawler's per-host budgets bound).
struct TrapHostReport {
  std::string host;  // normalised
  int64_t requests = 0;
  // The most requests that started within one UTC day (the log's clock); 0 without requests.
  int64_t max_requests_per_utc_day = 0;
};

struct MalformedLine {
  int64_t line = 0;
  std::string reason;
};

struct AuditReport {
  int64_t lines = 0;     // lines read, including blank ones
  int64_t requests = 0;  // well-formed request lines
  int64_t malformed_count = 0;
  std::vector<MalformedLine> malformed;  // first max_malformed
  ViolationCounts totals;
  std::vector<Violation> examples;  // per kind the earliest max_examples, sorted by kind, start
  std::vector<Refetch> refetches;   // the earliest max_examples refetches after restart
  int64_t restarts = 0;             // distinct restart times given (AuditOptions::restarts_us)
  int64_t restart_window_us = 0;    // copied from the options
  int64_t refresh_window_us = 0;    // copied from the options; 0 = off
  int64_t conditional = 0;          // requests logged with "cond": true
  int64_t not_modified = 0;         // requests answered 304
  FetchStats fetches;               // over every manifest host's must_fetch identities
  std::vector<HostReport> hosts;    // every host of the log or manifest, sorted by name
  PerIpReport per_ip;
  SchemeReport schemes;
  std::vector<TrapHostReport> trap_hosts;  // every trap host of the manifest, sorted by name
  int64_t must_fetch = 0;
  int64_t covered = 0;
  std::vector<std::string> missing;  // first max_missing, manifest order
  double min_coverage = 1.0;         // copied from the options
  double Coverage() const { return must_fetch == 0 ? 1.0 : double(covered) / double(must_fetch); }
  int64_t UnknownHosts() const;  // hosts seen in the log but absent from the manifest
  // True iff no malformed line, no violation of any kind and Coverage() >= min_coverage.
  bool Passed() const;
  // Human-readable reasons the audit failed (empty when Passed()).
  std::vector<std::string> FailureReasons() const;
};

// Parsed manifest (exposed for tests and tools).
struct ManifestHost {
  std::string host;  // normalised
  int64_t crawl_delay_ms = 0;
  std::vector<std::string> must_fetch;               // normalised identities, duplicates removed
  std::vector<std::string> must_not_fetch_prefixes;  // as written in the manifest
  bool trap = false;  // "trap": true — requests to it are counted (AuditReport::trap_hosts)
};

// True iff `path` matches the manifest pattern `pattern`: the pattern up to " (" is a
// robots-style prefix ('*' matches any run of bytes, a final '$' anchors the end); a
// parenthesised "(but X)" exempts paths starting with X. An empty pattern matches nothing.
bool MatchesNotFetchPattern(std::string_view pattern, std::string_view path);
struct Manifest {
  std::vector<ManifestHost> hosts;  // manifest order; repeated hosts are merged
};

// Validates the manifest's shape. InvalidArgument names the offending field.
Result<Manifest> ParseManifest(const nlohmann::json& manifest);

// Audits `log` against `manifest`. Malformed log lines are data in the report, not errors;
// errors are a bad manifest or option (InvalidArgument), a failing stream (IOError) or a log
// of more than ~4 billion requests (ResourceExhausted).
Result<AuditReport> RunAudit(std::istream& log, const nlohmann::json& manifest,
                             const AuditOptions& options = {});
Result<AuditReport> RunAudit(std::istream& log, const Manifest& manifest,
                             const AuditOptions& options = {});

// Parses a restart-times file: one integer (microseconds, the log's clock) per line; blank
// lines and '#' comments (whole-line or trailing) are ignored, surrounding whitespace too.
// InvalidArgument names the first bad line: "line 3: 'abc' is not an integer microsecond
// time", or with a non-empty `source` (a file name) "restarts.txt:3: 'abc' is ...".
Result<std::vector<int64_t>> ParseRestartTimes(std::istream& in, std::string_view source = {});

// Human-readable report: verdict and totals, worst hosts (at most `max_hosts`), malformed
// lines, examples of each violation, refetches after restart (only when restarts were given),
// missing pages, hosts not in the manifest.
std::string FormatText(const AuditReport& report, size_t max_hosts = 10);
// Machine-readable report (schema in docs/audit.md).
nlohmann::json ToJson(const AuditReport& report);

// Normalises a host: ASCII lower case, ":port" (and IPv6 brackets' port) removed.
std::string NormalizeHost(std::string_view host);
// Normalises an identity "host/path...": the host part as NormalizeHost, the rest unchanged.
std::string NormalizeIdentity(std::string_view identity);

}  // namespace harvest::audit
