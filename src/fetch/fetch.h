// fetch: the asynchronous HTTP fetcher — thousands of transfers on one event-loop thread. The
// crawl's fetcher is HttpFetcher: http and https requests run on Harvest's own HTTP/1.1
// client (src/fetch/http1_client.h; TLS on OpenSSL, src/fetch/tls_client.h) on its epoll
// loop, every other request (proxies, redirects followed inline, names to resolve) on a
// libcurl multi handle inside it (CurlFetcher, driven by curl_multi_socket_action on the same
// loop). Both capture the same FetchResult.
//
// Standards: HTTP/1.1 (RFC 9110, 9112) over TCP or TLS 1.2/1.3 (RFC 5246, 8446; ALPN RFC
// 7301, SNI RFC 6066) in the own client; HTTP/1.1 and HTTP/2 (RFC 9113) as implemented by
// libcurl;
// Retry-After per RFC 9110 §10.2.3 (delay-seconds or HTTP-date, §5.6.7).
//
// What it keeps for the WARC writer: the request head exactly as sent, the raw head of the
// FINAL response exactly as received, the body de-chunked but NOT content-decoded (a gzip body
// stays gzip; the caller decodes), remote IP, HTTP version and timings. See docs/fetching.md.
//
// Deliberate departures from a browser-like client:
//  - Redirects are NOT followed by default (max_redirects = 0): a 3xx is a result whose
//    Location the crawler sends back through admission. A request may opt in (the crawl does
//    not: its robots gate follows robots.txt redirects itself, src/crawl/robots_gate.h).
//  - A body longer than max_body_bytes is cut there; the result is kTruncated with the bytes
//    received so far (WARC-Truncated: length), not an error.
//  - Proxies from the environment (http_proxy, ...) are ignored unless FetchOptions::proxy says.
//  - Only http and https URLs are fetched (also for redirect targets).
//
// Thread-safety: a Fetcher is event-loop-only. Every method except Wakeup() must be called on
// one thread (the first thread that calls Start() or Poll() becomes the loop thread; debug
// builds assert it). Completion callbacks run on that thread, inside Poll(), and may call
// Start() again. Wakeup() may be called from any thread. FetchResult is a plain value type.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace harvest::fetch {

struct FetchOptions {
  // User-Agent request header. Default "" = "Harvest/<kVersion> (+<kProjectUrl>)".
  std::string user_agent;
  // Time allowed to establish the TCP (+TLS) connection. Default 10 s.
  std::chrono::milliseconds connect_timeout{10000};
  // Time allowed for the whole transfer, connect included. Default 30 s.
  std::chrono::milliseconds total_timeout{30000};
  // Abort a transfer slower than low_speed_limit_bytes per second for low_speed_time
  // (a trickling server must not hold a host slot forever). Default: 100 B/s for 15 s.
  long low_speed_limit_bytes = 100;
  std::chrono::seconds low_speed_time{15};
  // Body bytes kept; beyond this the transfer is aborted and reported kTruncated with
  // truncated = "length". A request may set its own (FetchRequest::max_body_bytes).
  // Default 10 MiB.
  size_t max_body_bytes = 10u << 20;
  // Cap on the bytes of all response heads of one transfer (status lines + header fields,
  // 1xx and followed redirects included); beyond it the transfer fails with kProtocolError.
  // Default 64 KiB.
  size_t max_header_bytes = 64u << 10;
  // CURLOPT_CONNECT_TO entries "HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT"; an empty HOST
  // (or PORT) matches every host (port). Tests route every name to 127.0.0.1 this way.
  std::vector<std::string> connect_to;
  // Offer HTTP/2 over TLS (ALPN) on libcurl's https requests; plain http stays HTTP/1.1.
  // HttpFetcher's own client (native_https) speaks HTTP/1.1 only. Default true.
  bool http2 = true;
  // Verify the server certificate and host name. Default true.
  bool verify_tls = true;
  // A PEM file of extra root certificates trusted for https, in addition to the system's
  // store (an intranet's or a test web's CA). Default "" = the system store only. An
  // unreadable file, or one without a certificate, is a setup error naming it.
  std::string ca_file;
  // Transfers running at once; further Start() calls wait inside the fetcher, FIFO. Open
  // connections: one per running transfer and per idle host kept (a redirect followed
  // inside a transfer may add one). 0 = unlimited. Default 2000.
  size_t max_concurrent = 2000;
  // Hosts whose connection is kept open, idle, for their next request (each host has its
  // own connection cache, so a lookup never walks other hosts' connections); beyond it the
  // least recently used host's is closed, and none is kept longer than 30 s. Also
  // CURLMOPT_MAXCONNECTS. 0 = keep none. Default 2048: in a crawl of many hosts a host's
  // next request comes after every other ready host has had its turn (about a second at
  // thousands of requests/s, or the host's delay), so keeping fewer reopens most connections.
  size_t max_idle_connections = 2048;
  // Accept-Encoding request header ("" = not sent). The body is never decoded here.
  std::string accept_encoding = "gzip, br, zstd";
  // Transfers running at once per URL host ("host[:port]" of the request URL; politeness:
  // 1). Extra requests for a busy host wait in the fetcher's queue. 0 = unlimited. Default 1.
  // Enforced by the fetcher, not by CURLMOPT_MAX_HOST_CONNECTIONS, which counts per connect
  // address and would serialize every host that connect_to routes to one address. Redirect
  // hops followed inside one transfer are not counted against their own host.
  size_t max_host_connections = 1;
  // Proxy URL (curl syntax, e.g. "http://127.0.0.1:3128"). Default "" = no proxy, and the
  // environment's http_proxy/https_proxy are ignored.
  std::string proxy;
  // How long resolved addresses stay in the fetcher's DNS cache. Default 5 min.
  std::chrono::seconds dns_cache_ttl{300};
  // HttpFetcher only: plain-http requests run on Harvest's own HTTP/1.1 client (see
  // HttpFetcher); false: they run on libcurl. Default true.
  bool native_http = true;
  // HttpFetcher only: https requests run on Harvest's own HTTP/1.1 client over OpenSSL
  // (TLS 1.2/1.3, ALPN "http/1.1", sessions resumed); false: on libcurl, which offers HTTP/2
  // when `http2` says so. A crawler keeps one request in flight per host, so HTTP/2's
  // multiplexing gains nothing there, while libcurl cost 3.3x the CPU per https page.
  // Default true.
  bool native_https = true;
};

