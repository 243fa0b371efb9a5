// testweb: a deterministic synthetic multi-host web served over HTTP/1.1 (and, with TLS on,
// HTTPS with HTTP/2 or HTTP/1.1), for tests, demos and benchmarks on machines without internet
// access.
//
// One port serves many virtual hosts chosen by the Host header (port suffix ignored,
// case-insensitive): the normal hosts h0000.test ... h{N-1}.test and, unless disabled, the
// hostile/edge hosts documented in docs/testweb.md (hostile.test, robots-5xx.test,
// robots-404.test, robots-redirect.test, robots-big.test, control.test) and, when asked for,
// the big news site big.test (SiteOptions::big_site) and the session-id trap sessions.test
// (SiteOptions::trap_host).
//
// With SiteOptions::corpus the normal hosts' tree pages are real HTML files instead of
// generated ones, their links rewired to this web (LoadCorpus; docs/testweb.md "Real pages"),
// and ExportStaticWeb writes such a web for a static server.
//
// Everything is a pure function of (seed, host, path, epoch): page HTML, link graph,
// robots.txt, sitemaps. The site therefore knows *by construction* which pages exist, which
// page identity a request path names and which path families it disallowed for the product
// token `harvest` — it shares no code with the crawler (no URL parser, no robots matcher):
// an instrument that reuses what it measures proves nothing.
//
// Standards: HTTP/2 (RFC 9113, through nghttp2) over TLS 1.2/1.3 (OpenSSL, ALPN RFC 7301);
// HTTP/1.1 (RFC 9112) subset — GET/HEAD (POST only on control.test), keep-alive,
// Content-Length bodies, no pipelining guarantees beyond sequential processing, no chunked
// request bodies. robots.txt files follow RFC 9309; sitemaps follow sitemaps.org 0.9.
// Departures on purpose: the hostile behaviours (slow, endless, huge, gzip bomb, ...).
//
// Thread-safety: Site is immutable after construction and safe to share. TestWeb runs its own
// event-loop threads; its public methods may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace harvest::testweb {

// Real HTML pages served as the normal hosts' tree pages instead of generated ones
// (docs/testweb.md "Real pages"); made by LoadCorpus, immutable, safe to share.
class Corpus;
class Site;

// The shape of the synthetic web.
struct SiteOptions {
  // Number of normal hosts h0000.test ... Default 100.
  int hosts = 100;
  // Pages per normal host, including the root "/". Default 50. Minimum 1.
  int pages = 50;
  // Links per normal page (tree links are added on top when needed). Default 20.
  int links = 20;
  // Share of the extra links that point to other normal hosts. Default 0.2.
  double cross_host_share = 0.2;
  // Seed of every generated choice. Default 1.
  uint64_t seed = 1;
  // Include the hostile/edge hosts (linked from the root of h0000.test). Default true.
  bool hostile = true;
  // Percentage of normal hosts whose robots.txt asks for a Crawl-delay (0.5 or 1 s).
  // Default: 1. Benchmarks set 0 so a few slow hosts do not make the tail of the crawl.
  int crawl_delay_percent = 1;
  // Percentage (0-100) of a normal host's tree pages /p/N that change with the epoch
  // (Site::PageChanges; the root "/" never changes). Default 10: exactly the pages with
  // N % 10 == 3. The rule is monotone: a page that changes at P also changes at every P' > P.
  int change_percent = 10;
  // Percentage (0-50) of the normal hosts' non-changing tree pages /p/N that render as
  // labelled near-copies of another page (Site::NearCopySource). Default 0: none.
  int near_dup_percent = 0;
  // Articles of the big news site big.test (docs/testweb.md "big.test"): /, N articles,
  // ceil(N/500) archive pages, a sitemap index of ceil(N/5000) sitemaps. Default 0: no such
  // host (the site is then exactly what it is without the option). 0 ... kMaxBigSiteArticles.
  int big_site = 0;
  // Add sessions.test, a host whose every page links new session-id URLs forever, bounded
  // only by a crawler's per-host budgets (docs/testweb.md "sessions.test"). Seeded, and linked
  // from big.test/ when there is one. Default false.
  bool trap_host = false;
  // The scheme big.test and sessions.test write in their absolute URLs (the robots.txt
  // Sitemap line, sitemap <loc>s, big.test/'s link to sessions.test): https when true
  // (`harvest testweb --tls` sets it, its seeds being https://), else http. The other hosts
  // always write http://, as old pages do. Default false.
  bool big_site_https = false;
  // Real pages (LoadCorpus): when set, tree page i of normal host h ("/" and "/p/N") is a
  // corpus file with its links rewired to this web, its other URLs made inert and a comment
  // naming the page inserted (docs/testweb.md "Real pages"); the hosts' other paths, robots.txt,
  // sitemaps and the special hosts stay as they are. near_dup_percent is then ignored (0).
  // Default null: generated pages.
  std::shared_ptr<const Corpus> corpus;
};

