// Fuzz target for the WARC data BuildRow reads (row_parse.h): metadata record blocks and
// WARC-Date values, and the COPY encoding of any text in a row. Never a crash; a row's COPY
// line has 17 fields, one newline, and only UTF-8; a parsed date is not before 1970 and formats as
// a timestamptz literal of the fixed width; the outlink count never exceeds the lines.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "metadata/metadata.h"
#include "metadata/row_parse.h"
#include "metadata/schema.h"

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
  metadata::PageRow row;
  row.title = std::string(in);
  row.url = std::string(in);
  const std::string copy = metadata::internal::CopyText({row});
  size_t tabs = 0, newlines = 0;
  for (char c : copy) {
    tabs += c == '\t';
    newlines += c == '\n';
  }
  if (tabs != 16 || newlines != 1 || copy.back() != '\n') __builtin_trap();
  for (std::string_view rest = copy; !rest.empty();) {
    const size_t n = metadata::internal::Utf8Length(rest);
    if (n == 0) __builtin_trap();
    rest.remove_prefix(n);
  }
  return 0;
}
