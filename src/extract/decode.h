// DecodeContent internals: the inflater choice, for tests that compare the two (internal).
#pragma once

#include <cstddef>
#include <string_view>

#include "extract/extract.h"

namespace harvest::extract::internal {

// kFast decodes gzip and zlib-wrapped deflate with libdeflate (the whole body is in memory)
// and falls back to zlib whenever libdeflate does not succeed, so that errors, truncation
// and partial output stay zlib's. kZlib is the streaming zlib decoder alone. Raw deflate,
// br and zstd are decoded the same way by both.
enum class Inflater { kFast, kZlib };

DecodeResult DecodeContentWith(std::string_view content_encoding, std::string_view raw,
                               size_t max_bytes, Inflater inflater);

}  // namespace harvest::extract::internal
