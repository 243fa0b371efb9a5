// ZeroedArray<T>: a fixed-size array of a trivially copyable T that starts all zero bits,
// zeroed by the kernel rather than by a memset.
//
// The crawl's big tables (the seen-URL Bloom filter, the evicted-host filter, the exact
// fingerprint sets, the seen cache) are sized for the whole crawl up front
// (docs/architecture.md §[dedup]). In a std::vector their zeroing is a memset over memory
// the kernel has just zeroed, each page first touched from user space: ~30 MB at default
// settings, ~100 ms of the crawl's start-up on this VM, where every such page costs a trap.
// Here an array of 256 KiB or more is an anonymous mapping populated in the same call
// (MAP_POPULATE: the kernel faults the zero pages in, in order, without a trap per page).
// Left to be faulted in lazily instead, the tables' random first touches in the crawl's hot
// loops cost more than the memset saved; huge pages (MADV_HUGEPAGE) saved no CPU on this VM
// either (docs/benchmarks.md "Stop 27"). Small arrays use calloc.
//
// Thread-safety: as a plain array (no internal locking).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace harvest {
namespace internal {

// Zeroed memory of `bytes` (nullptr when bytes is 0); aborts if it cannot be had, as
// operator new would throw. Freed with FreeZeroed(p, bytes) of the same size.
void* AllocateZeroed(size_t bytes);
void FreeZeroed(void* p, size_t bytes);
// Sets [p, p + bytes) of an AllocateZeroed block back to zero (written: the pages stay
// resident).
void ZeroAgain(void* p, size_t bytes);

}  // namespace internal

template <typename T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T>, "all-zero bits must be a valid T");

 public:
  ZeroedArray() = default;
  explicit ZeroedArray(size_t n)
      : data_(static_cast<T*>(internal::AllocateZeroed(n * sizeof(T)))), size_(n) {}
  ~ZeroedArray() { internal::FreeZeroed(data_, size_ * sizeof(T)); }
  ZeroedArray(ZeroedArray&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  ZeroedArray& operator=(ZeroedArray&& o) noexcept {
    swap(o);
    return *this;
  }
  ZeroedArray(const ZeroedArray&) = delete;
  ZeroedArray& operator=(const ZeroedArray&) = delete;

  void swap(ZeroedArray& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
  }
  // Every element back to zero.
  void Zero() { internal::ZeroAgain(data_, size_ * sizeof(T)); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace harvest
