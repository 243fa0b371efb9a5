// TOML configuration -> CrawlOptions. Every key is documented in docs/configuration.md.
#include <toml++/toml.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "base/duration.h"
#include "crawl/crawl.h"

namespace harvest::crawl {
namespace {

using Setter = std::function<Status(const toml::node&, CrawlOptions*)>;

std::string Where(std::string_view source, const toml::node& node) {
  return std::string(source) + ":" + std::to_string(node.source().begin.line);
}

Status TypeError(const std::string& key, const char* expected) {
  return Status::InvalidArgument("'" + key + "' must be " + expected);
}

// Each Int/Bool/... helper returns a Setter that checks the type and range and stores.
template <typename F>
Setter Int(const std::string& key, int64_t min, int64_t max, F store) {
  return [=](const toml::node& n, CrawlOptions* o) -> Status {
    std::optional<int64_t> v = n.value<int64_t>();
    if (!v || !n.is_integer()) return TypeError(key, "an integer");
    if (*v < min || *v > max) {
      return Status::InvalidArgument("'" + key + "' must be between " + std::to_string(min) +
                                     " and " + std::to_string(max) + ", got " + std::to_string(*v));
    }
    store(o, *v);
    return Status::Ok();
  };
}

// "0.5", "1e-09", "1000": the shortest faithful spelling (std::to_string prints "0.000000").
std::string FormatReal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

template <typename F>
Setter Double(const std::string& key, double min, double max, F store) {
  return [=](const toml::node& n, CrawlOptions* o) -> Status {
    if (!n.is_number()) return TypeError(key, "a number");
    double v = n.value<double>().value_or(0);
    if (!(v >= min && v <= max)) {  // also refuses nan (TOML allows it)
      return Status::InvalidArgument("'" + key + "' must be between " + FormatReal(min) + " and " +
                                     FormatReal(max) + ", got " + FormatReal(v));
    }
    store(o, v);
    return Status::Ok();
  };
}

template <typename F>
Setter Bool(const std::string& key, F store) {
  return [=](const toml::node& n, CrawlOptions* o) -> Status {
    if (!n.is_boolean()) return TypeError(key, "true or false");
    store(o, *n.value<bool>());
    return Status::Ok();
  };
}

template <typename F>
Setter String(const std::string& key, F store) {
  return [=](const toml::node& n, CrawlOptions* o) -> Status {
    if (!n.is_string()) return TypeError(key, "a string");
    return store(o, *n.value<std::string>());
  };
}

template <typename F>
Setter Strings(const std::string& key, F store) {
  return [=](const toml::node& n, CrawlOptions* o) -> Status {
    const toml::array* arr = n.as_array();
    if (arr == nullptr) return TypeError(key, "an array of strings");
    std::vector<std::string> out;
    for (const toml::node& e : *arr) {
      if (!e.is_string()) return TypeError(key, "an array of strings");
      out.push_back(*e.value<std::string>());
    }
    store(o, std::move(out));
    return Status::Ok();
  };
}

using std::chrono::milliseconds;
using std::chrono::seconds;

// A duration: a string such as "30s", "12h", "30d" (base/duration.h), or for keys named
// with a unit (delay_ms, robots_ttl_s) also an integer in that unit. Checked against
// [min_ms, max_ms].
template <typename F>
Setter Dur(const std::string& key, int64_t unit_ms, int64_t min_ms, int64_t max_ms, F store) {
  return [=](const toml::node& n, CrawlOptions* o) -> Status {
    int64_t ms = 0;
    if (n.is_string()) {
      Result<milliseconds> d = ParseDuration(*n.value<std::string>());
      if (!d.ok()) return Status::InvalidArgument("'" + key + "': " + d.status().message());
      ms = d->count();
    } else if (n.is_integer() && unit_ms > 0) {
      // In the key's own unit, as the key's name says (delay_ms = 1500).
      const int64_t v = *n.value<int64_t>();
      const int64_t lo = (min_ms + unit_ms - 1) / unit_ms, hi = max_ms / unit_ms;
      if (v < lo || v > hi) {
        return Status::InvalidArgument("'" + key + "' must be between " + std::to_string(lo) +
                                       " and " + std::to_string(hi) + ", got " + std::to_string(v));
      }
      ms = v * unit_ms;
    } else {
      return TypeError(key, unit_ms > 0 ? "a duration such as \"30s\" or an integer"
                                        : "a duration such as \"30s\", \"12h\" or \"30d\"");
    }
    if (ms < min_ms || ms > max_ms) {
      return Status::InvalidArgument(
          "'" + key + "' must be between " + FormatDuration(milliseconds(min_ms)) + " and " +
          FormatDuration(milliseconds(max_ms)) + ", got " + *n.value<std::string>());
    }
    store(o, milliseconds(ms));
    return Status::Ok();
  };
}

constexpr int64_t kMs = 1, kS = 1000;

// [[recrawl.class]] tables: hosts, refresh_window, max_interval.
Status RecrawlClasses(const toml::node& n, CrawlOptions* o);
// [[priority.host]] tables: pattern, weight.
Status PriorityHosts(const toml::node& n, CrawlOptions* o);
// Upper bound of counts and sizes that need none of their own: large, and far from overflow.
constexpr int64_t kBig = int64_t{1} << 50;
// Upper bound of durations: one day (a year for robots_ttl_s). Durations are added to clock
// time points in nanoseconds, which overflow past ~292 years; nothing sensible waits longer.
constexpr int64_t kDayMs = 86'400'000;
constexpr int64_t kDayS = 86'400;
constexpr int64_t kYearS = 365 * kDayS;
// dedup.expected_urls sizes the Bloom filter up front (~1.25 bytes a URL at 1%): 10 billion
// URLs already take 12.5 GB before the first fetch.
constexpr int64_t kMaxExpectedUrls = 10'000'000'000;
// Recrawl durations: up to ten years.
constexpr int64_t kMaxDurationMs = 10 * kYearS * 1000;

const std::map<std::string, Setter>& Keys() {
  static const auto* keys = new std::map<std::string, Setter>{
      // [crawl]
      {"crawl.max_pages", Int("crawl.max_pages", 0, kBig, [](auto* o, int64_t v) { o->max_pages = v; })},
      {"crawl.workers", Int("crawl.workers", 0, 256, [](auto* o, int64_t v) { o->workers = v; })},
      {"crawl.user_agent", String("crawl.user_agent", [](auto* o, std::string v) {
         o->fetch.user_agent = std::move(v);
         return Status::Ok();
       })},
      {"crawl.follow_rel_nofollow", Bool("crawl.follow_rel_nofollow", [](auto* o, bool v) { o->follow_rel_nofollow = v; })},
      {"crawl.sitemap_probe", Bool("crawl.sitemap_probe", [](auto* o, bool v) { o->sitemap_probe = v; })},
      {"crawl.max_redirect_hops", Int("crawl.max_redirect_hops", 0, 20, [](auto* o, int64_t v) { o->max_redirect_hops = v; })},
      {"crawl.robots_ttl_s", Dur("crawl.robots_ttl_s", kS, 1000, kYearS * 1000, [](auto* o, milliseconds v) { o->robots_ttl = std::chrono::duration_cast<seconds>(v); })},
      {"crawl.robots_patience", Dur("crawl.robots_patience", 0, 0, kYearS * 1000, [](auto* o, milliseconds v) { o->robots_patience = std::chrono::duration_cast<seconds>(v); })},
      {"crawl.max_decoded_bytes", Int("crawl.max_decoded_bytes", 1024, kBig, [](auto* o, int64_t v) { o->max_decoded_bytes = v; })},
      {"crawl.max_pending_pages", Int("crawl.max_pending_pages", 1, 1 << 20, [](auto* o, int64_t v) { o->max_pending_pages = v; })},
      {"crawl.flush_interval_ms", Dur("crawl.flush_interval_ms", kMs, 1, 600000, [](auto* o, milliseconds v) { o->flush_interval = v; })},
      {"crawl.progress", Bool("crawl.progress", [](auto* o, bool v) { o->progress = v; })},
      {"crawl.output_retry_s", Dur("crawl.output_retry_s", kS, 1000, 3600 * 1000, [](auto* o, milliseconds v) { o->output_retry_interval = v; })},
      // [state] (docs/recovery.md)
      {"state.queue_ram_items", Int("state.queue_ram_items", 1, kBig, [](auto* o, int64_t v) { o->state.queue_ram_items = v; })},
      {"state.window_per_host", Int("state.window_per_host", 1, 4096, [](auto* o, int64_t v) { o->state.window_per_host = v; })},
      {"state.block_cache_mb", Int("state.block_cache_mb", 1, 1 << 20, [](auto* o, int64_t v) { o->state.block_cache_bytes = static_cast<size_t>(v) << 20; })},
      {"state.block_cache_max_mb", Int("state.block_cache_max_mb", 1, 1 << 20, [](auto* o, int64_t v) { o->state.block_cache_max_bytes = static_cast<size_t>(v) << 20; })},
      {"state.write_buffer_mb", Int("state.write_buffer_mb", 1, 1 << 16, [](auto* o, int64_t v) { o->state.write_buffer_bytes = static_cast<size_t>(v) << 20; })},
      {"state.sync", Bool("state.sync", [](auto* o, bool v) { o->state.sync = v; })},
      {"state.evicted_hosts", Int("state.evicted_hosts", 1, kBig, [](auto* o, int64_t v) { o->state.evicted_hosts = v; })},
      {"crawl.host_cache", Int("crawl.host_cache", 0, kBig, [](auto* o, int64_t v) { o->host_cache = v; })},
      // [politeness]
      {"politeness.delay_ms", Dur("politeness.delay_ms", kMs, 0, 3600000, [](auto* o, milliseconds v) { o->frontier.default_delay = v; })},
      {"politeness.max_crawl_delay_ms", Dur("politeness.max_crawl_delay_ms", kMs, 0, kDayMs, [](auto* o, milliseconds v) { o->frontier.max_crawl_delay = v; })},
      {"politeness.adaptive_factor", Double("politeness.adaptive_factor", 0, 1000, [](auto* o, double v) { o->frontier.adaptive_factor = v; })},
      {"politeness.per_ip_limit", Int("politeness.per_ip_limit", 0, 1 << 20, [](auto* o, int64_t v) { o->frontier.per_ip_limit = v; })},
      {"politeness.per_ip_gap_ms", Dur("politeness.per_ip_gap_ms", kMs, 0, 3600000, [](auto* o, milliseconds v) { o->frontier.per_ip_gap = v; })},
      // [priority] (docs/priority.md)
      {"priority.across_hosts", Bool("priority.across_hosts", [](auto* o, bool v) { o->frontier.cross_host_priority = v; })},
      {"priority.inlink_sketch_mb", Int("priority.inlink_sketch_mb", 0, 1 << 16, [](auto* o, int64_t v) { o->priority.inlink_sketch_bytes = static_cast<size_t>(v) << 20; })},
      {"priority.host", PriorityHosts},
      // [retry]
      {"retry.max_attempts", Int("retry.max_attempts", 1, 100, [](auto* o, int64_t v) { o->frontier.max_attempts = v; })},
      {"retry.backoff_s", [](const toml::node& n, CrawlOptions* o) -> Status {
         const toml::array* arr = n.as_array();
         if (arr == nullptr || arr->empty()) return TypeError("retry.backoff_s", "a non-empty array of integers");
         std::vector<seconds> out;
         for (const toml::node& e : *arr) {
           if (e.is_string()) {
             Result<milliseconds> d = ParseDuration(*e.value<std::string>());
             if (!d.ok()) return Status::InvalidArgument("'retry.backoff_s': " + d.status().message());
             if (d->count() > kDayMs) return Status::InvalidArgument("'retry.backoff_s' entries must be at most 1d");
             out.push_back(std::chrono::duration_cast<seconds>(*d));
             continue;
           }
           if (!e.is_integer()) return TypeError("retry.backoff_s", "a non-empty array of integers or durations");
           const int64_t v = *e.value<int64_t>();
           if (v < 0 || v > kDayS) {
             return Status::InvalidArgument("'retry.backoff_s' entries must be between 0 and " +
                                            std::to_string(kDayS) + ", got " + std::to_string(v));
           }
           out.emplace_back(v);
         }
         o->frontier.backoff = std::move(out);
         return Status::Ok();
       }},
      {"retry.breaker_window", Int("retry.breaker_window", 1, 100000, [](auto* o, int64_t v) { o->frontier.breaker_window = v; })},
      {"retry.breaker_error_rate", Double("retry.breaker_error_rate", 0, 1, [](auto* o, double v) { o->frontier.breaker_error_rate = v; })},
      {"retry.breaker_cooldown_s", Dur("retry.breaker_cooldown_s", kS, 0, kDayMs, [](auto* o, milliseconds v) { o->frontier.breaker_cooldown = std::chrono::duration_cast<seconds>(v); })},
      // [fetch]
      {"fetch.connect_timeout_ms", Dur("fetch.connect_timeout_ms", kMs, 1, 3600000, [](auto* o, milliseconds v) { o->fetch.connect_timeout = v; })},
      {"fetch.total_timeout_ms", Dur("fetch.total_timeout_ms", kMs, 1, 36000000, [](auto* o, milliseconds v) { o->fetch.total_timeout = v; })},
      {"fetch.low_speed_limit_bytes", Int("fetch.low_speed_limit_bytes", 0, kBig, [](auto* o, int64_t v) { o->fetch.low_speed_limit_bytes = v; })},
      {"fetch.low_speed_time_s", Dur("fetch.low_speed_time_s", kS, 0, kDayMs, [](auto* o, milliseconds v) { o->fetch.low_speed_time = std::chrono::duration_cast<seconds>(v); })},
      {"fetch.max_body_bytes", Int("fetch.max_body_bytes", 1, kBig, [](auto* o, int64_t v) { o->fetch.max_body_bytes = v; })},
      {"fetch.max_header_bytes", Int("fetch.max_header_bytes", 1024, 1 << 30, [](auto* o, int64_t v) { o->fetch.max_header_bytes = v; })},
      {"fetch.max_concurrent", Int("fetch.max_concurrent", 1, 1 << 20, [](auto* o, int64_t v) { o->fetch.max_concurrent = v; })},
      {"fetch.max_idle_connections", Int("fetch.max_idle_connections", 0, 1 << 20, [](auto* o, int64_t v) { o->fetch.max_idle_connections = v; })},
      {"fetch.http2", Bool("fetch.http2", [](auto* o, bool v) { o->fetch.http2 = v; })},
      {"fetch.native_http", Bool("fetch.native_http", [](auto* o, bool v) { o->fetch.native_http = v; })},
      {"fetch.native_https", Bool("fetch.native_https", [](auto* o, bool v) { o->fetch.native_https = v; })},
      {"fetch.verify_tls", Bool("fetch.verify_tls", [](auto* o, bool v) { o->fetch.verify_tls = v; })},
      {"fetch.ca_file", String("fetch.ca_file", [](auto* o, std::string v) {
         o->fetch.ca_file = std::move(v);
         return Status::Ok();
       })},
      {"fetch.accept_encoding", String("fetch.accept_encoding", [](auto* o, std::string v) {
         o->fetch.accept_encoding = std::move(v);
         return Status::Ok();
       })},
      {"fetch.connect_to", Strings("fetch.connect_to", [](auto* o, std::vector<std::string> v) { o->fetch.connect_to = std::move(v); })},
      {"fetch.allow_addresses", Strings("fetch.allow_addresses", [](auto* o, std::vector<std::string> v) { o->allow_addresses = std::move(v); })},
      // [dns]
      {"dns.resolve_file", String("dns.resolve_file", [](auto* o, std::string v) {
         o->resolve_file = std::move(v);
         return Status::Ok();
       })},
      {"dns.servers", String("dns.servers", [](auto* o, std::string v) {
         o->dns.servers = std::move(v);
         return Status::Ok();
       })},
      {"dns.min_ttl", Dur("dns.min_ttl", 0, 0, kDayMs, [](auto* o, milliseconds v) { o->dns.min_ttl = std::chrono::duration_cast<seconds>(v); })},
      {"dns.max_ttl", Dur("dns.max_ttl", 0, 1000, 7 * kDayMs, [](auto* o, milliseconds v) { o->dns.max_ttl = std::chrono::duration_cast<seconds>(v); })},
      {"dns.negative_ttl", Dur("dns.negative_ttl", 0, 0, kDayMs, [](auto* o, milliseconds v) { o->dns.negative_ttl = std::chrono::duration_cast<seconds>(v); })},
      {"dns.timeout", Dur("dns.timeout", 0, 100, 600000, [](auto* o, milliseconds v) { o->dns.timeout = v; })},
      {"dns.tries", Int("dns.tries", 1, 10, [](auto* o, int64_t v) { o->dns.tries = static_cast<int>(v); })},
      {"dns.cache_entries", Int("dns.cache_entries", 1, 1 << 26, [](auto* o, int64_t v) { o->dns.max_entries = static_cast<size_t>(v); })},
      // [scope]
      {"scope.allowed_domains", Strings("scope.allowed_domains", [](auto* o, std::vector<std::string> v) { o->scope.allowed_domains = std::move(v); })},
      {"scope.include", Strings("scope.include", [](auto* o, std::vector<std::string> v) { o->scope.include_patterns = std::move(v); })},
      {"scope.exclude", Strings("scope.exclude", [](auto* o, std::vector<std::string> v) { o->scope.exclude_patterns = std::move(v); })},
      {"scope.mode", String("scope.mode", [](auto* o, std::string v) {
         if (!frontier::ParseScopeMode(v, &o->scope.mode)) {
           return Status::InvalidArgument("'scope.mode' must be \"any\", \"host\" or \"site\", got \"" + v + "\"");
         }
         return Status::Ok();
       })},
      {"scope.max_depth", Int("scope.max_depth", 0, 100000, [](auto* o, int64_t v) { o->scope.max_depth = v; })},
      // [traps]
      {"traps.max_url_length", Int("traps.max_url_length", 16, 1 << 20, [](auto* o, int64_t v) { o->traps.max_url_length = v; })},
      {"traps.max_query_params", Int("traps.max_query_params", 0, 10000, [](auto* o, int64_t v) { o->traps.max_query_params = v; })},
      {"traps.max_repeated_segment", Int("traps.max_repeated_segment", 2, 1000, [](auto* o, int64_t v) { o->traps.max_repeated_segment = v; })},
      {"traps.host_daily_quota", Int("traps.host_daily_quota", 0, kBig, [](auto* o, int64_t v) { o->traps.host_daily_quota = v; })},
      {"traps.max_discovery_ratio", Double("traps.max_discovery_ratio", 0, 1e9, [](auto* o, double v) { o->traps.max_discovery_ratio = v; })},
      {"traps.discovery_ratio_after", Int("traps.discovery_ratio_after", 0, kBig, [](auto* o, int64_t v) { o->traps.discovery_ratio_after = v; })},
      {"traps.max_backlog", Int("traps.max_backlog", 0, kBig, [](auto* o, int64_t v) { o->traps.max_backlog = v; })},
      // [dedup]
      {"dedup.expected_urls", Int("dedup.expected_urls", 1000, kMaxExpectedUrls, [](auto* o, int64_t v) { o->seen.expected_urls = v; })},
      {"dedup.seen_cache", Int("dedup.seen_cache", 0, int64_t{1} << 32, [](auto* o, int64_t v) { o->seen.recent_cache = v; })},
      {"dedup.false_positive_rate", Double("dedup.false_positive_rate", 1e-9, 0.5, [](auto* o, double v) { o->seen.false_positive_rate = v; })},
      // [canon] (docs/canonicalization.md)
      {"canon.sort_query", Bool("canon.sort_query", [](auto* o, bool v) { o->canon.sort_query = v; })},
      {"canon.drop_fragment", Bool("canon.drop_fragment", [](auto* o, bool v) { o->canon.drop_fragment = v; })},
      {"canon.normalize_percent_encoding", Bool("canon.normalize_percent_encoding", [](auto* o, bool v) { o->canon.normalize_percent_encoding = v; })},
      {"canon.drop_empty_query", Bool("canon.drop_empty_query", [](auto* o, bool v) { o->canon.drop_empty_query = v; })},
      {"canon.drop_session_path_params", Bool("canon.drop_session_path_params", [](auto* o, bool v) { o->canon.drop_session_path_params = v; })},
      {"canon.strip_trailing_slash", Bool("canon.strip_trailing_slash", [](auto* o, bool v) { o->canon.strip_trailing_slash = v; })},
      {"canon.strip_index", Bool("canon.strip_index", [](auto* o, bool v) { o->canon.strip_index = v; })},
      {"canon.tracking_params", Strings("canon.tracking_params", [](auto* o, std::vector<std::string> v) { o->canon.tracking_params = std::move(v); })},
      {"canon.session_params", Strings("canon.session_params", [](auto* o, std::vector<std::string> v) { o->canon.session_params = std::move(v); })},
      {"canon.index_names", Strings("canon.index_names", [](auto* o, std::vector<std::string> v) { o->canon.index_names = std::move(v); })},
      // [recrawl] (docs/freshness.md)
      {"recrawl.continuous", Bool("recrawl.continuous", [](auto* o, bool v) { o->freshness.recrawl = v; })},
      {"recrawl.stop_after", Dur("recrawl.stop_after", 0, 0, kMaxDurationMs, [](auto* o, milliseconds v) { o->freshness.stop_after = v; })},
      {"recrawl.refresh_window", Dur("recrawl.refresh_window", 0, 1000, kMaxDurationMs, [](auto* o, milliseconds v) { o->freshness.refresh_window = v; })},
      {"recrawl.max_interval", Dur("recrawl.max_interval", 0, 1000, kMaxDurationMs, [](auto* o, milliseconds v) { o->freshness.max_interval = v; })},
      {"recrawl.grow", Double("recrawl.grow", 1, 100, [](auto* o, double v) { o->freshness.grow = v; })},
      {"recrawl.shrink", Double("recrawl.shrink", 0.01, 1, [](auto* o, double v) { o->freshness.shrink = v; })},
      {"recrawl.share", Double("recrawl.share", 0, 1, [](auto* o, double v) { o->freshness.recrawl_share = v; })},
      {"recrawl.conditional_get", Bool("recrawl.conditional_get", [](auto* o, bool v) { o->freshness.conditional_get = v; })},
      {"recrawl.near_duplicate_is_unchanged", Bool("recrawl.near_duplicate_is_unchanged", [](auto* o, bool v) { o->freshness.near_duplicate_is_unchanged = v; })},
      {"recrawl.class", RecrawlClasses},
      // [dedup] near-duplicates
      {"dedup.near_max_distance", Int("dedup.near_max_distance", 0, 3, [](auto* o, int64_t v) { o->near_dup.max_distance = v; })},
      {"dedup.near_index_max", Int("dedup.near_index_max", 0, int64_t{1} << 32, [](auto* o, int64_t v) { o->near_dup.index_max = v; })},
      {"dedup.near_duplicates", String("dedup.near_duplicates", [](auto* o, std::string v) {
         if (v == "store") o->near_dup.metadata_only = false;
         else if (v == "metadata") o->near_dup.metadata_only = true;
         else return Status::InvalidArgument("'dedup.near_duplicates' must be \"store\" or \"metadata\", got \"" + v + "\"");
         return Status::Ok();
       })},
      // [warc]
      {"warc.prefix", String("warc.prefix", [](auto* o, std::string v) {
         if (v.empty() || v.find('/') != std::string::npos) {
           return Status::InvalidArgument("'warc.prefix' must be a non-empty file name prefix");
         }
         o->warc.prefix = std::move(v);
         return Status::Ok();
       })},
      {"warc.max_file_bytes", Int("warc.max_file_bytes", 1 << 20, kBig, [](auto* o, int64_t v) { o->warc.max_file_bytes = v; })},
      {"warc.gzip_level", Int("warc.gzip_level", 1, 12, [](auto* o, int64_t v) { o->warc.gzip_level = v; })},
      {"warc.digest", String("warc.digest", [](auto* o, std::string v) {
         if (v == "sha256") o->warc.digest = store::DigestAlgorithm::kSha256;
         else if (v == "sha1") o->warc.digest = store::DigestAlgorithm::kSha1;
         else return Status::InvalidArgument("'warc.digest' must be \"sha256\" or \"sha1\"");
         return Status::Ok();
       })},
      {"warc.operator", String("warc.operator", [](auto* o, std::string v) {
         o->warc.operator_contact = std::move(v);
         return Status::Ok();
       })},
      {"warc.description", String("warc.description", [](auto* o, std::string v) {
         o->warc.description = std::move(v);
         return Status::Ok();
       })},
  };
  return *keys;
}

Status RecrawlClasses(const toml::node& n, CrawlOptions* o) {
  const toml::array* arr = n.as_array();
  if (arr == nullptr || !arr->is_array_of_tables()) {
    return TypeError("recrawl.class", "an array of tables ([[recrawl.class]])");
  }
  std::vector<RecrawlClass> classes;
  for (const toml::node& e : *arr) {
    const toml::table& t = *e.as_table();
    RecrawlClass c;
    for (const auto& [k, v] : t) {
      const std::string key = "recrawl.class." + std::string(k.str());
      if (k.str() == "hosts") {
        CrawlOptions scratch;
        Status s = Strings(key, [&c](auto*, std::vector<std::string> hosts) {
          c.hosts = std::move(hosts);
        })(v, &scratch);
        if (!s.ok()) return s;
      } else if (k.str() == "refresh_window" || k.str() == "max_interval") {
        milliseconds* field = k.str() == "refresh_window" ? &c.refresh_window : &c.max_interval;
        CrawlOptions scratch;
        Status s = Dur(key, 0, 1000, kMaxDurationMs,
                       [field](auto*, milliseconds d) { *field = d; })(v, &scratch);
        if (!s.ok()) return s;
      } else {
        return Status::InvalidArgument("unknown key '" + key +
                                       "' (a class has hosts, refresh_window, max_interval)");
      }
    }
    if (c.hosts.empty()) return Status::InvalidArgument("'recrawl.class' needs hosts = [...]");
    classes.push_back(std::move(c));
  }
  o->freshness.classes = std::move(classes);
  return Status::Ok();
}

Status PriorityHosts(const toml::node& n, CrawlOptions* o) {
  const toml::array* arr = n.as_array();
  if (arr == nullptr || !arr->is_array_of_tables()) {
    return TypeError("priority.host", "an array of tables ([[priority.host]])");
  }
  std::vector<HostWeightRule> rules;
  for (const toml::node& e : *arr) {
    const toml::table& t = *e.as_table();
    HostWeightRule r;
    bool has_pattern = false, has_weight = false;
    for (const auto& [k, v] : t) {
      const std::string key = "priority.host." + std::string(k.str());
      CrawlOptions scratch;
      Status s;
      if (k.str() == "pattern") {
        s = String(key, [&r](auto*, std::string p) {
          if (p.empty())
            return Status::InvalidArgument("'priority.host.pattern' must not be empty");
          r.pattern = std::move(p);
          return Status::Ok();
        })(v, &scratch);
        has_pattern = true;
      } else if (k.str() == "weight") {
        s = Double(key, 1e-6, 1e6, [&r](auto*, double w) { r.weight = w; })(v, &scratch);
        has_weight = true;
      } else {
        return Status::InvalidArgument("unknown key '" + key +
                                       "' (a host weight has pattern, weight)");
      }
      if (!s.ok()) return s;
    }
    if (!has_pattern || !has_weight) {
      return Status::InvalidArgument("'priority.host' needs pattern = \"...\" and weight = ...");
    }
    rules.push_back(std::move(r));
  }
  o->priority.hosts = std::move(rules);
  return Status::Ok();
}

Status Apply(const toml::table& root, std::string_view source, CrawlOptions* options) {
  for (const auto& [section_key, section] : root) {
    std::string section_name(section_key.str());
    const toml::table* table = section.as_table();
    if (table == nullptr) {
      return Status::InvalidArgument(Where(source, section) + ": '" + section_name +
                                     "' must be a [section]; keys live in sections such as "
                                     "[politeness] or [fetch]");
    }
    for (const auto& [key, value] : *table) {
      std::string full = section_name + "." + std::string(key.str());
      auto it = Keys().find(full);
      if (it == Keys().end()) {
        return Status::InvalidArgument(Where(source, value) + ": unknown key '" + full +
                                       "' (see docs/configuration.md)");
      }
      if (Status s = it->second(value, options); !s.ok()) {
        return Status::InvalidArgument(Where(source, value) + ": " + s.message());
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status LoadConfigString(std::string_view toml_text, std::string_view source,
                        CrawlOptions* options) {
  try {
    toml::table root = toml::parse(toml_text, source);
    return Apply(root, source, options);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(std::string(source) + ":" +
                                   std::to_string(e.source().begin.line) + ": " +
                                   std::string(e.description()));
  }
}

Status LoadConfigFile(const std::filesystem::path& path, CrawlOptions* options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read config file " + path.string());
  std::stringstream buf;
  buf << in.rdbuf();
  return LoadConfigString(buf.str(), path.string(), options);
}

}  // namespace harvest::crawl
