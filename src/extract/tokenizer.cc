#include "extract/tokenizer.h"

#include <cstring>

#include "base/ascii.h"
#include "extract/char_ref.h"

namespace harvest::extract::internal {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Attributes of one tag beyond this are parsed and dropped. Duplicate detection is linear in
// the attribute count, so without a cap one hostile tag with 100,000 attributes would cost
// 5e9 comparisons; real elements carry a few dozen at most.
constexpr size_t kMaxAttributesPerTag = 256;

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The element whose content the tokenizer is in after a start tag.
enum class Mode { kData, kRcdata, kRawtext, kScript, kPlaintext };

Mode ModeForStartTag(TagId id) {
  switch (id) {
    case TagId::kScript:
      return Mode::kScript;
    case TagId::kStyle:
    case TagId::kXmp:
    case TagId::kIframe:
    case TagId::kNoembed:
    case TagId::kNoframes:
      return Mode::kRawtext;
    case TagId::kTitle:
    case TagId::kTextarea:
      return Mode::kRcdata;
    case TagId::kPlaintext:
      return Mode::kPlaintext;
    default:
      return Mode::kData;
  }
}

bool IsForeignRoot(TagId id) { return id == TagId::kSvg || id == TagId::kMath; }

class Tokenizer {
 public:
  Tokenizer(std::string_view in, TokenHandler* handler) : in_(in), h_(handler) {}

  void Run() {
    while (pos_ < in_.size()) {
      switch (mode_) {
        case Mode::kData:
          DataState();
          break;
        case Mode::kPlaintext:
          EmitText(in_.size(), TextKind::kRawtext);
          break;
        case Mode::kScript:
          RawState(ScriptEnd(), TextKind::kRawtext);
          break;
        case Mode::kRawtext:
          RawState(RawEnd(), TextKind::kRawtext);
          break;
        case Mode::kRcdata:
          RawState(RawEnd(), TextKind::kRcdata);
          break;
      }
    }
  }

 private:
  void EmitText(size_t end, TextKind kind) {
    if (end > pos_) h_->OnText(in_.substr(pos_, end - pos_), kind);
    pos_ = end;
  }

  // Text up to `end`, then (if not EOF) the end tag there, parsed like any tag.
  void RawState(size_t end, TextKind kind) {
    EmitText(end, kind);
    if (pos_ >= in_.size()) return;
    mode_ = Mode::kData;
    TagOpen(pos_ + 2, /*is_end=*/true);
  }

  // True if an end tag for raw_name_ starts at i ("</name" followed by space, '/' or '>').
  bool AppropriateEndTagAt(size_t i) const {
    if (in_[i] != '<' || i + 1 >= in_.size() || in_[i + 1] != '/') return false;
    if (!StartsWithIgnoreAsciiCase(in_.substr(i + 2), raw_name_)) return false;
    size_t after = i + 2 + raw_name_.size();
    return after < in_.size() &&
           (IsHtmlSpace(in_[after]) || in_[after] == '/' || in_[after] == '>');
  }

  // Position of the end tag closing RAWTEXT/RCDATA content, or EOF.
  size_t RawEnd() const {
    size_t i = pos_;
    while (true) {
      const void* p = std::memchr(in_.data() + i, '<', in_.size() - i);
      if (p == nullptr) return in_.size();
      i = static_cast<const char*>(p) - in_.data();
      if (AppropriateEndTagAt(i)) return i;
      ++i;
    }
  }

  // Script data with the escaped / double-escaped states (§13.2.5.4, .15-.31): inside
  // "<!--" a nested "<script" hides the next "</script>".
  size_t ScriptEnd() const {
    enum { kNormal, kEscaped, kDouble } state = kNormal;
    size_t i = pos_;
    const size_t n = in_.size();
    while (i < n) {
      char c = in_[i];
      if (state == kNormal) {
        const void* p = std::memchr(in_.data() + i, '<', n - i);
        if (p == nullptr) return n;
        i = static_cast<const char*>(p) - in_.data();
        if (AppropriateEndTagAt(i)) return i;
        if (in_.compare(i, 4, "<!--") == 0) {
          state = kEscaped;
          i += 2;  // the "--" may also be the start of "-->"
        } else {
          ++i;
        }
        continue;
      }
      if (c == '-' && in_.compare(i, 3, "-->") == 0) {
        state = kNormal;
        i += 3;
      } else if (c == '<' && state == kEscaped && AppropriateEndTagAt(i)) {
        return i;
      } else if (c == '<' && state == kEscaped &&
                 StartsWithIgnoreAsciiCase(in_.substr(i + 1), "script") && i + 7 < n &&
                 (IsHtmlSpace(in_[i + 7]) || in_[i + 7] == '/' || in_[i + 7] == '>')) {
        state = kDouble;
        i += 7;
      } else if (c == '<' && state == kDouble && AppropriateEndTagAt(i)) {
        state = kEscaped;
        i += 8;
      } else {
        ++i;
      }
    }
    return n;
  }

