#include "extract/tag_names.h"

#include <algorithm>
#include <cstring>
#include <vector>

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

Key Pack(std::string_view name) {
  Key k;
  char buf[kMaxKnownName] = {};
  std::memcpy(buf, name.data(), name.size());
  std::memcpy(&k.lo, buf, 8);
  std::memcpy(&k.hi, buf + 8, 8);
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

struct Packed {
  Key key;
  TagInfo info;
};

const std::vector<Packed>& Table() {
  static const std::vector<Packed> table = [] {
    std::vector<Packed> t;
    for (const Entry& e : kEntries) t.push_back({Pack(e.name), e.info});
    std::sort(t.begin(), t.end(), [](const Packed& a, const Packed& b) { return a.key < b.key; });
    return t;
  }();
  return table;
}

}  // namespace

TagInfo ClassifyTag(std::string_view name) {
  if (name.empty() || name.size() > kMaxKnownName) return {};
  const std::vector<Packed>& t = Table();
  Key k = Pack(name);
  auto it = std::lower_bound(t.begin(), t.end(), k,
                             [](const Packed& p, const Key& key) { return p.key < key; });
  if (it != t.end() && it->key == k) return it->info;
  return {};
}

}  // namespace harvest::extract::internal
