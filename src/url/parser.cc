// The WHATWG basic URL parser (no state override), one state per spec state, over bytes.
// Section references are to https://url.spec.whatwg.org/#concept-basic-url-parser.
#include <string>

#include "url/internal.h"

namespace harvest::url {
namespace {

enum class State {
  kSchemeStart,
  kScheme,
  kNoScheme,
  kSpecialRelativeOrAuthority,
  kPathOrAuthority,
  kRelative,
  kRelativeSlash,
  kSpecialAuthoritySlashes,
  kSpecialAuthorityIgnoreSlashes,
  kAuthority,
  kHost,
  kPort,
  kFile,
  kFileSlash,
  kFileHost,
  kPathStart,
  kPath,
  kOpaquePath,
  kQuery,
  kFragment,
};

bool IsWindowsDriveLetter(std::string_view s) {
  return s.size() == 2 && IsAsciiAlpha(s[0]) && (s[1] == ':' || s[1] == '|');
}

bool StartsWithWindowsDriveLetter(std::string_view s) {
  if (s.size() < 2 || !IsWindowsDriveLetter(s.substr(0, 2))) return false;
  if (s.size() == 2) return true;
  char c = s[2];
  return c == '/' || c == '\\' || c == '?' || c == '#';
}

bool IsSingleDot(std::string_view s) {
  return s == "." || (s.size() == 3 && s[0] == '%' && s[1] == '2' && (s[2] | 0x20) == 'e');
}

bool IsDoubleDot(std::string_view s) {
  switch (s.size()) {
    case 2:
      return s == "..";
    case 4:
      return (s[0] == '.' && IsSingleDot(s.substr(1))) ||
             (s[3] == '.' && IsSingleDot(s.substr(0, 3)));
    case 6:
      return IsSingleDot(s.substr(0, 3)) && IsSingleDot(s.substr(3));
    default:
      return false;
  }
}

bool IsNormalizedDriveLetterPath(std::string_view path) {
  return path.size() == 3 && path[0] == '/' && IsAsciiAlpha(path[1]) && path[2] == ':';
}

// WHATWG "shorten a URL's path".
void ShortenPath(Record& url) {
  if (url.scheme == "file" && IsNormalizedDriveLetterPath(url.path)) return;
  size_t slash = url.path.rfind('/');
  if (slash != std::string::npos) url.path.resize(slash);
}

class Parser {
 public:
  Parser(std::string_view in, const Url* base, Record& url) : in_(in), base_(base), url_(url) {}
  bool Run();

 private:
  int At(long i) const { return i >= 0 && i < n() ? static_cast<unsigned char>(in_[i]) : -1; }
  long n() const { return static_cast<long>(in_.size()); }
  bool IsEndOfAuthority(int c) const {
    return c == -1 || c == '/' || c == '?' || c == '#' || (special_ && c == '\\');
  }
  void StartQuery() {
    url_.query.clear();
    url_.has_query = true;
    state_ = State::kQuery;
  }
  void StartFragment() {
    url_.fragment.clear();
    url_.has_fragment = true;
    state_ = State::kFragment;
  }
  void SetScheme(std::string_view scheme) {
    url_.scheme.assign(scheme);
    special_ = IsSpecialScheme(url_.scheme);
  }
  void CopyBaseAuthority() {
    url_.username.assign(base_->username());
    url_.password.assign(base_->password());
    url_.host.assign(base_->host());
    url_.has_host = base_->has_host();
    url_.port = base_->port();
  }
  void CopyBasePathAndQuery() {
    url_.path.assign(base_->path());
    url_.query.assign(base_->query());
    url_.has_query = base_->has_query();
  }
  void Authority(long& p, int c);
  bool Host(long& p, int c);
  bool FileHost(long& p, int c);
  void Path(long& p, int c);
  bool Step(long& p, int c);

