// resolver: host name resolution done by Harvest itself, before a host's first request, so
// a DNS failure is recorded as such and curl is handed an address (FetchRequest::
// connect_address) instead of resolving on its own. Also the --resolve-file pin table.
//
// Standards: DNS (RFC 1034, 1035) through c-ares (ares_getaddrinfo: A and AAAA queries);
// record TTLs (RFC 1035 §3.2.1, the smallest TTL of the answer) decide how long an answer is
// cached; negative answers (NXDOMAIN, NODATA; RFC 2308) and timeouts are cached too.
//
// Deliberate departures from a stub resolver such as getaddrinfo(3):
//  - Record TTLs are clamped to [min_ttl, max_ttl]: a crawl must not re-resolve a host with a
//    TTL of 0 before every request, nor keep an address for days.
//  - Failures of any kind (NXDOMAIN, no address, SERVFAIL, timeout) are cached for
//    negative_ttl, not per the SOA minimum: the crawl retries the host later anyway.
//  - The search list of resolv.conf is NOT applied (ARES_FLAG_NOSEARCH): a crawled name is
//    always fully qualified. /etc/hosts is consulted as resolv.conf's "lookup" order says.
//  - One address is kept per name: the first IPv4 address if there is any (a crawler's
//    network is more likely to route IPv4), else the first IPv6 address. No RFC 6724 sorting.
//  - The cache is bounded (max_entries, least recently used evicted): a crawl of millions
//    of hosts keeps memory flat. Pins (PinTable) are not cached: they are looked up directly.
//
// Thread-safety: a Resolver is used by one thread (the crawl's I/O thread: Cached, Resolve,
// TakeCompleted); NewAresResolver's runs its lookups on a thread of its own and calls
// `wakeup` from there. PinTable is immutable after Parse/Load: safe to share between threads.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace harvest::fetch {

struct ResolverOptions {
  std::chrono::seconds min_ttl{60};    // a positive answer is cached at least this long
  std::chrono::seconds max_ttl{3600};  // and at most this long (record TTL clamped)
  // Failures (NXDOMAIN, no address, SERVFAIL, timeout) are cached this long.
  std::chrono::seconds negative_ttl{10};    // shorter than the first retry backoff
  std::chrono::milliseconds timeout{5000};  // per lookup overall
  int tries = 2;                            // attempts per server (c-ares ARES_OPT_TRIES)
  size_t max_entries = 100000;  // cache bound (entries); least recently used evicted; 0 = no cache
  std::string servers;          // "" = /etc/resolv.conf; else "127.0.0.1:5353,..." (tests)
  bool ipv6 = true;             // also ask for AAAA records (an IPv4 address is still preferred)
};

struct Resolution {
  std::string name;  // as asked: lower-case host name, no port, no brackets
  bool ok = false;
  std::string address;  // numeric IPv4 (preferred) or IPv6 without brackets, when ok
  // !ok: the cause, e.g. "NXDOMAIN (domain name not found)", "timeout after 5000 ms".
  std::string error;
  std::chrono::seconds ttl{0};  // how long this answer is cached (after clamping)
};

class Resolver {
 public:
  virtual ~Resolver() = default;
  // A cached answer still fresh (positive or negative) or nullopt. Never blocks. Numeric
  // addresses (IPv4, IPv6, also "[v6]") answer ok at once without a lookup.
  virtual std::optional<Resolution> Cached(std::string_view name) = 0;
  // Starts a lookup unless one for `name` is already running (coalesced). When it ends its
  // Resolution is cached and returned by TakeCompleted(), and `wakeup` is called (from any
  // thread). A name that is numeric or has a fresh cached answer is not looked up again: that
  // answer is returned by the next TakeCompleted().
  virtual void Resolve(std::string_view name) = 0;
  // Lookups finished since the last call (the caller's thread).
  virtual std::vector<Resolution> TakeCompleted() = 0;
  virtual size_t pending() const = 0;  // lookups running
  virtual size_t cached() const = 0;   // cache entries
};

// c-ares (ares_getaddrinfo, TTLs from ai_ttl) on one thread of its own; Cached/Resolve/
// TakeCompleted are called from one other thread (the crawl's I/O thread). clock nullptr =
// SystemClock (the clock only decides cache expiry; lookups time out in real time).
// Errors: a bad `servers` list, c-ares or thread setup failures.
Result<std::unique_ptr<Resolver>> NewAresResolver(ResolverOptions options, Clock* clock,
                                                  std::function<void()> wakeup);

// True for a numeric IPv4 or IPv6 address (IPv6 without brackets).
bool IsNumericAddress(std::string_view host);

// Which addresses a crawl may connect to (docs/politeness.md "Private networks"). Blocked
// unless the operator opens them: unspecified and "this network" (0.0.0.0/8, ::), loopback
// (127.0.0.0/8, ::1), RFC 1918 (10/8, 172.16/12, 192.168/16), CGNAT (100.64.0.0/10),
// link-local (169.254.0.0/16, fe80::/10), IETF protocol assignments (192.0.0.0/24), multicast
// (224.0.0.0/4, ff00::/8), reserved and broadcast (240.0.0.0/4), unique-local (fc00::/7),
// site-local (fec0::/10). An IPv6 address embedding an IPv4 one (IPv4-mapped ::ffff:0:0/96,
// IPv4-compatible ::/96, NAT64 64:ff9b::/96) is judged by its IPv4 address.
class AddressFilter {
 public:
  // Opens the ranges `allowed` ("10.0.0.0/8", "127.0.0.1", "fd00::/8"; a bare address is
  // one address). InvalidArgument naming the entry when one is not a CIDR.
  static Result<AddressFilter> Make(const std::vector<std::string>& allowed);
  AddressFilter() = default;

  // nullopt when `address` (numeric, IPv6 without brackets) may be connected to; else the
  // blocked range it is in, e.g. "loopback 127.0.0.0/8". A string that is not a numeric
  // address is blocked ("not a numeric address").
  std::optional<std::string> Blocked(std::string_view address) const;

 private:
  struct Range {
    std::array<uint8_t, 16> prefix{};  // IPv4 as ::ffff:a.b.c.d
    int bits = 0;                      // of the 128
  };
  std::vector<Range> allowed_;
};

// --resolve-file: lines "HOST ADDRESS" like /etc/hosts ('#' comments, blank lines ok); ADDRESS
// is a numeric IPv4/IPv6 address, optionally with a port ("127.0.0.7:8080", "[::1]:8080")
// which then replaces the URL's port. HOST is a name (case-insensitive; one trailing dot is
// ignored) or "*.suffix" (matches any name ending in ".suffix", not "suffix" itself). Exact
// names win over wildcards; the longest wildcard wins.
struct Pin {
  std::string address;  // numeric, IPv6 without brackets
  int port = 0;         // 0 = the URL's port
};

class PinTable {
 public:
  PinTable() = default;
  // Errors name "<source>:<line>: <problem>" (bad address, bad port, missing field, duplicate
  // host).
  static Result<PinTable> Parse(std::string_view text, std::string_view source);
  static Result<PinTable> Load(const std::string& path);  // file errors name the path
  const Pin* Find(std::string_view host) const;           // host lower-case, no port
  size_t size() const { return exact_.size() + wildcard_.size(); }
  bool empty() const { return size() == 0; }

 private:
  struct Hash {  // lets Find() look up a string_view without a copy
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Map = std::unordered_map<std::string, Pin, Hash, std::equal_to<>>;
  // Keyed by the lower-case name without a trailing dot; wildcards by the suffix after "*.".
  Map exact_;
  Map wildcard_;
};

}  // namespace harvest::fetch
