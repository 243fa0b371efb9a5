// LiteralCode: gzip members of one dynamic-Huffman deflate block that codes every byte as a
// literal — no LZ77 match search (zlib's Z_HUFFMAN_ONLY strategy), for records whose bytes
// repeat too little for matches to pay (GzipCompressor in internal.h). The code comes from
// ISA-L (isal_create_hufftables: its block header and its bit-reversed literal codes, ready to
// be written least significant bit first as RFC 1951 §3.1.1 orders them); the coding loop is
// ours: one table look-up per two input bytes.
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>

#include <cstring>

#include "store/internal.h"

namespace harvest::store::internal {

namespace {

constexpr int kEndOfBlock = 256;

// Appends the whole bytes of the bit buffer at `*o` (an 8-byte store; the caller leaves
// room), keeping the 0..7 bits that do not make a byte.
inline void Drain(uint64_t* bits, int* nbits, uint8_t** o) {
  std::memcpy(*o, bits, sizeof(*bits));
  *o += *nbits >> 3;
  *bits >>= *nbits & ~7;  // *nbits <= 63 (Encode never lets more in): a shift of at most 56
  *nbits &= 7;
}

}  // namespace

bool LiteralCode::Build(const uint64_t byte_counts[256], uint64_t records) {
  isal_huff_histogram histogram{};
  for (int b = 0; b < 256; ++b) histogram.lit_len_histogram[b] = byte_counts[b];
  histogram.lit_len_histogram[kEndOfBlock] = records > 0 ? records : 1;
  // Every byte value gets a code (isal_create_hufftables codes unseen symbols too), so any
  // record can be coded; the unused length and distance codes only cost header bits.
  isal_hufftables t;
  if (isal_create_hufftables(&t, &histogram) != 0) return false;
  header_.assign(t.deflate_hdr, t.deflate_hdr + t.deflate_hdr_count);
  header_bits_ = static_cast<int>(t.deflate_hdr_extra_bits);
  header_tail_ = t.deflate_hdr[t.deflate_hdr_count] & ((1u << header_bits_) - 1);
  header_[0] |= 1;                // BFINAL: the record's only block
  bool same = pairs_ != nullptr;  // the pair table depends on codes_ and lengths_ alone
  for (int b = 0; b < 256; ++b) {
    same = same && codes_[b] == t.lit_table[b] && lengths_[b] == t.lit_table_sizes[b];
    codes_[b] = t.lit_table[b];
    lengths_[b] = t.lit_table_sizes[b];
  }
  end_code_ = t.lit_table[kEndOfBlock];
  end_length_ = t.lit_table_sizes[kEndOfBlock];
  if (same) return true;  // a steady web: the code of the last samples again
  if (!pairs_) pairs_.reset(new uint64_t[65536]);
  // Two bytes (a | b << 8, as a little-endian load reads them): a's code then b's, and the
  // sum of their lengths (at most 2 x 15 bits) above bit 32.
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      pairs_[a | b << 8] = (uint64_t{t.lit_table[a]} | uint64_t{t.lit_table[b]} << lengths_[a]) |
                           uint64_t(lengths_[a] + lengths_[b]) << 32;
    }
  }
  return true;
}

uint64_t LiteralCode::CodedBits(const uint64_t byte_counts[256]) const {
  uint64_t bits = 0;
  for (int b = 0; b < 256; ++b) bits += byte_counts[b] * lengths_[b];
  return bits;
}

size_t LiteralCode::MemberBytes(uint64_t coded_bits) const {
  return kGzipFraming + header_.size() + (header_bits_ + coded_bits + end_length_ + 7) / 8;
}

size_t LiteralCode::Encode(std::string_view data, char* out, size_t limit) const {
  static constexpr uint8_t kGzipHeader[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
  uint8_t* const begin = reinterpret_cast<uint8_t*>(out);
  uint8_t* o = begin;
  std::memcpy(o, kGzipHeader, sizeof(kGzipHeader));
  o += sizeof(kGzipHeader);
  std::memcpy(o, header_.data(), header_.size());
  o += header_.size();
  uint64_t bits = header_tail_;
  int nbits = header_bits_;
  const auto* in = reinterpret_cast<const uint8_t*>(data.data());
  const size_t n = data.size();
  // Before each chunk the member so far must fit in `limit`; the chunk then codes to at
  // most kChunk x 15 / 8 bytes, the end of block and trailer to 11, each 8-byte store writes
  // at most 8 past its end: all within the kSlack bytes past `limit`.
  const uint8_t* const stop = begin + limit;
  size_t i = 0;
  // Four bytes a step: their two pairs' codes joined (at most 60 bits) go into the bit
  // buffer at once, unless with the buffer's 0..7 bits they would make more than 63 (only
  // codes of ~14-15 bits, for bytes the samples hardly had): then one pair at a time.
  while (i + 3 < n) {
    if (o > stop) return 0;
    const size_t end = i + std::min(kChunk, (n - i) & ~size_t{3});
    for (; i < end; i += 4) {
      uint16_t first, second;
      std::memcpy(&first, in + i, sizeof(first));
      std::memcpy(&second, in + i + 2, sizeof(second));
      const uint64_t a = pairs_[first], b = pairs_[second];
      const int a_bits = static_cast<int>(a >> 32), b_bits = static_cast<int>(b >> 32);
      if (__builtin_expect(nbits + a_bits + b_bits > 63, 0)) {
        bits |= (a & 0xffffffffu) << nbits;
        nbits += a_bits;
        Drain(&bits, &nbits, &o);
        bits |= (b & 0xffffffffu) << nbits;
      } else {
        bits |= ((a & 0xffffffffu) | (b & 0xffffffffu) << a_bits) << nbits;
        nbits += a_bits;
      }
      nbits += b_bits;
      Drain(&bits, &nbits, &o);
    }
  }
  if (o > stop) return 0;
  if (i + 1 < n) {
    uint16_t pair;
    std::memcpy(&pair, in + i, sizeof(pair));
    const uint64_t e = pairs_[pair];
    bits |= (e & 0xffffffffu) << nbits;
    nbits += static_cast<int>(e >> 32);
    Drain(&bits, &nbits, &o);
    i += 2;
  }
  if (i < n) {
    bits |= uint64_t{codes_[in[i]]} << nbits;
    nbits += lengths_[in[i]];
    Drain(&bits, &nbits, &o);
  }
  bits |= uint64_t{end_code_} << nbits;
  nbits += end_length_;
  Drain(&bits, &nbits, &o);
  if (nbits > 0) *o++ = static_cast<uint8_t>(bits);
  // Trailer: CRC-32 and size mod 2^32 of the data, little-endian (RFC 1952 §2.3.1).
  const uint32_t crc = libdeflate_crc32(0, data.data(), n);
  const auto size = static_cast<uint32_t>(n);
  for (int k = 0; k < 4; ++k) o[k] = static_cast<uint8_t>(crc >> (8 * k));
  for (int k = 0; k < 4; ++k) o[4 + k] = static_cast<uint8_t>(size >> (8 * k));
  o += 8;
  const auto used = static_cast<size_t>(o - begin);
  return used <= limit ? used : 0;
}

}  // namespace harvest::store::internal
