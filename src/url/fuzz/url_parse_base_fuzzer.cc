// Fuzz target: WHATWG parsing against a base. Input: "base\ninput" (no newline: the whole
// input is parsed against a fixed http base).
#include <cstddef>
#include <cstdint>

#include "url/fuzz/url_fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using harvest::url::Parse;
  std::string_view all(reinterpret_cast<const char*>(data), size);
  size_t nl = all.find('\n');
  std::string_view base_text =
      nl == std::string_view::npos ? "http://example.com/a/b?q#f" : all.substr(0, nl);
  std::string_view input = nl == std::string_view::npos ? all : all.substr(nl + 1);
  std::optional<harvest::url::Url> base = Parse(base_text);
  if (!base) return 0;
  harvest::url::fuzz::CheckParsed(*base);
  std::optional<harvest::url::Url> u = Parse(input, &*base);
  if (u) harvest::url::fuzz::CheckParsed(*u);
  return 0;
}
