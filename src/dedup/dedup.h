// Dedup: the structures that keep Harvest from fetching a URL twice and from storing the
// same content twice (docs/architecture.md §1.4, §2 "seen test" and "dedup decision").
//
//   BloomFilter   a blocked Bloom filter (Putze, Sanders, Singler, "Cache-, Hash- and
//                 Space-Efficient Bloom Filters", 2007): every key touches one 512-bit
//                 (cache-line) block, so a lookup costs one cache miss. Sized up front from
//                 (expected items, target false-positive rate); the block layout's extra
//                 false positives are compensated by sizing (see BloomFilter::Create).
//   SeenSet       Bloom filter in front of an exact open-addressing set of 64-bit URL
//                 fingerprints: the Bloom filter answers "certainly new" cheaply, a Bloom hit
//                 is confirmed against the exact set, so a false positive never loses a URL.
//   SimHash64     Charikar's 64-bit SimHash over 3-word shingles (near-duplicate pages).
//   SimHashIndex  Manku/Jain/Das Sarma permuted-table index for Hamming distance <= 3:
//                 the 64 bits are cut into 4 blocks of 16; two hashes within distance 3
//                 differ in at most 3 blocks, so they agree exactly on at least one block.
//                 Table i maps block i -> entries; candidates are verified with popcount.
//
// Departures: keys are 64-bit fingerprints that the caller already hashed; they are
// remixed here (a weak caller hash must not cluster blocks). SimHash tokenisation is
// byte-oriented: ASCII letters/digits are lower-cased, bytes >= 0x80 count as word
// characters (UTF-8 words stay whole), everything else separates words.
//
// Thread-safety: BloomFilter, SeenSet, SimHashIndex are not synchronised (owned by one
// thread: the I/O thread for SeenSet).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace harvest::dedup {

// ---------------------------------------------------------------------------------------
// BloomFilter
class BloomFilter {
 public:
  // 512 bits = one 64-byte cache line.
  static constexpr size_t kBlockBits = 512;
  static constexpr size_t kWordsPerBlock = kBlockBits / 64;
  // Refuse absurd sizes (a typo such as 1e12 items must not allocate terabytes): 16 GiB.
  static constexpr uint64_t kMaxBytes = uint64_t{16} << 30;

  // Sizes the filter so that, after `expected_items` insertions, the expected false-positive
  // rate of the *blocked* layout is at most `false_positive_rate` (computed from the
  // Poisson distribution of keys per block, not the classic formula, which the blocked
  // layout would miss by ~20%). expected_items 0 is treated as 1; the rate is clamped to
  // [1e-9, 0.5].
  explicit BloomFilter(uint64_t expected_items, double false_positive_rate = 0.01);

  // True if `key` may have been inserted; false means certainly not.
  bool MayContain(uint64_t key) const;
  // Inserts `key`. Returns true if at least one bit changed (the key was certainly new).
  bool Insert(uint64_t key);

  size_t memory_bytes() const { return words_.size() * sizeof(uint64_t); }
  uint64_t num_blocks() const { return num_blocks_; }
  int num_probes() const { return k_; }
  // Number of Insert calls that changed a bit.
  uint64_t inserted() const { return inserted_; }

 private:
  BloomFilter() = default;
  uint64_t num_blocks_ = 0;
  int k_ = 0;
  uint64_t inserted_ = 0;
  std::vector<uint64_t> words_;
};

// ---------------------------------------------------------------------------------------
// FingerprintSet: an exact set of uint64 with open addressing (linear probing), 8 bytes per
// slot, doubling when the load exceeds 3/4 (so 10.7-21 bytes per entry; std::unordered_set
// needs ~40). Key 0 is kept out of the table in a flag so 0 can mark empty slots.
class FingerprintSet {
 public:
  explicit FingerprintSet(size_t expected = 0);
  bool Contains(uint64_t key) const;
  // Returns true if inserted (was absent).
  bool Insert(uint64_t key);
  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }
  size_t memory_bytes() const { return slots_.size() * sizeof(uint64_t); }
  // Every key, ascending.
  std::vector<uint64_t> SortedKeys() const;
  // Removes every key; keeps the capacity.
  void Clear();

 private:
  size_t SlotFor(uint64_t key) const;
  void Grow();
  std::vector<uint64_t> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
  bool has_zero_ = false;
};

