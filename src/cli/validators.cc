// CLI11 checks shared by the subcommands (command.h).
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/duration.h"
#include "cli/command.h"

namespace harvest::cli {
namespace {

std::string Between(const std::string& min, const std::string& max) {
  return "between " + min + " and " + max;
}

// "0.5", "1e-09", "100": the shortest faithful spelling, as in the option's help.
std::string FormatReal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

CLI::Validator IntRange(int64_t min, int64_t max) {
  const std::string range = Between(std::to_string(min), std::to_string(max));
  return CLI::Validator(
      [=](std::string& in) -> std::string {
        // Decimal only: CLI11 itself would also read "010" as octal and "0x10" as hex.
        std::string_view digits = in;
        if (digits.starts_with('+')) digits.remove_prefix(1);
        int64_t v = 0;
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
        if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
          return "must be an integer " + range + ", got " + in;
        }
        if (v < min || v > max) return "must be " + range + ", got " + in;
        in = std::to_string(v);  // what CLI11 converts next: plain decimal
        return "";
      },
      "INT in [" + std::to_string(min) + " - " + std::to_string(max) + "]", "IntRange");
}

CLI::Validator RealRange(double min, double max) {
  const std::string range = Between(FormatReal(min), FormatReal(max));
  return CLI::Validator(
      [=](std::string& in) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(in.c_str(), &end);
        if (in.empty() || end != in.c_str() + in.size() || !std::isfinite(v)) {
          return "must be a number " + range + ", got " + in;
        }
        if (!(v >= min && v <= max)) return "must be " + range + ", got " + in;
        return "";
      },
      "NUMBER in [" + FormatReal(min) + " - " + FormatReal(max) + "]", "RealRange");
}

CLI::Validator DurationRange(std::chrono::milliseconds min, std::chrono::milliseconds max) {
  const std::string range = Between(FormatDuration(min), FormatDuration(max));
  return CLI::Validator(
      [=](std::string& in) -> std::string {
        Result<std::chrono::milliseconds> d = ParseDuration(in);
        if (!d.ok()) return "must be a duration " + range + ": " + d.status().message();
        if (*d < min || *d > max) return "must be " + range + ", got " + in;
        return "";
      },
      "DURATION in [" + FormatDuration(min) + " - " + FormatDuration(max) + "]", "DurationRange");
}

}  // namespace harvest::cli
