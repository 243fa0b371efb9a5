#include "audit/log_line.h"

#include <charconv>
#include <cmath>
#include <initializer_list>
#include <system_error>

namespace harvest::audit {
namespace {

// A cursor over one line with the JSON grammar pieces the log needs.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}

  void SkipWs() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n'))
      ++i_;
  }
  bool AtEnd() const { return i_ >= s_.size(); }
  char Peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool Consume(char c) {
    if (Peek() != c || AtEnd()) return false;
    ++i_;
    return true;
  }
  size_t pos() const { return i_; }

  // Parses a JSON string at the cursor into *out (unescaped, UTF-8).
  bool String(std::string* out) {
    out->clear();
    if (!Consume('"')) return false;
    while (i_ < s_.size()) {
      // Copy the longest run without escapes or the closing quote in one go.
      size_t run = i_;
      while (run < s_.size() && s_[run] != '"' && s_[run] != '\\' &&
             static_cast<unsigned char>(s_[run]) >= 0x20)
        ++run;
      out->append(s_.data() + i_, run - i_);
      i_ = run;
      if (i_ >= s_.size()) return false;
      char c = s_[i_++];
      if (c == '"') return true;
      if (c != '\\') return false;  // raw control character
      if (!Escape(out)) return false;
    }
    return false;
  }

  // Consumes a JSON number and returns its text (empty when there is none).
  std::string_view Number() {
    size_t start = i_;
    Consume('-');
    if (Peek() == '0') {
      ++i_;
    } else if (!Digits()) {
      i_ = start;
      return {};
    }
    if (Consume('.') && !Digits()) return Fail(start);
    if (Peek() == 'e' || Peek() == 'E') {
      ++i_;
      if (!Consume('+')) Consume('-');
      if (!Digits()) return Fail(start);
    }
    return s_.substr(start, i_ - start);
  }

  bool Literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  // Skips any JSON value.
  bool SkipValue(int depth) {
    if (depth > kMaxSkipDepth) return false;
    SkipWs();
    char c = Peek();
    if (c == '"') return String(&scratch_);
    if (c == '{' || c == '[') return SkipContainer(depth);
    if (c == 't') return Literal("true");
    if (c == 'f') return Literal("false");
    if (c == 'n') return Literal("null");
    return !Number().empty();
  }

 private:
  bool Digits() {
    size_t start = i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    return i_ > start;
  }
  std::string_view Fail(size_t start) {
    i_ = start;
    return {};
  }