struct FetchRequest {
  uint64_t id = 0;  // the caller's id, returned in the result
  std::string url;  // absolute http(s) URL
  // Extra request headers, e.g. {"If-None-Match", "\"abc\""}. A name or value containing CR,
  // LF or NUL (or a name with ':') fails the request with kOtherError (header injection).
  std::vector<std::pair<std::string, std::string>> headers;
  // Redirects to follow before returning (0 = a 3xx is the result); such a request runs on
  // libcurl.
  int max_redirects = 0;
  // Where to connect instead of resolving the URL's host (the crawl resolves names itself,
  // src/fetch/resolver.h): a numeric IPv4 or IPv6 address (IPv6 without brackets); "" = curl
  // resolves the URL's host as before. Set, it takes the place of FetchOptions::connect_to
  // for this request, and curl does no DNS lookup for the URL's host. The URL (Host header,
  // TLS SNI and certificate check) is unchanged. Redirects followed to another host are not
  // affected by it. Anything but a numeric address fails the request with kOtherError.
  std::string connect_address;
  // Port to connect to with connect_address (0 = the URL's port).
  int connect_port = 0;
  // false: the connection is closed after this transfer instead of kept for reuse (the
  // caller knows nothing more will be asked of this host soon). Idle connections cost more
  // than memory: curl scans every idle connection of a connect address (a bundle) with a
  // poll(2) each time it looks for one to reuse, so thousands of idle connections to hosts
  // behind one address made that scan the crawl's largest cost. Default true.
  bool reuse_connection = true;
  // Body bytes kept for this request in place of FetchOptions::max_body_bytes; 0 = that
  // option. The crawl raises it for sitemaps (sitemaps.org allows 50 MiB uncompressed) and
  // leaves every other request at the fetcher's cap. Default 0.
  size_t max_body_bytes = 0;
};

enum class FetchOutcome {
  kOk,                // an HTTP response (any status) was received completely
  kTruncated,         // body cut at max_body_bytes (truncated == "length")
  kTimeout,           // connect/total timeout or low-speed abort (truncated "time" if a body began)
  kConnectError,      // TCP connection refused / unreachable
  kDnsError,          // host name did not resolve
  kTlsError,          // TLS handshake or certificate verification failed
  kProtocolError,     // malformed/oversized response, empty reply, connection lost mid-response
  kTooManyRedirects,  // more than the request's max_redirects
  kAborted,           // aborted by the fetcher
  kOtherError,        // anything else (bad URL, unsupported scheme, bad request header, ...)
};

