// Compression: libdeflate for writing (fast, one member per record), zlib for decoding
// payloads for `warc get --decode`.
#include <libdeflate.h>
#include <zlib.h>


#include "store/internal.h"

namespace harvest::store::internal {
namespace {

// Inflates with the given zlib window bits; see InflateAny.
Result<std::string> Inflate(std::string_view data, int window_bits, uint64_t max_out) {
  z_stream zs{};
  if (inflateInit2(&zs, window_bits) != Z_OK) return Status::Internal("inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[64 * 1024];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
    if (out.size() > max_out) {
      inflateEnd(&zs);
      return Status::ResourceExhausted("decoded payload exceeds " + std::to_string(max_out) +
                                       " bytes");
    }
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK) {
      std::string msg = zs.msg ? zs.msg : "truncated stream";
      inflateEnd(&zs);
      return Status::Corruption("cannot inflate payload: " + msg);
    }
    if (zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      return Status::Corruption("cannot inflate payload: truncated stream");
    }
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace

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

Result<std::string> InflateAny(std::string_view data, uint64_t max_out) {
  // 15 + 32: zlib or gzip header auto-detected. Some servers send raw deflate for
  // "Content-Encoding: deflate"; retry that way.
  Result<std::string> r = Inflate(data, 15 + 32, max_out);
  if (r.ok() || r.status().code() == Status::Code::kResourceExhausted) return r;
  Result<std::string> raw = Inflate(data, -15, max_out);
  return raw.ok() ? raw : r;
}

}  // namespace harvest::store::internal
