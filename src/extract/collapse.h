// Whitespace collapsing of extracted text and titles (internal to extract).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace harvest::extract::internal {

// Appends s to *out with whitespace runs (ASCII whitespace and U+00A0) collapsed to one
// space; leading whitespace of the output is dropped, a trailing run is only remembered in
// *pending_space (a space is emitted before the next word, possibly in a later call). The
// output is capped at max bytes: a word that does not fit is cut on a UTF-8 boundary and the
// rest of s is dropped.
void AppendCollapsed(std::string_view s, size_t max, bool* pending_space, std::string* out);

}  // namespace harvest::extract::internal
