// Compression of WARC records: libdeflate (fast, one gzip member per record).
#include <libdeflate.h>

#include "store/internal.h"

namespace harvest::store::internal {

GzipCompressor::GzipCompressor(int level)
    : c_(libdeflate_alloc_compressor(level < 1 ? 1 : (level > 12 ? 12 : level))) {}

GzipCompressor::~GzipCompressor() {
  if (c_ != nullptr) libdeflate_free_compressor(c_);
}

Result<std::string> GzipCompressor::Member(std::string_view data) {
  if (c_ == nullptr) return Status::ResourceExhausted("libdeflate_alloc_compressor failed");
  std::string out(libdeflate_gzip_compress_bound(c_, data.size()), '\0');
  size_t n = libdeflate_gzip_compress(c_, data.data(), data.size(), out.data(), out.size());
  if (n == 0) return Status::Internal("libdeflate_gzip_compress: output does not fit its bound");
  out.resize(n);
  return out;
}

}  // namespace harvest::store::internal
