// Private to src/audit: parses one line of the test web's request log.
//
// A small dedicated parser for one flat JSON object (RFC 8259 syntax): it is several times
// faster than building a DOM per line, which matters for million-line logs. It never throws
// and never crashes on any input; unknown fields are skipped whatever their value.
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace harvest::audit {

// Nesting allowed inside an unknown field's value; deeper input is malformed rather than
// risking deep recursion on hostile lines.
inline constexpr int kMaxSkipDepth = 64;

// The request's scheme ("scheme") and HTTP version ("proto"). kUnspecified: the field was
// absent or null, as in logs written before the test web served HTTPS; it reads as http and
// HTTP/1.1.
enum class Scheme : uint8_t { kUnspecified, kHttp, kHttps };
enum class Proto : uint8_t { kUnspecified, kHttp11, kHttp2 };

// The fields of one request log line. Strings are unescaped; host is as logged.
struct LogLine {
  std::string host;
  std::string path;
  bool has_page = false;  // "page" present and not null
  std::string page;
  std::string kind;  // "" when absent or null
  int64_t start_us = 0;
  int64_t end_us = 0;
  int status = 0;
  bool disallowed = false;
  bool cond = false;
  bool has_retry_after = false;  // "retry_after_s" present and not null
  double retry_after_s = 0;
  std::string ip;  // "ip" (the server-side address); "" when absent, null or empty
  Scheme scheme = Scheme::kUnspecified;
  Proto proto = Proto::kUnspecified;
  // "upgrade": true — the plain-HTTP 301 of the test web's --http-redirect to the https://
  // twin of the URL. Only on http requests.
  bool upgrade = false;
};

// Parses `text` into `*out` (reusing its buffers). On failure returns false and sets
// `*error` to a short reason, e.g. `missing "start_us"` or `"status" is not an integer`.
// Required: host (non-empty string), path (string), start_us, end_us, status (integers,
// 0 <= start_us <= end_us, 0 <= status <= 999). Optional: page (string|null), kind
// (string|null), disallowed and cond (bool|null), retry_after_s (number >= 0 | null), ip
// (string|null), scheme ("http"|"https"|null), proto ("1.1"|"2"|null), upgrade (bool|null;
// true only with a scheme other than https). Any other scheme or proto value is malformed.
bool ParseLogLine(std::string_view text, LogLine* out, std::string* error);

}  // namespace harvest::audit
