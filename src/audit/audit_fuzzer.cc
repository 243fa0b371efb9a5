// Fuzz target: any bytes as a request log must audit without crashing (malformed lines are
// data). Also checks the line parser's contract on the first line, reads the bytes as a
// restart-times file, and audits with restarts around the first line's request and the
// HTTPS checks on.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "audit/audit.h"
#include "audit/log_line.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  harvest::audit::LogLine line;
  std::string error;
  harvest::audit::AuditOptions options{
      .check_must_not_fetch = true, .max_http_per_host = 1, .hsts = true};
  if (harvest::audit::ParseLogLine(text.substr(0, text.find('\n')), &line, &error)) {
    if (line.end_us < line.start_us || line.host.empty()) __builtin_trap();
    int64_t after = line.end_us < INT64_MAX - 2000000 ? line.end_us : INT64_MAX - 2000000;
    options.restarts_us = {line.start_us, after + 1, after + 2000000};
  }
  std::istringstream restarts_in(text);
  harvest::Result<std::vector<int64_t>> restarts = harvest::audit::ParseRestartTimes(restarts_in);
  if (restarts.ok()) {
    options.restarts_us.insert(options.restarts_us.end(), restarts->begin(), restarts->end());
  }
  static const nlohmann::json manifest = {
      {"hosts",
       {{{"host", "a.test"},
         {"crawl_delay_ms", 2000},
         {"must_fetch", {"a.test/", "a.test/robots.txt"}},
         {"must_not_fetch_prefixes",
          {"/private/ (but /private/open/)", "*.pdf", "/p/*?print=", "/x*y$"}}}}}};
  std::istringstream in(text);
  harvest::Result<harvest::audit::AuditReport> report =
      harvest::audit::RunAudit(in, manifest, options);
  if (!report.ok()) __builtin_trap();
  std::string out = harvest::audit::FormatText(*report);
  std::string json = harvest::audit::ToJson(*report).dump(-1, ' ', false,
                                                          nlohmann::json::error_handler_t::replace);
  return out.empty() || json.empty();
}
