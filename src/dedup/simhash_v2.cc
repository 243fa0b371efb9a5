// SimHash64V2 (dedup.h "SimHash versions"): the v1 tokenisation, shingles and vote with
// hashing built for speed. Words are found 64 bytes at a time from a word-byte bitmask (SSE2
// on x86-64, a portable loop elsewhere: same bitmask, so same values), each word is hashed
// from its lower-cased bytes 8 at a time with one multiply per chunk, and a shingle is one
// Mix64 of its three word hashes rotated by different amounts.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "base/hash.h"
#include "dedup/dedup.h"
#include "dedup/simhash_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace harvest::dedup {

namespace {

using internal::MulFold;

constexpr uint64_t kHighBits = 0x8080808080808080ULL;

// Lower-cases 8 word bytes: a word byte below 0x80 is an ASCII letter or digit, and setting
// its bit 5 lower-cases a letter and leaves a digit as it is; bytes >= 0x80 are kept.
inline uint64_t FoldWordBytes(uint64_t x) { return x | ((~x & kHighBits) >> 2); }

// Little-endian load of n <= 8 bytes (the rest zero).
inline uint64_t LoadLittle(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  std::memcpy(&v, p, n);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

// The rest of a word longer than 8 bytes: h = MulFold(h ^ chunk, K) per further chunk.
[[gnu::noinline]] uint64_t LongWordTail(uint64_t h, const unsigned char* text, size_t size,
                                        size_t q, size_t end) {
  for (;; q += 8) {
    const size_t left = end - q;
    uint64_t c = q + 8 <= size ? LoadLittle(text + q, 8) : LoadLittle(text + q, size - q);
    c = FoldWordBytes(c) & (~uint64_t{0} >> (8 * (8 - std::min<size_t>(left, 8))));
    h = MulFold(h ^ c, internal::kV2ChunkMul);
    if (left <= 8) return h;
  }
}

// Index of the lowest set bit (64 for none), as an unsigned offset (no sign extension).
inline size_t Ctz(uint64_t x) { return static_cast<unsigned>(std::countr_zero(x)); }

// Bytes that keep only the first n (1..8) of a little-endian chunk.
constexpr std::array<uint64_t, 9> kKeep = [] {
  std::array<uint64_t, 9> t{};
  for (int n = 1; n <= 8; ++n) t[n] = ~uint64_t{0} >> (64 - 8 * n);
  return t;
}();

// Hash of the word text[begin, end) (REQUIRES: every byte a word byte, begin < end <= size):
// h = seed ^ length, then per 8-byte chunk (little-endian, lower-cased, the last one
// zero-padded) h = MulFold(h ^ chunk, K). Reads up to 7 bytes past the word; never past size,
// which kChecked tests (without it, REQUIRES: begin + 8 <= size).
template <bool kChecked>
inline uint64_t WordHash(const unsigned char* text, size_t size, size_t begin, size_t end) {
  const size_t len = end - begin;
  uint64_t c = !kChecked || begin + 8 <= size ? LoadLittle(text + begin, 8)
                                              : LoadLittle(text + begin, size - begin);
  c = FoldWordBytes(c);
  if (len > 8) {
    const uint64_t h = MulFold(internal::kV2WordSeed ^ len ^ c, internal::kV2ChunkMul);
    return LongWordTail(h, text, size, begin + 8, end);
  }
  return MulFold(internal::kV2WordSeed ^ len ^ (c & kKeep[len]), internal::kV2ChunkMul);
}

// The shingle of a text of 1 or 2 words: the missing words count as 0 and the seed is offset
// by the word count, so "a" and "a a"-like shingles stay apart from full ones.
inline uint64_t ShortShingleHash(uint64_t first, uint64_t second, int n) {
  return Mix64((internal::kV2ShingleSeed + static_cast<uint64_t>(n)) ^ first ^
               (n > 1 ? std::rotl(second, internal::kV2Rotate1) : 0));
}

bool IsWordByte(unsigned char c) {
  return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c >= 0x80;
}

// Bit i set when p[i] is a word byte, for the 64 bytes at p.
uint64_t WordMaskPortable(const unsigned char* p) {
  uint64_t m = 0;
  for (int i = 0; i < 64; ++i) m |= static_cast<uint64_t>(IsWordByte(p[i])) << i;
  return m;
}

#if defined(__SSE2__)
uint64_t WordMaskSse2(const unsigned char* p) {
  // Unsigned range checks with signed compares: x - lo + 0x80 < -128 + (hi - lo + 1).
  const __m128i digit_bias = _mm_set1_epi8(static_cast<char>(0x80 - '0'));
  const __m128i digit_limit = _mm_set1_epi8(static_cast<char>(-128 + 10));
  const __m128i letter_bias = _mm_set1_epi8(static_cast<char>(0x80 - 'a'));
  const __m128i letter_limit = _mm_set1_epi8(static_cast<char>(-128 + 26));
  const __m128i case_bit = _mm_set1_epi8(0x20);
  uint64_t m = 0;
  for (int k = 0; k < 4; ++k) {
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const __m128i digit = _mm_cmplt_epi8(_mm_add_epi8(c, digit_bias), digit_limit);
    const __m128i letter =
        _mm_cmplt_epi8(_mm_add_epi8(_mm_or_si128(c, case_bit), letter_bias), letter_limit);
    // Bytes >= 0x80 have their top bit set already.
    const __m128i word = _mm_or_si128(_mm_or_si128(digit, letter), c);
    m |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(word))) << (16 * k);
  }
  return m;
}
#endif