// What LoadCorpus found.
struct CorpusStats {
  size_t found = 0;  // files named *.html / *.htm (any case) under the directories
  size_t used = 0;   // of them, the pages of the corpus
  size_t not_html =
      0;  // skipped: no <html>, <head>, <body> or doctype in the first 4 KiB, or NUL bytes
  size_t too_small = 0;  // skipped: under kMinCorpusFileBytes
  size_t too_large = 0;  // skipped: over kMaxCorpusFileBytes
  uint64_t bytes = 0;    // total size of the used files
  size_t links = 0;      // total rewired link slots of the used files
};
inline constexpr uint64_t kMinCorpusFileBytes = 1024;
inline constexpr uint64_t kMaxCorpusFileBytes = 1024 * 1024;

// Loads every *.html / *.htm file under `dirs` (recursively, directory symlinks followed),
// sorted by path (the directories in the order given), skipping files that are not HTML or are
// under 1 KiB or over 1 MiB, and splits each once at its URL attributes so that a page is
// assembled on demand. Errors: a directory that does not exist or cannot be read, or no usable
// file at all (InvalidArgument naming the directories).
Result<std::shared_ptr<const Corpus>> LoadCorpus(const std::vector<std::string>& dirs,
                                                 CorpusStats* stats = nullptr);

// A real-pages web written to files for a static web server (scripts/bench-peers --corpus
// real): DIR/www/<host>/index.html ("/"), DIR/www/<host>/p/<N> ("/p/N", no extension: serve
// it as text/html), DIR/www/<host>/robots.txt ("User-agent: *", empty Disallow),
// DIR/seeds.txt (every host's root URL) and DIR/hosts.txt (the names), for the normal hosts
// only. The pages are the server's (one renderer), with host names hNNNN.<domain> and
// cross-host links to <scheme>://hNNNN.<domain>[:port]/...
struct StaticExportOptions {
  std::string dir;
  std::string domain = "test";
  int port = 0;        // 0: no port in the URLs
  bool https = false;  // https:// seeds and cross-host links
};
struct StaticExportStats {
  size_t pages = 0;
  size_t distinct_files = 0;  // corpus files used by at least one page
  uint64_t bytes = 0;         // total bytes of the pages written
  size_t links = 0;           // total <a>/<area> links of the pages written
};
// Needs SiteOptions::corpus. Errors name the file that could not be written.
Result<StaticExportStats> ExportStaticWeb(const Site& site, const StaticExportOptions& options);

// Writes a server certificate for `dns_names` (SAN DNS entries, e.g. "*.peers.test"; the first
// is also the common name) to `cert_path` and its EC key to `key_path` (mode 0600), signed by
// the test web's CA in `tls_dir` (made when absent, reused when present, as with
// TestWebOptions::tls_dir), so that a client trusting tls_dir/ca.pem trusts another server
// using them (scripts/bench-peers --tls with nginx). Errors name the file.
Status WriteServerCertificate(const std::string& tls_dir, const std::vector<std::string>& dns_names,
                              const std::string& cert_path, const std::string& key_path);

// Most articles SiteOptions::big_site allows (the manifest lists every one).
inline constexpr int kMaxBigSiteArticles = 1000000;

// A tree page: "/" (index 0) or "/p/<index>" of host `host` (index into Site::hosts()).
struct TreePage {
  int host = 0;
  int index = 0;
  bool operator==(const TreePage&) const = default;
};

enum class RobotsKind { kNormal, k5xx, k404, kRedirect, kBig };
enum class RequestKind { kPage, kRobots, kSitemap, kTrap, kEdge, kUnknown };

const char* RobotsKindName(RobotsKind kind);    // "normal", "5xx", "404", "redirect", "big"
const char* RequestKindName(RequestKind kind);  // "page", "robots", ...

