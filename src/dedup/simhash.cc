// SimHash64 over word shingles and the permuted-table SimHashIndex.
#include <algorithm>
#include <array>
#include <bit>

#include "base/hash.h"
#include "dedup/dedup.h"

namespace harvest::dedup {

namespace {

// The tokenisation of dedup.h as one table: kFold[c] is c lower-cased when c is a word byte
// (ASCII letter or digit, or >= 0x80), else 0 (NUL is a separator, so 0 can mean "not a word
// byte").
constexpr std::array<uint8_t, 256> kFold = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c >= 0x80) {
      t[c] = static_cast<uint8_t>(c);
    } else if (c >= 'A' && c <= 'Z') {
      t[c] = static_cast<uint8_t>(c - 'A' + 'a');
    }
  }
  return t;
}();

// Order-sensitive combination of the words of one shingle. The values of this function, of
// the word hash (FNV-1a over the lower-cased word, finalised with Mix64: FNV alone mixes high
// bits poorly) and of the majority vote below are persisted in crawl state: never change
// them (simhash_test.cc keeps the original, unoptimised algorithm as a reference).
uint64_t ShingleHash(const uint64_t* words, int n) {
  uint64_t h = 0x243f6a8885a308d3ULL;
  for (int i = 0; i < n; ++i) h = Mix64(h ^ words[i]) + 0x9e3779b97f4a7c15ULL;
  return h;
}

// kSpread[b] has bit j of b at bit 8j: adding kSpread of a hash's byte k to a uint64 counts
// the ones of bits 8k..8k+7 in its 8 byte lanes at once.
constexpr std::array<uint64_t, 256> kSpread = [] {
  std::array<uint64_t, 256> t{};
  for (int b = 0; b < 256; ++b) {
    for (int j = 0; j < 8; ++j) t[b] |= static_cast<uint64_t>((b >> j) & 1) << (8 * j);
  }
  return t;
}();

// Charikar's vote: per bit, +1 for a shingle hash with the bit set, -1 otherwise; the result
// bit is set when the sum is positive, i.e. when 2 * ones > shingles (a tie gives 0). Ones
// are counted in byte lanes (8 table adds per hash instead of 64 per-bit updates) and moved
// to wide counters before a lane can overflow.
class BitVote {
 public:
  // Adds the hashes of the shingles ending at words[kShingleWords - 1 .. n - 1] (each is the
  // kShingleWords words up to it); at most kMaxBatch shingles.
  void AddShingles(const uint64_t* words, size_t n) {
    static_assert(kShingleWords == 3, "the loop below names the words of a shingle");
    if (n < kShingleWords) return;
    // The hashes first, then the votes: the hash chains of neighbouring shingles overlap
    // (nothing else is live), and the vote loop keeps its 8 lanes in registers (interleaved
    // with the hashing, the lanes spilled to the stack and every add became a memory
    // round trip).
    uint64_t hashes[kMaxBatch];
    const size_t m = n - (kShingleWords - 1);
    for (size_t i = 0; i < m; ++i) hashes[i] = ShingleHash(words + i, kShingleWords);
    if (in_lanes_ + m > kLaneMax) Flush();
    uint64_t l0 = lanes_[0], l1 = lanes_[1], l2 = lanes_[2], l3 = lanes_[3];
    uint64_t l4 = lanes_[4], l5 = lanes_[5], l6 = lanes_[6], l7 = lanes_[7];
    for (size_t i = 0; i < m; ++i) {
      const uint64_t h = hashes[i];
      l0 += kSpread[h & 0xff];
      l1 += kSpread[(h >> 8) & 0xff];
      l2 += kSpread[(h >> 16) & 0xff];
      l3 += kSpread[(h >> 24) & 0xff];
      l4 += kSpread[(h >> 32) & 0xff];
      l5 += kSpread[(h >> 40) & 0xff];
      l6 += kSpread[(h >> 48) & 0xff];
      l7 += kSpread[h >> 56];
    }
    lanes_[0] = l0, lanes_[1] = l1, lanes_[2] = l2, lanes_[3] = l3;
    lanes_[4] = l4, lanes_[5] = l5, lanes_[6] = l6, lanes_[7] = l7;
    in_lanes_ += m;
  }

  // The one shingle of a text of fewer than kShingleWords words.
  void AddShortText(const uint64_t* words, int n) {
    const uint64_t h = ShingleHash(words, n);
    for (int bit = 0; bit < 64; ++bit) ones_[bit] += (h >> bit) & 1;
    ++votes_;
  }

