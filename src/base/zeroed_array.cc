#include "base/zeroed_array.h"

#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace harvest::internal {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
// Below this, calloc (jemalloc's small classes) beats a mapping of its own.
constexpr size_t kMapFrom = size_t{256} << 10;
constexpr size_t kPage = 4096;

size_t MappedBytes(size_t bytes) {
  const size_t unit = bytes >= kHugePage ? kHugePage : kPage;
  return (bytes + unit - 1) / unit * unit;
}

[[noreturn]] void OutOfMemory(size_t bytes) {
  std::fprintf(stderr, "harvest: out of memory allocating %zu bytes\n", bytes);
  std::abort();
}

}  // namespace

void* AllocateZeroed(size_t bytes) {
  if (bytes == 0) return nullptr;
  if (bytes < kMapFrom) {
    void* p = std::calloc(1, bytes);
    if (p == nullptr) OutOfMemory(bytes);
    return p;
  }
  const size_t len = MappedBytes(bytes);
  if (len < kHugePage) {
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) OutOfMemory(bytes);
    return p;
  }
  // Huge pages need a 2 MiB-aligned start: map one huge page more and trim both ends.
  void* raw =
      mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) OutOfMemory(bytes);
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const size_t tail = (start + len + kHugePage) - (aligned + len);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + len), tail);
  void* p = reinterpret_cast<void*>(aligned);
  // Advice only: without transparent huge pages (or with them off) the mapping still works.
  (void)madvise(p, len, MADV_HUGEPAGE);
  return p;
}

void FreeZeroed(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes < kMapFrom) {
    std::free(p);
    return;
  }
  munmap(p, MappedBytes(bytes));
}

void ZeroAgain(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes < kMapFrom || madvise(p, MappedBytes(bytes), MADV_DONTNEED) != 0) {
    std::memset(p, 0, bytes);
  }
}

}  // namespace harvest::internal