  std::string_view in_;
  const Url* base_;
  Record& url_;
  State state_ = State::kSchemeStart;
  bool special_ = false;
  bool at_sign_seen_ = false;
  bool password_token_seen_ = false;
  bool inside_brackets_ = false;
  bool in_segment_ = false;
  long mark_ = -1;  // start of the authority / host / port text being scanned
  size_t seg_begin_ = 0;
  int port_value_ = 0;
  int port_digits_ = 0;
};

void Parser::Authority(long& p, int c) {
  if (mark_ < 0) mark_ = p;
  if (c == '@') {
    if (at_sign_seen_) (password_token_seen_ ? url_.password : url_.username).append("%40");
    at_sign_seen_ = true;
    for (long i = mark_; i < p; ++i) {
      unsigned char ch = in_[i];
      if (ch == ':' && !password_token_seen_) {
        password_token_seen_ = true;
        continue;
      }
      AppendEncoded(password_token_seen_ ? url_.password : url_.username, ch, kUserinfoSet);
    }
    mark_ = p + 1;
  } else if (IsEndOfAuthority(c)) {
    if (at_sign_seen_ && p == mark_) {
      state_ = State::kNoScheme;  // signals failure to Step
      mark_ = -2;
      return;
    }
    p = mark_ - 1;
    mark_ = -1;
    state_ = State::kHost;
  } else {
    // Skip ahead to the next byte that matters in this state.
    while (p + 1 < n()) {
      char next = in_[p + 1];
      if (next == '@' || next == '/' || next == '?' || next == '#' || next == '\\') break;
      ++p;
    }
  }
}

bool Parser::Host(long& p, int c) {
  if (mark_ < 0) mark_ = p;
  if (c == ':' && !inside_brackets_) {
    if (p == mark_) return false;
    if (!ParseHost(in_.substr(mark_, p - mark_), special_, url_.host)) return false;
    url_.has_host = true;
    mark_ = -1;
    state_ = State::kPort;
  } else if (IsEndOfAuthority(c)) {
    if (special_ && p == mark_) return false;
    if (!ParseHost(in_.substr(mark_, p - mark_), special_, url_.host)) return false;
    url_.has_host = true;
    mark_ = -1;
    state_ = State::kPathStart;
    --p;
  } else if (c == '[') {
    inside_brackets_ = true;
  } else if (c == ']') {
    inside_brackets_ = false;
  } else {
    while (p + 1 < n()) {
      char next = in_[p + 1];
      if (next == ':' || next == '[' || next == ']' || next == '/' || next == '?' || next == '#' ||
          next == '\\') {
        break;
      }
      ++p;
    }
  }
  return true;
}

bool Parser::FileHost(long& p, int c) {
  if (mark_ < 0) mark_ = p;
  if (c == -1 || c == '/' || c == '\\' || c == '?' || c == '#') {
    std::string_view text = in_.substr(mark_, p - mark_);
    mark_ = -1;
    --p;
    if (IsWindowsDriveLetter(text)) {
      // The drive-letter quirk: the text becomes the first path segment.
      state_ = State::kPath;
      url_.path.push_back('/');
      seg_begin_ = url_.path.size();
      url_.path.append(text);
      in_segment_ = true;
    } else if (text.empty()) {
      url_.host.clear();
      url_.has_host = true;
      state_ = State::kPathStart;
    } else {
      if (!ParseHost(text, true, url_.host)) return false;
      if (url_.host == "localhost") url_.host.clear();
      url_.has_host = true;
      state_ = State::kPathStart;
    }
  }
  return true;
}

void Parser::Path(long& p, int c) {
  if (!in_segment_) {
    url_.path.push_back('/');
    seg_begin_ = url_.path.size();
    in_segment_ = true;
  }
  bool sep = c == '/' || (special_ && c == '\\');
  if (c == -1 || sep || c == '?' || c == '#') {
    std::string_view seg = std::string_view(url_.path).substr(seg_begin_);
    if (IsDoubleDot(seg)) {
      url_.path.resize(seg_begin_ - 1);
      ShortenPath(url_);
      if (!sep) url_.path.push_back('/');
    } else if (IsSingleDot(seg)) {
      url_.path.resize(seg_begin_ - 1);
      if (!sep) url_.path.push_back('/');
    } else if (seg_begin_ == 1 && url_.scheme == "file" && IsWindowsDriveLetter(seg)) {
      url_.path[seg_begin_ + 1] = ':';
    }
    in_segment_ = false;
    if (c == '?') StartQuery();
    if (c == '#') StartFragment();
    return;
  }
  // Fast inner loop over ordinary segment bytes.
  long end = p;
  while (end < n()) {
    unsigned char ch = in_[end];
    if (ch == '/' || ch == '?' || ch == '#' || (special_ && ch == '\\')) break;
    AppendEncoded(url_.path, ch, kPathSet);
    ++end;
  }
  p = end - 1;
}

bool Parser::Step(long& p, int c) {
  switch (state_) {
    case State::kSchemeStart:
      if (c != -1 && IsAsciiAlpha(c)) {
        state_ = State::kScheme;
      } else {
        state_ = State::kNoScheme;
        --p;
      }
      break;
    case State::kScheme:
      if (c != -1 && (IsAsciiAlpha(c) || IsAsciiDigit(c) || c == '+' || c == '-' || c == '.')) {
        break;
      }
      if (c == ':') {
        url_.scheme.clear();
        for (long i = 0; i < p; ++i) url_.scheme.push_back(AsciiLower(in_[i]));
        special_ = IsSpecialScheme(url_.scheme);
        if (url_.scheme == "file") {
          state_ = State::kFile;
        } else if (special_ && base_ != nullptr && base_->scheme() == url_.scheme) {
          state_ = State::kSpecialRelativeOrAuthority;
        } else if (special_) {
          state_ = State::kSpecialAuthoritySlashes;
        } else if (At(p + 1) == '/') {
          state_ = State::kPathOrAuthority;
          ++p;
        } else {
          url_.opaque_path = true;
          state_ = State::kOpaquePath;
        }
      } else {
        state_ = State::kNoScheme;
        p = -1;
      }
      break;
    case State::kNoScheme:
      if (base_ == nullptr || (base_->has_opaque_path() && c != '#')) return false;
      if (base_->has_opaque_path()) {
        SetScheme(base_->scheme());
        CopyBasePathAndQuery();
        url_.opaque_path = true;
        StartFragment();
      } else {
        state_ = base_->scheme() == "file" ? State::kFile : State::kRelative;
        --p;
      }
      break;
    case State::kSpecialRelativeOrAuthority:
      if (c == '/' && At(p + 1) == '/') {
        state_ = State::kSpecialAuthorityIgnoreSlashes;
        ++p;
      } else {
        state_ = State::kRelative;
        --p;
      }
      break;
    case State::kPathOrAuthority:
      if (c == '/') {
        state_ = State::kAuthority;
      } else {
        state_ = State::kPath;
        --p;
      }
      break;
    case State::kRelative:
      SetScheme(base_->scheme());
      if (c == '/' || (special_ && c == '\\')) {
        state_ = State::kRelativeSlash;
      } else {
        CopyBaseAuthority();
        CopyBasePathAndQuery();
        if (c == '?') {
          StartQuery();
        } else if (c == '#') {
          StartFragment();
        } else if (c != -1) {
          url_.query.clear();
          url_.has_query = false;
          ShortenPath(url_);
          state_ = State::kPath;
          --p;
        }
      }
      break;
    case State::kRelativeSlash:
      if (special_ && (c == '/' || c == '\\')) {
        state_ = State::kSpecialAuthorityIgnoreSlashes;
      } else if (c == '/') {
        state_ = State::kAuthority;
      } else {
        CopyBaseAuthority();
        state_ = State::kPath;
        --p;
      }
      break;
    case State::kSpecialAuthoritySlashes:
      state_ = State::kSpecialAuthorityIgnoreSlashes;
      if (c == '/' && At(p + 1) == '/') {
        ++p;
      } else {
        --p;
      }
      break;
    case State::kSpecialAuthorityIgnoreSlashes:
      if (c != '/' && c != '\\') {
        state_ = State::kAuthority;
        --p;
      }
      break;
    case State::kAuthority:
      Authority(p, c);
      if (mark_ == -2) return false;
      break;
    case State::kHost:
      return Host(p, c);
    case State::kPort:
      if (c != -1 && IsAsciiDigit(c)) {
        port_value_ = port_value_ * 10 + (c - '0');
        if (port_value_ > 100000) port_value_ = 100000;
        ++port_digits_;
      } else if (IsEndOfAuthority(c)) {
        if (port_digits_ > 0) {
          if (port_value_ > 65535) return false;
          url_.port = port_value_ == DefaultPort(url_.scheme) ? -1 : port_value_;
        }
        state_ = State::kPathStart;
        --p;
      } else {
        return false;
      }
      break;
    case State::kFile:
      SetScheme("file");
      url_.host.clear();
      url_.has_host = true;
      if (c == '/' || c == '\\') {
        state_ = State::kFileSlash;
      } else if (base_ != nullptr && base_->scheme() == "file") {
        url_.host.assign(base_->host());
        url_.has_host = base_->has_host();
        CopyBasePathAndQuery();
        if (c == '?') {
          StartQuery();
        } else if (c == '#') {
          StartFragment();
        } else if (c != -1) {
          url_.query.clear();
          url_.has_query = false;
          if (!StartsWithWindowsDriveLetter(in_.substr(p))) {
            ShortenPath(url_);
          } else {
            url_.path.clear();
          }
          state_ = State::kPath;
          --p;
        }
      } else {
        state_ = State::kPath;
        --p;
      }
      break;
    case State::kFileSlash:
      if (c == '/' || c == '\\') {
        state_ = State::kFileHost;
      } else {
        if (base_ != nullptr && base_->scheme() == "file") {
          url_.host.assign(base_->host());
          url_.has_host = base_->has_host();
          std::string_view bp = base_->path();
          if (!StartsWithWindowsDriveLetter(in_.substr(p)) && bp.size() >= 3 &&
              IsNormalizedDriveLetterPath(bp.substr(0, 3)) && (bp.size() == 3 || bp[3] == '/')) {
            url_.path.append(bp.substr(0, 3));
          }
        }
        state_ = State::kPath;
        --p;
      }
      break;
    case State::kFileHost:
      return FileHost(p, c);
    case State::kPathStart:
      if (special_) {
        state_ = State::kPath;
        if (c != '/' && c != '\\') --p;
      } else if (c == '?') {
        StartQuery();
      } else if (c == '#') {
        StartFragment();
      } else if (c != -1) {
        state_ = State::kPath;
        if (c != '/') --p;
      }
      break;
    case State::kPath:
      Path(p, c);
      break;
    case State::kOpaquePath:
      if (c == '?') {
        StartQuery();
      } else if (c == '#') {
        StartFragment();
      } else if (c == ' ') {
        // A space right before '?' or '#' is encoded so that it survives serialization.
        int next = At(p + 1);
        url_.path.append(next == '?' || next == '#' ? "%20" : " ");
      } else if (c != -1) {
        AppendEncoded(url_.path, c, kC0ControlSet);
      }
      break;
    case State::kQuery:
      if (c == '#') {
        StartFragment();
      } else if (c != -1) {
        EncodeSet set = special_ ? kSpecialQuerySet : kQuerySet;
        long end = p;
        while (end < n() && in_[end] != '#') {
          AppendEncoded(url_.query, in_[end], set);
          ++end;
        }
        p = end - 1;
      }
      break;
    case State::kFragment:
      if (c != -1) {
        for (long i = p; i < n(); ++i) AppendEncoded(url_.fragment, in_[i], kFragmentSet);
        p = n() - 1;
      }
      break;
  }
  return true;
}

bool Parser::Run() {
  for (long p = 0;;) {
    if (!Step(p, At(p))) return false;
    if (p >= n()) break;
    ++p;
  }
  return true;
}

thread_local Record tls_record;
thread_local std::string tls_input;

}  // namespace

bool ParseRecord(std::string_view input, const Url* base, Record& record) {
  // Strip leading and trailing C0 control or space; remove ASCII tab or newline.
  size_t b = 0, e = input.size();
  while (b < e && static_cast<unsigned char>(input[b]) <= 0x20) ++b;
  while (e > b && static_cast<unsigned char>(input[e - 1]) <= 0x20) --e;
  input = input.substr(b, e - b);
  if (input.size() > kMaxInputBytes) return false;
  bool has_tab_or_newline = false;
  for (char c : input) has_tab_or_newline |= (c == '\t' || c == '\n' || c == '\r');
  if (has_tab_or_newline) {
    tls_input.clear();
    for (char c : input) {
      if (c != '\t' && c != '\n' && c != '\r') tls_input.push_back(c);
    }
    input = tls_input;
  }
  record.Clear();
  Parser parser(input, base, record);
  return parser.Run();
}

std::optional<Url> Parse(std::string_view input, const Url* base) {
  Record& record = tls_record;
  if (!ParseRecord(input, base, record)) return std::nullopt;
  return Builder::Serialize(record);
}

}  // namespace harvest::url
