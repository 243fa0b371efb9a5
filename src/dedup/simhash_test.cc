#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/hash.h"
#include "dedup/dedup.h"
#include "dedup/simhash_internal.h"

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

// ---------------------------------------------------------------------------------------
// Version 2: a plain reference, written from the definition in dedup.h (one word and one
// shingle at a time, one counter per bit), against the fast implementation and its portable
// word finder.
namespace reference_v2 {

uint64_t MulFold(uint64_t a, uint64_t b) {
  __extension__ using U128 = unsigned __int128;
  const U128 p = static_cast<U128>(a) * b;
  return static_cast<uint64_t>(p) ^ static_cast<uint64_t>(p >> 64);
}

uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// `word`: the lower-cased bytes of one word.
uint64_t WordHash(const std::string& word) {
  uint64_t h = 0x452821e638d01377ULL ^ word.size();
  for (size_t i = 0; i < word.size(); i += 8) {
    uint64_t chunk = 0;
    for (size_t j = 0; j < 8 && i + j < word.size(); ++j) {
      chunk |= static_cast<uint64_t>(static_cast<unsigned char>(word[i + j])) << (8 * j);
    }
    h = MulFold(h ^ chunk, 0xa0761d6478bd642fULL);
  }
  return h;
}

uint64_t ShingleHash(const std::vector<uint64_t>& w, size_t i) {
  return Mix64(w[i] ^ Rotl(w[i + 1], 21) ^ Rotl(w[i + 2], 42));
}

uint64_t SimHash64V2(std::string_view text) {
  std::vector<uint64_t> words;
  std::string word;
  for (size_t i = 0; i <= text.size(); ++i) {
    const unsigned char c = i < text.size() ? static_cast<unsigned char>(text[i]) : ' ';
    if (reference::IsWordByte(c)) {
      word.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
    } else if (!word.empty()) {
      words.push_back(WordHash(word));
      word.clear();
    }
  }
  if (words.empty()) return 0;
  if (words.size() < 3) {
    const uint64_t second = words.size() == 2 ? Rotl(words[1], 21) : 0;
    return Mix64((0xbe5466cf34e90c6cULL + words.size()) ^ words[0] ^ second);
  }
  std::array<int64_t, 64> ones{};
  const size_t shingles = words.size() - 2;
  for (size_t i = 0; i < shingles; ++i) {
    const uint64_t h = ShingleHash(words, i);
    for (int bit = 0; bit < 64; ++bit) ones[bit] += (h >> bit) & 1;
  }
  uint64_t out = 0;
  for (int bit = 0; bit < 64; ++bit) {
    if (2 * ones[bit] > static_cast<int64_t>(shingles)) out |= uint64_t{1} << bit;
  }
  return out;
}

}  // namespace reference_v2

// Both word finders (SSE2 and portable) against the reference.
void ExpectV2MatchesReference(const std::string& text, const std::string& what) {
  const uint64_t want = reference_v2::SimHash64V2(text);
  ASSERT_EQ(SimHash64V2(text), want) << what << " (len " << text.size() << ")";
  ASSERT_EQ(internal::SimHash64V2Portable(text), want) << what << " portable";
  ASSERT_EQ(SimHash64(text, SimHashVersion::kV2), want) << what;
}

TEST(SimHashV2, EmptyShortAndVersionDispatch) {
  EXPECT_EQ(SimHash64V2(""), 0u);
  EXPECT_EQ(SimHash64V2("  ,.; \n"), 0u);
  EXPECT_NE(SimHash64V2("one"), 0u);
  EXPECT_NE(SimHash64V2("one"), SimHash64V2("one one"));
  EXPECT_NE(SimHash64V2("one two"), SimHash64V2("two one"));
  EXPECT_EQ(SimHash64V2("Hello, World! Again."), SimHash64V2("hello world again"));
  EXPECT_NE(SimHash64V2("hello world again"), SimHash64V2("again world hello"));
  EXPECT_EQ(SimHash64("some words of a page", SimHashVersion::kV1),
            SimHash64("some words of a page"));
  EXPECT_EQ(SimHash64("some words of a page", SimHashVersion::kV2),
            SimHash64V2("some words of a page"));
  EXPECT_NE(SimHash64V2("some words of a page"), SimHash64("some words of a page"));
}

