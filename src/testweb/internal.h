// Private helpers of the testweb component: deterministic randomness, path families, HTML
// rendering and request handling. Not part of the public API (see testweb.h).
#pragma once

#include <netinet/in.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "testweb/testweb.h"

namespace harvest::testweb {

// Hosts beyond this would need more than the 4 zero-padded digits of "hNNNN.test".
inline constexpr int kMaxHosts = 1000000;
// Pages of each special robots host (robots-*.test): "/" and "/p/1".."/p/4".
inline constexpr int kSpecialHostPages = 5;
// Members of each side family (/private/N.html, /files/doc-N.pdf, ...). Small on purpose:
// these exist to test robots rules, not to grow the crawl.
inline constexpr int kFamilySize = 5;
// Size of the hostile "huge" body: above the 10 MB limit a crawler is expected to enforce.
inline constexpr size_t kHugeBodyBytes = 12 * 1024 * 1024;
// The gzip bomb inflates to this many zero bytes (> 1 GB) from about 1 MB on the wire.
inline constexpr uint64_t kBombInflatedBytes = 1100ull * 1024 * 1024;
// Offset past which robots-big.test puts its "late" Disallow (RFC 9309 §2.5: parsers may
// stop at 500 KiB, so that rule must be ignored) and the total size of that file.
inline constexpr size_t kRobotsParseLimit = 500 * 1024;
inline constexpr size_t kBigRobotsBytes = 600 * 1024;

inline constexpr std::string_view kHostileHost = "hostile.test";
inline constexpr std::string_view kControlHost = "control.test";

// SplitMix64 finaliser; the basis of every generated choice.
inline uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
inline uint64_t Mix(uint64_t a, uint64_t b) { return Mix(Mix(a) ^ (b * 0x2545f4914f6cdd1dull)); }
inline uint64_t Mix(uint64_t a, uint64_t b, uint64_t c) { return Mix(Mix(a, b), c); }

// `digits` lower-case hex digits of the low bits of `v`.
inline std::string Hex(uint64_t v, int digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(digits, '0');
  for (int i = digits - 1; i >= 0; --i, v >>= 4) out[i] = kDigits[v & 15];
  return out;
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() { return Mix(state_++); }
  // Uniform in [0, n); n > 0.
  uint64_t Below(uint64_t n) { return Next() % n; }
  bool Chance(double p) { return static_cast<double>(Next() >> 11) * 0x1.0p-53 < p; }

 private:
  uint64_t state_;
};

// Which generated page a canonical path names.
enum class PageType {
  kNone,
  kTree,      // "/" (index 0) or "/p/N"
  kFamily,    // /private/N.html, /private/open/N.html, /files/doc-N.pdf, /harvest-only/N.html,
              // /tmp/N.html, /early/N.html, /late/N.html
  kSearch,    // /search?q=...
  kCalendar,  // /calendar/Y/M
  kEdge,      // hostile.test paths
};

struct PageRef {
  PageType type = PageType::kNone;
  int index = 0;          // tree index or family member
  std::string canonical;  // identity path ("/p/3", "/search", "/calendar/2026/11", ...)
};

// True when the nofollow of a leaf page is sent as X-Robots-Tag rather than meta robots.
bool LeafNofollowIsHeader(const Site& site, int host, int index);

// Splits a request target into the path (without ;params, fragment) and the query.
void SplitTarget(std::string_view target, std::string* path, std::string* query);
// Names the page of a canonical path on a host (kNone when it does not exist).
PageRef FindPage(const Site& site, int host, std::string_view path, std::string_view query);

// The HTML or other body of a known page. `epoch` varies the changing pages.
struct Rendered {
  std::string body;
  std::string content_type = "text/html; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
  bool changes_with_epoch = false;
};
Rendered RenderTreePage(const Site& site, int host, int index, int64_t epoch);
Rendered RenderFamilyPage(const Site& site, int host, const PageRef& page);
Rendered RenderCalendar(const Site& site, int host, int year, int month);
std::string RenderSitemap(const Site& site, int host, int part);  // part 0 = /sitemap.xml
std::string BigRobotsTxt();

// Paragraph text made of generated words, about `bytes` long.
std::string Words(Rng& rng, size_t count);
// The generated-text word a draw picks (as AppendWords does): lower case, ASCII letters.
std::string_view WordAt(uint64_t draw);
void AppendWords(Rng& rng, size_t count, std::string* out);
std::string HtmlEscape(std::string_view s);

// gzip (RFC 1952) of `data` at the given zlib level.
std::string Gzip(std::string_view data, int level = 6);
// The shared gzip bomb body (built once, thread-safe).
const std::shared_ptr<const std::string>& GzipBomb();
const std::shared_ptr<const std::string>& HugeBody();

// ---- request handling ----

struct Request {
  std::string method;
  std::string target;
  std::string host;  // Host header (or absolute-form authority)
  std::string accept_encoding;
  std::string if_none_match;
  std::string if_modified_since;
  std::string body;
};

struct Response {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::shared_ptr<const std::string> body;  // may be null (empty body)
  int delay_ms = 0;      // wait this long before sending anything (slow responses)
  bool trickle = false;  // after the headers, send one byte every kTrickleIntervalMs forever
  bool close = false;    // close the connection after this response
  bool changes_with_epoch = false;  // Last-Modified follows the epoch
  bool head_only = false;           // HEAD: headers (with the GET's Content-Length) but no body
  // Log fields.
  Route route;
  int retry_after_s = -1;
  bool conditional = false;
};
inline constexpr int kTrickleIntervalMs = 100;
// Request bodies (only POST /__testweb/epoch has one) larger than this get 413.
inline constexpr size_t kMaxBodyBytes = 64 * 1024;

// Hooks the handler needs from the server (epoch control).
class EpochControl {
 public:
  virtual ~EpochControl() = default;
  virtual int64_t epoch() const = 0;
  virtual void SetEpoch(int64_t epoch) = 0;
};

Response Handle(const Site& site, const Request& request, EpochControl* control);
// Responses of hostile.test paths (nullopt-like: status 0 when the path is not an edge path).
Response HandleEdge(const Site& site, const Request& request, const std::string& path,
                    int64_t epoch);
// Edge pages' links (for LinksOf) and the edge list.
std::vector<Link> EdgeLinks(const Site& site, std::string_view path);
bool EdgeNofollow(std::string_view path);
bool KnownEdgePath(std::string_view path);
// The body of hostile.test/ (an index of every edge path).
Rendered RenderHostileRoot(const Site& site);
std::vector<EdgeInfo> EdgeList(const Site& site);

// ---- HTTP/1.1 messages (http1.cc) ----

// Parses a request head (up to and excluding the blank line). False when malformed.
bool ParseHead(std::string_view head, Request* req, size_t* content_length, bool* keep_alive);
// The reason phrase of a status code the test web sends.
const char* Reason(int status);
// --http-redirect's answer to a plain-HTTP request: 301 to https://HOST + the target as
// requested (HOST lower case, without a ":80" suffix).
Response HttpsRedirect(const Request& request);

// Whether the client has shut its side of socket `fd` (its FIN has arrived), whatever it
// left unread.
bool PeerClosed(int fd);

// Steady-clock microseconds: the event loops' timers.
inline int64_t SteadyMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// "ADDR:PORT" (--listen; "localhost" or an empty ADDR is 127.0.0.1) into *addr, the
// address's text into *host; InvalidArgument names what is wrong.
Status ParseListen(const std::string& listen, sockaddr_in* addr, std::string* host);
// "A.B.C.D:PORT" of an IPv4 address in host byte order.
std::string AddressText(uint32_t host_order, uint16_t port);

}  // namespace harvest::testweb