struct HostInfo {
  std::string name;    // "h0001.test"
  bool normal = true;  // an hNNNN.test host (seeded); false for the special hosts
  RobotsKind robots = RobotsKind::kNormal;
  int variant = 0;             // robots.txt rule family variant (see docs/testweb.md)
  int crawl_delay_ms = 0;      // Crawl-delay in the group that applies to `harvest`
  int pages = 0;               // tree pages "/" and "/p/1" ... "/p/{pages-1}"
  bool calendar = false;       // root links to the infinite calendar trap
  bool sitemap_index = false;  // /sitemap.xml is an index of /sitemap-1.xml + .xml.gz
  int articles = 0;            // big.test: its articles (SiteOptions::big_site); else 0
  bool trap = false;           // sessions.test: endless session-id URLs, nothing must_fetch
};

// An <a href> of a generated page, with what the site knows about its target.
struct Link {
  std::string href;       // exactly as written in the HTML
  std::string host;       // target host name (lower case)
  std::string target;     // path+query the client will request, e.g. "/p/3?b=2&a=1"
  bool nofollow = false;  // rel="nofollow"
};

// What a request (host header + request target) names.
struct Route {
  RequestKind kind = RequestKind::kUnknown;
  int host = -1;            // index into Site::hosts(), -1 for unknown hosts
  std::string page;         // page identity "h0001.test/p/12", empty when none
  bool disallowed = false;  // disallowed for `harvest` by that host's robots.txt
};

// One documented hostile behaviour, as listed in the manifest.
struct EdgeInfo {
  std::string host;
  std::string path;
  std::string behaviour;    // "slow", "endless", "huge", "gzip-bomb", "redirect-chain", ...
  std::string expect;       // "fetched", "timeout", "error", "redirect", "not-fetched", ...
  bool must_fetch = false;  // also listed in its host's must_fetch
};

class Site {
 public:
  explicit Site(SiteOptions options);

  const SiteOptions& options() const { return options_; }
  const std::vector<HostInfo>& hosts() const { return hosts_; }
  // Index of the host named by a Host header ("H0001.TEST:8080" -> h0001.test), or -1.
  int FindHost(std::string_view host_header) const;
  // Classifies a request target (origin-form path?query; fragments and ;params tolerated).
  Route Resolve(std::string_view host_header, std::string_view target) const;
  // True iff `target` (path?query as requested) is disallowed for agent `harvest` on `host`,
  // decided from the rule families this site wrote — not by a general matcher.
  bool DisallowedForHarvest(int host, std::string_view target) const;
  // The followable-or-not <a> links of the page at canonical `path` on `host` (empty for
  // pages without links). Links hidden in comments/scripts are not included.
  std::vector<Link> LinksOf(int host, std::string_view path) const;
  // True when the page's links must not be followed (meta robots or X-Robots-Tag nofollow).
  bool PageNofollow(int host, std::string_view path) const;
  // robots.txt body of a host (for kRedirect: the body of /robots-real.txt).
  std::string RobotsTxt(int host) const;
  // Documented hostile behaviours (empty without hostile hosts).
  std::vector<EdgeInfo> Edges() const;
  // True iff tree page `index` of `host` changes with the epoch: index >= 1 and
  // ((index % 10 + 7) % 10) * 10 + (index / 10) % 10 < change_percent on normal hosts (10 on
  // the special robots hosts). The rank orders the last digit 3, 4, ..., 9, 0, 1, 2, then the
  // tens digit, so the default 10 is exactly "index % 10 == 3".
  bool PageChanges(int host, int index) const;
  // The page whose visible text tree page (host, index) copies with a small edit, when it is
  // a labelled near-copy (docs/testweb.md "Near-duplicates"); nullopt otherwise. Sources are
  // never copies themselves, and neither copies nor sources change with the epoch.
  std::optional<TreePage> NearCopySource(int host, int index) const;
  // The labelled near-duplicate groups: page identities ("h0001.test/p/7"), the original
  // first, then its copies in host and page order; groups in the original's order.
  std::vector<std::vector<std::string>> NearDuplicateGroups() const;
  // Identities of the pages of `host` that change with the epoch, in page order (tree pages
  // per PageChanges; on hostile.test, /edge/changing).
  std::vector<std::string> ChangingPages(int host) const;
  // "http://h0000.test/" ... one per normal host, then "http://big.test/" and
  // "http://sessions.test/" when those hosts exist.
  std::vector<std::string> SeedUrls() const;
  // The manifest JSON document (see docs/testweb.md), computed by BFS over the link graph.
  std::string ManifestJson() const;