  bool Hex4(uint32_t* v) {
    if (i_ + 4 > s_.size()) return false;
    *v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s_[i_++];
      *v <<= 4;
      if (c >= '0' && c <= '9')
        *v |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f')
        *v |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        *v |= uint32_t(c - 'A' + 10);
      else
        return false;
    }
    return true;
  }

  bool Escape(std::string* out) {
    if (i_ >= s_.size()) return false;
    char e = s_[i_++];
    switch (e) {
      case '"':
        out->push_back('"');
        return true;
      case '\\':
        out->push_back('\\');
        return true;
      case '/':
        out->push_back('/');
        return true;
      case 'b':
        out->push_back('\b');
        return true;
      case 'f':
        out->push_back('\f');
        return true;
      case 'n':
        out->push_back('\n');
        return true;
      case 'r':
        out->push_back('\r');
        return true;
      case 't':
        out->push_back('\t');
        return true;
      case 'u':
        return Unicode(out);
      default:
        return false;
    }
  }

  bool Unicode(std::string* out) {
    uint32_t cp;
    if (!Hex4(&cp)) return false;
    if (cp >= 0xD800 && cp <= 0xDBFF) {  // high surrogate: a low one must follow
      uint32_t lo;
      if (!Literal("\\u") || !Hex4(&lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
      return false;  // lone low surrogate
    }
    AppendUtf8(cp, out);
    return true;
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(char(cp));
    } else if (cp < 0x800) {
      out->push_back(char(0xC0 | (cp >> 6)));
      out->push_back(char(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(char(0xE0 | (cp >> 12)));
      out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(char(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(char(0xF0 | (cp >> 18)));
      out->push_back(char(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(char(0x80 | (cp & 0x3F)));
    }
  }

  bool SkipContainer(int depth) {
    char close = Peek() == '{' ? '}' : ']';
    bool object = close == '}';
    ++i_;
    SkipWs();
    if (Consume(close)) return true;
    while (true) {
      SkipWs();
      if (object) {
        if (!String(&scratch_)) return false;
        SkipWs();
        if (!Consume(':')) return false;
      }
      if (!SkipValue(depth + 1)) return false;
      SkipWs();
      if (Consume(close)) return true;
      if (!Consume(',')) return false;
    }
  }

  std::string_view s_;
  size_t i_ = 0;
  std::string scratch_;
};

bool ToInt64(std::string_view token, int64_t* v) {
  if (token.empty()) return false;
  auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), *v);
  return ec == std::errc() && ptr == token.data() + token.size();
}

bool ToDouble(std::string_view token, double* v) {
  if (token.empty()) return false;
  auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), *v);
  return ec == std::errc() && ptr == token.data() + token.size() && std::isfinite(*v);
}

// Bits of the required fields, to report the first missing one.
enum : unsigned { kHost = 1, kPath = 2, kStart = 4, kEnd = 8, kStatus = 16, kAll = 31 };

struct FieldParser {
  Cursor& cur;
  LogLine* out;
  std::string* error;
  unsigned seen = 0;

  bool Fail(std::string msg) {
    *error = std::move(msg);
    return false;
  }
  bool StringField(std::string_view key, std::string* dst, unsigned bit) {
    if (!cur.String(dst)) return Fail("\"" + std::string(key) + "\" is not a string");
    seen |= bit;
    return true;
  }
  bool OptStringField(std::string_view key, std::string* dst, bool* present) {
    if (cur.Literal("null")) {
      dst->clear();
      if (present) *present = false;
      return true;
    }
    if (!cur.String(dst)) return Fail("\"" + std::string(key) + "\" is not a string or null");
    if (present) *present = true;
    return true;
  }
  bool IntField(std::string_view key, int64_t* dst, unsigned bit) {
    if (!ToInt64(cur.Number(), dst) || *dst < 0)
      return Fail("\"" + std::string(key) + "\" is not a non-negative integer");
    seen |= bit;
    return true;
  }
  bool BoolField(std::string_view key, bool* dst) {
    if (cur.Literal("true"))
      *dst = true;
    else if (cur.Literal("false") || cur.Literal("null"))
      *dst = false;
    else
      return Fail("\"" + std::string(key) + "\" is not a boolean");
    return true;
  }

  // A string field whose value must be one of a few words; *index = the word's position.
  // Values are echoed in the error cut to kMaxEchoed bytes (a hostile line may be huge).
  bool EnumField(std::string_view key, std::initializer_list<std::string_view> words, int* index) {
    constexpr size_t kMaxEchoed = 32;
    *index = -1;
    if (cur.Literal("null")) return true;
    std::string value;
    if (!cur.String(&value)) return Fail("\"" + std::string(key) + "\" is not a string or null");
    int i = 0;
    for (std::string_view w : words) {
      if (value == w) {
        *index = i;
        return true;
      }
      ++i;
    }
    std::string expected;
    i = 0;
    for (std::string_view w : words)
      expected += (i++ == 0 ? "" : " or ") + ("\"" + std::string(w) + "\"");
    if (value.size() > kMaxEchoed) value = value.substr(0, kMaxEchoed) + "...";
    return Fail("\"" + std::string(key) + "\" is \"" + value + "\", not " + expected);
  }

  bool Field(const std::string& key) {
    if (key == "scheme") {
      int i = 0;
      if (!EnumField(key, {"http", "https"}, &i)) return false;
      out->scheme = i < 0 ? Scheme::kUnspecified : i == 0 ? Scheme::kHttp : Scheme::kHttps;
      return true;
    }
    if (key == "proto") {
      int i = 0;
      if (!EnumField(key, {"1.1", "2"}, &i)) return false;
      out->proto = i < 0 ? Proto::kUnspecified : i == 0 ? Proto::kHttp11 : Proto::kHttp2;
      return true;
    }
    if (key == "upgrade") return BoolField(key, &out->upgrade);
    if (key == "host") return StringField(key, &out->host, kHost);
    if (key == "path") return StringField(key, &out->path, kPath);
    if (key == "page") return OptStringField(key, &out->page, &out->has_page);
    if (key == "kind") return OptStringField(key, &out->kind, nullptr);
    if (key == "ip") return OptStringField(key, &out->ip, nullptr);
    if (key == "start_us") return IntField(key, &out->start_us, kStart);
    if (key == "end_us") return IntField(key, &out->end_us, kEnd);
    if (key == "status") {
      int64_t v = 0;
      if (!IntField(key, &v, kStatus) || v > 999) return Fail("\"status\" is not in 0..999");
      out->status = int(v);
      return true;
    }
    if (key == "disallowed") return BoolField(key, &out->disallowed);
    if (key == "cond") return BoolField(key, &out->cond);
    if (key == "retry_after_s") {
      if (cur.Literal("null")) {
        out->has_retry_after = false;
        return true;
      }
      if (!ToDouble(cur.Number(), &out->retry_after_s) || out->retry_after_s < 0)
        return Fail("\"retry_after_s\" is not a non-negative number");
      out->has_retry_after = true;
      return true;
    }
    if (!cur.SkipValue(0)) return Fail("invalid value for \"" + key + "\"");
    return true;
  }
};

void Reset(LogLine* out) {
  out->host.clear();
  out->path.clear();
  out->page.clear();
  out->kind.clear();
  out->ip.clear();
  out->has_page = false;
  out->start_us = out->end_us = 0;
  out->status = 0;
  out->disallowed = out->cond = out->upgrade = false;
  out->scheme = Scheme::kUnspecified;
  out->proto = Proto::kUnspecified;
  out->has_retry_after = false;
  out->retry_after_s = 0;
}

const char* MissingName(unsigned seen) {
  if (!(seen & kHost)) return "host";
  if (!(seen & kPath)) return "path";
  if (!(seen & kStart)) return "start_us";
  if (!(seen & kEnd)) return "end_us";
  return "status";
}

}  // namespace

bool ParseLogLine(std::string_view text, LogLine* out, std::string* error) {
  Reset(out);
  Cursor cur(text);
  FieldParser fields{cur, out, error};
  cur.SkipWs();
  if (!cur.Consume('{')) return fields.Fail("not a JSON object");
  cur.SkipWs();
  std::string key;
  if (!cur.Consume('}')) {
    while (true) {
      cur.SkipWs();
      if (!cur.String(&key))
        return fields.Fail("expected a field name at byte " + std::to_string(cur.pos() + 1));
      cur.SkipWs();
      if (!cur.Consume(':')) return fields.Fail("expected ':' after \"" + key + "\"");
      cur.SkipWs();
      if (!fields.Field(key)) return false;
      cur.SkipWs();
      if (cur.Consume('}')) break;
      if (!cur.Consume(','))
        return fields.Fail("expected ',' or '}' at byte " + std::to_string(cur.pos() + 1));
    }
  }
  cur.SkipWs();
  if (!cur.AtEnd()) return fields.Fail("trailing characters after the object");
  if (fields.seen != kAll)
    return fields.Fail(std::string("missing \"") + MissingName(fields.seen) + "\"");
  if (out->host.empty()) return fields.Fail("\"host\" is empty");
  if (out->end_us < out->start_us) return fields.Fail("\"end_us\" is before \"start_us\"");
  // The upgrade answer is the plain-HTTP redirect to https: on https it would be a loop.
  if (out->upgrade && out->scheme == Scheme::kHttps)
    return fields.Fail("\"upgrade\" is true on an https request");
  return true;
}

}  // namespace harvest::audit
