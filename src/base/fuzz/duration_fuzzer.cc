// Fuzz target for ParseDuration (durations come from the command line and config files):
// never crashes, and what it accepts FormatDuration spells back to the same value.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/duration.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  harvest::Result<std::chrono::milliseconds> d = harvest::ParseDuration(in);
  if (!d.ok()) return 0;
  if (d->count() < 0) __builtin_trap();
  harvest::Result<std::chrono::milliseconds> back =
      harvest::ParseDuration(harvest::FormatDuration(*d));
  if (!back.ok() || *back != *d) __builtin_trap();
  return 0;
}
