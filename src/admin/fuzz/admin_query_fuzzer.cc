// Fuzz target for GET /pages query parsing: the input is split like a query string
// ("k=v&k=v", no decoding) and handed to ParsePageQuery; also ParseSince on the whole input.
// Never crashes; what is accepted is within the documented ranges.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "admin/requests.h"

using namespace harvest::admin;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  QueryParams params;
  std::string_view rest = in;
  while (!rest.empty()) {
    std::string_view pair = rest.substr(0, rest.find('&'));
    rest.remove_prefix(std::min(rest.size(), pair.size() + 1));
    size_t eq = pair.find('=');
    params.emplace(std::string(pair.substr(0, eq)),
                   eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1)));
  }
  harvest::Result<PageQuery> q = ParsePageQuery(params);
  if (q.ok()) {
    if (q->limit < 1 || q->limit > kMaxLimit) __builtin_trap();
    if (q->status && (*q->status < 100 || *q->status > 599)) __builtin_trap();
    if (q->host && (q->host->empty() || q->host->size() > kMaxHostLength)) __builtin_trap();
  }
  harvest::Result<int64_t> since = ParseSince(in);
  if (since.ok()) (void)FormatRfc3339Ms(*since);
  return 0;
}
