// FingerprintSet (exact open-addressing set) and SeenSet (Bloom filter + exact set).
#include <algorithm>
#include <bit>

#include "base/hash.h"
#include "dedup/dedup.h"

namespace harvest::dedup {

namespace {
constexpr size_t kMinCapacity = 16;
}  // namespace

FingerprintSet::FingerprintSet(size_t expected) {
  // Capacity: a power of two holding `expected` below the 3/4 load limit.
  size_t cap = kMinCapacity;
  while (cap / 4 * 3 < expected) cap *= 2;
  slots_ = ZeroedArray<uint64_t>(cap);
  mask_ = cap - 1;
}

size_t FingerprintSet::SlotFor(uint64_t key) const {
  size_t i = Mix64(key) & mask_;
  while (slots_[i] != 0 && slots_[i] != key) i = (i + 1) & mask_;
  return i;
}

bool FingerprintSet::Contains(uint64_t key) const {
  if (key == 0) return has_zero_;
  return slots_[SlotFor(key)] == key;
}

void FingerprintSet::Prefetch(uint64_t key) const {
  __builtin_prefetch(&slots_[Mix64(key) & mask_]);
}

bool FingerprintSet::Insert(uint64_t key) {
  if (key == 0) {
    if (has_zero_) return false;
    has_zero_ = true;
    ++size_;
    return true;
  }
  size_t i = SlotFor(key);
  if (slots_[i] == key) return false;
  if ((size_ + 1) > slots_.size() / 4 * 3) {
    Grow();
    i = SlotFor(key);
  }
  slots_[i] = key;
  ++size_;
  return true;
}

std::vector<uint64_t> FingerprintSet::SortedKeys() const {
  std::vector<uint64_t> keys;
  keys.reserve(size_);
  if (has_zero_) keys.push_back(0);
  for (uint64_t key : slots_) {
    if (key != 0) keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

void FingerprintSet::Clear() {
  slots_.Zero();
  size_ = 0;
  has_zero_ = false;
}

void FingerprintSet::Grow() {
  ZeroedArray<uint64_t> old(slots_.size() * 2);
  old.swap(slots_);
  mask_ = slots_.size() - 1;
  for (uint64_t key : old) {
    if (key != 0) slots_[SlotFor(key)] = key;
  }
}

SeenSet::SeenSet(SeenSetOptions options, SeenBackend* backend)
    : bloom_(options.expected_urls, options.false_positive_rate),
      exact_(backend != nullptr ? 0 : options.exact_reserve),
      backend_(backend) {
  if (backend_ != nullptr && options.recent_cache > 0) {
    cache_ = ZeroedArray<uint64_t>(std::bit_floor(options.recent_cache));
    cache_mask_ = cache_.size() - 1;
  }
}

bool SeenSet::ExactContains(uint64_t fp) const {
  if (backend_ == nullptr) return exact_.Contains(fp);
  if (CacheHas(fp)) {
    ++cache_hits_;
    return true;
  }
  if (!backend_->Contains(fp)) return false;
  CachePut(fp);
  return true;
}

bool SeenSet::InsertIfNew(uint64_t fp) {
  if (bloom_.MayContain(fp)) {
    ++bloom_hits_;
    ++exact_checks_;
    if (ExactContains(fp)) return false;
    ++false_positives_;
  } else {
    bloom_.Insert(fp);
  }
  if (backend_ != nullptr) {
    backend_->Insert(fp);
    CachePut(fp);
  } else {
    exact_.Insert(fp);
  }
  ++inserted_;
  return true;
}

void SeenSet::Prefetch(uint64_t fp) const {
  bloom_.Prefetch(fp);
  if (backend_ == nullptr) {
    exact_.Prefetch(fp);
  } else if (!cache_.empty()) {
    __builtin_prefetch(&cache_[CacheSlot(fp)]);
  }
}

bool SeenSet::Contains(uint64_t fp) const { return bloom_.MayContain(fp) && ExactContains(fp); }

}  // namespace harvest::dedup