// Charikar's vote (the v1 rule: a result bit is set when 2 * ones > shingles), counted
// bit-sliced: the 64 per-bit counts are kept as a binary number whose digit k is the 64-bit
// word planes_[k] (bit i of it: digit k of the count of bit i). Eight hashes at a time go
// through a carry-save adder tree (Harley and Seal) into ones/twos/fours and a weight-8 word;
// the weight-8 words accumulate in four more planes that move into planes_ every 15 groups.
// About 6 word operations a hash, where per-bit or per-byte counters need 16-24.
class BitSlicedVote {
 public:
  // Adds the first multiple of 8 of hashes[0, m); returns how many it took.
  size_t AddGroups(const uint64_t* hashes, size_t m) {
    // Locals: the compiler cannot tell that `hashes` does not alias the members.
    uint64_t ones = ones_, twos = twos_, fours = fours_;
    uint64_t e0 = e_[0], e1 = e_[1], e2 = e_[2], e3 = e_[3];
    size_t i = 0;
    for (; i + 8 <= m; i += 8) {
      uint64_t twos_a, twos_b, fours_a, fours_b, eights;
      Csa(&twos_a, &ones, ones, hashes[i], hashes[i + 1]);
      Csa(&twos_b, &ones, ones, hashes[i + 2], hashes[i + 3]);
      Csa(&fours_a, &twos, twos, twos_a, twos_b);
      Csa(&twos_a, &ones, ones, hashes[i + 4], hashes[i + 5]);
      Csa(&twos_b, &ones, ones, hashes[i + 6], hashes[i + 7]);
      Csa(&fours_b, &twos, twos, twos_a, twos_b);
      Csa(&eights, &fours, fours, fours_a, fours_b);
      // eights into the 4-digit counter e (weight 8): at most 15 before it moves on.
      uint64_t carry = eights;
      uint64_t t = e0 & carry;
      e0 ^= carry;
      carry = t;
      t = e1 & carry;
      e1 ^= carry;
      carry = t;
      t = e2 & carry;
      e2 ^= carry;
      carry = t;
      e3 ^= carry;  // no carry out: e counts at most 15
      if (++groups_ == 15) {
        e_[0] = e0, e_[1] = e1, e_[2] = e2, e_[3] = e3;
        MoveEights();
        e0 = e1 = e2 = e3 = 0;
      }
    }
    ones_ = ones, twos_ = twos, fours_ = fours;
    e_[0] = e0, e_[1] = e1, e_[2] = e2, e_[3] = e3;
    votes_ += i;
    return i;
  }

