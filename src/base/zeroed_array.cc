#include "base/zeroed_array.h"

#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace harvest::internal {
namespace {

// Below this, calloc (jemalloc's small classes) beats a mapping of its own.
constexpr size_t kMapFrom = size_t{256} << 10;
constexpr size_t kPage = 4096;

size_t MappedBytes(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

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
  void* p =
      mmap(nullptr, MappedBytes(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) OutOfMemory(bytes);
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
  // Written, not given back (MADV_DONTNEED): the pages stay resident for the next use.
  if (p != nullptr) std::memset(p, 0, bytes);
}

}  // namespace harvest::internal
