// URLs for the crawler: parsing, serialization, canonicalization, fingerprints, SURT keys.
//
// Standard: the WHATWG URL Standard (https://url.spec.whatwg.org/), basic URL parser without
// state override, with a base URL, and the href serializer. Hosts go through UTS #46
// (non-transitional, CheckHyphens=false, UseSTD3ASCIIRules=false) via libidn2; an all-ASCII
// label that does not start with "xn--" takes a fast path (ASCII lowercase) without libidn2.
// Registrable domains come from libpsl (Public Suffix List). Conformance is measured against
// the WPT urltestdata.json (see url_wpt_test.cc and testdata/url_expected_failures.txt).
//
// Departures from the standard (deliberate):
//  - Input is bytes, taken as UTF-8. A byte >= 0x80 that is not part of valid UTF-8 is
//    percent-encoded as it is (the standard would first decode it to U+FFFD); in a host it
//    makes the parse fail.
//  - libidn2 implements IDNA2008 with UTS #46 preprocessing; a few UTS #46 corner cases
//    (listed in the expected-failures file) are rejected or mapped differently.
//  - An all-ASCII "xn--" label is kept as it is (lowercased) without Punycode validation:
//    libidn2 rejects A-labels UTS #46 accepts (e.g. "xn--", "xn--pokxncvks"), and there is no
//    reliable libidn2 call that validates only the Punycode.
//  - Inputs longer than kMaxInputBytes fail (a crawler has no use for them).
//
// Crawler canonicalization (Canonicalize) is a separate, configurable layer on top of the
// standard; every rule is documented in docs/canonicalization.md and on CanonOptions.
//
// Thread-safety: Url is an immutable value type. All free functions are thread-safe (the
// parser keeps scratch buffers in thread_local storage; libpsl's built-in list is read-only).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harvest::url {

// Inputs longer than this fail to parse: browsers cap URLs around 2 MB, and a crawler has no
// use for longer ones; the cap also bounds the work per link.
inline constexpr size_t kMaxInputBytes = 1 << 20;

// A parsed WHATWG URL record, stored as its serialization plus component offsets.
class Url {
 public:
  Url() = default;

  // The serialization (href).
  const std::string& href() const { return href_; }
  // "http" (no colon).
  std::string_view scheme() const { return View(0, scheme_end_); }
  std::string_view username() const { return View(username_begin_, username_end_); }
  std::string_view password() const { return View(password_begin_, password_end_); }
  // Serialized host ("" when none); IPv6 in brackets.
  std::string_view host() const { return View(host_begin_, host_end_); }
  // True when the host is not null (file:///x has an empty, non-null host).
  bool has_host() const { return has_host_; }
  // -1 when absent or the scheme's default.
  int port() const { return port_; }
  // Serialized path ("/a/b"; for an opaque path, e.g. "mailto:x", the opaque string).
  std::string_view path() const { return View(path_begin_, path_end_); }
  bool has_opaque_path() const { return opaque_path_; }
  bool has_query() const { return query_begin_ != 0; }
  // Without '?'.
  std::string_view query() const {
    return has_query() ? View(query_begin_, query_end_) : std::string_view();
  }
  bool has_fragment() const { return fragment_begin_ != 0; }
  // Without '#'.
  std::string_view fragment() const {
    return has_fragment() ? View(fragment_begin_, href_.size()) : std::string_view();
  }
  // Request target: path + ("?" + query if any).
  std::string_view path_and_query() const {
    return View(path_begin_, has_query() ? query_end_ : path_end_);
  }
  // scheme://host[:port] (the href prefix up to the path, without userinfo when there is
  // none; with userinfo present it is rebuilt into origin_). For per-host politeness keys.
  std::string_view origin_key() const;
  // True for ftp, file, http, https, ws, wss.
  bool is_special() const { return special_; }

  friend bool operator==(const Url& a, const Url& b) { return a.href_ == b.href_; }

 private:
  friend class Builder;
  std::string_view View(uint32_t b, uint32_t e) const {
    return std::string_view(href_).substr(b, e - b);
  }

  std::string href_;
  std::string origin_;  // only when userinfo is present (otherwise a view into href_)
  uint32_t scheme_end_ = 0;
  uint32_t username_begin_ = 0, username_end_ = 0;
  uint32_t password_begin_ = 0, password_end_ = 0;
  uint32_t host_begin_ = 0, host_end_ = 0;
  uint32_t port_end_ = 0;  // end of "scheme://host[:port]"
  uint32_t path_begin_ = 0, path_end_ = 0;
  uint32_t query_begin_ = 0, query_end_ = 0;  // query_begin_ == 0: no query
  uint32_t fragment_begin_ = 0;               // 0: no fragment
  int port_ = -1;
  bool has_host_ = false;
  bool opaque_path_ = false;
  bool special_ = false;
};

