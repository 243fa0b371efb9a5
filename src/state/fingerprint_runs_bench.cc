// fingerprint_runs_bench: the cost of FingerprintRuns (fingerprint_runs.h) as an admitted set
// at scale — CPU per key added (the writing thread, the merge thread and the kernel), lookup
// CPU per present and absent key once merges have settled, RAM and disk. docs/benchmarks.md,
// "An admitted set of sorted runs".
//
//   fingerprint_runs_bench [--keys N (100000000)] [--batch B (500000)] [--lookups L (1000000)]
//                          [--dir DIR (/tmp/harvest-runs-<pid>)] [--keep]
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/hash.h"
#include "state/fingerprint_runs.h"

namespace harvest::state {
namespace {

double CpuSeconds(int who) {
  rusage u{};
  getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

uint64_t PeakRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<uint64_t>(u.ru_maxrss);
}

uint64_t DirBytes(const std::filesystem::path& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec)) total += e.file_size(ec);
  }
  return total;
}

// Key i of the set: distinct for distinct i (Mix64 is a bijection); absent keys use odd
// arguments above the range.
uint64_t KeyOf(uint64_t i) { return Mix64(i * 2); }

int Run(int argc, char** argv) {
  uint64_t keys = 100'000'000, batch = 500'000, lookups = 1'000'000;
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("harvest-runs-" + std::to_string(::getpid()));
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto next = [&]() -> uint64_t {
      return i + 1 < argc ? std::strtoull(argv[++i], nullptr, 10) : 0;
    };
    if (a == "--keys") {
      keys = next();
    } else if (a == "--batch") {
      batch = next();
    } else if (a == "--lookups") {
      lookups = next();
    } else if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--keep") {
      keep = true;
    } else {
      std::fprintf(stderr,
                   "usage: fingerprint_runs_bench [--keys N (100000000)] [--batch B (500000)]\n"
                   "         [--lookups L (1000000)] [--dir DIR] [--keep]\n");
      return 2;
    }
  }
  if (keys == 0 || batch == 0 || lookups == 0) {
    std::fprintf(stderr, "fingerprint_runs_bench: --keys, --batch and --lookups must be > 0\n");
    return 2;
  }
  std::filesystem::remove_all(dir);
  FingerprintRuns::Options o;
  o.dir = dir;
  auto set = FingerprintRuns::Open(o);
  if (!set.ok()) {
    std::fprintf(stderr, "%s\n", set.status().ToString().c_str());
    return 1;
  }
  std::printf("fingerprint_runs_bench: %llu keys in batches of %llu, dir %s\n",
              static_cast<unsigned long long>(keys), static_cast<unsigned long long>(batch),
              dir.c_str());
  const double cpu0 = CpuSeconds(RUSAGE_SELF);
  const auto wall0 = std::chrono::steady_clock::now();
  std::vector<uint64_t> sorted;
  for (uint64_t first = 0; first < keys; first += batch) {
    const uint64_t n = std::min(batch, keys - first);
    sorted.resize(n);
    for (uint64_t j = 0; j < n; ++j) sorted[j] = KeyOf(first + j);
    std::sort(sorted.begin(), sorted.end());
    if (Status s = (*set)->Add(sorted); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    if ((first / batch + 1) % 40 == 0) {
      const FingerprintRuns::Stats st = (*set)->stats();
      std::printf("  %6.1f M added, %zu runs\n", static_cast<double>(first + n) / 1e6, st.runs);
    }
  }
  if (Status s = (*set)->WaitIdle(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  const double add_cpu = CpuSeconds(RUSAGE_SELF) - cpu0;
  const double add_wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const FingerprintRuns::Stats st = (*set)->stats();
  std::printf(
      "added %llu keys in %.1f s: %.3f CPU-us per key (all threads, merges settled); %zu runs, "
      "%llu merges wrote %.2f keys per key added; RAM %.1f MiB (fences and filters); disk "
      "%.2f GiB\n",
      static_cast<unsigned long long>(keys), add_wall, add_cpu * 1e6 / static_cast<double>(keys),
      st.runs, static_cast<unsigned long long>(st.merges),
      static_cast<double>(st.merged_keys) / static_cast<double>(keys),
      static_cast<double>(st.ram_bytes) / (1 << 20),
      static_cast<double>(DirBytes(dir)) / (1 << 30));
  for (int absent = 0; absent < 2; ++absent) {
    uint64_t found = 0, r = 12345;
    const double t0 = CpuSeconds(RUSAGE_THREAD);
    for (uint64_t i = 0; i < lookups; ++i) {
      r = Mix64(r + i);
      const uint64_t k = absent ? Mix64((keys + r % keys) * 2 + 1) : KeyOf(r % keys);
      Result<bool> in = (*set)->Contains(k);
      if (!in.ok()) {
        std::fprintf(stderr, "%s\n", in.status().ToString().c_str());
        return 1;
      }
      found += *in ? 1 : 0;
    }
    const double cpu = CpuSeconds(RUSAGE_THREAD) - t0;
    std::printf("  lookup %-8s %6.2f CPU-us; found %.1f%%\n", absent ? "absent" : "present",
                cpu * 1e6 / static_cast<double>(lookups),
                100.0 * static_cast<double>(found) / static_cast<double>(lookups));
    if (found != (absent ? 0 : lookups)) {
      std::printf("FAIL: wrong answers\n");
      return 1;
    }
  }
  std::printf("peak RSS %.0f MiB\nPASS\n", static_cast<double>(PeakRssKb()) / 1024);
  set->reset();
  if (!keep) std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace harvest::state

int main(int argc, char** argv) { return harvest::state::Run(argc, argv); }