  uint64_t Result() {
    Flush();
    uint64_t out = 0;
    for (int bit = 0; bit < 64; ++bit) {
      if (2 * ones_[bit] > votes_) out |= uint64_t{1} << bit;
    }
    return out;
  }

  // Hashes per batch of AddShingles (at most; a batch must fit in the lanes).
  static constexpr size_t kMaxBatch = 128;

 private:
  static constexpr size_t kLaneMax = 255;
  static_assert(kMaxBatch <= kLaneMax);

  void Flush() {
    for (int k = 0; k < 8; ++k) {
      for (int j = 0; j < 8; ++j) ones_[8 * k + j] += (lanes_[k] >> (8 * j)) & 0xff;
      lanes_[k] = 0;
    }
    votes_ += in_lanes_;
    in_lanes_ = 0;
  }

  uint64_t lanes_[8] = {};
  size_t in_lanes_ = 0;  // hashes added to lanes_ since the last flush (<= kLaneMax)
  uint64_t votes_ = 0;   // hashes flushed into ones_
  uint64_t ones_[64] = {};
};

}  // namespace

uint64_t SimHash64(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char* const end = p + text.size();
  BitVote vote;
  // Word hashes of the current batch, after the last kShingleWords - 1 of the previous one
  // (the words that start the batch's first shingles).
  constexpr size_t kCarry = kShingleWords - 1;
  uint64_t words[kCarry + BitVote::kMaxBatch];
  size_t n = 0;        // filled entries of words
  uint64_t total = 0;  // words in the text so far
  while (true) {
    while (p != end && kFold[*p] == 0) ++p;
    if (p == end) break;
    uint64_t h = 0xcbf29ce484222325ULL;
    do {
      h = (h ^ kFold[*p]) * 0x100000001b3ULL;
      ++p;
    } while (p != end && kFold[*p] != 0);
    words[n++] = Mix64(h);
    ++total;
    if (n == kCarry + BitVote::kMaxBatch) {
      vote.AddShingles(words, n);
      std::copy(words + n - kCarry, words + n, words);
      n = kCarry;
    }
  }
  if (total == 0) return 0;
  if (total < kShingleWords) {
    vote.AddShortText(words, static_cast<int>(total));
  } else if (n >= kShingleWords) {
    vote.AddShingles(words, n);
  }
  return vote.Result();
}

int HammingDistance(uint64_t a, uint64_t b) { return std::popcount(a ^ b); }

namespace {

constexpr size_t kBuckets = size_t{1} << 16;

inline uint32_t BlockOf(uint64_t hash, int table) {
  return static_cast<uint32_t>((hash >> (16 * table)) & 0xffff);
}

}  // namespace

SimHashIndex::SimHashIndex(size_t max_entries)
    : max_entries_(max_entries == 0 ? kMaxEntries : std::min(max_entries, kMaxEntries)) {}

uint64_t SimHashIndex::Age(uint32_t slot) const {
  // Before the first eviction head_ is 0 and slots are in insertion order; after it the
  // ring is full and the oldest entry sits at head_.
  return slot >= head_ ? slot - head_ : uint64_t{slot} + ring_.size() - head_;
}

void SimHashIndex::Insert(uint64_t hash, uint64_t id) {
  if (buckets_.empty()) buckets_.resize(kTables * kBuckets);
  uint32_t slot;
  if (size_ == max_entries_) {
    EvictOldest();
    slot = head_;
    ring_[slot] = {hash, id};
    head_ = slot + 1 == ring_.size() ? 0 : slot + 1;
  } else {
    if (ring_.size() == ring_.capacity()) {
      // Grow by doubling, but never past the bound: a bounded index allocates at most
      // max_entries ring slots.
      ring_.reserve(std::min(std::max<size_t>(16, ring_.capacity() * 2), max_entries_));
    }
    slot = static_cast<uint32_t>(ring_.size());
    ring_.push_back({hash, id});
  }
  ++size_;
  for (int t = 0; t < kTables; ++t) {
    Bucket& b = buckets_[t * kBuckets + BlockOf(hash, t)];
    if (b.size == b.capacity) {
      // Grow by 1.5x (less slack than doubling) and unwrap the ring.
      const uint32_t capacity = std::max<uint32_t>(4, b.capacity + b.capacity / 2);
      // capacity hashes + capacity uint32 slots, in 64-bit words.
      auto data = std::make_unique<uint64_t[]>(capacity + (capacity + 1) / 2);
      auto* slots = reinterpret_cast<uint32_t*>(data.get() + capacity);
      for (uint32_t i = 0; i < b.size; ++i) {
        uint32_t from = b.head + i;
        if (from >= b.capacity) from -= b.capacity;
        data[i] = b.hashes()[from];
        slots[i] = b.slots()[from];
      }
      bucket_entry_capacity_ += capacity - b.capacity;
      b.data = std::move(data);
      b.capacity = capacity;
      b.head = 0;
    }
    uint32_t at = b.head + b.size;
    if (at >= b.capacity) at -= b.capacity;
    b.hashes()[at] = hash;
    b.slots()[at] = slot;
    ++b.size;
  }
}