  void DataState() {
    const size_t n = in_.size();
    const void* p = std::memchr(in_.data() + pos_, '<', n - pos_);
    size_t lt = p == nullptr ? n : static_cast<const char*>(p) - in_.data();
    EmitText(lt, TextKind::kData);
    if (lt >= n) return;
    if (lt + 1 >= n) {
      EmitText(n, TextKind::kData);  // a lone '<' at EOF is text
      return;
    }
    char c = in_[lt + 1];
    if (IsAlpha(c)) {
      TagOpen(lt + 1, /*is_end=*/false);
    } else if (c == '/') {
      EndTagOpen(lt);
    } else if (c == '!') {
      MarkupDeclaration(lt);
    } else if (c == '?') {
      BogusComment(lt + 1);
    } else {
      // Not a tag: '<' is text. Emit it with what follows on the next DataState pass.
      h_->OnText(in_.substr(lt, 1), TextKind::kData);
      pos_ = lt + 1;
    }
  }

  // lt points at "</".
  void EndTagOpen(size_t lt) {
    if (lt + 2 >= in_.size()) {
      EmitText(in_.size(), TextKind::kData);  // "</" at EOF is text
      return;
    }
    char c = in_[lt + 2];
    if (IsAlpha(c)) {
      TagOpen(lt + 2, /*is_end=*/true);
    } else if (c == '>') {
      pos_ = lt + 3;  // "</>" is ignored
    } else {
      BogusComment(lt + 2);
    }
  }

  // lt points at "<!".
  void MarkupDeclaration(size_t lt) {
    size_t i = lt + 2;
    if (in_.compare(i, 2, "--") == 0) {
      Comment(i + 2);
    } else if (StartsWithIgnoreAsciiCase(in_.substr(i), "doctype")) {
      size_t gt = in_.find('>', i);
      size_t end = gt == std::string_view::npos ? in_.size() : gt;
      h_->OnDoctype(in_.substr(i + 7, end - i - 7));
      pos_ = gt == std::string_view::npos ? in_.size() : gt + 1;
    } else if (foreign_depth_ > 0 && in_.compare(i, 7, "[CDATA[") == 0) {
      size_t end = in_.find("]]>", i + 7);
      size_t text_end = end == std::string_view::npos ? in_.size() : end;
      if (text_end > i + 7) h_->OnText(in_.substr(i + 7, text_end - i - 7), TextKind::kRawtext);
      pos_ = end == std::string_view::npos ? in_.size() : end + 3;
    } else {
      BogusComment(i);
    }
  }

  // §13.2.5.41 bogus comment state: up to the first '>' or EOF.
  void BogusComment(size_t start) {
    size_t gt = in_.find('>', start);
    size_t end = gt == std::string_view::npos ? in_.size() : gt;
    h_->OnComment(in_.substr(start, end - start));
    pos_ = gt == std::string_view::npos ? in_.size() : gt + 1;
  }

  // §13.2.5.43-52: start is just after "<!--". Ends at "-->" (any number of extra dashes
  // before '>'), "--!>", or the abrupt "<!-->" / "<!--->"; EOF emits the comment.
  void Comment(size_t start) {
    const size_t n = in_.size();
    if (start < n && in_[start] == '>') {
      pos_ = start + 1;
      h_->OnComment({});
      return;
    }
    if (in_.compare(start, 2, "->") == 0) {
      pos_ = start + 2;
      h_->OnComment({});
      return;
    }
    size_t i = start;
    while (true) {
      size_t dd = in_.find("--", i);
      if (dd == std::string_view::npos) {
        h_->OnComment(in_.substr(start));
        pos_ = n;
        return;
      }
      size_t j = dd + 2;
      while (j < n && in_[j] == '-') ++j;
      if (j < n && in_[j] == '>') {
        h_->OnComment(in_.substr(start, j - 2 - start));
        pos_ = j + 1;
        return;
      }
      if (j + 1 < n && in_[j] == '!' && in_[j + 1] == '>') {
        h_->OnComment(in_.substr(start, j - 2 - start));
        pos_ = j + 2;
        return;
      }
      i = j;
    }
  }

