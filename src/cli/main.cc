// harvest: the command-line front door. Subcommands register themselves (command.h).
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <map>

#include "base/log.h"
#include "base/version.h"
#include "cli/command.h"

namespace harvest::cli {

std::vector<CommandSpec>& Registry() {
  static std::vector<CommandSpec> registry;
  return registry;
}

int UsageError(const std::string& command, const std::string& message) {
  std::string prefix = command.empty() ? "harvest" : "harvest " + command;
  std::fprintf(stderr, "%s: %s (run '%s --help' for usage)\n", prefix.c_str(), message.c_str(),
               prefix.c_str());
  return kExitUsage;
}

namespace {

int Main(int argc, char** argv) {
  CLI::App app{"Harvest: a polite, durable web crawler that writes WARC/1.1.", "harvest"};
  app.set_version_flag("--version", std::string("harvest ") + kVersion);
  LogOptions log_options;
  app.add_option("--log-level", log_options.level,
                 "trace, debug, info, warn, error or off (default: info)");
  app.add_option("--log-format", log_options.format, "text or json (default: text)");
  app.require_subcommand(1);

  auto& registry = Registry();
  std::sort(registry.begin(), registry.end(),
            [](const CommandSpec& a, const CommandSpec& b) { return a.name < b.name; });
  std::map<CLI::App*, CommandRunner> runners;
  for (const auto& spec : registry) {
    CLI::App* sub = app.add_subcommand(spec.name, spec.description);
    sub->fallthrough();  // global options (--log-level ...) may follow the subcommand
    runners[sub] = spec.setup(sub);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string command;
    for (CLI::App* sub : app.get_subcommands()) command = sub->get_name();
    return UsageError(command, e.what());
  }

  if (Status s = SetupLogging(log_options); !s.ok()) return UsageError("", s.message());
  for (CLI::App* sub : app.get_subcommands()) {
    auto it = runners.find(sub);
    if (it != runners.end() && it->second) {
      try {
        return it->second();
      } catch (const std::exception& e) {
        spdlog::error("{}: {}", sub->get_name(), e.what());
        return kExitFailure;
      }
    }
  }
  return UsageError("", "no subcommand given");
}

}  // namespace
}  // namespace harvest::cli

int main(int argc, char** argv) { return harvest::cli::Main(argc, argv); }