  // One hash (the few left over at the end).
  void AddOne(uint64_t h) {
    AddAt(h, 0);
    ++votes_;
  }

  uint64_t Result() {
    MoveEights();
    AddAt(ones_, 0);
    AddAt(twos_, 1);
    AddAt(fours_, 2);
    ones_ = twos_ = fours_ = 0;
    // Bit-sliced comparison of every count with half the votes: count > votes / 2 (floor)
    // exactly when 2 * count > votes.
    const uint64_t half = votes_ / 2;
    uint64_t greater = 0;
    uint64_t equal = ~uint64_t{0};
    for (int k = kPlanes - 1; k >= 0; --k) {
      if ((half >> k) & 1) {
        equal &= planes_[k];
      } else {
        greater |= equal & planes_[k];
        equal &= ~planes_[k];
      }
    }
    return greater;
  }

 private:
  // Enough digits for any text (2^48 shingles).
  static constexpr int kPlanes = 48;

  // Carry-save adder: high and low digit of a + b + c, per bit.
  static void Csa(uint64_t* high, uint64_t* low, uint64_t a, uint64_t b, uint64_t c) {
    const uint64_t u = a ^ b;
    *high = (a & b) | (u & c);
    *low = u ^ c;
  }

  // Adds word x at digit k (x's bits times 2^k to their counts).
  void AddAt(uint64_t x, int k) {
    for (; x != 0 && k < kPlanes; ++k) {
      const uint64_t t = planes_[k] & x;
      planes_[k] ^= x;
      x = t;
    }
  }

  void MoveEights() {
    for (int j = 0; j < 4; ++j) {
      AddAt(e_[j], 3 + j);
      e_[j] = 0;
    }
    groups_ = 0;
  }

  uint64_t ones_ = 0, twos_ = 0, fours_ = 0;
  uint64_t e_[4] = {};
  int groups_ = 0;
  uint64_t votes_ = 0;
  uint64_t planes_[kPlanes] = {};
};

constexpr size_t kBlock = 64;
// Blocks per vote batch.
constexpr size_t kSegmentBlocks = 8;

// One pass over a text: words found block by block are hashed at once, each word ends a
// shingle (from the third on), and the shingle hashes of a few blocks are voted as a batch.
template <uint64_t (*kWordMask)(const unsigned char*)>
class ScannerV2 {
 public:
  explicit ScannerV2(std::string_view text)
      : p_(reinterpret_cast<const unsigned char*>(text.data())), size_(text.size()) {}

  uint64_t Run() {
    size_t base = 0;
    // Blocks from which an 8-byte load at any word start stays inside the text.
    while (base + kSegmentBlocks * kBlock + 8 <= size_) {
      for (size_t b = 0; b < kSegmentBlocks; ++b, base += kBlock) {
        Block<false>(base, kWordMask(p_ + base));
      }
      VoteBatch();
    }
    for (; base < size_; base += kBlock) {
      uint64_t m;
      if (base + kBlock <= size_) {
        m = kWordMask(p_ + base);
      } else {
        unsigned char tail[kBlock] = {};  // zero bytes separate words
        std::memcpy(tail, p_ + base, size_ - base);
        m = kWordMask(tail);
      }
      Block<true>(base, m);
      VoteBatch();
    }
    // A word running to the end of a text whose size is a multiple of the block size.
    Window& w = window_;
    if (carry_ != 0) w.Add(WordHash<true>(p_, size_, open_start_, size_), shingles_);
    if (w.total == 0) return 0;
    if (w.total == 1) return ShortShingleHash(w.prev1, 0, 1);
    if (w.total == 2) return ShortShingleHash(w.prev2, w.prev1, 2);
    VoteBatch();
    for (size_t i = 0; i < w.pending; ++i) vote_.AddOne(shingles_[i]);
    return vote_.Result();
  }

