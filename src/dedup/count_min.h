// CountMinSketch: a bounded estimate of how often each 64-bit key was added (Cormode and
// Muthukrishnan, "An Improved Data Stream Summary: The Count-Min Sketch", 2005). The crawl
// counts in-links with it (docs/priority.md): every link's URL fingerprint is added, and a
// URL's estimated in-link count feeds its priority.
//
// `depth` rows of `width` 16-bit counters; a key maps to one counter per row (the key is
// remixed with a per-row seed) and its estimate is the smallest of them. Estimates never
// fall below the true count (until a counter saturates at 65535); they exceed it by at most
// e * N / width with probability 1 - e^-depth (N = total additions). Conservative update
// (only the counters at the current minimum are raised) makes the excess much smaller in
// practice. Memory is fixed at construction: depth * width * 2 bytes.
//
// Thread-safety: none (the crawl's I/O thread owns it).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/zeroed_array.h"

namespace harvest::dedup {

class CountMinSketch {
 public:
  static constexpr uint32_t kMaxCount = UINT16_MAX;  // counters saturate here
  static constexpr int kDefaultDepth = 4;

  // Uses about `bytes` of memory (at least 64 counters per row); depth is clamped to [1, 16].
  explicit CountMinSketch(size_t bytes, int depth = kDefaultDepth);

  // Adds `n` occurrences of `key` (saturating).
  void Add(uint64_t key, uint32_t n = 1);
  // An upper bound of the occurrences of `key` added so far (see above); 0 for a key never
  // added unless every one of its counters was raised by others.
  uint32_t Estimate(uint64_t key) const;

  size_t width() const { return width_; }
  int depth() const { return depth_; }
  size_t memory_bytes() const { return counters_.size() * sizeof(uint16_t); }
  uint64_t total() const { return total_; }  // additions so far

 private:
  size_t Index(int row, uint64_t key) const;

  int depth_;
  size_t width_;
  ZeroedArray<uint16_t> counters_;  // row-major; zeroed by the kernel (base/zeroed_array.h)
  uint64_t total_ = 0;
};

}  // namespace harvest::dedup
