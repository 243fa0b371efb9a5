// Private: RFC 9309 §2.2.2/§2.2.3 path patterns — percent-encoding normalisation and a
// compiled matcher for `*` and a final `$`.
//
// Matching is linear-time in practice and never backtracks: the pattern is split at `*` into
// literal segments, the first must be a prefix, each following one is found leftmost after
// the previous (leftmost placement is optimal for `*`-only globs), and with `$` the last one
// must end the path. Cost is bounded by O(path * pattern) even for adversarial input.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace harvest::robots {

// Normalises a path+query for comparison: octets >= 0x80 and literal '*' / '$' are
// percent-encoded, escape hex is uppercased, escapes of unreserved characters are decoded.
// Returns false (and leaves *out untouched) when the input is already normal.
bool NormalizePath(std::string_view path, std::string* out);

// Normalises a rule value the same way, keeping `*` wildcards and a final `$` anchor as
// syntax (a `$` elsewhere is literal and encoded as %24).
std::string NormalizePattern(std::string_view pattern);

class PathPattern {
 public:
  // pattern: a normalised rule value (NormalizePattern).
  explicit PathPattern(std::string pattern);

  bool Matches(std::string_view normalized_path) const;

  // The normalised pattern as written (for priority and display).
  const std::string& text() const { return text_; }
  // RFC 9309 §2.2.2 specificity: the number of octets of the normalised pattern.
  size_t priority() const { return text_.size(); }
  size_t memory_bytes() const;

 private:
  enum class Kind { kPrefix, kExact, kWildcard };
  std::string text_;  // normalised, as written
  std::string glob_;  // runs of '*' collapsed, trailing '*' and the anchor removed
  Kind kind_ = Kind::kPrefix;
  bool anchored_ = false;
};

}  // namespace harvest::robots
