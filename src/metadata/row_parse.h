// Private to src/metadata: parsers of WARC data used by BuildRow (row.cc), fuzzed by
// fuzz/row_fuzzer.cc. They accept any bytes and never fail loudly.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace harvest::metadata::internal {

// The number of `outlink:` lines of a metadata record's block (application/warc-fields).
int CountOutlinks(std::string_view block);
// A WARC-Date (WARC/1.1 §5.4: "YYYY-MM-DDThh:mm:ss[.f{1,9}]Z", UTC) as µs since the epoch;
// nullopt when malformed. Digits beyond microseconds are dropped.
std::optional<int64_t> ParseWarcDate(std::string_view date);

}  // namespace harvest::metadata::internal