  // Appends c (from a tag or attribute name) lowercased, NUL as U+FFFD.
  static void AppendNameChar(char c, std::string* s) {
    if (c == '\0') {
      s->append(kReplacement);
    } else {
      s->push_back(AsciiLower(c));
    }
  }

  Attribute* NewAttribute() {
    if (tag_.attribute_count >= kMaxAttributesPerTag) {
      scratch_.name.clear();
      scratch_.value.clear();
      return &scratch_;
    }
    if (tag_.attribute_count == tag_.attributes.size()) tag_.attributes.emplace_back();
    Attribute* a = &tag_.attributes[tag_.attribute_count++];
    a->name.clear();
    a->value.clear();
    return a;
  }

  // Drops the last attribute if its name repeats an earlier one (§13.2.5.33: first wins).
  void DedupLastAttribute(const Attribute* last_added) {
    if (last_added == &scratch_ || tag_.attribute_count < 2) return;
    const std::string& last = tag_.attributes[tag_.attribute_count - 1].name;
    for (size_t k = 0; k + 1 < tag_.attribute_count; ++k) {
      if (tag_.attributes[k].name == last) {
        --tag_.attribute_count;
        return;
      }
    }
  }

  // Reads an attribute value starting at i (just after '=' and any spaces). Returns the
  // position after the value, or npos at EOF.
  size_t AttributeValue(size_t i, std::string* value) {
    const size_t n = in_.size();
    if (i >= n) return std::string_view::npos;
    char q = in_[i];
    if (q == '"' || q == '\'') {
      ++i;
      while (i < n && in_[i] != q) {
        // Copy the run of ordinary characters in one append.
        size_t run = i;
        while (run < n && in_[run] != q && in_[run] != '&' && in_[run] != '\0') ++run;
        value->append(in_.data() + i, run - i);
        i = run;
        if (i < n && in_[i] != q) i = ValueChar(i, value);
      }
      return i < n ? i + 1 : std::string_view::npos;
    }
    while (i < n && !IsHtmlSpace(in_[i]) && in_[i] != '>') {
      i = ValueChar(i, value);
    }
    return i < n ? i : std::string_view::npos;
  }

  size_t ValueChar(size_t i, std::string* value) {
    char c = in_[i];
    if (c == '&') {
      size_t used = DecodeCharRef(in_, i, /*in_attribute=*/true, value);
      if (used > 0) return i + used;
      value->push_back('&');
    } else if (c == '\0') {
      value->append(kReplacement);
    } else {
      value->push_back(c);
    }
    return i + 1;
  }

  // §13.2.5.8 onwards: name_start is the first letter of the tag name.
  void TagOpen(size_t name_start, bool is_end) {
    const size_t n = in_.size();
    tag_.name.clear();
    tag_.is_end = is_end;
    tag_.self_closing = false;
    tag_.attribute_count = 0;
    size_t i = name_start;
    size_t run = i;
    while (run < n && !IsHtmlSpace(in_[run]) && in_[run] != '/' && in_[run] != '>') ++run;
    AppendName(in_.substr(i, run - i), &tag_.name);
    i = run;
    tag_.info = ClassifyTag(tag_.name);
    // A tag whose attributes the handler does not want (and every end tag: HTML drops their
    // attributes) goes through the same states without keeping names or values: the same
    // positions, the same end of the tag and the same self-closing flag.
    if (is_end || !h_->WantsAttributes(tag_.info)) {
      Attributes</*kKeep=*/false>(i);
    } else {
      Attributes</*kKeep=*/true>(i);
    }
  }

