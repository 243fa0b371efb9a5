// Compression helpers for extract tests (test-only).
#pragma once

#include <brotli/encode.h>
#include <zlib.h>
#include <zstd.h>

#include <string>
#include <string_view>

namespace harvest::extract::testing {

// window_bits: 15+16 gzip, 15 zlib, -15 raw deflate.
inline std::string Deflate(std::string_view in, int window_bits) {
  z_stream zs{};
  deflateInit2(&zs, 9, Z_DEFLATED, window_bits, 9, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, in.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

inline std::string Gzip(std::string_view in) { return Deflate(in, 15 + 16); }

inline std::string Brotli(std::string_view in) {
  size_t size = BrotliEncoderMaxCompressedSize(in.size()) + 64;
  std::string out(size, '\0');
  BrotliEncoderCompress(BROTLI_DEFAULT_QUALITY, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC,
                        in.size(), reinterpret_cast<const uint8_t*>(in.data()), &size,
                        reinterpret_cast<uint8_t*>(out.data()));
  out.resize(size);
  return out;
}

inline std::string Zstd(std::string_view in) {
  std::string out(ZSTD_compressBound(in.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3));
  return out;
}

}  // namespace harvest::extract::testing
