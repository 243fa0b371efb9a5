// Fuzz target: WHATWG parsing without a base; checks serialization idempotence.
#include <cstddef>
#include <cstdint>

#include "url/fuzz/url_fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::optional<harvest::url::Url> u = harvest::url::Parse(input);
  if (u) harvest::url::fuzz::CheckParsed(*u);
  return 0;
}
