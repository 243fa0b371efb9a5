// Private to src/state: FingerprintRuns, a set of 64-bit URL fingerprints kept on disk as a
// few immutable sorted runs and merged on a thread of its own — the admitted set without a
// general-purpose LSM tree's per-key costs. RocksDB's compaction of the `admitted` column
// family costs ~0.4 CPU-µs per 16-byte entry rewritten, 2.9 µs per URL at 100 M URLs, and a
// lookup probes a filter partition per L0 file and level through the block cache
// (docs/benchmarks.md, "At 100 M URLs"). Here a merge is a k-way merge of arrays of
// integers (a few ns per key), and a lookup is one Bloom probe per run in RAM and one read
// of the run that may hold the key: 512 bytes of its 4 KiB page, where an even spread of the
// page's keys puts it (the whole page when the page's keys bunch).
//
// On disk, in its own directory:
//   <id>.run   a 4096-byte header (magic "HVFPRUN1", key count and CRC-32 of the keys, each
//              little-endian; the header's own CRC-32), then the keys, ascending, unique,
//              8 bytes little-endian each. Never changed once written.
//   MANIFEST   text: the live runs, oldest first ("run <id> <count> <crc>"), the next id,
//              and a CRC-32 of the lines before it. Replaced whole (written beside, fsynced,
//              renamed), so a crash leaves the old or the new set of runs, never a mix.
// A run file not named by the manifest (a crash between writing a run and recording it) is
// deleted at open; its keys were not acknowledged.
//
// Merging: runs are ordered oldest (largest) first. Once the runs newer than run i together
// hold at least 1/merge_ratio of run i's keys, runs i..newest become one. Each run is more
// than merge_ratio times the sum of those after it, so there are at most ~log(n/batch) of
// them, and a key is rewritten at most merge_ratio + 1 times per step down.
//
// RAM: per run, the first key of each 512-key page (1/64 byte per key), and a Bloom filter
// (1% false positives, ~1.2 bytes per key) for every run but the oldest: an absent key costs
// a Bloom probe per newer run and one page read of the oldest.
//
// Thread-safety: Add from one thread at a time; Contains, ForEach and stats from any thread,
// concurrently with Add and with merging.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"

namespace harvest::state {

class FingerprintRuns {
 public:
  struct Options {
    std::filesystem::path dir;  // created if missing; holds nothing else
    // Runs i..newest merge once the runs after i hold >= 1/merge_ratio of run i's keys.
    uint64_t merge_ratio = 4;
    // fsync run files, the manifest and the directory (false: the OS cache only).
    bool sync = true;
    // Merge on a thread of its own (false: Add merges before it returns; tests).
    bool background = true;
    // With this many runs, Add waits for the running merge (adds faster than merges would
    // otherwise pile up runs, and every lookup probes each one).
    size_t max_runs = 16;
  };

  struct Stats {
    size_t runs = 0;
    uint64_t keys = 0;         // in all runs (a key in two runs not yet merged counts twice)
    uint64_t merges = 0;       // since open
    uint64_t merged_keys = 0;  // keys written by merges since open
    uint64_t ram_bytes = 0;    // fences and Bloom filters
  };

  // Opens (or creates) the set in options.dir: reads the manifest, verifies every run's
  // checksum, rebuilds fences and filters, deletes files no manifest names.
  static Result<std::unique_ptr<FingerprintRuns>> Open(Options options);
  ~FingerprintRuns();
  FingerprintRuns(const FingerprintRuns&) = delete;
  FingerprintRuns& operator=(const FingerprintRuns&) = delete;

  // Adds `sorted` (ascending, no repeats; it may repeat keys already in the set) as a new run,
  // durable when this returns OK. An empty span is a no-op.
  Status Add(std::span<const uint64_t> sorted);
  // Whether `fp` is in the set. A read error is an error, never "absent".
  Result<bool> Contains(uint64_t fp) const;
  // Every key once, ascending.
  Status ForEach(const std::function<void(uint64_t)>& fn) const;
  // Waits until no merge is due or running; returns a merge's error, if one failed (the set
  // is still whole: a failed merge leaves its input runs in place).
  Status WaitIdle();
  // True when no merge is due or running.
  bool Idle() const;
  Stats stats() const;

  struct Run;                                       // one run file, open (fingerprint_runs.cc)
  using KeySink = std::function<Status(uint64_t)>;  // takes the keys of a run being written

 private:
  using RunList = std::vector<std::shared_ptr<const Run>>;  // oldest first

  explicit FingerprintRuns(Options options);
  Status Load();
  Status WriteManifest(const RunList& runs, uint64_t next_id) const;
  // Writes a new run of the keys `produce` passes to its sink (ascending, unique), with a
  // Bloom filter sized for `bloom_keys` unless that is 0; the file is removed on an error.
  Result<std::shared_ptr<Run>> WriteRun(uint64_t bloom_keys,
                                        const std::function<Status(const KeySink&)>& produce);
  // Writes the manifest of `next` and makes it the set's run list.
  Status InstallLocked(std::shared_ptr<const RunList> next) REQUIRES(manifest_mu_);
  std::shared_ptr<const RunList> Snapshot() const;
  // The first run of the newest suffix due to merge, or runs.size() when none is.
  size_t MergeStart(const RunList& runs) const;
  // Merges runs [start, end) of `runs` into a new run and installs it.
  Status Merge(const RunList& runs, size_t start);
  Status MergeDue();
  void MergeLoop();

  const Options options_;
  Mutex manifest_mu_;  // held while a new run list is written and installed
  mutable Mutex mu_;
  CondVar cv_;
  std::shared_ptr<const RunList> runs_ GUARDED_BY(mu_);
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  bool merge_wanted_ GUARDED_BY(mu_) = false;
  bool merging_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;
  Status merge_error_ GUARDED_BY(mu_);
  uint64_t merges_ GUARDED_BY(mu_) = 0;
  uint64_t merged_keys_ GUARDED_BY(mu_) = 0;
  std::thread merge_thread_;
};

}  // namespace harvest::state
