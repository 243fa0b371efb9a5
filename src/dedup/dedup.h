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
//   SimHash64     Charikar's 64-bit SimHash over 3-word shingles (near-duplicate pages), in
//                 two versions that give different values (see "SimHash versions" below).
//   SimHashIndex  Manku/Jain/Das Sarma permuted-table index for Hamming distance <= 3:
//                 the 64 bits are cut into 4 blocks of 16; two hashes within distance 3
//                 differ in at most 3 blocks, so they agree exactly on at least one block.
//                 Table i maps block i -> entries (full hash stored in the bucket);
//                 candidates are verified with popcount. Bounded: FIFO eviction.
//   CountMinSketch  bounded frequency estimates of 64-bit keys (in-link counts for the
//                 crawl's priorities); declared in count_min.h, included here.
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
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "base/zeroed_array.h"
#include "dedup/count_min.h"

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
  // Starts loading the cache line MayContain(key) reads (a batch of keys: prefetch all, then
  // probe, so that their memory latencies overlap).
  void Prefetch(uint64_t key) const;
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
  ZeroedArray<uint64_t> words_;  // zeroed by the kernel (base/zeroed_array.h)
};

// ---------------------------------------------------------------------------------------
// FingerprintSet: an exact set of uint64 with open addressing (linear probing), 8 bytes per
// slot, doubling when the load exceeds 3/4 (so 10.7-21 bytes per entry; std::unordered_set
// needs ~40). Key 0 is kept out of the table in a flag so 0 can mark empty slots.
class FingerprintSet {
 public:
  explicit FingerprintSet(size_t expected = 0);
  bool Contains(uint64_t key) const;
  // Starts loading the first slot Contains(key) reads.
  void Prefetch(uint64_t key) const;
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
  ZeroedArray<uint64_t> slots_;  // zeroed by the kernel (base/zeroed_array.h)
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
  // With a backend: fingerprints of recent answers kept in RAM (a direct-mapped table, 8
  // bytes an entry, rounded down to a power of two; 0: none), so a URL linked again soon is
  // known seen without a backend read. Default: 1,048,576 (8 MiB).
  size_t recent_cache = size_t{1} << 20;
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
  // True iff `fp` was inserted. Never a false positive or negative. Does not touch counters
  // (but remembers a backend's "yes" in the recent-answer cache).
  bool Contains(uint64_t fp) const;
  // Starts loading what Contains(fp) reads first: its Bloom block and its slot in the exact
  // set or the recent-answer cache.
  void Prefetch(uint64_t fp) const;
  // Fingerprints inserted (with a backend: since start, plus those preloaded).
  size_t size() const { return backend_ != nullptr ? inserted_ + preloaded_ : exact_.size(); }
  size_t memory_bytes() const {
    return bloom_.memory_bytes() + exact_.memory_bytes() + cache_.size() * sizeof(uint64_t);
  }

  // Counters (InsertIfNew only): Bloom said "maybe", exact lookups done, and Bloom hits
  // that the exact set proved new (false positives caught).
  uint64_t bloom_hits() const { return bloom_hits_; }
  uint64_t exact_checks() const { return exact_checks_; }
  uint64_t false_positives() const { return false_positives_; }
  // Exact lookups (of InsertIfNew and Contains) answered by the recent-answer cache.
  uint64_t cache_hits() const { return cache_hits_; }
  const BloomFilter& bloom() const { return bloom_; }

 private:
  // The exact answer: the in-memory set, or the recent-answer cache and then the backend
  // (a backend's "yes" is kept in the cache).
  bool ExactContains(uint64_t fp) const;
  // The recent-answer cache: slot of `fp`, and whether `fp` is in it.
  size_t CacheSlot(uint64_t fp) const { return static_cast<size_t>(fp ^ (fp >> 29)) & cache_mask_; }
  bool CacheHas(uint64_t fp) const {
    return !cache_.empty() && fp != 0 && cache_[CacheSlot(fp)] == fp;
  }
  void CachePut(uint64_t fp) const {
    if (!cache_.empty()) cache_[CacheSlot(fp)] = fp;
  }

  BloomFilter bloom_;
  FingerprintSet exact_;  // unused with a backend
  SeenBackend* backend_ = nullptr;
  uint64_t inserted_ = 0;
  uint64_t preloaded_ = 0;
  uint64_t bloom_hits_ = 0;
  uint64_t exact_checks_ = 0;
  uint64_t false_positives_ = 0;
  mutable uint64_t cache_hits_ = 0;
  // Recent fingerprints known to be in the backend (0 = empty). Mutable: Contains() keeps
  // what it learnt from the backend.
  mutable ZeroedArray<uint64_t> cache_;  // zeroed by the kernel (base/zeroed_array.h)
  size_t cache_mask_ = 0;
};