// Values of version 2 are persisted in crawl state: these must never change.
TEST(SimHashV2, PinnedValues) {
  const std::pair<const char*, uint64_t> kPinned[] = {
      {"one", 0x2426a4d1beede8b2ULL},
      {"one two", 0x6ae7a86526debf4bULL},
      {"the quick brown fox jumps over the lazy dog", 0x81e6263d46162b7bULL},
      {"Caf\xc3\xa9 CAF\xc3\x89, na\xc3\xafve: internationalization 2024!", 0x2f9df375ca5a4478ULL},
  };
  for (const auto& [text, want] : kPinned) {
    EXPECT_EQ(SimHash64V2(text), want) << std::hex << SimHash64V2(text) << " " << text;
  }
}

TEST(SimHashV2, MatchesReferenceOnEdgeCases) {
  std::vector<std::string> cases = {"",
                                    " ",
                                    "a",
                                    "A",
                                    "Z z",
                                    "one two",
                                    "one two three",
                                    "one two three four",
                                    "  One, TWO; three!  ",
                                    "\x80",
                                    "\xff\xfe \x80\x81 \xc3\xa9t\xc3\xa9",
                                    "x@y#z$w%v^u&t*s",
                                    "[\\]^_`{|}~ AZaz09 @[`{ /:",
                                    "abcdefgh abcdefghi abcdefghijklmnop abcdefghijklmnopq"};
  cases.emplace_back("a\0b\0c\0d", 7);
  // Words ending or starting at every offset around the 16- and 64-byte blocks and the
  // 256-byte segments, and words spanning them.
  for (size_t len : {15,  16,  17,  31,  32,  33,  63,  64,  65,  127, 128,
                     129, 255, 256, 257, 511, 512, 513, 767, 768, 769}) {
    cases.push_back(std::string(len, 'w'));
    cases.push_back(std::string(len, 'w') + " x y");
    cases.push_back("x y " + std::string(len, 'W'));
    cases.push_back("x " + std::string(len, 'w') + " y");
    for (size_t word : {1, 2, 7, 8, 9, 40}) {
      std::string text;
      while (text.size() < len) text += std::string(word, 'q') + ' ';
      text.resize(len);
      cases.push_back(text);
      cases.push_back(text + "end of it");
    }
  }
  // Word counts around 8-hash vote groups, 15-group moves and segment batches.
  for (int words : {2, 3, 4, 9, 10, 11, 12, 127, 128, 129, 130, 131, 250, 255, 256, 257, 1000}) {
    std::string text;
    for (int w = 0; w < words; ++w) text += "w" + std::to_string(w % 7) + (w % 3 ? " " : ". ");
    cases.push_back(text);
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    ExpectV2MatchesReference(cases[i], "edge case " + std::to_string(i));
  }
}

// Random texts: letters of both cases, digits, bytes >= 0x80, punctuation, whitespace, NUL,
// with words of 1..40 bytes, of lengths crossing 16- and 64-byte blocks and segments.
TEST(SimHashV2, MatchesReferenceOnRandomTexts) {
  std::mt19937 rng(20261128);
  for (int t = 0; t < 3000; ++t) {
    const size_t len = t < 1000 ? rng() % 80 : t < 2500 ? rng() % 4000 : rng() % 40000;
    const int separators = 5 + static_cast<int>(rng() % 60);
    ExpectV2MatchesReference(RandomBytes(&rng, len, separators),
                             "random bytes " + std::to_string(t));
  }
  for (int t = 0; t < 1000; ++t) {
    std::string text;
    const size_t len = t < 300 ? rng() % 100 : rng() % 3000;
    while (text.size() < len) {
      const size_t word = 1 + rng() % 40;
      const std::string w = RandomBytes(&rng, word, 0);
      text += w;
      text += RandomBytes(&rng, 1 + rng() % 3, 100);
    }
    ExpectV2MatchesReference(text, "random words " + std::to_string(t));
  }
  // Repeated shingles: large majorities and ties, over many vote groups.
  for (int t = 0; t < 10; ++t) {
    std::string text;
    const int vocab = 1 + static_cast<int>(rng() % 4);
    for (int w = 0; w < 100000; ++w) text += "v" + std::to_string(rng() % vocab) + " ";
    ExpectV2MatchesReference(text, "repeated " + std::to_string(t));
  }
  for (int words : {4, 5, 300, 301, 1000, 1001}) {
    std::string text;
    for (int w = 0; w < words; ++w) text += w % 2 ? "b " : "a ";
    ExpectV2MatchesReference(text, "period 2, words " + std::to_string(words));
  }
}

