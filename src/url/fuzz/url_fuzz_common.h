// Shared invariant checks for the url fuzz targets.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "url/url.h"

namespace harvest::url::fuzz {

[[noreturn]] inline void Fail(const char* what, std::string_view a, std::string_view b) {
  std::fprintf(stderr, "invariant violated: %s\n  first:  %.*s\n  second: %.*s\n", what,
               static_cast<int>(a.size()), a.data(), static_cast<int>(b.size()), b.data());
  std::abort();
}

// Serialization is a fixed point: parse(href) succeeds and yields the same href, and the
// accessors slice the href consistently.
inline void CheckParsed(const Url& u) {
  std::optional<Url> again = Parse(u.href());
  if (!again) Fail("reparse of href failed", u.href(), "");
  if (again->href() != u.href())
    Fail("parse(serialize(x)) != serialize(x)", u.href(), again->href());
  if (u.port() < -1 || u.port() > 65535) Fail("port out of range", u.href(), "");
  if (u.href().substr(0, u.scheme().size()) != u.scheme()) Fail("scheme slice", u.href(), "");
  for (char c : u.href()) {
    // Opaque paths may keep spaces; everything else outside printable ASCII is encoded.
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F) {
      Fail("href has a control or non-ASCII byte", u.href(), "");
    }
  }
}

}  // namespace harvest::url::fuzz