// Parses `input` against `base` (nullptr: no base). std::nullopt on failure; never throws,
// never crashes on any byte string. REQUIRES: `base`, if given, came from Parse (a
// default-constructed Url is not a valid base). Typical cost: ~0.2-0.4 us per link.
// The returned href is ASCII without control characters (an opaque path may keep spaces).
std::optional<Url> Parse(std::string_view input, const Url* base = nullptr);

// Crawler canonicalization rules. Defaults are the crawler's policy; each field says what it
// does. Rules that WHATWG parsing already guarantees (lowercase scheme, default port dropped,
// dot segments removed, IDN to ASCII) always hold and have no switch.
struct CanonOptions {
  // Lowercase the host also for non-special schemes (special hosts are always lowercase).
  // Default: true.
  bool lowercase_host = true;
  // Drop the "#fragment". Default: true (never sent to servers).
  bool drop_fragment = true;
  // Decode %XX of unreserved characters (ALPHA DIGIT - . _ ~) and uppercase the hex digits
  // of the remaining escapes, in userinfo, opaque host, path, query and fragment.
  // Default: true (RFC 3986 §6.2.2.2).
  bool normalize_percent_encoding = true;
  // Sort query parameters by name (bytewise), stably (equal names keep their order).
  // Default: true.
  bool sort_query = true;
  // Drop a query that is empty ("?" alone, or nothing left after the removals below).
  // Default: true.
  bool drop_empty_query = true;
  // Drop empty "&&" pieces of the query. Default: true.
  bool drop_empty_query_params = true;
  // Query parameters dropped as tracking parameters (name compared ASCII-case-insensitively;
  // a trailing '*' matches any suffix). Default: see kDefaultTrackingParams.
  std::vector<std::string> tracking_params = DefaultTrackingParams();
  // Query parameters (and ";name=value" path parameters) dropped as session ids, same
  // matching. Default: see kDefaultSessionParams.
  std::vector<std::string> session_params = DefaultSessionParams();
  // Drop ";name=..." path parameters whose name is in session_params (e.g. ;jsessionid=).
  // Default: true.
  bool drop_session_path_params = true;
  // Remove trailing dots of the host ("example.com." -> "example.com"). Default: true.
  bool drop_host_trailing_dot = true;
  // Remove username and password. Default: false (they select content on some servers).
  bool drop_userinfo = false;
  // Policy, off by default: drop a trailing '/' of a non-root path ("/a/" -> "/a").
  bool strip_trailing_slash = false;
  // Policy, off by default: drop a last path segment named in index_names ("/a/index.html"
  // -> "/a/"), compared ASCII-case-insensitively.
  bool strip_index = false;
  std::vector<std::string> index_names = {"index.html", "index.htm", "index.php", "default.asp",
                                          "default.aspx"};

  static std::vector<std::string> DefaultTrackingParams();
  static std::vector<std::string> DefaultSessionParams();
};

// The default options, built once (CanonOptions holds vectors: building one per call costs
// allocations, so hot loops should pass a long-lived instance).
const CanonOptions& DefaultCanonOptions();

// Canonical form of an already parsed URL (returns a new Url whose href() is canonical).
// Idempotent: Canonicalize(Parse(c.href())) == c for c = Canonicalize(u).
Url Canonicalize(const Url& url, const CanonOptions& options = DefaultCanonOptions());
// Convenience: Parse + Canonicalize.
std::optional<Url> ParseCanonical(std::string_view input, const Url* base,
                                  const CanonOptions& options = DefaultCanonOptions());

// 64-bit fingerprint of a canonical href: the first half of MurmurHash3_x64_128 (seed 0).
// Stable across platforms and releases (it is stored on disk).
uint64_t Fingerprint64(std::string_view canonical_href);
// 128-bit fingerprint: MurmurHash3_x64_128 (seed 0); hi = h1, lo = h2 of the reference code.
struct Fingerprint128Value {
  uint64_t hi, lo;
  friend bool operator==(const Fingerprint128Value&, const Fingerprint128Value&) = default;
};
Fingerprint128Value Fingerprint128(std::string_view canonical_href);
// MurmurHash3_x64_128 of `data` with `seed` (exposed for tests and for other components that
// need a stable 128-bit hash).
Fingerprint128Value MurmurHash3x64_128(std::string_view data, uint32_t seed);

// Sort-friendly URL key (SURT) as used by CDXJ indexes and pywb: host labels reversed and
// comma-joined, a leading "www" label dropped, ":port" kept, ")" then the lowercased path and
// query; scheme, userinfo and fragment dropped: "https://www.Example.com/A?b=1" ->
// "com,example)/a?b=1". IP hosts are not reversed. Non-HTTP(S) schemes are prefixed with
// "scheme:" (e.g. "ftp:com,example)/"). Pass a canonical URL for a canonical key.
std::string Surt(const Url& url);

// The registrable domain (public suffix + one label) of an ASCII host, via libpsl's built-in
// list; "" when there is none (an IP address, a bare public suffix, an unknown host).
std::string RegistrableDomain(std::string_view host);

}  // namespace harvest::url
