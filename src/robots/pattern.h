// Private: RFC 9309 §2.2.2/§2.2.3 path patterns — percent-encoding normalisation and a
// compiled matcher for `*` and a final `$`.
//
// Matching is linear-time in practice and never backtracks: the pattern is split at `*` into
// literal segments, the first must be a prefix, each following one is found leftmost after
// the previous (leftmost placement is optimal for `*`-only globs), and with `$` the last one
// must end the path. Cost is bounded by O(path * pattern) even for adversarial input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace harvest::robots {

// Normalises a path+query for comparison: octets >= 0x80, controls, space and literal
// '*' / '$' are percent-encoded, escape hex is uppercased, escapes of unreserved characters are
// decoded. Returns false (and leaves *out untouched) when the input is already normal.
bool NormalizePath(std::string_view path, std::string* out);

// Normalises a rule value the same way, keeping `*` wildcards and a final `$` anchor as
// syntax (a `$` elsewhere is literal and encoded as %24).
std::string NormalizePattern(std::string_view pattern);

// The set of ASCII octets present in a string (normalised strings are pure ASCII: octets
// >= 0x80 are percent-encoded). A pattern needing an octet the path lacks cannot match, so
// the mask rejects most non-matching rules in two AND operations.
struct ByteMask {
  uint64_t lo = 0, hi = 0;
  static ByteMask Of(std::string_view s);
  bool Covers(const ByteMask& need) const { return (need.lo & ~lo) == 0 && (need.hi & ~hi) == 0; }
};

class PathPattern {
 public:
  // pattern: a normalised rule value (NormalizePattern).
  explicit PathPattern(std::string_view pattern);

  bool Matches(std::string_view normalized_path) const;
  // Same, with ByteMask::Of(normalized_path) precomputed by the caller.
  bool Matches(std::string_view normalized_path, const ByteMask& path_mask) const {
    return path_mask.Covers(mask_) && Matches(normalized_path);
  }

  // RFC 9309 §2.2.2 specificity: the number of octets of the normalised pattern.
  size_t priority() const { return priority_; }
  size_t memory_bytes() const;

 private:
  enum class Kind { kPrefix, kExact, kWildcard };
  size_t priority_ = 0;
  std::string glob_;  // runs of '*' collapsed, trailing '*' and the anchor removed
  Kind kind_ = Kind::kPrefix;
  bool anchored_ = false;
  ByteMask mask_;  // octets of glob_ other than '*'
};

}  // namespace harvest::robots
