// `harvest audit`: checks a crawl against the test web's request log and manifest
// (src/audit/audit.h, docs/audit.md). Exit 0: passed; 1: violations, malformed log lines or
// coverage below the minimum; 2: the audit could not run (usage error, a missing, unreadable
// or invalid manifest, a missing or unreadable log, a missing or bad --restarts file).
// --refresh-window audits a continuous crawl: re-requests are judged by the window instead
// of being duplicates. --per-ip-limit / --per-ip-gap-ms judge per-IP politeness on the log's
// "ip" field. --max-http-per-host / --hsts judge an HTTPS crawl on the log's "scheme".
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "audit/audit.h"
#include "base/duration.h"
#include "cli/command.h"

namespace harvest::cli {
namespace {

// Ranges of the numeric options (checked when parsed: a usage error naming the value).
constexpr int64_t kMaxDelayMs = 3'600'000;  // as harvest crawl --delay-ms
constexpr int64_t kMaxWindowMs = 86'400'000;
constexpr int64_t kMaxListed = 1'000'000;
constexpr int64_t kMaxPerIpLimit = 1'000'000;
constexpr int64_t kMaxHttpPerHost = 1'000'000'000;
// As long as a recrawl cycle can sensibly be (ParseDuration allows up to 100 years).
constexpr std::chrono::milliseconds kMaxRefreshWindow = std::chrono::hours(24 * 366);

struct AuditCmdOptions {
  std::string log;
  std::string manifest;
  int64_t delay_ms = 1000;
  int64_t tolerance_ms = 0;
  double min_coverage = 1.0;
  size_t max_examples = 20;
  size_t max_hosts = 10;
  bool json = false;
  bool check_prefixes = false;
  std::string restarts;  // file of restart times; "" = none
  int64_t restart_window_ms = 10000;
  std::chrono::milliseconds refresh_window{0};  // 0 = off
  int64_t per_ip_limit = 0;                     // 0 = not judged
  int64_t per_ip_gap_ms = 0;                    // 0 = not judged
  int64_t per_ip_gap_tolerance_ms = 10;
  std::optional<int> max_http_per_host;  // nullopt = not judged
  bool hsts = false;
};

// An ifstream opens a directory without complaint; reading it then fails.
bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

// Reads --restarts FILE into `*out`; a usage error (exit 2) names the file and the bad line.
int ReadRestarts(const std::string& path, std::vector<int64_t>* out) {
  std::ifstream file(path);
  if (!file || IsDirectory(path))
    return UsageError("audit", "cannot open restarts file '" + path + "'");
  Result<std::vector<int64_t>> times = audit::ParseRestartTimes(file, path);
  if (!times.ok()) return UsageError("audit", "bad restarts file: " + times.status().message());
  *out = std::move(times).value();
  return kExitOk;
}

int Run(const AuditCmdOptions& o) {
  std::ifstream manifest_file(o.manifest);
  if (!manifest_file || IsDirectory(o.manifest))
    return UsageError("audit", "cannot open manifest '" + o.manifest + "'");
  nlohmann::json manifest =
      nlohmann::json::parse(manifest_file, nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded())
    return UsageError("audit", "manifest '" + o.manifest + "' is not valid JSON");

  std::ifstream log_file;
  std::istream* log = &std::cin;
  if (o.log != "-") {
    log_file.open(o.log);
    if (!log_file || IsDirectory(o.log))
      return UsageError("audit", "cannot open request log '" + o.log + "'");
    log = &log_file;
  }

  audit::AuditOptions options;
  options.default_delay = std::chrono::milliseconds(o.delay_ms);
  options.tolerance = std::chrono::milliseconds(o.tolerance_ms);
  options.min_coverage = o.min_coverage;
  options.check_must_not_fetch = o.check_prefixes;
  options.max_examples = o.max_examples;
  options.max_missing = o.max_examples;
  options.max_malformed = o.max_examples;
  options.restart_window = std::chrono::milliseconds(o.restart_window_ms);
  options.refresh_window = o.refresh_window;
  options.per_ip_limit = o.per_ip_limit;
  options.per_ip_gap = std::chrono::milliseconds(o.per_ip_gap_ms);
  options.per_ip_gap_tolerance = std::chrono::milliseconds(o.per_ip_gap_tolerance_ms);
  options.max_http_per_host = o.max_http_per_host;
  options.hsts = o.hsts;
  if (!o.restarts.empty()) {
    if (int rc = ReadRestarts(o.restarts, &options.restarts_us); rc != kExitOk) return rc;
  }
  Result<audit::AuditReport> report = audit::RunAudit(*log, manifest, options);
  if (!report.ok()) {
    if (report.status().code() == Status::Code::kInvalidArgument)
      return UsageError("audit", "manifest '" + o.manifest + "': " + report.status().message());
    return UsageError("audit",
                      "cannot audit request log '" + o.log + "': " + report.status().message());
  }
  if (o.json) {
    std::string out =
        audit::ToJson(*report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fputc('\n', stdout);
  } else {
    std::string out = audit::FormatText(*report, o.max_hosts);
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  if (report->malformed_count > 0)
    std::fprintf(stderr, "harvest audit: %lld malformed line(s) in '%s' (first at line %lld)\n",
                 static_cast<long long>(report->malformed_count), o.log.c_str(),
                 static_cast<long long>(report->malformed.empty() ? 0 : report->malformed[0].line));
  return report->Passed() ? kExitOk : kExitFailure;
}

CommandRegistration reg(
    "audit", "Check a crawl's politeness, robots compliance, duplicates and coverage",
    [](CLI::App* sub) -> CommandRunner {
      auto o = std::make_shared<AuditCmdOptions>();
      sub->add_option("--log", o->log, "Request log of the test web (JSON lines; '-' = stdin)")
          ->required();
      sub->add_option("--manifest", o->manifest, "Manifest of the test web (JSON)")->required();
      sub->add_option("--delay-ms", o->delay_ms,
                      "Default minimum delay between requests to a host (default 1000)")
          ->check(IntRange(0, kMaxDelayMs));
      sub->add_option("--tolerance-ms", o->tolerance_ms,
                      "Slack allowed on every delay, not on concurrency (default 0)")
          ->check(IntRange(0, kMaxDelayMs));
      sub->add_option("--min-coverage", o->min_coverage,
                      "Minimum fraction of must_fetch pages requested, 0..1 (default 1.0)")
          ->check(RealRange(0, 1));
      sub->add_option("--max-examples", o->max_examples,
                      "Examples listed per violation kind, missing pages, malformed lines "
                      "(default 20)")
          ->check(IntRange(0, kMaxListed));
      sub->add_option("--max-hosts", o->max_hosts, "Worst hosts listed in text (default 10)")
          ->check(IntRange(0, kMaxListed));
      sub->add_flag("--json", o->json, "Print the report as JSON");
      sub->add_flag("--check-prefixes", o->check_prefixes,
                    "Also fail requests matching the manifest's must_not_fetch_prefixes "
                    "(approximate; off by default)");
      sub->add_option("--restarts", o->restarts,
                      "File of crawler restart times, one integer microsecond time (the log's "
                      "clock) per line; '#' comments. A re-fetch just after a restart is "
                      "counted apart, not as a duplicate");
      sub->add_option("--restart-window-ms", o->restart_window_ms,
                      "A re-fetch is excused only if the earlier answer ended at most this long "
                      "before the restart (default 10000)")
          ->check(IntRange(0, kMaxWindowMs));
      sub->add_option_function<std::string>(
             "--refresh-window",
             [o](const std::string& text) { o->refresh_window = *ParseDuration(text); },
             "Continuous crawl: a page may be requested again only this long (DURATION, e.g. "
             "30s) after the start of its latest final answer, 304s included; earlier is a "
             "within_window violation, later a recrawl (never a duplicate). robots.txt is "
             "exempt (default 0s: off, re-requests are duplicates)")
          ->type_name("DURATION")
          ->check(DurationRange(std::chrono::milliseconds(0), kMaxRefreshWindow));
      sub->add_option("--per-ip-limit", o->per_ip_limit,
                      "Fail when more than N requests are in flight at one server address (the "
                      "log's \"ip\") at one moment (default 0: not judged, figures reported)")
          ->check(IntRange(0, kMaxPerIpLimit));
      sub->add_option("--per-ip-gap-ms", o->per_ip_gap_ms,
                      "Fail when two request starts at one server address are closer than M ms "
                      "minus the tolerance (default 0: not judged)")
          ->check(IntRange(0, kMaxDelayMs));
      sub->add_option("--per-ip-gap-tolerance-ms", o->per_ip_gap_tolerance_ms,
                      "Slack on --per-ip-gap-ms for connection-setup and scheduling jitter, at "
                      "most half the gap (default 10)")
          ->check(IntRange(0, kMaxDelayMs));
      sub->add_option_function<int64_t>(
             "--max-http-per-host",
             [o](const int64_t& n) { o->max_http_per_host = static_cast<int>(n); },
             "HTTPS crawl: fail each host name that got more than N requests over plain http "
             "(the log's \"scheme\"; absent = http) (default: not judged, figures reported)")
          ->type_name("N")
          ->check(IntRange(0, kMaxHttpPerHost));
      sub->add_flag("--hsts", o->hsts,
                    "HTTPS crawl: fail every http request to a host name that starts after an "
                    "earlier https request to it got a response (Strict-Transport-Security)");
      return [o]() -> int { return Run(*o); };
    });

}  // namespace
}  // namespace harvest::cli
