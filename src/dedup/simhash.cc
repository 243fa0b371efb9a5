// SimHash64 over word shingles and the permuted-table SimHashIndex.
#include <algorithm>
#include <array>
#include <bit>

#include "base/hash.h"
#include "dedup/dedup.h"

namespace harvest::dedup {

namespace {

bool IsWordByte(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

// FNV-1a over the lower-cased word, finalised with Mix64 (FNV alone mixes high bits poorly).
uint64_t WordHash(std::string_view text, size_t begin, size_t end) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = begin; i < end; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c - 'A' + 'a');
    h = (h ^ c) * 0x100000001b3ULL;
  }
  return Mix64(h);
}

// Order-sensitive combination of the words of one shingle.
uint64_t ShingleHash(const uint64_t* words, int n) {
  uint64_t h = 0x243f6a8885a308d3ULL;
  for (int i = 0; i < n; ++i) h = Mix64(h ^ words[i]) + 0x9e3779b97f4a7c15ULL;
  return h;
}

void AddToVector(uint64_t h, std::array<int32_t, 64>* v) {
  for (int bit = 0; bit < 64; ++bit) (*v)[bit] += ((h >> bit) & 1) ? 1 : -1;
}

}  // namespace

uint64_t SimHash64(std::string_view text) {
  std::array<int32_t, 64> v{};
  uint64_t window[kShingleWords];
  int words = 0;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !IsWordByte(static_cast<unsigned char>(text[i]))) ++i;
    const size_t begin = i;
    while (i < text.size() && IsWordByte(static_cast<unsigned char>(text[i]))) ++i;
    if (begin == i) break;
    // Slide the window of the last kShingleWords word hashes.
    if (words >= kShingleWords) {
      std::copy(window + 1, window + kShingleWords, window);
      window[kShingleWords - 1] = WordHash(text, begin, i);
    } else {
      window[words] = WordHash(text, begin, i);
    }
    ++words;
    if (words >= kShingleWords) AddToVector(ShingleHash(window, kShingleWords), &v);
  }
  if (words == 0) return 0;
  if (words < kShingleWords) AddToVector(ShingleHash(window, words), &v);
  uint64_t out = 0;
  for (int bit = 0; bit < 64; ++bit) {
    if (v[bit] > 0) out |= uint64_t{1} << bit;
  }
  return out;
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
