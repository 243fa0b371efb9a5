// Durations as operators write them: "30s", "12h", "30d", "1h30m", "500ms".
//
// Units: ms, s, m (minutes), h, d (24 h), w (7 d). A duration is one or more
// <integer><unit> terms, largest first or in any order ("1d12h", "90s"); no spaces, no
// sign, no fractions. A bare integer is refused (its unit would be a guess): configuration
// keys that used to take numbers keep their own _ms / _s names.
//
// Used by every duration option of the command line and the TOML configuration
// (docs/configuration.md).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"

namespace harvest {

// Parses a duration; InvalidArgument naming the text and the accepted form otherwise.
// Durations above 100 years are refused (they overflow clock arithmetic in microseconds).
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// The shortest spelling ParseDuration reads back: 86400000 ms -> "1d", 5400000 -> "1h30m",
// 1500 -> "1s500ms", 0 -> "0s".
std::string FormatDuration(std::chrono::milliseconds d);

}  // namespace harvest
