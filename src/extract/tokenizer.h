// An HTML5 tokenizer for extraction (internal). Follows WHATWG HTML §13.2.5 for what matters
// to links, metadata and visible text; see extract.h for the departures (no tree builder;
// raw-text switching by tag name; foreign content approximated).
//
// Input must be UTF-8 (ExtractHtml converts first). The tokenizer never allocates per token
// in the steady state: the Tag passed to the handler is reused.
//
// Thread-safety: a Tokenizer is used by one thread; separate instances are independent.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "extract/tag_names.h"

namespace harvest::extract::internal {

struct Attribute {
  std::string name;   // ASCII-lowercased
  std::string value;  // character references decoded
};

struct Tag {
  std::string name;  // ASCII-lowercased; NUL → U+FFFD
  TagInfo info;      // ClassifyTag(name)
  bool is_end = false;
  bool self_closing = false;
  // Attributes in source order; a duplicate name is dropped (the first wins).
  // Only the first attribute_count entries are valid (storage is reused).
  std::vector<Attribute> attributes;
  size_t attribute_count = 0;

  // Returns the value of attribute `name` (lowercase), or nullptr.
  const std::string* Find(std::string_view name) const;
};

enum class TextKind {
  kData,     // ordinary text; character references not yet decoded
  kRcdata,   // <title>/<textarea> content; character references not yet decoded
  kRawtext,  // <script>/<style>/... content or CDATA; literal
};

class TokenHandler {
 public:
  virtual ~TokenHandler() = default;
  virtual void OnTag(const Tag& tag) = 0;
  // Text as it appears in the input (a run may arrive in several pieces).
  virtual void OnText(std::string_view text, TextKind kind) = 0;
  virtual void OnComment(std::string_view /*comment*/) {}
  virtual void OnDoctype(std::string_view /*doctype*/) {}
  // Whether OnTag needs the attributes of start tags classified as `info`. When it does not,
  // the tokenizer skips them without copying or decoding (the tag then has none); the tag's
  // extent and self-closing flag are the same either way. End tags never carry attributes.
  virtual bool WantsAttributes(TagInfo /*info*/) const { return true; }
};

// Tokenizes the whole input, calling handler for each token. EOF inside a tag drops the
// tag (HTML §13.2.5.x "eof-in-tag"); EOF inside a comment emits it.
void Tokenize(std::string_view input, TokenHandler* handler);

}  // namespace harvest::extract::internal
