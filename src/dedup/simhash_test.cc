#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/hash.h"
#include "dedup/dedup.h"

namespace harvest::dedup {
namespace {

std::string RandomText(std::mt19937* rng, int words) {
  static const char* kVocab[] = {"crawler", "harvest", "page",  "link",  "host",    "robots",
                                 "delay",   "queue",   "fetch", "store", "archive", "record",
                                 "the",     "a",       "of",    "and",   "to",      "in",
                                 "network", "server",  "data",  "text",  "web",     "index"};
  std::string out;
  for (int i = 0; i < words; ++i) {
    out += kVocab[(*rng)() % (sizeof(kVocab) / sizeof(kVocab[0]))];
    out += std::to_string((*rng)() % 50);
    out += ' ';
  }
  return out;
}

TEST(SimHash, EmptyAndDeterministic) {
  EXPECT_EQ(SimHash64(""), 0u);
  EXPECT_EQ(SimHash64("  ,.; "), 0u);
  EXPECT_EQ(SimHash64("hello world again"), SimHash64("hello world again"));
  EXPECT_NE(SimHash64("one"), 0u);
  // Case and punctuation do not matter; word order does.
  EXPECT_EQ(SimHash64("Hello, World! Again."), SimHash64("hello world again"));
  EXPECT_NE(SimHash64("hello world again"), SimHash64("again world hello"));
}

// A long page with one word changed (or a footer date) stays within distance 3; two
// unrelated pages are far apart (expected 32).
TEST(SimHash, NearDuplicatesCloseDifferentPagesFar) {
  std::mt19937 rng(3);
  int near_ok = 0;
  int far_ok = 0;
  constexpr int kTrials = 50;
  for (int t = 0; t < kTrials; ++t) {
    const std::string page = RandomText(&rng, 800);
    const std::string edited = page + " updated 2026 11 26";
    near_ok += HammingDistance(SimHash64(page), SimHash64(edited)) <= 3;
    far_ok += HammingDistance(SimHash64(page), SimHash64(RandomText(&rng, 800))) > 10;
  }
  EXPECT_GE(near_ok, kTrials * 9 / 10);
  EXPECT_EQ(far_ok, kTrials);
}

// The original SimHash64, kept verbatim as the reference: fingerprints are persisted in crawl
// state and compared across runs, so the optimised one must agree on every input.
namespace reference {

bool IsWordByte(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

uint64_t WordHash(std::string_view text, size_t begin, size_t end) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = begin; i < end; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c - 'A' + 'a');
    h = (h ^ c) * 0x100000001b3ULL;
  }
  return Mix64(h);
}

uint64_t ShingleHash(const uint64_t* words, int n) {
  uint64_t h = 0x243f6a8885a308d3ULL;
  for (int i = 0; i < n; ++i) h = Mix64(h ^ words[i]) + 0x9e3779b97f4a7c15ULL;
  return h;
}

void AddToVector(uint64_t h, std::array<int32_t, 64>* v) {
  for (int bit = 0; bit < 64; ++bit) (*v)[bit] += ((h >> bit) & 1) ? 1 : -1;
}

uint64_t SimHash64(std::string_view text) {
  std::array<int32_t, 64> v{};
  uint64_t window[kShingleWords];
  int words = 0;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !IsWordByte(static_cast<unsigned char>(text[i]))) ++i;
    const size_t begin = i;
    while (i < text.size() && IsWordByte(static_cast<unsigned char>(text[i]))) ++i;
    if (begin == i) break;
    if (words >= kShingleWords) {
      std::copy(window + 1, window + kShingleWords, window);
      window[kShingleWords - 1] = WordHash(text, begin, i);
    } else {
      window[words] = WordHash(text, begin, i);
    }
    ++words;
    if (words >= kShingleWords) AddToVector(ShingleHash(window, kShingleWords), &v);
  }
  if (words == 0) return 0;
  if (words < kShingleWords) AddToVector(ShingleHash(window, words), &v);
  uint64_t out = 0;
  for (int bit = 0; bit < 64; ++bit) {
    if (v[bit] > 0) out |= uint64_t{1} << bit;
  }
  return out;
}

}  // namespace reference

