// Fuzz target for the WARC data BuildRow reads (row_parse.h): metadata record blocks and
// WARC-Date values. Never a crash; a parsed date is not before 1970 and formats as a
// timestamptz literal of the fixed width; the outlink count never exceeds the lines.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "metadata/metadata.h"
#include "metadata/row_parse.h"

using namespace harvest;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const int links = metadata::internal::CountOutlinks(in);
  size_t lines = 1;
  for (char c : in) lines += c == '\n';
  if (links < 0 || static_cast<size_t>(links) > lines) __builtin_trap();
  if (std::optional<int64_t> us = metadata::internal::ParseWarcDate(in)) {
    if (*us < 0) __builtin_trap();
    if (metadata::TimestampLiteral(*us).size() != 29) __builtin_trap();
  }
  return 0;
}