// ---------------------------------------------------------------------------------------
// SimHash
//
// SimHash versions. Both read a text the same way: a word is a maximal run of word bytes
// (ASCII letters and digits, bytes >= 0x80; ASCII letters lower-cased), a shingle is 3
// consecutive words (a text of 1-2 words is one shingle of its words, an empty text hashes
// to 0), and bit i of the result is set when more than half of the shingle hashes have it.
// They differ in how words and shingles are hashed (docs/architecture.md §1.4):
//   kV1  FNV-1a over a word's bytes, finalised with Mix64; a shingle chains three Mix64.
//   kV2  a word's bytes 8 at a time, one 64x64->128-bit multiply per chunk, its length mixed
//        in; a shingle is one Mix64 of its word hashes rotated by 0, 21 and 42 bits and
//        xored; votes counted bit-sliced. Words are found from 64-byte word-byte bitmasks
//        (SSE2 on x86-64). About 2.2x faster than kV1 (docs/benchmarks.md "SimHash
//        version 2").
// Values are persisted in crawl state and compared across runs: a crawl keeps the version
// its state was created with (state::StateDb::simhash_version) and neither function's
// values may ever change.
enum class SimHashVersion : int { kV1 = 1, kV2 = 2 };
// The version of new crawl states.
inline constexpr SimHashVersion kNewestSimHash = SimHashVersion::kV2;
// Words per shingle.
inline constexpr int kShingleWords = 3;
// 64-bit SimHash of `text`'s 3-word shingles, version 1. Similar texts give hashes at small
// Hamming distance.
uint64_t SimHash64(std::string_view text);
// The same, version 2.
uint64_t SimHash64V2(std::string_view text);
// The SimHash of `version`.
uint64_t SimHash64(std::string_view text, SimHashVersion version);
// Number of differing bits.
int HammingDistance(uint64_t a, uint64_t b);

// Near-duplicate index over 64-bit SimHashes, bounded and FIFO (docs/architecture.md §1.4,
// §1.5). Layout: kTables tables, table t keyed by 16-bit block t of the hash; a bucket is a
// ring buffer of the entries' full hashes (and slots) in insertion order, so a lookup scans
// 4 contiguous arrays of hashes (prefetched up front) and touches the entry ring only for
// the winner.
// The entry ring (slot -> {hash, id}) keeps the global insertion order for eviction: the
// oldest entry is at the front of each of its 4 buckets, so evicting it is 4 pops.
// Memory: ~4 x 12 bytes per entry in buckets (plus their growth slack) + 16 in the ring +
// a fixed ~6 MB of bucket headers; memory_bytes() reports the exact figure.
class SimHashIndex {
 public:
  // The index guarantees to find every entry within this distance.
  static constexpr int kMaxDistance = 3;
  static constexpr int kTables = 4;  // kMaxDistance + 1 blocks (pigeonhole)
  // Slots are 32-bit: an "unbounded" index holds at most this many entries (then FIFO).
  static constexpr size_t kMaxEntries = 0xffff'ffffu;

  struct Match {
    uint64_t id = 0;    // as given to Insert
    uint64_t hash = 0;  // the stored hash
    int distance = 0;   // HammingDistance(query, hash)
  };

  // max_entries 0: unbounded (up to kMaxEntries). When the index holds max_entries, Insert
  // evicts the oldest entry first (FIFO), so memory stays bounded.
  explicit SimHashIndex(size_t max_entries = 0);

  // Adds (hash, id) as the newest entry; ids are the caller's (need not be unique or
  // ordered). To rebuild after a restart, insert the surviving entries oldest first.
  void Insert(uint64_t hash, uint64_t id);
  // The closest entry at distance <= max_distance; among equally close ones the oldest
  // still present. nullopt when there is none. Every entry within kMaxDistance is found
  // (pigeonhole). REQUIRES: 0 <= max_distance <= kMaxDistance (clamped).
  std::optional<Match> FindNear(uint64_t hash, int max_distance = kMaxDistance) const;

  size_t size() const { return size_; }
  // The bound (kMaxEntries when constructed unbounded).
  size_t max_entries() const { return max_entries_; }
  // Entries evicted by Insert so far.
  uint64_t evicted() const { return evicted_; }
  // Bytes allocated by the index (bucket headers, bucket storage, the entry ring).
  size_t memory_bytes() const;

 private:
  // A ring buffer of the full hashes of its entries and their slots (into ring_), in
  // insertion order (oldest at `head`). One allocation: `capacity` hashes, then `capacity`
  // 32-bit slots, so a scan reads 8 contiguous bytes per candidate (12 bytes per entry).
  struct Bucket {
    std::unique_ptr<uint64_t[]> data;
    uint32_t capacity = 0;
    uint32_t head = 0;
    uint32_t size = 0;
    uint64_t* hashes() const { return data.get(); }
    uint32_t* slots() const { return reinterpret_cast<uint32_t*>(data.get() + capacity); }
  };
  struct RingEntry {
    uint64_t hash;
    uint64_t id;
  };
  void EvictOldest();
  template <typename Popcount>
  std::optional<Match> FindNearWith(uint64_t hash, int max_distance) const;
  // Insertion rank of a slot: smaller is older.
  uint64_t Age(uint32_t slot) const;

  size_t max_entries_;
  size_t size_ = 0;
  uint64_t evicted_ = 0;
  uint64_t bucket_entry_capacity_ = 0;  // entries allocated over all buckets
  uint32_t head_ = 0;                   // slot of the oldest entry once the ring is full
  std::vector<RingEntry> ring_;         // slot -> entry; grows to max_entries_, then wraps
  std::vector<Bucket> buckets_;         // kTables x 65536, allocated on the first insert
};

}  // namespace harvest::dedup