  // Before attribute name / attribute name / after attribute name states, from i to the end
  // of the tag, which is then emitted (pos_ after its '>'); EOF inside a tag drops it.
  template <bool kKeep>
  void Attributes(size_t i) {
    const size_t n = in_.size();
    while (true) {
      while (i < n && IsHtmlSpace(in_[i])) ++i;
      if (i >= n) break;  // EOF in tag: drop it
      char c = in_[i];
      if (c == '>') {
        pos_ = i + 1;
        EmitTag();
        return;
      }
      if (c == '/') {
        ++i;
        if (i < n && in_[i] == '>') {
          tag_.self_closing = true;
          pos_ = i + 1;
          EmitTag();
          return;
        }
        continue;  // a stray '/' is ignored; reconsume in before attribute name
      }
      Attribute* attr = nullptr;
      if constexpr (kKeep) {
        attr = NewAttribute();
        // The first character is part of the name even if it is '='.
        AppendNameChar(c, &attr->name);
      }
      ++i;
      while (i < n && !IsHtmlSpace(in_[i]) && in_[i] != '/' && in_[i] != '>' && in_[i] != '=') {
        if constexpr (kKeep) AppendNameChar(in_[i], &attr->name);
        ++i;
      }
      if constexpr (kKeep) DedupLastAttribute(attr);
      size_t j = i;
      while (j < n && IsHtmlSpace(in_[j])) ++j;
      if (j >= n) break;
      if (in_[j] != '=') {
        i = j;  // attribute without value; next attribute (or '/', '>') follows
        continue;
      }
      ++j;
      while (j < n && IsHtmlSpace(in_[j])) ++j;
      if (j < n && in_[j] == '>') {  // missing value
        pos_ = j + 1;
        EmitTag();
        return;
      }
      if constexpr (kKeep) {
        // A duplicate's (or a dropped attribute's) value is parsed into scratch_ and discarded.
        Attribute* target =
            tag_.attribute_count > 0 && &tag_.attributes[tag_.attribute_count - 1] == attr
                ? attr
                : &scratch_;
        scratch_.value.clear();
        i = AttributeValue(j, &target->value);
      } else {
        i = SkipAttributeValue(j);
      }
      if (i == std::string_view::npos) break;
    }
    pos_ = n;  // EOF inside a tag: the tag is not emitted
  }

  // AttributeValue's positions without the value. Character references never span a quote,
  // a space or '>', so they need no decoding to find the value's end.
  size_t SkipAttributeValue(size_t i) const {
    const size_t n = in_.size();
    if (i >= n) return std::string_view::npos;
    const char q = in_[i];
    if (q == '"' || q == '\'') {
      const void* p = std::memchr(in_.data() + i + 1, q, n - i - 1);
      return p == nullptr ? std::string_view::npos : static_cast<const char*>(p) - in_.data() + 1;
    }
    while (i < n && !IsHtmlSpace(in_[i]) && in_[i] != '>') ++i;
    return i < n ? i : std::string_view::npos;
  }

  // Appends a tag name lowercased, NUL as U+FFFD.
  static void AppendName(std::string_view name, std::string* s) {
    const size_t at = s->size();
    s->append(name);
    // Through a local pointer: a store through (*s)[k] may alias the string's own members,
    // which made the compiler reload them for every byte.
    char* d = s->data() + at;
    const size_t len = name.size();
    bool nul = false;
    for (size_t k = 0; k < len; ++k) {
      const char c = d[k];
      d[k] = c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
      nul |= c == '\0';
    }
    if (!nul) return;
    std::string fixed = s->substr(0, at);
    for (char c : name) AppendNameChar(c, &fixed);
    *s = std::move(fixed);
  }

  void EmitTag() {
    const TagId id = tag_.info.id;
    if (tag_.is_end) {
      if (IsForeignRoot(id) && foreign_depth_ > 0) --foreign_depth_;
      h_->OnTag(tag_);
      return;
    }
    if (foreign_depth_ > 0 && (tag_.info.flags & kTagBreakout) != 0) foreign_depth_ = 0;
    h_->OnTag(tag_);
    if (IsForeignRoot(id)) {
      if (!tag_.self_closing) ++foreign_depth_;
      return;
    }
    if (foreign_depth_ > 0) return;  // no raw-text elements in foreign content
    mode_ = ModeForStartTag(id);
    if (mode_ != Mode::kData) raw_name_ = tag_.name;
  }

  std::string_view in_;
  TokenHandler* h_;
  size_t pos_ = 0;
  Mode mode_ = Mode::kData;
  std::string raw_name_;  // element whose end tag closes RAWTEXT/RCDATA/script data
  int foreign_depth_ = 0;
  Tag tag_;
  Attribute scratch_;  // receives values of duplicate attributes
};

}  // namespace

const std::string* Tag::Find(std::string_view name) const {
  for (size_t i = 0; i < attribute_count; ++i) {
    if (attributes[i].name == name) return &attributes[i].value;
  }
  return nullptr;
}

void Tokenize(std::string_view input, TokenHandler* handler) { Tokenizer(input, handler).Run(); }

}  // namespace harvest::extract::internal
