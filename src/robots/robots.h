// robots.txt: parsing and matching per RFC 9309 (Robots Exclusion Protocol, September 2022),
// behaving where the RFC is silent as Google's open-source parser (google/robotstxt) does.
//
// Entry points:
//   RobotsRules::Parse(body)         parses any bytes; never fails, never throws.
//   FromFetch(status, body, hops)    RFC 9309 §2.3.1 status handling (docs/architecture.md §1.2).
//   rules.Check(token, path_query)   longest-match decision with the deciding rule and line.
//   ProductToken(user_agent)         "Harvest/0.1 (+https://x)" -> "harvest".
//
// Matching (RFC 9309 §2.2):
//   - Groups: consecutive user-agent lines share the rules that follow them; a user-agent line
//     after a rule starts a new group. Every group naming the product token is merged; `*`
//     groups apply only when no group names it (a named group without rules allows all).
//   - A user-agent value is compared case-insensitively on its leading run of [A-Za-z_-]
//     ("FooBot/1.2" names "foobot"); the same reduction is applied to the caller's token.
//   - Longest (most octets) matching rule wins; Allow wins a tie; `*` matches any run of
//     octets, `$` at the end anchors at the end of path+query (a `$` elsewhere is literal).
//   - Empty Allow/Disallow values match nothing ("Disallow:" = allow all). /robots.txt is
//     always allowed.
//   - Percent-encoding (§2.2.2), applied to rules and paths alike: octets >= 0x80 are encoded
//     as %XX (UTF-8 as written), hex digits of escapes are uppercased, and escapes of
//     unreserved characters (A-Z a-z 0-9 - . _ ~) are decoded. In paths, a literal `*` or `$`
//     is encoded (%2A, %24) so that rule escapes %2A/%24 match them (§2.2.3); in rules, a
//     `$` that is not the final anchor is literal and encoded likewise.
//
// Departures and additions (all documented in docs/robots.md):
//   - Reserved characters other than `*` and `$` are compared as written: "/a/b" does not
//     match "/a%2Fb" (as google/robotstxt; RFC 9309 Figure 6's query example is not applied).
//   - Escapes of unreserved characters are decoded (RFC 9309), which google/robotstxt does not do.
//   - Google's typos are accepted: "useragent", "user agent", "disalow", "dissallow",
//     "dissalow", "diasllow", "disallaw", "site-map", and a key/value separated by whitespace
//     instead of a colon when the line holds exactly two words.
//   - Crawl-delay (not in RFC 9309) is read per group: seconds, fractions allowed, invalid
//     values ignored, clamped to kMaxCrawlDelay; merged groups take the largest value.
//   - Only the first kMaxRobotsBytes (500 KiB, RFC 9309 §2.5) are parsed; a line cut by the
//     limit is dropped rather than parsed truncated (a truncated Allow would widen access).
//
// Thread-safety: RobotsRules is immutable after construction; const methods may be called
// concurrently. Copies are cheap (shared immutable state), so a cache can hand them out.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harvest::robots {

// RFC 9309 §2.5: crawlers SHOULD parse at least 500 kibibytes; we parse exactly that much.
inline constexpr size_t kMaxRobotsBytes = 500 * 1024;
// RFC 9309 §2.3.1.2: follow at least five consecutive redirects.
inline constexpr int kMaxRedirects = 5;
// Larger Crawl-delay values are clamped: the crawler skips hosts above its own maximum
// (docs/architecture.md §1.1, default 300 s) anyway, and the clamp keeps the millisecond count from
// overflowing.
inline constexpr std::chrono::milliseconds kMaxCrawlDelay = std::chrono::hours(24);
// More Sitemap lines are ignored: bounds memory for hostile files; real sites list a handful.
inline constexpr size_t kMaxSitemaps = 1000;

struct MatchResult {
  bool allowed = true;
  int line = 0;      // line of the deciding rule; 0 when no rule of the file matched
  std::string rule;  // e.g. "Disallow: /private/"; empty when no rule matched. Synthetic
                     // decisions (status policy, /robots.txt) carry an explanation, line 0.
};

class RobotsRules {
 public:
  // Rules that allow everything (what an empty body parses to).
  RobotsRules();

  // Parses a robots.txt body (any bytes). Never fails, never throws.
  static RobotsRules Parse(std::string_view body);
  static RobotsRules AllowAll();
  static RobotsRules DisallowAll();

  // path_and_query: the URL's path + "?" + query, as sent on the wire (percent-encoded).
  // An empty path is "/"; a '#' fragment, if present, is ignored.
  // product_token: our product token ("harvest"); compared case-insensitively.
  MatchResult Check(std::string_view product_token, std::string_view path_and_query) const;
  bool IsAllowed(std::string_view product_token, std::string_view path_and_query) const;

  // Crawl-delay of the group that applies to product_token; nullopt when it sets none.
  std::optional<std::chrono::milliseconds> CrawlDelay(std::string_view product_token) const;

  // Sitemap URLs in file order, duplicates removed (global: any position in the file).
  const std::vector<std::string>& Sitemaps() const;

  // True for DisallowAll caused by 5xx/429/network error: refetch soon.
  bool temporary() const;

  // Approximate heap footprint, for the cache budget.
  size_t memory_bytes() const;

  // Number of Allow/Disallow rules kept (all groups), and total lines seen. For diagnostics.
  size_t rule_count() const;
  int line_count() const;

  struct Impl;  // opaque; defined in rules_impl.h

 private:
  explicit RobotsRules(std::shared_ptr<const Impl> impl);
  friend RobotsRules FromFetch(int status, std::string_view body, int redirects_followed);
  std::shared_ptr<const Impl> impl_;
};

// RFC 9309 §2.3.1 status handling. status 0 = network error / no response. redirects: hops
// followed. 2xx: parse. More than kMaxRedirects hops, or a final 3xx: unavailable, allow all.
// 4xx except 429: allow all. 429, 5xx, 0 and anything else (1xx, >= 600, negative): disallow
// all with temporary() == true.
RobotsRules FromFetch(int status, std::string_view body, int redirects_followed = 0);

// Extracts the product token from a User-Agent string: "Harvest/0.1 (+https://x)" ->
// "harvest" (the leading token up to '/' or whitespace, lowercased).
std::string ProductToken(std::string_view user_agent);

}  // namespace harvest::robots
