// CountMinSketch (count_min.h).
#include "dedup/count_min.h"

#include <algorithm>

#include "base/hash.h"

namespace harvest::dedup {
namespace {

constexpr uint64_t kRowSeed = 0x9e3779b97f4a7c15ULL;

}  // namespace

CountMinSketch::CountMinSketch(size_t bytes, int depth)
    : depth_(std::clamp(depth, 1, 16)),
      width_(std::max<size_t>(bytes / sizeof(uint16_t) / static_cast<size_t>(depth_), 64)),
      counters_(width_ * static_cast<size_t>(depth_)) {}

size_t CountMinSketch::Index(int row, uint64_t key) const {
  // Mixed (base/hash.h): a caller's weak hash must not put keys in the same columns.
  const uint64_t h = Mix64(key ^ (kRowSeed * static_cast<uint64_t>(row + 1)));
  const auto col = static_cast<size_t>(RangeReduce(h, width_));
  return static_cast<size_t>(row) * width_ + col;
}

void CountMinSketch::Add(uint64_t key, uint32_t n) {
  if (n == 0) return;
  total_ += n;
  size_t idx[16];
  uint32_t min = kMaxCount;
  for (int r = 0; r < depth_; ++r) {
    idx[r] = Index(r, key);
    min = std::min<uint32_t>(min, counters_[idx[r]]);
  }
  // Conservative update: no counter needs to exceed the new estimate.
  const uint32_t target = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{min} + n, kMaxCount));
  for (int r = 0; r < depth_; ++r) {
    if (counters_[idx[r]] < target) counters_[idx[r]] = static_cast<uint16_t>(target);
  }
}

uint32_t CountMinSketch::Estimate(uint64_t key) const {
  uint32_t min = kMaxCount;
  for (int r = 0; r < depth_; ++r) min = std::min<uint32_t>(min, counters_[Index(r, key)]);
  return min;
}

}  // namespace harvest::dedup
