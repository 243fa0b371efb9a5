// Fuzz target: any bytes as a request log must audit without crashing (malformed lines are
// data). Also checks the line parser's contract on the first line.
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
  if (harvest::audit::ParseLogLine(text.substr(0, text.find('\n')), &line, &error)) {
    if (line.end_us < line.start_us || line.host.empty()) __builtin_trap();
  }
  static const nlohmann::json manifest = {
      {"hosts", {{{"host", "a.test"}, {"crawl_delay_ms", 2000},
                  {"must_fetch", {"a.test/", "a.test/robots.txt"}},
                  {"must_not_fetch_prefixes",
                   {"/private/ (but /private/open/)", "*.pdf", "/p/*?print=", "/x*y$"}}}}}};
  std::istringstream in(text);
  harvest::Result<harvest::audit::AuditReport> report = harvest::audit::RunAudit(in, manifest, {.check_must_not_fetch = true});
  if (!report.ok()) __builtin_trap();
  std::string out = harvest::audit::FormatText(*report);
  std::string json = harvest::audit::ToJson(*report).dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  return out.empty() || json.empty();
}