// Words of 2..12 letters from a 5,000-word vocabulary, as prose.
std::vector<std::string> RandomWords(std::mt19937* rng, int n) {
  static const std::vector<std::string> kVocab = [] {
    std::mt19937 g(99);
    std::vector<std::string> v;
    for (int i = 0; i < 5000; ++i) {
      std::string w(2 + g() % 11, 'a');
      for (char& c : w) c = static_cast<char>('a' + g() % 26);
      v.push_back(w);
    }
    return v;
  }();
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(kVocab[(*rng)() % kVocab.size()]);
  return out;
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += w + ' ';
  return out;
}

// One word changed in a 2,000-word text moves 3 shingles of ~2,000: distance 0-4.
TEST(SimHashV2, OneWordChangedIsNear) {
  std::mt19937 rng(7);
  int within3 = 0;
  int max_distance = 0;
  constexpr int kTrials = 100;
  for (int t = 0; t < kTrials; ++t) {
    std::vector<std::string> words = RandomWords(&rng, 2000);
    const std::string before = Join(words);
    words[rng() % words.size()] = "changed";
    const int d = HammingDistance(SimHash64V2(before), SimHash64V2(Join(words)));
    within3 += d <= 3;
    max_distance = std::max(max_distance, d);
  }
  EXPECT_GE(within3, kTrials * 95 / 100);
  EXPECT_LE(max_distance, 5);
}

// Unrelated texts: each bit differs with probability 1/2, so a mean distance near 32.
TEST(SimHashV2, UnrelatedTextsAreFar) {
  std::mt19937 rng(8);
  double sum = 0;
  int min_distance = 64;
  constexpr int kPairs = 200;
  for (int t = 0; t < kPairs; ++t) {
    const int d = HammingDistance(SimHash64V2(Join(RandomWords(&rng, 500))),
                                  SimHash64V2(Join(RandomWords(&rng, 500))));
    sum += d;
    min_distance = std::min(min_distance, d);
  }
  const double mean = sum / kPairs;
  EXPECT_GE(mean, 28.0);
  EXPECT_LE(mean, 36.0);
  EXPECT_GT(min_distance, 10);
}

// Paragraphs in another order keep every shingle inside a paragraph and change only the
// few that span a boundary: 20 paragraphs of 100 words, shuffled, stay close (a handful of
// bits); the same words shuffled one by one are unrelated.
TEST(SimHashV2, ReorderedParagraphsStayClose) {
  std::mt19937 rng(9);
  int sum = 0;
  int shuffled_words_sum = 0;
  constexpr int kTrials = 20;
  for (int t = 0; t < kTrials; ++t) {
    std::vector<std::vector<std::string>> paragraphs;
    for (int p = 0; p < 20; ++p) paragraphs.push_back(RandomWords(&rng, 100));
    std::string original;
    for (const auto& p : paragraphs) original += Join(p) + "\n";
    std::shuffle(paragraphs.begin(), paragraphs.end(), rng);
    std::string reordered;
    std::vector<std::string> all;
    for (const auto& p : paragraphs) {
      reordered += Join(p) + "\n";
      all.insert(all.end(), p.begin(), p.end());
    }
    std::shuffle(all.begin(), all.end(), rng);
    sum += HammingDistance(SimHash64V2(original), SimHash64V2(reordered));
    shuffled_words_sum += HammingDistance(SimHash64V2(original), SimHash64V2(Join(all)));
  }
  EXPECT_LE(sum, kTrials * 8);  // 38 of ~2,000 shingles changed: a few bits
  EXPECT_GE(shuffled_words_sum, kTrials * 24);
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
