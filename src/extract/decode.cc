// DecodeContent: undoes Content-Encoding (RFC 9110 §8.4) with an output cap.
#include "extract/decode.h"

#include <brotli/decode.h>
#include <libdeflate.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "extract/extract.h"

namespace harvest::extract {
namespace {

constexpr size_t kChunk = 64 * 1024;

// Appends up to the cap; returns false (and sets too_large) when the cap is hit.
bool AppendCapped(const char* data, size_t len, size_t max, DecodeResult* r, std::string* out) {
  if (out->size() + len > max) {
    out->append(data, max - out->size());
    r->ok = false;
    r->too_large = true;
    r->error = "decoded body exceeds " + std::to_string(max) + " bytes";
    return false;
  }
  out->append(data, len);
  return true;
}

// gzip (window_bits 15+16) or zlib (15) or raw deflate (-15).
void Inflate(std::string_view in, int window_bits, const char* what, size_t max, DecodeResult* r,
             std::string* out) {
  z_stream zs{};
  if (inflateInit2(&zs, window_bits) != Z_OK) {
    r->ok = false;
    r->error = "zlib init failed";
    return;
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::vector<char> buf(kChunk);
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(buf.data());
    zs.avail_out = static_cast<uInt>(buf.size());
    int rc = inflate(&zs, Z_NO_FLUSH);
    if (!AppendCapped(buf.data(), buf.size() - zs.avail_out, max, r, out)) break;
    if (rc == Z_STREAM_END) {
      // gzip: further members are part of the same body (RFC 1952 §2.2).
      if (window_bits > 15 && zs.avail_in > 0 && inflateReset(&zs) == Z_OK) continue;
      break;
    }
    if (rc == Z_OK) continue;
    r->ok = false;
    r->error = std::string(rc == Z_BUF_ERROR ? "truncated " : "corrupt ") + what + " stream";
    break;
  }
  inflateEnd(&zs);
}

// libdeflate decodes a whole member in one call, several times faster than zlib's streaming
// inflate. It is used only where its success means zlib would succeed with the same output:
// gzip (CRC-32 and length checked) and zlib (Adler-32 checked) streams. It does not verify a
// gzip header CRC (FHCRC), so such members go to zlib. On any failure (corrupt, truncated,
// over the cap) the caller decodes again with zlib, which reports the error and keeps the
// output decoded before it.
struct DecompressorDeleter {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

libdeflate_decompressor* ThreadDecompressor() {
  thread_local std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> d(
      libdeflate_alloc_decompressor());
  return d.get();
}

// Appends the decoded stream (all members, for gzip) to *out if it decodes completely within
// max; otherwise leaves *out as it was and returns false.
bool FastInflate(std::string_view in, bool gzip, size_t max, std::string* out) {
  libdeflate_decompressor* d = ThreadDecompressor();
  if (d == nullptr || out->size() > max) return false;
  const size_t start = out->size();
  // A gzip body usually is one member whose size is in its last 4 bytes (mod 2^32); else
  // guess from a typical HTML compression ratio and grow.
  size_t guess = 4 * in.size() + 256;
  if (gzip && in.size() >= 18) {
    const auto* t = reinterpret_cast<const unsigned char*>(in.data() + in.size() - 4);
    guess = (size_t{t[0]} | size_t{t[1]} << 8 | size_t{t[2]} << 16 | size_t{t[3]} << 24);
    // Deflate expands at most 1032:1: a larger claim is a lie, not worth allocating for.
    guess = std::min(guess, 1032 * in.size());
  }
  size_t pos = 0;
  do {
    const std::string_view member = in.substr(pos);
    // FLG.FHCRC: a header CRC libdeflate would not check.
    if (gzip && member.size() >= 4 && (static_cast<unsigned char>(member[3]) & 0x02) != 0) break;
    size_t room = std::min(max - out->size(), std::max<size_t>(guess, 64));
    while (true) {
      const size_t at = out->size();
      out->resize(at + room);
      size_t in_used = 0;
      size_t produced = 0;
      const libdeflate_result rc =
          gzip ? libdeflate_gzip_decompress_ex(d, member.data(), member.size(), out->data() + at,
                                               room, &in_used, &produced)
               : libdeflate_zlib_decompress_ex(d, member.data(), member.size(), out->data() + at,
                                               room, &in_used, &produced);
      if (rc == LIBDEFLATE_SUCCESS) {
        out->resize(at + produced);
        pos += in_used;
        break;
      }
      out->resize(at);
      if (rc != LIBDEFLATE_INSUFFICIENT_SPACE || room == max - at) {
        out->resize(start);
        return false;
      }
      room = std::min(max - at, room * 2);
    }
    guess = 4 * (in.size() - pos) + 256;
  } while (gzip && pos < in.size());  // further gzip members belong to the body
  if (gzip && pos < in.size()) {
    out->resize(start);
    return false;
  }
  return true;
}

void Brotli(std::string_view in, size_t max, DecodeResult* r, std::string* out) {
  std::unique_ptr<BrotliDecoderState, decltype(&BrotliDecoderDestroyInstance)> st(
      BrotliDecoderCreateInstance(nullptr, nullptr, nullptr), &BrotliDecoderDestroyInstance);
  if (!st) {
    r->ok = false;
    r->error = "brotli init failed";
    return;
  }
  const uint8_t* next_in = reinterpret_cast<const uint8_t*>(in.data());
  size_t avail_in = in.size();
  std::vector<char> buf(kChunk);
  while (true) {
    uint8_t* next_out = reinterpret_cast<uint8_t*>(buf.data());
    size_t avail_out = buf.size();
    BrotliDecoderResult rc = BrotliDecoderDecompressStream(st.get(), &avail_in, &next_in,
                                                           &avail_out, &next_out, nullptr);
    if (!AppendCapped(buf.data(), buf.size() - avail_out, max, r, out)) return;
    if (rc == BROTLI_DECODER_RESULT_SUCCESS) return;
    if (rc == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) continue;
    r->ok = false;
    r->error =
        rc == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT ? "truncated br stream" : "corrupt br stream";
    return;
  }
}

void Zstd(std::string_view in, size_t max, DecodeResult* r, std::string* out) {
  std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> ctx(ZSTD_createDCtx(), &ZSTD_freeDCtx);
  if (!ctx) {
    r->ok = false;
    r->error = "zstd init failed";
    return;
  }
  // Refuse frames needing a window larger than 128 MiB (memory bound per decoder).
  ZSTD_DCtx_setParameter(ctx.get(), ZSTD_d_windowLogMax, 27);
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  std::vector<char> buf(kChunk);
  size_t last = 1;
  while (true) {
    ZSTD_outBuffer output{buf.data(), buf.size(), 0};
    last = ZSTD_decompressStream(ctx.get(), &output, &input);
    if (ZSTD_isError(last)) {
      r->ok = false;
      r->error = std::string("corrupt zstd stream: ") + ZSTD_getErrorName(last);
      return;
    }
    if (!AppendCapped(buf.data(), output.pos, max, r, out)) return;
    if (input.pos == input.size && output.pos < output.size) break;
  }
  if (last != 0) {
    r->ok = false;
    r->error = "truncated zstd stream";
  }
}

// Applies one decoding step to *body.
void DecodeOne(const std::string& coding, size_t max, internal::Inflater inflater,
               DecodeResult* r) {
  const bool fast = inflater == internal::Inflater::kFast;
  if (coding.empty() || coding == "identity") {
    if (r->body.size() > max) {
      r->body.resize(max);
      r->ok = false;
      r->too_large = true;
      r->error = "decoded body exceeds " + std::to_string(max) + " bytes";
    }
    return;
  }
  std::string in = std::move(r->body);
  r->body.clear();
  if (coding == "gzip" || coding == "x-gzip") {
    if (fast && FastInflate(in, /*gzip=*/true, max, &r->body)) return;
    Inflate(in, 15 + 16, "gzip", max, r, &r->body);
  } else if (coding == "deflate") {
    // RFC 9110 says zlib format; some servers send raw deflate. A zlib header has CM=8 and
    // a check value making the first 16 bits a multiple of 31.
    bool zlib =
        in.size() >= 2 && (static_cast<unsigned char>(in[0]) & 0x0F) == 8 &&
        ((static_cast<unsigned char>(in[0]) << 8) | static_cast<unsigned char>(in[1])) % 31 == 0;
    // Raw deflate has no checksum to catch a stream libdeflate reads differently from zlib.
    if (fast && zlib && FastInflate(in, /*gzip=*/false, max, &r->body)) return;
    Inflate(in, zlib ? 15 : -15, "deflate", max, r, &r->body);
  } else if (coding == "br") {
    Brotli(in, max, r, &r->body);
  } else if (coding == "zstd") {
    Zstd(in, max, r, &r->body);
  } else {
    r->body = std::move(in);
    r->ok = false;
    r->unsupported = true;
    r->error = "unsupported content-encoding '" + coding + "'";
  }
}

}  // namespace

namespace internal {

DecodeResult DecodeContentWith(std::string_view content_encoding, std::string_view raw,
                               size_t max_bytes, Inflater inflater) {
  std::vector<std::string> codings;
  size_t i = 0;
  while (i <= content_encoding.size()) {
    size_t end = content_encoding.find(',', i);
    if (end == std::string_view::npos) end = content_encoding.size();
    const std::string_view c = TrimHttpOws(content_encoding.substr(i, end - i));
    if (!c.empty()) codings.push_back(ToLowerAscii(c));
    i = end + 1;
  }
  DecodeResult r;
  r.body.assign(raw);
  if (codings.empty()) codings.emplace_back("identity");
  // Codings are listed in the order applied: undo the last first.
  for (size_t k = codings.size(); k > 0 && r.ok; --k) {
    DecodeOne(codings[k - 1], max_bytes, inflater, &r);
  }
  return r;
}

}  // namespace internal

DecodeResult DecodeContent(std::string_view content_encoding, std::string_view raw,
                           size_t max_bytes) {
  return internal::DecodeContentWith(content_encoding, raw, max_bytes, internal::Inflater::kFast);
}

}  // namespace harvest::extract