// "ok", "truncated", "timeout", "connect_error", "dns_error", "tls_error", "protocol_error",
// "too_many_redirects", "aborted", "other_error".
std::string_view OutcomeName(FetchOutcome outcome);

// A Strict-Transport-Security policy (RFC 6797 §6.1).
struct HstsPolicy {
  std::chrono::seconds max_age{0};  // 0: the host is no longer a known HSTS host (§6.1.1)
  bool include_subdomains = false;
};
// Parses a Strict-Transport-Security header value (RFC 6797 §6.1): directives separated by
// ';', names in any case and order, values a token or a quoted-string, unknown directives
// ignored. nullopt — the header must be ignored — when max-age is missing or not
// delta-seconds, a directive appears twice, includeSubDomains has a value, or the syntax is
// bad. A max-age above kMaxHstsAge is cut to it.
inline constexpr std::chrono::seconds kMaxHstsAge{10LL * 365 * 24 * 3600};  // ten years
std::optional<HstsPolicy> ParseStrictTransportSecurity(std::string_view value);

struct FetchResult {
  uint64_t id = 0;
  std::string url;            // as requested
  std::string effective_url;  // last URL fetched (differs after followed redirects)
  FetchOutcome outcome = FetchOutcome::kOtherError;
  std::string error;          // curl's message (or ours) when outcome != kOk
  int status = 0;             // HTTP status of the final response, 0 when none
  std::string http_version;   // "1.0", "1.1", "2", "3"; "" when no response
  std::string request_head;   // raw head of the final request as sent (HTTP/2: curl's
                              // HTTP/1-style rendering of the request)
  std::string response_head;  // raw final response head as received (status line .. CRLF CRLF;
                              // HTTP/2: curl's HTTP/1-style rendering, "HTTP/2 200 \r\n...")
  std::vector<std::pair<std::string, std::string>> headers;  // parsed from response_head
  std::string body;                                          // de-chunked, NOT content-decoded
  std::string truncated;      // "" or "length" / "time" / "disconnect" (WARC-Truncated)
  std::string ip;             // remote IP address of the final connection
  int64_t start_wall_us = 0;  // when the transfer started (µs since the Unix epoch)
  std::chrono::microseconds total_time{0};
  std::chrono::microseconds ttfb{0};  // start until the first response byte
  // When the response's last byte reached this machine (the kernel's receive timestamp, µs
  // since the epoch): a host's delay counts from it. 0 when unknown (the curl path) or when
  // the client cut the response short (its end is then the close, at the callback).
  int64_t last_byte_wall_us = 0;
  int redirects_followed = 0;

  // Value of the response header `name` (case-insensitive); the last one wins.
  std::optional<std::string_view> Header(std::string_view name) const;
  // Retry-After as a delay from now (`now_wall_us`, µs since the epoch): delay-seconds or an
  // HTTP-date (a date in the past gives 0 s). nullopt when absent or unparsable.
  std::optional<std::chrono::seconds> RetryAfter(int64_t now_wall_us) const;
  // How long before `now_wall_us` (µs since the epoch, the real clock) the last byte arrived:
  // 0 when last_byte_wall_us is unknown, and never more than the transfer took (total_time)
  // nor less than 0, whatever a step of the wall clock did meanwhile.
  std::chrono::microseconds SinceLastByte(int64_t now_wall_us) const;
  // Content-Type / Content-Encoding header values, "" when absent.
  std::string_view ContentType() const;
  std::string_view ContentEncoding() const;
  // The first Strict-Transport-Security header, parsed (RFC 6797 §8.1: a UA processes only
  // the first); nullopt when absent or invalid. Whether the response may set HSTS at all (an
  // HTTPS response without certificate errors, §8.1) is the caller's to know.
  std::optional<HstsPolicy> StrictTransportSecurity() const;
};

using FetchCallback = std::function<void(FetchResult&&)>;

// Parses the header fields of a raw response head (the status line is skipped; obsolete line
// folding is joined with one space; lines without ':' are ignored). Never fails.
std::vector<std::pair<std::string, std::string>> ParseResponseHeaders(std::string_view head);

