// Compression of WARC records, one gzip member per record: ISA-L's igzip at level 1 (the
// default; records of at most kSmallRecord bytes with igzip's level 0 and a prebuilt Huffman
// code, larger ones with level 0 and a code learnt from earlier records once there is one,
// or as literals only with a learnt code when LZ77 gains little on them, LiteralCode),
// libdeflate at levels 2..12; zlib for the head of records whose payload is already
// compressed (stored blocks, see AppendMemberStored).
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "store/internal.h"

namespace harvest::store::internal {

namespace {

// What the small records of a fetch look like: the Huffman code of SmallRecordTables is made
// from the byte frequencies of this text (every byte and length still gets a code, so any
// input compresses; a text unlike it only compresses less).
constexpr std::string_view kSmallRecordSample =
    "WARC/1.1\r\nWARC-Type: request\r\n"
    "WARC-Record-ID: <urn:uuid:6eca7cdc-55b3-4e90-b933-178c12a0dc34>\r\n"
    "WARC-Date: 2026-11-28T07:07:14.840483Z\r\n"
    "WARC-Target-URI: https://www.example.org/news/2026/11/index.html?page=2\r\n"
    "WARC-IP-Address: 192.0.2.17\r\n"
    "WARC-Concurrent-To: <urn:uuid:cd5e4346-af9c-4b44-aa64-403ecc809c8a>\r\n"
    "WARC-Warcinfo-ID: <urn:uuid:e9b29306-b56e-4263-8101-7322328d831e>\r\n"
    "Content-Type: application/http;msgtype=request\r\n"
    "WARC-Block-Digest: sha256:53TSXIFEGWOBJBQMIIV6W6VFLY5V2K6HMUNZSSAYER7MA67SG3MA====\r\n"
    "Content-Length: 177\r\n\r\n"
    "GET /news/2026/11/index.html?page=2 HTTP/1.1\r\nHost: www.example.org\r\n"
    "User-Agent: Harvest/0.1.0 (+https://github.com/harvest-crawler/harvest)\r\n"
    "Accept: */*\r\nAccept-Encoding: gzip, br, zstd\r\n"
    "If-None-Match: \"6b0a7da2-18\"\r\nIf-Modified-Since: Sat, 28 Nov 2026 07:07:14 GMT\r\n\r\n"
    "\r\n\r\n"
    "WARC/1.1\r\nWARC-Type: metadata\r\n"
    "WARC-Record-ID: <urn:uuid:2d579c00-3b87-47c8-a1b4-52f5911b43e2>\r\n"
    "WARC-Date: 2026-11-28T07:07:14.840530Z\r\n"
    "WARC-Target-URI: https://www.example.org/news/2026/11/index.html?page=2\r\n"
    "WARC-Concurrent-To: <urn:uuid:0f3a9b71-5de2-4c8e-9a16-7be04d2c55f0>\r\n"
    "Content-Type: application/warc-fields\r\n"
    "WARC-Block-Digest: sha256:NDY7AAE6CJEAVWBJHDHGGEUKSBCUHABZX3R7FYZCP2EDRSYZYH4A====\r\n"
    "Content-Length: 412\r\n\r\n"
    "via: https://www.example.org/news/\r\n"
    "outlink: https://www.example.org/about/contact.html\r\n"
    "outlink: https://cdn.example.net/static/css/site-1.4.2.min.css\r\n"
    "outlink: http://blog.example.com/2025/03/17/a-post-title-with-words\r\n"
    "outlink: https://www.example.org/search?q=Weather+Report&lang=en_US\r\n"
    "HTTP/1.1 301 Moved Permanently\r\nServer: nginx/1.22.1\r\n"
    "Date: Sat, 28 Nov 2026 07:07:14 GMT\r\nContent-Type: text/html; charset=utf-8\r\n"
    "Location: https://www.example.org/news/\r\nConnection: keep-alive\r\n\r\n";

// The size of a gzip member holding `n` bytes in stored deflate blocks: the gzip header and
// trailer (18 bytes) and 5 bytes per block of at most 65,535 bytes, with a little slack.
size_t StoredMemberBound(size_t n) { return n + 5 * (n / 65535 + 1) + 18 + 32; }

// Built once, read-only afterwards (isal_create_hufftables is deterministic).
const isal_hufftables* SmallRecordTables() {
  static const isal_hufftables* tables = [] {
    auto* t = new isal_hufftables;
    isal_huff_histogram histogram{};
    isal_update_histogram(reinterpret_cast<uint8_t*>(const_cast<char*>(kSmallRecordSample.data())),
                          static_cast<int>(kSmallRecordSample.size()), &histogram);
    if (isal_create_hufftables(t, &histogram) != 0) {
      delete t;
      return static_cast<isal_hufftables*>(nullptr);  // then level 1 for every record
    }
    return t;
  }();
  return tables;
}

}  // namespace

struct GzipCompressor::LearnedCode {
  isal_huff_histogram histogram{};
  isal_hufftables tables;
  bool ready = false;         // tables holds a code made from histogram
  uint32_t since_sample = 0;  // large records compressed since the last sample
  uint32_t samples = 0;       // samples added since the code was last made
  // The same samples' bytes, their number and the size of their members with LZ77 (level 0
  // with the learnt code, or level 1 before there was one), for the literal-only code and
  // the choice between the two.
  uint64_t byte_counts[256] = {};
  uint64_t records = 0;
  uint64_t lz_bytes = 0;
  LiteralCode literal;
  bool literals_only = false;  // large records take `literal`
};

GzipCompressor::GzipCompressor(int level)
    : level_(level < 1 ? 1 : (level > 12 ? 12 : level)), c_(libdeflate_alloc_compressor(level_)) {
  if (level_ == 1) {
    igzip_ = new isal_zstream;
    igzip_level_buf_.reset(new unsigned char[ISAL_DEF_LVL1_DEFAULT]);
    learned_ = std::make_unique<LearnedCode>();
  }
}

bool GzipCompressor::learnt() const { return learned_ != nullptr && learned_->ready; }
bool GzipCompressor::literals_only() const {
  return learned_ != nullptr && learned_->literals_only;
}

void GzipCompressor::Learn(std::string_view data, size_t size, bool lz) {
  LearnedCode& c = *learned_;
  // Only records that compress (by more than a fifth) teach the code: images and other
  // incompressible payloads would flatten it for the text it serves.
  if (size * 5 > data.size() * 4) return;
  if (c.ready && ++c.since_sample < kLearnEvery) return;
  c.since_sample = 0;
  // isal_update_histogram takes an int length; a sample of the first 1 MiB is plenty.
  const std::string_view sample = data.substr(0, size_t{1} << 20);
  isal_update_histogram(reinterpret_cast<uint8_t*>(const_cast<char*>(sample.data())),
                        static_cast<int>(sample.size()), &c.histogram);
  for (unsigned char b : sample) ++c.byte_counts[b];
  // The sample's size with LZ77; a record coded as literals is deflated again to know it
  // (one in kLearnEvery: ~1% more time).
  size_t lz_size = size;
  if (!lz && !LzMember(data, &lz_size)) return;
  c.lz_bytes += lz_size * sample.size() / data.size();
  ++c.records;
  if (++c.samples < kLearnFirst) return;
  c.samples = 0;
  // isal_create_hufftables gives every literal, length and distance a code, so any input
  // still compresses (what the samples did not show only takes longer codes).
  c.ready = isal_create_hufftables(&c.tables, &c.histogram) == 0;
  const bool literal_ready = c.literal.Build(c.byte_counts, c.records);
  const uint64_t literal_bytes =
      c.literal.CodedBits(c.byte_counts) / 8 + c.records * c.literal.MemberBytes(0);
  // LZ77 (igzip's level 0) costs ~3x the time of coding literals; it is used while it makes
  // the sampled records at least kLzMinGain smaller.
  c.literals_only = c.ready && literal_ready &&
                    static_cast<double>(c.lz_bytes) > (1.0 - kLzMinGain) * literal_bytes;
  for (auto& v : c.histogram.lit_len_histogram) v >>= 1;  // older records count half
  for (auto& v : c.histogram.dist_histogram) v >>= 1;
  for (auto& v : c.byte_counts) v >>= 1;
  c.records >>= 1;
  c.lz_bytes >>= 1;
}

GzipCompressor::~GzipCompressor() {
  if (c_ != nullptr) libdeflate_free_compressor(c_);
  delete igzip_;
  if (z_ != nullptr) {
    deflateEnd(z_);
    delete z_;
  }
}

void GzipCompressor::Reserve(size_t size, size_t keep) {
  if (size <= buf_size_) return;
  // Grows to the largest record seen; not zero-filled (std::string would be).
  size_t n = std::max(size, buf_size_ * 2);
  std::unique_ptr<char[]> b(new char[n]);
  if (keep > 0) std::memcpy(b.get(), buf_.get(), keep);
  buf_ = std::move(b);
  buf_size_ = n;
}

bool GzipCompressor::IgzipMember(std::string_view data, size_t* size, bool* lz) {
  const bool large = data.size() > kSmallRecord;
  *lz = true;
  if (large && learned_->literals_only) {
    // No more than a stored copy of the record, as below.
    const size_t limit = StoredMemberBound(data.size());
    Reserve(limit + LiteralCode::kSlack, 0);
    *size = learned_->literal.Encode(data, buf_.get(), limit);
    if (*size != 0) {
      *lz = false;
      return true;
    }
  }
  return LzMember(data, size);
}

bool GzipCompressor::LzMember(std::string_view data, size_t* size) {
  isal_zstream* z = igzip_;
  isal_deflate_stateless_init(z);
  const bool large = data.size() > kSmallRecord;
  const isal_hufftables* code = !large            ? SmallRecordTables()
                                : learned_->ready ? &learned_->tables
                                                  : nullptr;
  if (code != nullptr) {
    z->level = 0;  // a fixed code (ours or learnt), no level buffer
    z->hufftables = const_cast<isal_hufftables*>(code);
  } else {
    z->level = 1;
    z->level_buf = igzip_level_buf_.get();
    z->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
  }
  z->gzip_flag = IGZIP_GZIP;  // a gzip header and trailer (CRC-32, size) around the stream
  z->end_of_stream = 1;
  z->flush = NO_FLUSH;
  z->next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(data.data()));
  z->avail_in = static_cast<uint32_t>(data.size());
  z->next_out = reinterpret_cast<uint8_t*>(buf_.get());
  // No more than a stored copy of the record (igzip writes stored blocks when its code would
  // make more): a learnt code that does not suit a record must not make it grow.
  z->avail_out = static_cast<uint32_t>(std::min(buf_size_, StoredMemberBound(data.size())));
  if (isal_deflate_stateless(z) != COMP_OK || z->avail_in != 0) return false;
  *size = z->total_out;
  return true;
}