// Bytes drawn from classes that matter to the tokeniser: lower and upper case letters,
// digits, separators (space, punctuation, NUL, control bytes) and bytes >= 0x80.
std::string RandomBytes(std::mt19937* rng, size_t len, int separator_percent) {
  std::string out(len, '\0');
  for (char& c : out) {
    const uint32_t r = (*rng)() % 100;
    if (r < static_cast<uint32_t>(separator_percent)) {
      static const char kSeparators[] = " \t\n.,;:!?-_'\"()<>/\0\x01\x7f";
      c = kSeparators[(*rng)() % (sizeof(kSeparators) - 1)];
    } else {
      switch ((*rng)() % 4) {
        case 0:
          c = static_cast<char>('a' + (*rng)() % 26);
          break;
        case 1:
          c = static_cast<char>('A' + (*rng)() % 26);
          break;
        case 2:
          c = static_cast<char>('0' + (*rng)() % 10);
          break;
        default:
          c = static_cast<char>(0x80 + (*rng)() % 128);
          break;
      }
    }
  }
  return out;
}

TEST(SimHash, MatchesReferenceOnEdgeCases) {
  std::vector<std::string> cases = {"",
                                    " ",
                                    "\0\0\0",
                                    "a",
                                    "A",
                                    "Z z",
                                    "one two",
                                    "one two three",
                                    "one two three four",
                                    "  One, TWO; three!  ",
                                    "\x80",
                                    "\xff\xfe \x80\x81 \xc3\xa9t\xc3\xa9",
                                    "caf\xc3\xa9 CAF\xc3\x89 caf\xc3\xa9",
                                    "x@y#z$w%v^u&t*s",
                                    "[\\]^_`{|}~ AZaz09 @[`{ /:"};
  cases.emplace_back("a\0b\0c\0d", 7);
  // Word counts around the batch and lane-flush sizes of the implementation (and past them).
  for (int words : {2,   3,   4,   127, 128, 129, 130, 131, 255, 256,  257, 258,
                    259, 383, 384, 385, 386, 510, 511, 512, 513, 1000, 4096}) {
    std::string text;
    for (int w = 0; w < words; ++w) text += "w" + std::to_string(w % 7) + (w % 3 ? " " : ". ");
    cases.push_back(text);
  }
  for (const std::string& text : cases) {
    EXPECT_EQ(SimHash64(text), reference::SimHash64(text)) << "text: " << text;
  }
}

TEST(SimHash, MatchesReferenceOnRandomTexts) {
  std::mt19937 rng(20240501);
  for (int t = 0; t < 3000; ++t) {
    const size_t len = t < 1000 ? rng() % 40 : t < 2500 ? rng() % 4000 : rng() % 40000;
    const int separators = 5 + static_cast<int>(rng() % 60);
    const std::string text = RandomBytes(&rng, len, separators);
    ASSERT_EQ(SimHash64(text), reference::SimHash64(text)) << "case " << t << " len " << len;
  }
  // Few distinct shingles repeated many times push single bits to large majorities and to
  // ties (the vote of each bit over 100k+ shingles, through many lane flushes).
  for (int t = 0; t < 20; ++t) {
    std::string text;
    const int vocab = 1 + static_cast<int>(rng() % 4);
    for (int w = 0; w < 100000; ++w) text += "v" + std::to_string(rng() % vocab) + " ";
    ASSERT_EQ(SimHash64(text), reference::SimHash64(text)) << "repeated case " << t;
  }
  // A period-2 text: two alternating shingles, so every bit where they differ is a tie
  // (v == 0, bit clear) or a one-vote majority depending on the parity of the count.
  for (int words : {4, 5, 300, 301, 1000, 1001}) {
    std::string text;
    for (int w = 0; w < words; ++w) text += w % 2 ? "b " : "a ";
    EXPECT_EQ(SimHash64(text), reference::SimHash64(text)) << words << " words";
  }
}

std::optional<uint64_t> IdNear(const SimHashIndex& index, uint64_t hash,
                               int max_distance = SimHashIndex::kMaxDistance) {
  std::optional<SimHashIndex::Match> m = index.FindNear(hash, max_distance);
  if (!m) return std::nullopt;
  return m->id;
}