// Parses an HTTP-date (IMF-fixdate, RFC 850 or asctime form, RFC 9110 §5.6.7) to seconds
// since the Unix epoch; nullopt when it is not one.
std::optional<int64_t> ParseHttpDate(std::string_view date);

// The fetcher interface the crawl drives (the way leveldb passes Env through Options): the
// crawl takes one through CrawlOptions::fetcher, so its tests run on a scripted fake
// (src/fetch/testing/fake_fetcher.h) with a FakeClock, without sockets or sleeps.
//
// Contract for every implementation: event-loop-only as described at the top of this file;
// `done` is called exactly once per Start(), on the loop thread, inside Poll() (never inside
// Start()); Wakeup() is the only method other threads may call.
class Fetcher {
 public:
  virtual ~Fetcher() = default;

  // Queues a transfer; `done` is called exactly once, on the loop thread, inside Poll().
  virtual void Start(FetchRequest request, FetchCallback done) = 0;
  // Waits up to `timeout` for progress or Wakeup(); drives the transfers; runs completion
  // callbacks. Returns the number of transfers completed. Microseconds: the crawl wakes for
  // a host's next request to the microsecond, not rounded up to the next millisecond
  // (CurlFetcher alone rounds up, epoll_wait's unit).
  virtual int Poll(std::chrono::microseconds timeout) = 0;
  // Any thread: makes a blocked (or the next) Poll() return early.
  virtual void Wakeup() = 0;
  // Transfers started (running or queued) and not yet completed.
  virtual size_t in_flight() const = 0;
  // Setup errors (ok when the fetcher is usable).
  virtual Status status() const = 0;
};

// The libcurl implementation: one multi handle driven by curl_multi_socket_action on epoll.
class CurlFetcher final : public Fetcher {
 public:
  // Errors setting up (epoll, eventfd, curl, a malformed connect_to entry) are kept in
  // status(); a CurlFetcher with a bad status completes every request with kOtherError.
  explicit CurlFetcher(FetchOptions options);
  // Aborts the transfers in flight and queued; their callbacks are NOT called.
  // REQUIRES: not called from inside a completion callback.
  ~CurlFetcher() override;
  CurlFetcher(const CurlFetcher&) = delete;
  CurlFetcher& operator=(const CurlFetcher&) = delete;

  void Start(FetchRequest request, FetchCallback done) override;
  int Poll(std::chrono::microseconds timeout) override;
  void Wakeup() override;
  size_t in_flight() const override;
  Status status() const override;

  // For a loop that embeds this fetcher (HttpFetcher): a descriptor that is readable while
  // curl has socket events for Poll (-1 when setup failed), and how long such a loop may
  // wait before Poll is due for curl's timers or finished setup errors (at most `cap`).
  int wait_fd() const;
  std::chrono::milliseconds TimeUntilDue(std::chrono::milliseconds cap) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The crawl's fetcher. http:// and https:// requests that follow no redirect, use no proxy
// and need no DNS lookup here (FetchRequest::connect_address, an address literal, or a
// connect_to entry routing the host to a numeric address: what the crawl's resolver and
// --connect-to give every request) run on Harvest's own HTTP/1.1 client on this fetcher's
// epoll loop (src/fetch/http1_client.h; https over OpenSSL with sessions resumed per host,
// src/fetch/tls_client.h); every other request runs on a CurlFetcher inside it
// (FetchOptions::native_http / native_https = false send that scheme there too). Both capture
// the same FetchResult. libcurl costs ~36 µs of CPU per reused-connection request and 2.3
// poll(2) plus 1.9 epoll_ctl(2) calls per page in a crawl of many hosts; the own client needs
// one send(2), usually one recv(2), and epoll_ctl(2) only for a new connection
// (docs/fetching.md "Own HTTP/1.1 client", "HTTPS on the own client"). max_concurrent and
// max_host_connections count both kinds of transfer together.
class HttpFetcher final : public Fetcher {
 public:
  // Errors setting up are kept in status(), as in CurlFetcher.
  explicit HttpFetcher(FetchOptions options);
  // Aborts the transfers in flight and queued; their callbacks are NOT called.
  ~HttpFetcher() override;
  HttpFetcher(const HttpFetcher&) = delete;
  HttpFetcher& operator=(const HttpFetcher&) = delete;

  void Start(FetchRequest request, FetchCallback done) override;
  int Poll(std::chrono::microseconds timeout) override;
  void Wakeup() override;
  size_t in_flight() const override;
  Status status() const override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace harvest::fetch
