// Strict-Transport-Security (RFC 6797 §6.1), parsed as a UA must: an invalid header is
// ignored as a whole. The grammar (with RFC 7230's token, quoted-string and OWS):
//   value     = [ directive ] *( ";" [ directive ] )
//   directive = OWS name [ OWS "=" OWS ( token / quoted-string ) ] OWS
#include <algorithm>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "fetch/fetch.h"

namespace harvest::fetch {
namespace {

// RFC 7230 §3.2.6 tchar.
bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  static constexpr std::string_view kOthers = "!#$%&'*+-.^_`|~";
  return kOthers.find(c) != std::string_view::npos;
}

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  bool done() const { return pos_ >= s_.size(); }
  char peek() const { return s_[pos_]; }
  void SkipOws() {
    while (!done() && IsHttpOws(peek())) ++pos_;
  }
  bool Take(char c) {
    if (done() || peek() != c) return false;
    ++pos_;
    return true;
  }
  std::string_view Token() {
    const size_t start = pos_;
    while (!done() && IsTokenChar(peek())) ++pos_;
    return s_.substr(start, pos_ - start);
  }
  // A quoted-string's content, unescaped; false when it is not closed or holds a control
  // character.
  bool QuotedString(std::string* out) {
    if (!Take('"')) return false;
    while (!done()) {
      const char c = s_[pos_++];
      if (c == '"') return true;
      if (c == '\\') {
        if (done()) return false;
        out->push_back(s_[pos_++]);
        continue;
      }
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) return false;
      out->push_back(c);
    }
    return false;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

std::optional<HstsPolicy> ParseStrictTransportSecurity(std::string_view value) {
  Reader in(value);
  std::vector<std::string> seen;  // directive names, lower case
  std::optional<std::chrono::seconds> max_age;
  bool include_subdomains = false;
  for (;;) {
    in.SkipOws();
    if (in.done()) break;
    if (in.Take(';')) continue;  // an empty directive
    const std::string name = ToLowerAscii(in.Token());
    if (name.empty()) return std::nullopt;  // not a token
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) return std::nullopt;
    seen.push_back(name);
    in.SkipOws();
    std::optional<std::string> directive_value;
    if (in.Take('=')) {
      in.SkipOws();
      std::string v;
      if (!in.done() && in.peek() == '"') {
        if (!in.QuotedString(&v)) return std::nullopt;
      } else {
        v = std::string(in.Token());
        if (v.empty()) return std::nullopt;
      }
      directive_value = std::move(v);
      in.SkipOws();
    }
    if (!in.done() && !in.Take(';')) return std::nullopt;  // junk after the directive
    if (name == "max-age") {
      if (!directive_value || directive_value->empty() ||
          directive_value->find_first_not_of("0123456789") != std::string::npos) {
        return std::nullopt;
      }
      int64_t secs = 0;
      for (char c : *directive_value) {
        secs = std::min<int64_t>(secs * 10 + (c - '0'), kMaxHstsAge.count());
      }
      max_age = std::chrono::seconds(secs);
    } else if (name == "includesubdomains") {
      if (directive_value) return std::nullopt;  // a valueless directive
      include_subdomains = true;
    }
    // Unknown directives are ignored (§6.1 item 2), their syntax checked above.
  }
  if (!max_age) return std::nullopt;
  return HstsPolicy{.max_age = *max_age, .include_subdomains = include_subdomains};
}

std::optional<HstsPolicy> FetchResult::StrictTransportSecurity() const {
  for (const auto& [name, value] : headers) {
    if (EqualsIgnoreAsciiCase(name, "Strict-Transport-Security")) {
      return ParseStrictTransportSecurity(value);  // only the first counts (§8.1)
    }
  }
  return std::nullopt;
}

}  // namespace harvest::fetch