 private:
  SiteOptions options_;
  std::vector<HostInfo> hosts_;
  int tree_fanout_ = 2;
  friend class SiteInternals;
};

// A running server.
struct TestWebOptions {
  SiteOptions site;
  // "ADDR:PORT"; port 0 picks a free port (see TestWeb::port()). Default 127.0.0.1:0.
  std::string listen = "127.0.0.1:0";
  // Listen on this many IPv4 addresses, all on one port: the `listen` address and the next
  // ones counting up (127.0.0.1, 127.0.0.2, ..., 127.0.0.255, 127.0.1.0, ...). Above 1 they
  // must all lie in 127.0.0.0/8, which Linux routes to the loopback interface without any
  // setup. With port 0 the port is picked for the first address; when a later address cannot
  // bind it, every socket is closed and a new port tried (a few times). 1 ... kMaxAddresses.
  // Default 1. Every address serves every host; ResolveFileText says which host a crawler
  // should reach where.
  int addresses = 1;
  // Event-loop threads. Default 1 (2 on a 2-core box is the useful maximum).
  int threads = 1;
  // Request log (JSON lines); empty = no log. Flushed at least every second and at Stop().
  std::string log_path;
  // Initial content version of the changing pages; see SetEpoch(). Default 0.
  int64_t epoch = 0;
  // The epoch also advances by one every `change_every` of wall-clock time (the `clock`)
  // since Start(): epoch() = epoch + floor((now - start) / change_every) + the net effect of
  // SetEpoch(). Default 0: only SetEpoch() (POST /__testweb/epoch) changes it.
  std::chrono::milliseconds change_every{0};
  // Wall clock for the log's start_us/end_us; nullptr = SystemClock::Default().
  const Clock* clock = nullptr;
  // HTTPS on the same port(s) (docs/testweb.md "HTTPS"): a connection whose first byte is a
  // TLS handshake record gets TLS, HTTP/2 or HTTP/1.1 by ALPN; any other stays plain HTTP.
  // Default false: plain HTTP only.
  bool tls = false;
  // Where the CA lives (ca.pem, ca.key): made when absent, reused when present. Required
  // with `tls`.
  std::string tls_dir;
  // Every plain-HTTP request (but control.test's) gets 301 to https://. Requires `tls`.
  bool http_redirect = false;
  // HTTPS responses carry Strict-Transport-Security: max-age=31536000. Requires `tls`.
  bool hsts = false;
  // A TLS connection whose handshake has not finished this long after its accept is closed.
  // Default 10 s; tests shorten it.
  std::chrono::milliseconds tls_handshake_timeout{10000};
};

// Most addresses TestWebOptions::addresses allows (one listening socket each).
inline constexpr int kMaxAddresses = 1000;

// The resolve file of a site served on `addresses` ("ADDR:PORT", as TestWeb::addresses()):
// a '#' comment line, then one line "HOST ADDR:PORT" per host of the site, in host order.
// Normal host hNNNN.test (index i of Site::hosts()) goes to addresses[i % size]; the special
// hosts (hostile, robots-*, control) to addresses[0]. A crawler that connects each host to
// its line's address spreads the hosts round-robin over the addresses (docs/testweb.md).
// `addresses` must not be empty.
std::string ResolveFileText(const Site& site, const std::vector<std::string>& addresses);

class TestWeb {
 public:
  // Binds, listens and starts the event loops.
  static Result<std::unique_ptr<TestWeb>> Start(const TestWebOptions& options);
  virtual ~TestWeb() = default;
  virtual const Site& site() const = 0;
  virtual int port() const = 0;
  // "127.0.0.1:PORT" as bound: the first address.
  virtual std::string address() const = 0;
  // Every listening "ADDR:PORT", in address order (the first is address()).
  virtual std::vector<std::string> addresses() const = 0;
  // The current epoch (TestWebOptions::epoch, change_every and SetEpoch()).
  virtual int64_t epoch() const = 0;
  // Makes epoch() return `epoch` now; with change_every it keeps advancing from there.
  virtual void SetEpoch(int64_t epoch) = 0;
  // Stops the loops, closes connections (logging unfinished responses) and flushes the log.
  // Idempotent.
  virtual void Stop() = 0;
};

}  // namespace harvest::testweb
