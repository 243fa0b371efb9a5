// Crawler canonicalization (docs/canonicalization.md): rules on top of a parsed WHATWG URL.
#include <algorithm>
#include <string>
#include <vector>

#include "url/internal.h"

namespace harvest::url {
namespace {

bool IsUnreserved(unsigned char c) {
  return IsAsciiAlpha(c) || IsAsciiDigit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

// True when appending the decoded byte `v` to `out` would create a new valid escape with a
// literal '%' before it ("%%341" -> "%41"): decoding it would not be idempotent.
bool FormsEscape(std::string_view out, unsigned char v, std::string_view rest) {
  if (!IsAsciiHex(v)) return false;
  size_t n = out.size();
  if (n >= 1 && out[n - 1] == '%' && !rest.empty() && IsAsciiHex(rest[0])) return true;
  return n >= 2 && out[n - 2] == '%' && IsAsciiHex(out[n - 1]);
}

// Appends `in` to `out` with escapes of unreserved characters decoded and the hex digits of
// the others uppercased (RFC 3986 §6.2.2.2). With `lower`, literal and decoded ASCII letters
// are lowercased (hex digits of escapes stay uppercase).
void NormalizePercent(std::string_view in, bool decode, bool lower, std::string& out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%' && decode && i + 2 < in.size() && IsAsciiHex(in[i + 1]) && IsAsciiHex(in[i + 2])) {
      auto v = static_cast<unsigned char>(HexValue(in[i + 1]) * 16 + HexValue(in[i + 2]));
      if (IsUnreserved(v) && !FormsEscape(out, v, in.substr(i + 3))) {
        out.push_back(lower ? AsciiLower(static_cast<char>(v)) : static_cast<char>(v));
      } else {
        char buf[3] = {'%', kHex[v >> 4], kHex[v & 15]};
        out.append(buf, 3);
      }
      i += 2;
    } else {
      out.push_back(lower ? AsciiLower(c) : c);
    }
  }
}

// True when `name` matches one of `patterns` (ASCII case-insensitive; a trailing '*' in a
// pattern matches any suffix).
bool MatchesAny(std::string_view name, const std::vector<std::string>& patterns) {
  if (name.empty()) return false;
  const char first = AsciiLower(name[0]);
  for (const std::string& pat : patterns) {
    if (pat.empty() || AsciiLower(pat[0]) != first) continue;  // cheap reject
    if (pat.back() == '*') {
      size_t n = pat.size() - 1;
      if (name.size() >= n &&
          EqualsIgnoreAsciiCase(name.substr(0, n), std::string_view(pat).substr(0, n))) {
        return true;
      }
    } else if (EqualsIgnoreAsciiCase(name, pat)) {
      return true;
    }
  }
  return false;
}

std::string_view ParamName(std::string_view param) { return param.substr(0, param.find('=')); }

// True for ".", "..", and their %2e spellings (WHATWG single-/double-dot segments).
bool IsDotSegment(std::string_view seg) {
  std::string dots;
  for (size_t i = 0; i < seg.size(); ++i) {
    if (seg[i] == '.') {
      dots.push_back('.');
    } else if (seg[i] == '%' && i + 2 < seg.size() && seg[i + 1] == '2' &&
               (seg[i + 2] | 0x20) == 'e') {
      dots.push_back('.');
      i += 2;
    } else {
      return false;
    }
  }
  return dots == "." || dots == "..";
}

// Removes ";name=value" path parameters whose name matches `patterns`, segment by segment.
void DropPathParams(std::string& path, const std::vector<std::string>& patterns) {
  if (path.find(';') == std::string::npos) return;
  std::string out;
  out.reserve(path.size());
  size_t i = 0;
  while (i < path.size()) {
    size_t semi = path.find(';', i);
    if (semi == std::string::npos) {
      out.append(path, i, std::string::npos);
      break;
    }
    out.append(path, i, semi - i);
    size_t end = path.find_first_of(";/", semi + 1);
    if (end == std::string::npos) end = path.size();
    std::string_view param = std::string_view(path).substr(semi + 1, end - semi - 1);
    // Keep the parameter when dropping it would leave a "." or ".." segment (a new dot
    // segment would change the path on the next parse).
    std::string_view seg_base = std::string_view(out).substr(out.rfind('/') + 1);
    bool drop = param.find('=') != std::string_view::npos &&
                MatchesAny(ParamName(param), patterns) && !IsDotSegment(seg_base);
    if (!drop) out.append(path, semi, end - semi);
    i = end;
  }
  path.swap(out);
}

void StripIndex(std::string& path, const std::vector<std::string>& names) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return;
  std::string_view last = std::string_view(path).substr(slash + 1);
  for (const std::string& name : names) {
    if (EqualsIgnoreAsciiCase(last, name)) {
      path.resize(slash + 1);
      return;
    }
  }
}

// Stable insertion sort by parameter name: queries are short, and this never allocates.
void SortParams(std::vector<std::string_view>& params) {
  for (size_t i = 1; i < params.size(); ++i) {
    std::string_view v = params[i];
    std::string_view key = ParamName(v);
    size_t j = i;
    while (j > 0 && key < ParamName(params[j - 1])) {
      params[j] = params[j - 1];
      --j;
    }
    params[j] = v;
  }
}

