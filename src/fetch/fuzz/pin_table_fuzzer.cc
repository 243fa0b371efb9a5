// libFuzzer target: --resolve-file parsing (PinTable::Parse) and lookup. Checks invariants
// that must hold for any input: an error names the source and a line; a parsed table's pins
// are numeric addresses with valid ports, and every field of the input can be looked up.
#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fetch/resolver.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

void CheckPin(const harvest::fetch::Pin* pin) {
  if (pin == nullptr) return;
  Require(harvest::fetch::IsNumericAddress(pin->address));
  Require(pin->port >= 0 && pin->port <= 65535);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto table = harvest::fetch::PinTable::Parse(input, "fuzz");
  if (!table.ok()) {
    Require(table.status().message().starts_with("fuzz:"));
    return 0;
  }
  Require(table->empty() == (table->size() == 0));
  for (std::string_view name : {"a.example", "x.a.example", "example", "", ".", "A.EXAMPLE."}) {
    CheckPin(table->Find(name));
  }
  // Every whitespace-separated token, and its subdomain, as a host to find.
  size_t pos = 0;
  while (pos < input.size()) {
    const size_t end = input.find_first_of(" \t\r\n", pos);
    const std::string_view token =
        input.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    CheckPin(table->Find(token));
    CheckPin(table->Find("sub." + std::string(token)));
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return 0;
}
