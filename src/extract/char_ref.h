// Character reference decoding (WHATWG HTML §13.2.5.72-80) and UTF-8 helpers (internal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace harvest::extract::internal {

// in[pos] must be '&'. If a character reference starts there, appends its UTF-8 value to
// *out and returns the number of input bytes consumed (>= 2). Returns 0 when nothing is
// decoded (the caller then emits '&' literally and continues at pos + 1).
// in_attribute applies the attribute-value rule: a named reference that does not end in ';'
// and is followed by '=' or an ASCII alphanumeric is not decoded.
size_t DecodeCharRef(std::string_view in, size_t pos, bool in_attribute, std::string* out);

// Appends raw to *out with every character reference decoded.
void AppendDecoded(std::string_view raw, bool in_attribute, std::string* out);

// Appends code point cp as UTF-8 (surrogates and out-of-range become U+FFFD).
void AppendUtf8(uint32_t cp, std::string* out);

// Maps a numeric character reference value per HTML §13.2.5.80 (0 / surrogates / > 0x10FFFF
// → U+FFFD; 0x80-0x9F → the windows-1252 character).
uint32_t NumericRefCodePoint(uint64_t value);

}  // namespace harvest::extract::internal