void CanonQuery(Record& r, const CanonOptions& o, std::string& scratch) {
  scratch.clear();
  if (o.normalize_percent_encoding && r.query.find('%') != std::string::npos) {
    NormalizePercent(r.query, true, false, scratch);
  } else {
    scratch = r.query;
  }
  thread_local std::vector<std::string_view> params;
  params.clear();
  std::string_view q = scratch;
  while (true) {
    size_t amp = q.find('&');
    std::string_view p = q.substr(0, amp);
    bool keep = !(p.empty() && o.drop_empty_query_params);
    if (keep && !p.empty()) {
      std::string_view name = ParamName(p);
      keep = !MatchesAny(name, o.tracking_params) && !MatchesAny(name, o.session_params);
    }
    if (keep) params.push_back(p);
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  if (o.sort_query) SortParams(params);
  r.query.clear();
  for (size_t i = 0; i < params.size(); ++i) {
    if (i > 0) r.query.push_back('&');
    r.query.append(params[i]);
  }
  if (r.query.empty() && o.drop_empty_query) r.has_query = false;
}

void Normalize(std::string& field, bool lower, std::string& scratch) {
  if (!lower && field.find('%') == std::string::npos) return;  // nothing to change
  scratch.clear();
  NormalizePercent(field, true, lower, scratch);
  field.swap(scratch);
}

thread_local Record tls_canon;
thread_local std::string tls_scratch;

}  // namespace

std::vector<std::string> CanonOptions::DefaultTrackingParams() {
  return {"utm_*",      "gclid",   "gclsrc",     "dclid",  "gbraid",  "wbraid",    "fbclid",
          "msclkid",    "yclid",   "twclid",     "ttclid", "igshid",  "mc_cid",    "mc_eid",
          "_ga",        "_gl",     "_hsenc",     "_hsmi",  "mkt_tok", "li_fat_id", "oly_anon_id",
          "oly_enc_id", "vero_id", "rb_clickid", "s_cid"};
}

std::vector<std::string> CanonOptions::DefaultSessionParams() {
  return {"jsessionid", "phpsessid",     "sid",  "sessionid",
          "session_id", "aspsessionid*", "cfid", "cftoken"};
}

namespace {

// Canonicalizes a parsed record in place (fragment and userinfo already dropped as `o` asks).
void CanonicalizeRecord(Record& r, bool special, const CanonOptions& o) {
  std::string& scratch = tls_scratch;
  if (o.normalize_percent_encoding) {
    Normalize(r.username, false, scratch);
    Normalize(r.password, false, scratch);
    if (!special) Normalize(r.host, o.lowercase_host, scratch);
    Normalize(r.path, false, scratch);
    Normalize(r.fragment, false, scratch);
  } else if (!special && o.lowercase_host) {
    for (char& c : r.host) c = AsciiLower(c);
  }
  if (o.drop_host_trailing_dot && !IsIpHost(r.host)) {
    size_t keep = r.host.size();
    while (keep > 1 && r.host[keep - 1] == '.') --keep;
    // "0x7f.0.." is a domain, "0x7f.0" would parse as IPv4: keep such dots.
    if (!special || !EndsInNumber(std::string_view(r.host).substr(0, keep))) r.host.resize(keep);
  }
  if (!r.opaque_path) {
    if (o.drop_session_path_params) DropPathParams(r.path, o.session_params);
    if (o.strip_index) StripIndex(r.path, o.index_names);
    if (o.strip_trailing_slash) {
      while (r.path.size() > 1 && r.path.back() == '/') r.path.pop_back();
    }
  }
  if (r.has_query) CanonQuery(r, o, scratch);
}

}  // namespace

Url Canonicalize(const Url& url, const CanonOptions& o) {
  Record& r = tls_canon;
  r.Clear();
  r.scheme.assign(url.scheme());
  bool special = url.is_special();
  r.has_host = url.has_host();
  r.host.assign(url.host());
  r.port = url.port();
  r.opaque_path = url.has_opaque_path();
  r.path.assign(url.path());
  r.has_query = url.has_query();
  r.query.assign(url.query());
  r.has_fragment = url.has_fragment() && !o.drop_fragment;
  if (r.has_fragment) r.fragment.assign(url.fragment());
  if (!o.drop_userinfo) {
    r.username.assign(url.username());
    r.password.assign(url.password());
  }
  CanonicalizeRecord(r, special, o);
  return Builder::Serialize(r);
}

const CanonOptions& DefaultCanonOptions() {
  static const CanonOptions* const kDefault = new CanonOptions();
  return *kDefault;
}

// Parse + Canonicalize on one record, serialized once (what Canonicalize(*Parse(...)) gives:
// url_test's ParseCanonicalEqualsParseThenCanonicalize).
std::optional<Url> ParseCanonical(std::string_view input, const Url* base,
                                  const CanonOptions& options) {
  Record& r = tls_canon;
  if (!ParseRecord(input, base, r)) return std::nullopt;
  if (!r.has_fragment || options.drop_fragment) {
    r.has_fragment = false;
    r.fragment.clear();
  }
  if (options.drop_userinfo) {
    r.username.clear();
    r.password.clear();
  }
  CanonicalizeRecord(r, IsSpecialScheme(r.scheme), options);
  return Builder::Serialize(r);
}

}  // namespace harvest::url
