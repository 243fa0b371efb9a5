#include "extract/tag_names.h"

#include <array>
#include <iterator>

namespace harvest::extract::internal {
namespace {

// Names up to 16 bytes packed into two integers; longer names are never in the table.
struct Key {
  uint64_t lo = 0;
  uint64_t hi = 0;
  bool operator<(const Key& o) const { return lo != o.lo ? lo < o.lo : hi < o.hi; }
  bool operator==(const Key& o) const { return lo == o.lo && hi == o.hi; }
};

constexpr size_t kMaxKnownName = 16;

// A byte loop rather than memcpy into a buffer: a memcpy of a variable size is a library call,
// and this runs for every tag of every page.
constexpr Key Pack(std::string_view name) {
  Key k;
  for (size_t i = 0; i < name.size() && i < 8; ++i) {
    k.lo |= uint64_t{static_cast<unsigned char>(name[i])} << (8 * i);
  }
  for (size_t i = 8; i < name.size() && i < kMaxKnownName; ++i) {
    k.hi |= uint64_t{static_cast<unsigned char>(name[i])} << (8 * (i - 8));
  }
  return k;
}

struct Entry {
  std::string_view name;
  TagInfo info;
};

constexpr uint8_t kI = kTagInline;
constexpr uint8_t kB = kTagBreakout;
constexpr uint8_t kH = kTagHidden;

// clang-format off: a hand-aligned table
constexpr Entry kEntries[] = {
    {"a", {TagId::kA, kI}},
    {"area", {TagId::kArea, 0}},
    {"link", {TagId::kLink, 0}},
    {"frame", {TagId::kFrame, 0}},
    {"iframe", {TagId::kIframe, kH}},
    {"base", {TagId::kBase, 0}},
    {"meta", {TagId::kMeta, kB}},
    {"title", {TagId::kTitle, kH}},
    {"script", {TagId::kScript, kH}},
    {"style", {TagId::kStyle, kH}},
    {"xmp", {TagId::kXmp, 0}},
    {"noembed", {TagId::kNoembed, kH}},
    {"noframes", {TagId::kNoframes, kH}},
    {"textarea", {TagId::kTextarea, 0}},
    {"plaintext", {TagId::kPlaintext, 0}},
    {"template", {TagId::kTemplate, kH}},
    {"noscript", {TagId::kNoscript, kH}},
    {"svg", {TagId::kSvg, 0}},
    {"math", {TagId::kMath, 0}},
    // Inline (phrasing) elements; some also break out of foreign content.
    {"abbr", {TagId::kOther, kI}},
    {"b", {TagId::kOther, kI | kB}},
    {"bdi", {TagId::kOther, kI}},
    {"bdo", {TagId::kOther, kI}},
    {"big", {TagId::kOther, kI | kB}},
    {"cite", {TagId::kOther, kI}},
    {"code", {TagId::kOther, kI | kB}},
    {"data", {TagId::kOther, kI}},
    {"dfn", {TagId::kOther, kI}},
    {"em", {TagId::kOther, kI | kB}},
    {"font", {TagId::kOther, kI}},
    {"i", {TagId::kOther, kI | kB}},
    {"kbd", {TagId::kOther, kI}},
    {"label", {TagId::kOther, kI}},
    {"mark", {TagId::kOther, kI}},
    {"nobr", {TagId::kOther, kI | kB}},
    {"q", {TagId::kOther, kI}},
    {"s", {TagId::kOther, kI | kB}},
    {"samp", {TagId::kOther, kI}},
    {"small", {TagId::kOther, kI | kB}},
    {"span", {TagId::kOther, kI | kB}},
    {"strike", {TagId::kOther, kI | kB}},
    {"strong", {TagId::kOther, kI | kB}},
    {"sub", {TagId::kOther, kI | kB}},
    {"sup", {TagId::kOther, kI | kB}},
    {"time", {TagId::kOther, kI}},
    {"tt", {TagId::kOther, kI | kB}},
    {"u", {TagId::kOther, kI | kB}},
    {"var", {TagId::kOther, kI | kB}},
    // Block-level breakout elements.
    {"blockquote", {TagId::kOther, kB}},
    {"body", {TagId::kOther, kB}},
    {"br", {TagId::kOther, kB}},
    {"center", {TagId::kOther, kB}},
    {"dd", {TagId::kOther, kB}},
    {"div", {TagId::kOther, kB}},
    {"dl", {TagId::kOther, kB}},
    {"dt", {TagId::kOther, kB}},
    {"embed", {TagId::kOther, kB}},
    {"h1", {TagId::kOther, kB}},
    {"h2", {TagId::kOther, kB}},
    {"h3", {TagId::kOther, kB}},
    {"h4", {TagId::kOther, kB}},
    {"h5", {TagId::kOther, kB}},
    {"h6", {TagId::kOther, kB}},
    {"head", {TagId::kOther, kB}},
    {"hr", {TagId::kOther, kB}},
    {"img", {TagId::kOther, kB}},
    {"li", {TagId::kOther, kB}},
    {"listing", {TagId::kOther, kB}},
    {"menu", {TagId::kOther, kB}},
    {"ol", {TagId::kOther, kB}},
    {"p", {TagId::kOther, kB}},
    {"pre", {TagId::kOther, kB}},
    {"ruby", {TagId::kOther, kB}},
    {"table", {TagId::kOther, kB}},
    {"ul", {TagId::kOther, kB}},
};
// clang-format on

// An open-addressing table of the known names (about 80 in 256 slots, linear probing): one
// multiply and usually one probe per tag, where a binary search over the sorted names took
// seven data-dependent branches; every start and end tag of a page is classified.
constexpr size_t kSlots = 256;

struct Slot {
  Key key;
  TagInfo info;
  bool used = false;
};

size_t SlotOf(const Key& k) {
  return static_cast<size_t>(((k.lo * 0x9E3779B97F4A7C15ull) ^ (k.hi * 0xC2B2AE3D27D4EB4Full)) >>
                             56);
}

struct Table {
  std::array<Slot, kSlots> slots{};
  Table() {
    static_assert(std::size(kEntries) < kSlots / 2, "keep the table at most half full");
    for (const Entry& e : kEntries) {
      const Key k = Pack(e.name);
      size_t i = SlotOf(k);
      while (slots[i].used) i = (i + 1) % kSlots;
      slots[i] = {k, e.info, true};
    }
  }
};

const Table kTable;

}  // namespace

TagInfo ClassifyTag(std::string_view name) {
  if (name.empty() || name.size() > kMaxKnownName) return {};
  const Key k = Pack(name);
  for (size_t i = SlotOf(k);; i = (i + 1) % kSlots) {
    const Slot& slot = kTable.slots[i];
    if (!slot.used) return {};
    if (slot.key == k) return slot.info;
  }
}

}  // namespace harvest::extract::internal
