// Compression of WARC records: libdeflate (fast, one gzip member per record).
#include <libdeflate.h>

#include <algorithm>

#include "store/internal.h"

namespace harvest::store::internal {

GzipCompressor::GzipCompressor(int level)
    : c_(libdeflate_alloc_compressor(level < 1 ? 1 : (level > 12 ? 12 : level))) {}

GzipCompressor::~GzipCompressor() {
  if (c_ != nullptr) libdeflate_free_compressor(c_);
}

Status GzipCompressor::AppendMember(std::string_view data, std::string* out) {
  if (c_ == nullptr) return Status::ResourceExhausted("libdeflate_alloc_compressor failed");
  const size_t bound = libdeflate_gzip_compress_bound(c_, data.size());
  if (bound > buf_size_) {
    // Grows to the largest record seen; not zero-filled (std::string would be).
    buf_size_ = std::max(bound, buf_size_ * 2);
    buf_.reset(new char[buf_size_]);
  }
  size_t n = libdeflate_gzip_compress(c_, data.data(), data.size(), buf_.get(), buf_size_);
  if (n == 0) return Status::Internal("libdeflate_gzip_compress: output does not fit its bound");
  out->append(buf_.get(), n);
  return Status::Ok();
}

Result<std::string> GzipCompressor::Member(std::string_view data) {
  std::string out;
  Status s = AppendMember(data, &out);
  if (!s.ok()) return s;
  return out;
}

}  // namespace harvest::store::internal