 private:
  // The words of the block at `base` with word-byte mask m. Without a branch but the loop's:
  // the word open since an earlier block (carry_) takes the place of the first start.
  template <bool kChecked>
  void Block(size_t base, uint64_t m) {
    const uint64_t before = (m << 1) | carry_;
    uint64_t starts = m & ~before;
    uint64_t ends = ~m & before;
    size_t begin = carry_ != 0 ? open_start_ : base + Ctz(starts);
    starts &= carry_ != 0 ? ~uint64_t{0} : starts - 1;
    carry_ = m >> 63;
    // The shingle state in locals: stores into shingles_ could alias members, which would
    // then be written back and reloaded for every word.
    Window w = window_;
    while (ends != 0) {
      const size_t end = base + Ctz(ends);
      ends &= ends - 1;
      w.Add(WordHash<kChecked>(p_, size_, begin, end), shingles_);
      begin = base + Ctz(starts);  // base + 64 when none is left
      starts &= starts - 1;
    }
    window_ = w;
    open_start_ = begin;  // the word open at the block's end, when carry_ is 1
  }

  // The last words and the shingle hashes not yet voted.
  struct Window {
    uint64_t total = 0;  // words so far
    uint64_t prev2 = 0, prev1 = 0, prev1_rotated1 = 0;
    size_t pending = 0;  // entries of shingles_

    // The next word's hash: the shingle it ends (from the kShingleWords-th word on).
    void Add(uint64_t word, uint64_t* shingles) {
      static_assert(kShingleWords == 3, "the shingle below names its three words");
      const uint64_t rotated1 = std::rotl(word, internal::kV2Rotate1);
      // The first kShingleWords - 1 entries are not shingles: VoteBatch drops them.
      shingles[pending++] = Mix64(prev2 ^ prev1_rotated1 ^ std::rotl(word, internal::kV2Rotate2));
      ++total;
      prev2 = prev1;
      prev1 = word;
      prev1_rotated1 = rotated1;
    }
  };

  void VoteBatch() {
    if (not_shingles_ != 0) {
      const size_t drop = std::min(not_shingles_, window_.pending);
      std::copy(shingles_ + drop, shingles_ + window_.pending, shingles_);
      window_.pending -= drop;
      not_shingles_ -= drop;
    }
    const size_t taken = vote_.AddGroups(shingles_, window_.pending);
    std::copy(shingles_ + taken, shingles_ + window_.pending, shingles_);
    window_.pending -= taken;
  }

  const unsigned char* const p_;
  const size_t size_;
  uint64_t carry_ = 0;  // 1 when the last byte of the previous block was a word byte
  size_t open_start_ = 0;
  Window window_;
  size_t not_shingles_ = kShingleWords - 1;  // entries at the front of shingles_ to drop
  // Shingle hashes not yet voted: fewer than 8 left over, then at most a word per 2 bytes
  // of kSegmentBlocks blocks, and one more that ends in them.
  uint64_t shingles_[7 + kSegmentBlocks * kBlock / 2 + 1];
  BitSlicedVote vote_;
};

template <uint64_t (*kWordMask)(const unsigned char*)>
uint64_t SimHashV2(std::string_view text) {
  return ScannerV2<kWordMask>(text).Run();
}

}  // namespace

uint64_t SimHash64V2(std::string_view text) {
#if defined(__SSE2__)
  return SimHashV2<WordMaskSse2>(text);
#else
  return SimHashV2<WordMaskPortable>(text);
#endif
}

uint64_t internal::SimHash64V2Portable(std::string_view text) {
  return SimHashV2<WordMaskPortable>(text);
}

uint64_t SimHash64(std::string_view text, SimHashVersion version) {
  return version == SimHashVersion::kV1 ? SimHash64(text) : SimHash64V2(text);
}

}  // namespace harvest::dedup
