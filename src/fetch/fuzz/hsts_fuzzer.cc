// libFuzzer target: Strict-Transport-Security parsing (ParseStrictTransportSecurity). For any
// input: no crash, a parsed max-age within [0, kMaxHstsAge], the same answer twice, and a
// value that parses still parses with OWS around it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fetch/fetch.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using harvest::fetch::ParseStrictTransportSecurity;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto p = ParseStrictTransportSecurity(input);
  const auto again = ParseStrictTransportSecurity(input);
  Require(p.has_value() == again.has_value());
  if (!p) return 0;
  Require(p->max_age.count() >= 0 && p->max_age <= harvest::fetch::kMaxHstsAge);
  Require(p->max_age == again->max_age && p->include_subdomains == again->include_subdomains);
  const auto padded = ParseStrictTransportSecurity(" \t" + std::string(input) + " \t");
  Require(padded.has_value() && padded->max_age == p->max_age &&
          padded->include_subdomains == p->include_subdomains);
  return 0;
}