Status GzipCompressor::AppendMember(std::string_view data, std::string* out) {
  if (c_ == nullptr) return Status::ResourceExhausted("libdeflate_alloc_compressor failed");
  Reserve(libdeflate_gzip_compress_bound(c_, data.size()), 0);
  size_t n = 0;
  bool lz = true;
  // libdeflate's bound also holds igzip's stored-block fallback for incompressible data; a
  // record too large for one 32-bit stateless call takes libdeflate.
  if (igzip_ != nullptr && data.size() < (1u << 30) && IgzipMember(data, &n, &lz)) {
    out->append(buf_.get(), n);
    if (data.size() > kSmallRecord) Learn(data, n, lz);  // may reuse buf_
    return Status::Ok();
  }
  n = libdeflate_gzip_compress(c_, data.data(), data.size(), buf_.get(), buf_size_);
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

Status GzipCompressor::Deflate(int flush) {
  for (;;) {
    if (z_->avail_out == 0) {
      const size_t used = z_->total_out;
      Reserve(buf_size_ + 4096, used);
      z_->next_out = reinterpret_cast<Bytef*>(buf_.get() + used);
      z_->avail_out = static_cast<uInt>(buf_size_ - used);
    }
    const int rc = deflate(z_, flush);
    if (rc == Z_STREAM_END) return Status::Ok();
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return Status::Internal("zlib deflate failed: " + std::to_string(rc));
    }
    if (z_->avail_out == 0) continue;  // more output space, then again
    if (flush != Z_FINISH && z_->avail_in == 0) return Status::Ok();  // flushed: all out
    if (rc == Z_BUF_ERROR) return Status::Internal("zlib deflate made no progress");
  }
}

