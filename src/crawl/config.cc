// TOML configuration -> CrawlOptions. Every key is documented in docs/configuration.md.
#include <toml++/toml.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

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
      {"crawl.max_redirect_hops", Int("crawl.max_redirect_hops", 0, 20, [](auto* o, int64_t v) { o->max_redirect_hops = v; })},
      {"crawl.robots_ttl_s", Int("crawl.robots_ttl_s", 1, kYearS, [](auto* o, int64_t v) { o->robots_ttl = seconds(v); })},
      {"crawl.max_decoded_bytes", Int("crawl.max_decoded_bytes", 1024, kBig, [](auto* o, int64_t v) { o->max_decoded_bytes = v; })},
      {"crawl.max_pending_pages", Int("crawl.max_pending_pages", 1, 1 << 20, [](auto* o, int64_t v) { o->max_pending_pages = v; })},
      {"crawl.flush_interval_ms", Int("crawl.flush_interval_ms", 1, 600000, [](auto* o, int64_t v) { o->flush_interval = milliseconds(v); })},
      {"crawl.progress", Bool("crawl.progress", [](auto* o, bool v) { o->progress = v; })},
      {"crawl.output_retry_s", Int("crawl.output_retry_s", 1, 3600, [](auto* o, int64_t v) { o->output_retry_interval = seconds(v); })},
      // [state] (docs/recovery.md)
      {"state.queue_ram_items", Int("state.queue_ram_items", 1, kBig, [](auto* o, int64_t v) { o->state.queue_ram_items = v; })},
      {"state.window_per_host", Int("state.window_per_host", 1, 4096, [](auto* o, int64_t v) { o->state.window_per_host = v; })},
      {"state.block_cache_mb", Int("state.block_cache_mb", 1, 1 << 20, [](auto* o, int64_t v) { o->state.block_cache_bytes = static_cast<size_t>(v) << 20; })},
      {"state.write_buffer_mb", Int("state.write_buffer_mb", 1, 1 << 16, [](auto* o, int64_t v) { o->state.write_buffer_bytes = static_cast<size_t>(v) << 20; })},
      {"state.sync", Bool("state.sync", [](auto* o, bool v) { o->state.sync = v; })},
      // [politeness]
      {"politeness.delay_ms", Int("politeness.delay_ms", 0, 3600000, [](auto* o, int64_t v) { o->frontier.default_delay = milliseconds(v); })},
      {"politeness.max_crawl_delay_ms", Int("politeness.max_crawl_delay_ms", 0, kDayMs, [](auto* o, int64_t v) { o->frontier.max_crawl_delay = milliseconds(v); })},
      {"politeness.adaptive_factor", Double("politeness.adaptive_factor", 0, 1000, [](auto* o, double v) { o->frontier.adaptive_factor = v; })},
      {"politeness.per_ip_limit", Int("politeness.per_ip_limit", 0, 1 << 20, [](auto* o, int64_t v) { o->frontier.per_ip_limit = v; })},
      // [retry]
      {"retry.max_attempts", Int("retry.max_attempts", 1, 100, [](auto* o, int64_t v) { o->frontier.max_attempts = v; })},
      {"retry.backoff_s", [](const toml::node& n, CrawlOptions* o) -> Status {
         const toml::array* arr = n.as_array();
         if (arr == nullptr || arr->empty()) return TypeError("retry.backoff_s", "a non-empty array of integers");
         std::vector<seconds> out;
         for (const toml::node& e : *arr) {
           if (!e.is_integer()) return TypeError("retry.backoff_s", "a non-empty array of integers");
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
      {"retry.breaker_cooldown_s", Int("retry.breaker_cooldown_s", 0, kDayS, [](auto* o, int64_t v) { o->frontier.breaker_cooldown = seconds(v); })},
      // [fetch]
      {"fetch.connect_timeout_ms", Int("fetch.connect_timeout_ms", 1, 3600000, [](auto* o, int64_t v) { o->fetch.connect_timeout = milliseconds(v); })},
      {"fetch.total_timeout_ms", Int("fetch.total_timeout_ms", 1, 36000000, [](auto* o, int64_t v) { o->fetch.total_timeout = milliseconds(v); })},
      {"fetch.low_speed_limit_bytes", Int("fetch.low_speed_limit_bytes", 0, kBig, [](auto* o, int64_t v) { o->fetch.low_speed_limit_bytes = v; })},
      {"fetch.low_speed_time_s", Int("fetch.low_speed_time_s", 0, 86400, [](auto* o, int64_t v) { o->fetch.low_speed_time = seconds(v); })},
      {"fetch.max_body_bytes", Int("fetch.max_body_bytes", 1, kBig, [](auto* o, int64_t v) { o->fetch.max_body_bytes = v; })},
      {"fetch.max_header_bytes", Int("fetch.max_header_bytes", 1024, 1 << 30, [](auto* o, int64_t v) { o->fetch.max_header_bytes = v; })},
      {"fetch.max_concurrent", Int("fetch.max_concurrent", 1, 1 << 20, [](auto* o, int64_t v) { o->fetch.max_concurrent = v; })},
      {"fetch.http2", Bool("fetch.http2", [](auto* o, bool v) { o->fetch.http2 = v; })},
      {"fetch.verify_tls", Bool("fetch.verify_tls", [](auto* o, bool v) { o->fetch.verify_tls = v; })},
      {"fetch.accept_encoding", String("fetch.accept_encoding", [](auto* o, std::string v) {
         o->fetch.accept_encoding = std::move(v);
         return Status::Ok();
       })},
      {"fetch.connect_to", Strings("fetch.connect_to", [](auto* o, std::vector<std::string> v) { o->fetch.connect_to = std::move(v); })},
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
      {"traps.host_daily_quota", Int("traps.host_daily_quota", 1, kBig, [](auto* o, int64_t v) { o->traps.host_daily_quota = v; })},
      {"traps.max_discovery_ratio", Double("traps.max_discovery_ratio", 1, 1e9, [](auto* o, double v) { o->traps.max_discovery_ratio = v; })},
      // [dedup]
      {"dedup.expected_urls", Int("dedup.expected_urls", 1000, kMaxExpectedUrls, [](auto* o, int64_t v) { o->seen.expected_urls = v; })},
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
