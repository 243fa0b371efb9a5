// libFuzzer target: robots.txt parsing and matching. The input is split at the first NUL:
// before it, the robots.txt body; after it, newline-separated paths to check (a default set
// when absent). Checks invariants that must hold for any input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "robots/robots.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

void CheckPath(const harvest::robots::RobotsRules& rules, std::string_view agent,
               std::string_view path) {
  harvest::robots::MatchResult r = rules.Check(agent, path);
  Require(r.allowed == rules.IsAllowed(agent, path));
  Require(r.line >= 0 && r.line <= rules.line_count());
  Require((r.line == 0) || !r.rule.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t split = input.find('\0');
  std::string_view body = input.substr(0, split);
  std::string_view paths =
      split == std::string_view::npos ? std::string_view() : input.substr(split + 1);

  harvest::robots::RobotsRules rules = harvest::robots::RobotsRules::Parse(body);
  (void)rules.memory_bytes();
  (void)rules.Sitemaps();
  for (std::string_view agent : {"harvest", "googlebot", "*", "", "FooBot/1.0"}) {
    if (auto delay = rules.CrawlDelay(agent)) {
      Require(delay->count() >= 0 && *delay <= harvest::robots::kMaxCrawlDelay);
    }
    for (std::string_view path : {"/", "/robots.txt", "/a/b?c=d", "/%E3%83%84*$", ""}) {
      CheckPath(rules, agent, path);
    }
    size_t pos = 0;
    while (pos <= paths.size() && !paths.empty()) {
      size_t end = paths.find('\n', pos);
      if (end == std::string_view::npos) end = paths.size();
      CheckPath(rules, agent, paths.substr(pos, end - pos));
      pos = end + 1;
    }
  }
  Require(rules.IsAllowed("harvest", "/robots.txt"));
  // The status policy never fails either.
  harvest::robots::RobotsRules fetched = harvest::robots::FromFetch(
      size > 0 ? static_cast<int>(data[0]) * 3 : 200, body, size > 1 ? data[1] % 8 : 0);
  (void)fetched.IsAllowed("harvest", "/");
  return 0;
}
