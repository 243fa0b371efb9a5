// `harvest robots check`: decides URLs against a robots.txt file (src/robots/robots.h,
// docs/robots.md). Prints one line per URL: "allowed|disallowed  URL  RULE (line N)".
// Exit 0 after printing every decision; 2 on a usage error or an unreadable file.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "robots/robots.h"

namespace harvest::cli {
namespace {

struct RobotsCheckOptions {
  std::string file;
  std::string agent = "harvest";
  std::optional<int> status;
  std::vector<std::string> urls;
};

// The path+query of an absolute URL ("https://a.test/x?y" -> "/x?y"), or the argument itself
// when it is a bare path. A deliberately minimal split: scheme "://" authority, then the rest
// up to a '#'.
std::string PathAndQuery(const std::string& url) {
  size_t start = 0;
  if (size_t scheme = url.find("://");
      scheme != std::string::npos && url.find_first_of("/?#") > scheme) {
    start = scheme + 3;
  } else if (url.rfind("//", 0) == 0) {
    start = 2;
  } else {
    return url.substr(0, url.find('#'));
  }
  size_t path = url.find_first_of("/?#", start);
  if (path == std::string::npos || url[path] == '#') return "/";
  std::string rest = url.substr(path, url.find('#', path) - path);
  if (rest[0] == '?') rest.insert(0, "/");
  return rest;
}

int Run(const RobotsCheckOptions& o) {
  std::ifstream in(o.file, std::ios::binary);
  if (!in) return UsageError("robots check", "cannot open robots file '" + o.file + "'");
  std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  robots::RobotsRules rules =
      o.status ? robots::FromFetch(*o.status, body) : robots::RobotsRules::Parse(body);
  std::string token = robots::ProductToken(o.agent);
  if (token.empty()) return UsageError("robots check", "--agent must not be empty");
  for (const std::string& url : o.urls) {
    robots::MatchResult r = rules.Check(token, PathAndQuery(url));
    std::string why = r.rule.empty() ? "(no matching rule)" : r.rule;
    if (r.line > 0) why += " (line " + std::to_string(r.line) + ")";
    std::printf("%s  %s  %s\n", r.allowed ? "allowed" : "disallowed", url.c_str(), why.c_str());
  }
  if (rules.temporary()) {
    std::fprintf(stderr, "note: robots.txt treated as unreachable; a crawler refetches it soon\n");
  }
  return kExitOk;
}

CommandRegistration reg(
    "robots", "Check URLs against a robots.txt (RFC 9309)", [](CLI::App* app) -> CommandRunner {
      app->require_subcommand(1);
      auto opts = std::make_shared<RobotsCheckOptions>();
      CLI::App* check =
          app->add_subcommand("check", "Print allowed/disallowed and the deciding rule per URL");
      check->add_option("--robots", opts->file, "robots.txt file to read")->required();
      check->add_option("--agent", opts->agent,
                        "product token or User-Agent string (default: harvest)");
      check->add_option("--status", opts->status,
                        "apply the status policy as if the file came with this HTTP status "
                        "(0 = network error)");
      check->add_option("urls", opts->urls, "absolute URLs or bare paths")->required();
      return [opts, check]() -> int {
        if (!check->parsed()) return UsageError("robots", "expected a subcommand: check");
        return Run(*opts);
      };
    });

}  // namespace
}  // namespace harvest::cli