// The oldest entry is the oldest of each of its buckets (buckets keep insertion order), so
// it sits at the head of all four.
void SimHashIndex::EvictOldest() {
  const uint64_t hash = ring_[head_].hash;
  for (int t = 0; t < kTables; ++t) {
    Bucket& b = buckets_[t * kBuckets + BlockOf(hash, t)];
    b.head = b.head + 1 == b.capacity ? 0 : b.head + 1;
    if (--b.size == 0) {  // free it: with a small bound most buckets are empty most of the time
      bucket_entry_capacity_ -= b.capacity;
      b.data.reset();
      b.capacity = 0;
      b.head = 0;
    }
  }
  --size_;
  ++evicted_;
}

namespace {

struct SoftPopcount {
  int operator()(uint64_t x) const { return std::popcount(x); }
};

#if defined(__x86_64__)
// The build targets baseline x86-64, where std::popcount is a library call; the scan below
// is dominated by it. Every x86-64 CPU of the last 15 years has POPCNT: checked at run time.
struct HardPopcount {
  int operator()(uint64_t x) const {
    uint64_t r;
    asm("popcntq %1, %0" : "=r"(r) : "r"(x));
    return static_cast<int>(r);
  }
};
const bool kHasPopcnt = __builtin_cpu_supports("popcnt");
#endif

}  // namespace

template <typename Popcount>
std::optional<SimHashIndex::Match> SimHashIndex::FindNearWith(uint64_t hash,
                                                              int max_distance) const {
  const Popcount popcount;
  int best_distance = max_distance + 1;
  uint32_t best_slot = 0;
  // An entry sharing several blocks with `hash` is seen once per table; seeing it again
  // changes nothing (same distance, same age).
  const Bucket* buckets[kTables];
  for (int t = 0; t < kTables; ++t) buckets[t] = &buckets_[t * kBuckets + BlockOf(hash, t)];
  // The four buckets are in unrelated places: ask for all their cache lines at once rather
  // than one bucket after the other (a lookup is bound by memory latency, not by the scan).
  for (const Bucket* b : buckets) {
    const char* p = reinterpret_cast<const char*>(b->hashes());
    for (uint32_t off = 0; off < b->capacity * sizeof(uint64_t); off += 64) {
      __builtin_prefetch(p + off);
    }
  }
  // An entry sharing several blocks with `hash` is seen once per table; seeing it again
  // changes nothing (same distance, same age).
  auto scan = [&](const Bucket& b, uint32_t begin, uint32_t end) {
    const uint64_t* hashes = b.hashes();
    for (uint32_t i = begin; i != end; ++i) {
      const int d = popcount(hash ^ hashes[i]);
      if (d > best_distance) continue;
      const uint32_t slot = b.slots()[i];
      // A tie keeps the oldest (buckets are oldest first, but the tables are not merged).
      if (d == best_distance && (d > max_distance || Age(slot) >= Age(best_slot))) continue;
      best_distance = d;
      best_slot = slot;
    }
  };
  for (const Bucket* b : buckets) {
    const uint32_t first = std::min(b->size, b->capacity - b->head);
    scan(*b, b->head, b->head + first);
    scan(*b, 0, b->size - first);
  }
  if (best_distance > max_distance) return std::nullopt;
  return Match{ring_[best_slot].id, ring_[best_slot].hash, best_distance};
}

std::optional<SimHashIndex::Match> SimHashIndex::FindNear(uint64_t hash, int max_distance) const {
  if (size_ == 0) return std::nullopt;
  max_distance = std::clamp(max_distance, 0, kMaxDistance);
#if defined(__x86_64__)
  if (kHasPopcnt) return FindNearWith<HardPopcount>(hash, max_distance);
#endif
  return FindNearWith<SoftPopcount>(hash, max_distance);
}

size_t SimHashIndex::memory_bytes() const {
  return buckets_.capacity() * sizeof(Bucket) +
         bucket_entry_capacity_ * (sizeof(uint64_t) + sizeof(uint32_t)) +
         ring_.capacity() * sizeof(RingEntry);
}

}  // namespace harvest::dedup
