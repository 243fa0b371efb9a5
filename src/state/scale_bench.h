// state_scale_bench's parts (scale_bench.cc: flags, link stream, admission, drain, restart;
// scale_bench_lookups.cc: the fetched pages' records and the point lookups) and the
// measuring helpers they share. Internal to the benchmark: nothing else includes it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "state/state.h"

namespace harvest::state::scale_bench {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

// A crawl commits once per I/O loop iteration; ~1000 admissions per iteration is a busy one.
inline constexpr uint64_t kCommitEvery = 1000;

struct Flags {
  uint64_t urls = 50'000'000;
  uint64_t hosts = 1'000'000;
  uint64_t drain = 1'000'000;
  std::string dir;
  bool restart = true;
  bool keep = false;
  bool lookups_only = false;  // phase 3's lookups over the state a --keep run left in dir
  // With --lookups-only: a second kept state (the --urls and --fetched of the run that left
  // it), whose lookups alternate with those over `dir` in `rounds` rounds (CompareLookups).
  std::string compare_dir;
  uint64_t compare_urls = 0;
  uint64_t compare_fetched = 0;
  uint64_t rounds = 10;
  // With --lookups-only: each state's level-0 tables merged into the level below before the
  // lookups (StateDb::MergeLevel0), so that states of different sizes are read alike.
  bool merge_level0 = false;
  uint64_t seed = 42;
  size_t queue_ram_items = StateOptions{}.queue_ram_items;
  size_t write_buffer_mb = StateOptions{}.write_buffer_bytes >> 20;
  size_t block_cache_mb = StateOptions{}.block_cache_bytes >> 20;
  size_t block_cache_max_mb = StateOptions{}.block_cache_max_bytes >> 20;
  size_t ingest_every = StateOptions{}.ingest_every;
  uint64_t fetched = 0;          // pages whose records phase 3 writes (0: no phase 3)
  uint64_t lookups = 1'000'000;  // point lookups of each kind in phase 3
  // Hosts with state in RAM (the frontier's and admission's), as the crawl's crawl.host_cache:
  // the URLs of other hosts are parked on disk until there is room. 0: every host resident.
  size_t host_cache = 20'000;
};

// A 64-bit pseudo-random step (SplitMix64) of *state.
uint64_t SplitMix(uint64_t* state);
// Appends v in decimal, zero-padded to at least `width` digits.
void AppendPadded(std::string* out, uint64_t v, int width);
// kB from /proc/self/status ("VmRSS", "VmHWM").
uint64_t ProcStatusKb(const char* field);
double MiB(uint64_t kb);
// CPU time of the process (all threads) and of the calling thread, in seconds.
double CpuSeconds();
double ThreadCpuSeconds();
double Seconds(SteadyClock::time_point since);
// Bytes of the regular files under `dir`.
uint64_t DirBytes(const fs::path& dir);
// From RocksDB's statistics (StateDb::EngineStats): per column family the compaction totals
// ("Sum" row: size, read, written, write amplification, CPU) and the files per level.
void PrintCompaction(const std::string& stats);

// Phase 3's fetched page i: its synthetic fingerprint (distinct from the admitted URLs' with
// overwhelming probability).
uint64_t FetchedFp(uint64_t seed, uint64_t i);

// Phase 3 (--fetched F, --lookups L): the records of F fetched pages, then the timed point
// lookups (scale_bench_lookups.cc). `admitted_fps`: a sample of the admitted fingerprints.
// False on a database error.
bool FetchedAndLookups(const Flags& f, StateDb* db, const std::vector<uint64_t>& admitted_fps);
// Phase 3's timed lookups alone, over the state in `db` (FetchedAndLookups ends with them;
// --lookups-only runs them over the state a --keep run left).
bool TimeLookups(const Flags& f, StateDb* db, const std::vector<uint64_t>& admitted_fps);
// --lookups-only --compare-dir: the same lookups over two states open in one process (state
// a: `a.dir`; state b: `b.dir`), in a.rounds rounds, each a slice of every kind timed on one
// state and then on the other (which goes first alternates). The machine's slow phases then
// fall on both states alike: prints each round's mean cost over the kinds for both and their
// ratio b / a, then per kind the median over the rounds. False on a database error.
bool CompareLookups(const Flags& a, StateDb* da, const std::vector<uint64_t>& fps_a, const Flags& b,
                    StateDb* db, const std::vector<uint64_t>& fps_b);

}  // namespace harvest::state::scale_bench