TEST(SimHashIndex, FindsExactAndNear) {
  SimHashIndex index;
  EXPECT_FALSE(index.FindNear(123).has_value());
  index.Insert(0xffff'0000'ffff'0000ULL, 1);
  index.Insert(0x1234'5678'9abc'def0ULL, 2);
  EXPECT_EQ(IdNear(index, 0xffff'0000'ffff'0000ULL), 1u);
  // 3 bits flipped in 3 different blocks.
  const uint64_t query = 0xffff'0000'ffff'0000ULL ^ 0x0001'0001'0001'0000ULL;
  std::optional<SimHashIndex::Match> m = index.FindNear(query);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->id, 1u);
  EXPECT_EQ(m->hash, 0xffff'0000'ffff'0000ULL);
  EXPECT_EQ(m->distance, 3);
  // 4 bits flipped: out of range.
  EXPECT_FALSE(index.FindNear(0xffff'0000'ffff'0000ULL ^ 0x0001'0001'0001'0001ULL).has_value());
  // A smaller max_distance is honoured; out-of-range values are clamped.
  EXPECT_FALSE(index.FindNear(0x1234'5678'9abc'def0ULL ^ 0x3, 1).has_value());
  EXPECT_EQ(IdNear(index, 0x1234'5678'9abc'def0ULL ^ 0x3, 2), 2u);
  EXPECT_FALSE(index.FindNear(0x1234'5678'9abc'def0ULL ^ 0x1, -5).has_value());
  EXPECT_EQ(IdNear(index, 0x1234'5678'9abc'def0ULL ^ 0x7, 64), 2u);
  EXPECT_FALSE(index.FindNear(0x1234'5678'9abc'def0ULL ^ 0xf, 64).has_value());
}

TEST(SimHashIndex, PrefersClosest) {
  SimHashIndex index;
  index.Insert(0b111, 1);  // distance 3 from 0
  index.Insert(0b1, 2);    // distance 1 from 0
  EXPECT_EQ(IdNear(index, 0), 2u);
  EXPECT_EQ(index.FindNear(0)->distance, 1);
}

// Equally close entries: the oldest still present wins, also when the two share no block
// (they sit in different tables) and when the newer one is met first.
TEST(SimHashIndex, TiesGoToTheOldest) {
  const uint64_t query = 0x1111'2222'3333'4444ULL;
  const uint64_t in_block0 = query ^ (uint64_t{1} << 0);   // differs only in block 0
  const uint64_t in_block3 = query ^ (uint64_t{1} << 63);  // differs only in block 3
  for (bool block3_first : {false, true}) {
    SimHashIndex index;
    index.Insert(block3_first ? in_block3 : in_block0, 10);
    index.Insert(block3_first ? in_block0 : in_block3, 20);
    std::optional<SimHashIndex::Match> m = index.FindNear(query);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->id, 10u) << block3_first;
    EXPECT_EQ(m->hash, block3_first ? in_block3 : in_block0);
  }
  // The same hash inserted twice: the first id, until it is evicted.
  SimHashIndex index(2);
  index.Insert(query, 1);
  index.Insert(query, 2);
  EXPECT_EQ(IdNear(index, query), 1u);
  index.Insert(~query, 3);  // evicts id 1
  EXPECT_EQ(IdNear(index, query), 2u);
}

// Ties after the ring has wrapped: age is insertion order, not slot order.
TEST(SimHashIndex, TiesAfterWrapAround) {
  const uint64_t query = 0xabcd'ef01'2345'6789ULL;
  SimHashIndex index(4);
  for (uint64_t i = 0; i < 3; ++i) index.Insert(~query ^ i, 100 + i);  // far fillers
  index.Insert(query ^ (uint64_t{1} << 62), 7);                        // slot 3
  index.Insert(query ^ 1, 8);  // evicts the first filler, takes slot 0 (newer than 7)
  EXPECT_EQ(index.evicted(), 1u);
  EXPECT_EQ(IdNear(index, query), 7u);
}

TEST(SimHashIndex, EvictsOldestFirst) {
  SimHashIndex index(3);
  EXPECT_EQ(index.max_entries(), 3u);
  const uint64_t h[] = {0x0123'4567'89ab'cdefULL, 0xfedc'ba98'7654'3210ULL,
                        0x0f0f'0f0f'0f0f'0f0fULL, 0xf0f0'f0f0'f0f0'f0f0ULL,
                        0x5555'aaaa'5555'aaaaULL};
  for (uint64_t i = 0; i < 5; ++i) {
    index.Insert(h[i], i);
    EXPECT_EQ(index.size(), std::min<size_t>(i + 1, 3));
    // Exactly the newest three are present.
    for (uint64_t j = 0; j <= i; ++j) {
      const bool present = j + 3 > i;
      EXPECT_EQ(IdNear(index, h[j], 0), present ? std::optional<uint64_t>(j) : std::nullopt)
          << "after insert " << i << ", entry " << j;
    }
  }
  EXPECT_EQ(index.evicted(), 2u);
  // Unbounded: nothing is evicted.
  SimHashIndex unbounded;
  EXPECT_EQ(unbounded.max_entries(), SimHashIndex::kMaxEntries);
  for (uint64_t i = 0; i < 5; ++i) unbounded.Insert(h[i], i);
  EXPECT_EQ(unbounded.size(), 5u);
  EXPECT_EQ(IdNear(unbounded, h[0], 0), 0u);
}

// Size and memory stay bounded while inserting far more entries than the bound.
TEST(SimHashIndex, MemoryBounded) {
  std::mt19937_64 rng(5);
  SimHashIndex index(20'000);
  for (int i = 0; i < 20'000; ++i) index.Insert(rng(), i);
  const size_t full = index.memory_bytes();
  EXPECT_GT(full, 20'000u * (4 * 12 + 16));
  for (int i = 0; i < 200'000; ++i) {
    index.Insert(rng(), i);
    ASSERT_LE(index.size(), 20'000u);
  }
  EXPECT_EQ(index.size(), 20'000u);
  EXPECT_EQ(index.evicted(), 200'000u);
  // Buckets may grow a little as their sizes fluctuate, never with the number of inserts.
  EXPECT_LE(index.memory_bytes(), full + full / 4);
}

// The closest entry within d (ties: the oldest) among the newest `bound` of `entries`.
std::optional<SimHashIndex::Match> Oracle(const std::vector<std::pair<uint64_t, uint64_t>>& entries,
                                          size_t bound, uint64_t query, int d) {
  std::optional<SimHashIndex::Match> best;
  const size_t first = bound == 0 || entries.size() <= bound ? 0 : entries.size() - bound;
  for (size_t i = first; i < entries.size(); ++i) {
    const int dist = HammingDistance(query, entries[i].first);
    if (dist <= d && (!best || dist < best->distance)) {
      best = SimHashIndex::Match{entries[i].second, entries[i].first, dist};
    }
  }
  return best;
}

// Brute-force cross-check: random hashes plus planted neighbours at distance 0..4, with
// duplicate hashes (ties) and, bounded, eviction; queried as the index fills up.
TEST(SimHashIndex, MatchesBruteForce) {
  for (size_t bound : {size_t{0}, size_t{3'000}}) {
    std::mt19937_64 rng(11 + bound);
    SimHashIndex index(bound);
    std::vector<std::pair<uint64_t, uint64_t>> entries;  // (hash, id), oldest first
    int hits = 0;
    for (int round = 0; round < 20; ++round) {
      for (int n = 0; n < 1'000; ++n) {
        uint64_t h = rng();
        if (!entries.empty() && rng() % 2 == 0) {  // near an earlier one
          h = entries[rng() % entries.size()].first;
          const int flips = static_cast<int>(rng() % 5);
          for (int f = 0; f < flips; ++f) h ^= uint64_t{1} << (rng() % 64);
        }
        const uint64_t id = rng() % 1'000'000;  // caller ids: unordered, may repeat
        entries.emplace_back(h, id);
        index.Insert(h, id);
      }
      ASSERT_EQ(index.size(), bound == 0 ? entries.size() : std::min(entries.size(), bound));
      for (int q = 0; q < 200; ++q) {
        uint64_t query = rng();
        if (q % 4 != 0) {
          query =
              entries[entries.size() - 1 - rng() % std::min<size_t>(entries.size(), 5'000)].first;
          const int flips = static_cast<int>(rng() % 5);
          for (int f = 0; f < flips; ++f) query ^= uint64_t{1} << (rng() % 64);
        }
        for (int d = 0; d <= 3; ++d) {
          std::optional<SimHashIndex::Match> want = Oracle(entries, bound, query, d);
          std::optional<SimHashIndex::Match> got = index.FindNear(query, d);
          ASSERT_EQ(got.has_value(), want.has_value()) << "bound " << bound << " q " << q;
          if (!want) continue;
          ++hits;
          ASSERT_EQ(got->id, want->id) << "bound " << bound << " q " << q << " d " << d;
          ASSERT_EQ(got->hash, want->hash);
          ASSERT_EQ(got->distance, want->distance);
        }
      }
    }
    EXPECT_GT(hits, 2'000) << "the oracle check must see matches";
  }
}

}  // namespace
}  // namespace harvest::dedup
