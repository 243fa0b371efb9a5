// Logging setup for the harvest binary: spdlog, human-readable by default, JSON lines with
// `--log-format json`. Components log through spdlog's default logger (spdlog::info(...)).
//
// Thread-safety: SetupLogging must run once, before other threads start; logging itself is
// thread-safe (spdlog's mt sinks).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace harvest {

struct LogOptions {
  // "trace", "debug", "info", "warn", "error", "off". Default: info.
  std::string level = "info";
  // "text" (human-readable) or "json" (one JSON object per line). Default: text.
  std::string format = "text";
};

// Installs the default logger writing to stderr. Returns InvalidArgument for an unknown
// level or format.
Status SetupLogging(const LogOptions& options);

// Escapes a string for use inside a JSON string literal (quotes, backslash, control bytes).
std::string JsonEscape(std::string_view in);

}  // namespace harvest
