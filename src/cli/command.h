// The harvest command-line interface: a registry of subcommands.
//
// Each subcommand lives in its own file `cmd_<name>.cc` in this folder and registers itself
// with a file-scope CommandRegistration. Its setup function declares the options on the
// CLI11 sub-app and returns the function that runs the command after parsing, returning the
// process exit code (0 success, 1 failure, 2 usage error).
//
// Thread-safety: registration happens during static initialisation; main() reads the
// registry once, on the main thread.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace harvest::cli {

using CommandRunner = std::function<int()>;
using CommandSetup = std::function<CommandRunner(CLI::App* sub)>;

struct CommandSpec {
  std::string name;
  std::string description;
  CommandSetup setup;
};

// All registered subcommands, in registration order.
std::vector<CommandSpec>& Registry();

struct CommandRegistration {
  CommandRegistration(std::string name, std::string description, CommandSetup setup) {
    Registry().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

// Exit codes shared by all subcommands.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Prints "harvest <command>: <message>" and a hint to stderr; returns kExitUsage.
int UsageError(const std::string& command, const std::string& message);

// Checks for numeric options (add_option(...)->check(IntRange(0, 10))): a value that is not
// a (decimal) number or lies outside [min, max] is refused with "must be between MIN and MAX,
// got VALUE"; CLI11 prefixes the option's name and main() makes it a usage error (exit 2).
CLI::Validator IntRange(int64_t min, int64_t max);
CLI::Validator RealRange(double min, double max);
// Durations (harvest::ParseDuration: "10s", "500ms", "1h30m"; docs of src/base/duration.h)
// within [min, max]; the message names the accepted form and the range (FormatDuration).
CLI::Validator DurationRange(std::chrono::milliseconds min, std::chrono::milliseconds max);

}  // namespace harvest::cli