Status GzipCompressor::AppendMemberStored(std::string_view head, std::string_view stored,
                                          std::string_view tail, std::string* out) {
  const int level = std::min(level_, 9);
  if (z_ == nullptr) {
    z_ = new z_stream{};
    // Raw deflate (-15: the gzip framing and CRC are ours, libdeflate's CRC is several
    // times faster than zlib's); memLevel 4: a 2^11-entry hash table, plenty for a record
    // head of a few KB and cheaper to clear per record than the default's 2^15.
    if (deflateInit2(z_, level, Z_DEFLATED, -15, 4, Z_DEFAULT_STRATEGY) != Z_OK) {
      delete z_;
      z_ = nullptr;
      return Status::ResourceExhausted("zlib deflateInit2 failed");
    }
  } else if (deflateReset(z_) != Z_OK) {
    return Status::Internal("zlib deflateReset failed");
  }
  // gzip header (RFC 1952 §2.3): no name, no mtime, XFL as libdeflate sets it, OS unknown.
  const char header[10] = {
      '\x1f', '\x8b', 8, 0, 0, 0, 0, 0, static_cast<char>(level < 2 ? 4 : (level >= 8 ? 2 : 0)),
      '\xff'};
  out->append(header, sizeof(header));
  // The head: deflated, ended by a sync flush, which leaves the stream byte-aligned after
  // an empty non-final stored block.
  Reserve(head.size() + head.size() / 8 + 64, 0);
  z_->next_out = reinterpret_cast<Bytef*>(buf_.get());
  z_->avail_out = static_cast<uInt>(buf_size_);
  z_->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(head.data()));
  z_->avail_in = static_cast<uInt>(head.size());
  Status s = Deflate(Z_SYNC_FLUSH);
  if (!s.ok()) return s;
  out->append(buf_.get(), z_->total_out);
  // Then `stored` + `tail` in stored blocks of at most 65,535 bytes, the last one final.
  const size_t total = stored.size() + tail.size();
  size_t done = 0;
  do {
    const size_t n = std::min<size_t>(total - done, 65535);
    const bool last = done + n == total;
    const char block[5] = {static_cast<char>(last ? 1 : 0), static_cast<char>(n & 0xff),
                           static_cast<char>(n >> 8), static_cast<char>(~n & 0xff),
                           static_cast<char>((~n >> 8) & 0xff)};
    out->append(block, sizeof(block));
    // The bytes [done, done + n) of stored + tail.
    if (done < stored.size()) {
      const size_t from_stored = std::min(n, stored.size() - done);
      out->append(stored.substr(done, from_stored));
      out->append(tail.substr(0, n - from_stored));
    } else {
      out->append(tail.substr(done - stored.size(), n));
    }
    done += n;
  } while (done < total);
  // Trailer: CRC-32 and size mod 2^32 of the whole text, little-endian.
  uint32_t crc = libdeflate_crc32(0, head.data(), head.size());
  crc = libdeflate_crc32(crc, stored.data(), stored.size());
  crc = libdeflate_crc32(crc, tail.data(), tail.size());
  const uint32_t size = static_cast<uint32_t>(head.size() + total);
  char trailer[8];
  for (int i = 0; i < 4; ++i) {
    trailer[i] = static_cast<char>((crc >> (8 * i)) & 0xff);
    trailer[4 + i] = static_cast<char>((size >> (8 * i)) & 0xff);
  }
  out->append(trailer, sizeof(trailer));
  return Status::Ok();
}

}  // namespace harvest::store::internal