// ---------------------------------------------------------------------------------------
// SeenSet
struct SeenSetOptions {
  // Number of URLs the Bloom filter is sized for. Beyond it the Bloom filter's rate degrades
  // (more exact checks) but answers stay exact. Default: 10 M.
  uint64_t expected_urls = 10'000'000;
  // Bloom filter target false-positive rate at expected_urls. Default: 0.01.
  double false_positive_rate = 0.01;
  // Initial capacity hint for the exact set (0: grow from small). Default: 0.
  size_t exact_reserve = 0;
};

// Where a SeenSet keeps its exact answers when they must survive restarts or outgrow RAM
// (the crawl's RocksDB seen store, src/state). Owned by the caller; same thread as the set.
class SeenBackend {
 public:
  virtual ~SeenBackend() = default;
  virtual bool Contains(uint64_t fp) const = 0;
  virtual void Insert(uint64_t fp) = 0;
};

class SeenSet {
 public:
  // backend nullptr: the exact set is the in-memory FingerprintSet.
  explicit SeenSet(SeenSetOptions options = {}, SeenBackend* backend = nullptr);
  // Restores the Bloom filter after a restart: `fp` is already in the backend.
  void Preload(uint64_t fp) {
    bloom_.Insert(fp);
    ++preloaded_;
  }
  // Records `fp`. Returns true when it was not seen before.
  bool InsertIfNew(uint64_t fp);
  // True iff `fp` was inserted. Never a false positive or negative. Does not touch counters.
  bool Contains(uint64_t fp) const;
  // Fingerprints inserted (with a backend: since start, plus those preloaded).
  size_t size() const { return backend_ != nullptr ? inserted_ + preloaded_ : exact_.size(); }
  size_t memory_bytes() const { return bloom_.memory_bytes() + exact_.memory_bytes(); }

  // Counters (InsertIfNew only): Bloom said "maybe", exact lookups done, and Bloom hits
  // that the exact set proved new (false positives caught).
  uint64_t bloom_hits() const { return bloom_hits_; }
  uint64_t exact_checks() const { return exact_checks_; }
  uint64_t false_positives() const { return false_positives_; }
  const BloomFilter& bloom() const { return bloom_; }

 private:
  bool ExactContains(uint64_t fp) const;

  BloomFilter bloom_;
  FingerprintSet exact_;  // unused with a backend
  SeenBackend* backend_ = nullptr;
  uint64_t inserted_ = 0;
  uint64_t preloaded_ = 0;
  uint64_t bloom_hits_ = 0;
  uint64_t exact_checks_ = 0;
  uint64_t false_positives_ = 0;
};

// ---------------------------------------------------------------------------------------
// SimHash
// Words per shingle.
inline constexpr int kShingleWords = 3;
// 64-bit SimHash of `text`'s 3-word shingles (a text of 1-2 words is one shingle; an empty
// text hashes to 0). Similar texts give hashes at small Hamming distance.
uint64_t SimHash64(std::string_view text);
// Number of differing bits.
int HammingDistance(uint64_t a, uint64_t b);

class SimHashIndex {
 public:
  // The index guarantees to find every entry within this distance.
  static constexpr int kMaxDistance = 3;
  static constexpr int kTables = 4;  // kMaxDistance + 1 blocks (pigeonhole)

  void Insert(uint64_t hash, uint64_t id);
  // The id of an entry at distance <= max_distance (the closest; among equals the first
  // inserted), or nullopt. REQUIRES: 0 <= max_distance <= kMaxDistance (clamped).
  std::optional<uint64_t> FindNear(uint64_t hash, int max_distance = kMaxDistance) const;
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t hash;
    uint64_t id;
  };
  template <typename Fn>
  void ForEachCandidate(uint64_t hash, Fn&& fn) const;
  std::vector<Entry> entries_;  // in insertion order
  // tables_[t][block] -> indexes into entries_; allocated on the first insert.
  std::vector<std::vector<std::vector<uint32_t>>> tables_;
};

}  // namespace harvest::dedup
