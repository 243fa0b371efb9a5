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
inline uint32_t BlockOf(uint64_t hash, int table) {
  return static_cast<uint32_t>((hash >> (16 * table)) & 0xffff);
}
}  // namespace

void SimHashIndex::Insert(uint64_t hash, uint64_t id) {
  if (tables_.empty()) {
    tables_.assign(kTables, std::vector<std::vector<uint32_t>>(1u << 16));
  }
  const auto index = static_cast<uint32_t>(entries_.size());
  entries_.push_back({hash, id});
  for (int t = 0; t < kTables; ++t) tables_[t][BlockOf(hash, t)].push_back(index);
}

// Calls fn(entry index) for every entry sharing at least one 16-bit block with `hash`,
// exactly once each: an entry found in table t is skipped if it also matches an earlier
// table (it was reported there).
template <typename Fn>
void SimHashIndex::ForEachCandidate(uint64_t hash, Fn&& fn) const {
  if (tables_.empty()) return;
  for (int t = 0; t < kTables; ++t) {
    for (uint32_t index : tables_[t][BlockOf(hash, t)]) {
      const uint64_t other = entries_[index].hash;
      bool earlier = false;
      for (int u = 0; u < t && !earlier; ++u) earlier = BlockOf(other, u) == BlockOf(hash, u);
      if (!earlier) fn(index);
    }
  }
}

std::optional<uint64_t> SimHashIndex::FindNear(uint64_t hash, int max_distance) const {
  max_distance = std::clamp(max_distance, 0, kMaxDistance);
  int best_distance = max_distance + 1;
  uint32_t best_index = 0;
  ForEachCandidate(hash, [&](uint32_t index) {
    const int d = HammingDistance(hash, entries_[index].hash);
    if (d < best_distance || (d == best_distance && index < best_index)) {
      best_distance = d;
      best_index = index;
    }
  });
  if (best_distance > max_distance) return std::nullopt;
  return entries_[best_index].id;
}

}  // namespace harvest::dedup
