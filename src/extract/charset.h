// Charset helpers shared inside extract (internal). Public entry points are in extract.h.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace harvest::extract::internal {

// The HTML prescan looks at no more than this many bytes (HTML §13.2.3.2 step "1024").
constexpr size_t kPrescanBytes = 1024;

// uchardet is fed at most this much: enough for a confident guess, bounded CPU per page.
constexpr size_t kDetectorBytes = 64 * 1024;

// The glibc iconv name for a canonical charset name, or nullptr when the charset is decoded
// in-house (utf-8, windows-1252, x-user-defined) or unknown. (encoding_labels.cc)
const char* IconvName(std::string_view canonical);

// The charset parameter of a Content-Type value ("" when absent), unquoted, not canonicalized.
std::string_view ContentTypeCharset(std::string_view content_type);

// HTML §13.2.3.2 "prescan a byte stream to determine its encoding", simplified: comments,
// <meta charset>, <meta http-equiv=content-type content="...charset=...">, other tags'
// attributes skipped. Returns a canonical name or "".
std::string PrescanMetaCharset(std::string_view body);

// Byte length of the BOM at the start of body (UTF-8: 3, UTF-16: 2), 0 when none; sets
// *charset to the canonical name.
size_t SniffBom(std::string_view body, std::string* charset);

// True when body is entirely valid UTF-8 (shortest forms, no surrogates).
bool IsValidUtf8(std::string_view body);

// Decodes body (in canonical charset `charset`) to UTF-8. Returns a view of body itself when
// it is already valid UTF-8 (no copy); otherwise the result is in *storage.
std::string_view DecodeToUtf8(std::string_view body, std::string_view charset,
                              std::string* storage);

}  // namespace harvest::extract::internal
