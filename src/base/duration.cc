#include "base/duration.h"

#include <cstdint>
#include <limits>

namespace harvest {
namespace {

constexpr int64_t kSecond = 1000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kWeek = 7 * kDay;
constexpr int64_t kMaxMs = 100 * 366 * kDay;

Status Bad(std::string_view text, std::string_view why) {
  return Status::InvalidArgument("bad duration \"" + std::string(text) + "\": " + std::string(why) +
                                 " (write e.g. 500ms, 30s, 15m, 12h, 30d, 1w or 1h30m)");
}

}  // namespace

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  if (text.empty()) return Bad(text, "empty");
  int64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] < '0' || text[i] > '9') return Bad(text, "expected a number");
    int64_t n = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (n > kMaxMs) return Bad(text, "too long");
      n = n * 10 + (text[i] - '0');
      ++i;
    }
    size_t unit_start = i;
    while (i < text.size() && text[i] >= 'a' && text[i] <= 'z') ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    int64_t scale = 0;
    if (unit == "ms") {
      scale = 1;
    } else if (unit == "s") {
      scale = kSecond;
    } else if (unit == "m") {
      scale = kMinute;
    } else if (unit == "h") {
      scale = kHour;
    } else if (unit == "d") {
      scale = kDay;
    } else if (unit == "w") {
      scale = kWeek;
    } else if (unit.empty()) {
      return Bad(text, "a number needs a unit");
    } else {
      return Bad(text, "unknown unit \"" + std::string(unit) + "\"");
    }
    if (n > kMaxMs / scale) return Bad(text, "too long");
    total += n * scale;
    if (total > kMaxMs) return Bad(text, "too long (at most 100 years)");
  }
  return std::chrono::milliseconds(total);
}

std::string FormatDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms <= 0) return "0s";
  std::string out;
  for (auto [scale, unit] : {std::pair<int64_t, const char*>{kDay, "d"},
                             {kHour, "h"},
                             {kMinute, "m"},
                             {kSecond, "s"},
                             {1, "ms"}}) {
    if (ms >= scale) {
      out += std::to_string(ms / scale) + unit;
      ms %= scale;
    }
  }
  return out;
}

}  // namespace harvest
