// Classification of the tag names extraction cares about (internal). Replaces string
// comparisons on every tag with one integer lookup.
#pragma once

#include <cstdint>
#include <string_view>

namespace harvest::extract::internal {

enum class TagId : uint8_t {
  kOther,
  kA,
  kArea,
  kLink,
  kFrame,
  kIframe,
  kBase,
  kMeta,
  kTitle,
  kScript,
  kStyle,
  kXmp,
  kNoembed,
  kNoframes,
  kTextarea,
  kPlaintext,
  kTemplate,
  kNoscript,
  kSvg,
  kMath
};

// Bits of TagInfo::flags.
constexpr uint8_t kTagInline = 1;    // phrasing element: no word break in visible text
constexpr uint8_t kTagBreakout = 2;  // leaves foreign content (HTML §13.2.6.5)
constexpr uint8_t kTagHidden = 4;    // content is not visible text

struct TagInfo {
  TagId id = TagId::kOther;
  uint8_t flags = 0;
};

// name must be ASCII-lowercased.
TagInfo ClassifyTag(std::string_view name);

}  // namespace harvest::extract::internal
