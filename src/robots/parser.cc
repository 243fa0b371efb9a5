#include "robots/parser.h"

#include "base/ascii.h"
#include "robots/robots.h"

namespace harvest::robots {
namespace {

bool StartsWithAny(std::string_view s, std::initializer_list<std::string_view> prefixes) {
  for (std::string_view p : prefixes) {
    if (StartsWithIgnoreAsciiCase(s, p)) return true;
  }
  return false;
}

}  // namespace

// Prefix matching, as google/robotstxt does ("User-agent-foo:" is a user-agent line).
Key ClassifyKey(std::string_view name) {
  if (StartsWithAny(name, {"user-agent", "useragent", "user agent"})) return Key::kUserAgent;
  if (StartsWithIgnoreAsciiCase(name, "allow")) return Key::kAllow;
  if (StartsWithAny(name,
                    {"disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"})) {
    return Key::kDisallow;
  }
  if (StartsWithAny(name, {"crawl-delay", "crawldelay", "crawl delay", "crawl_delay"})) {
    return Key::kCrawlDelay;
  }
  if (StartsWithAny(name, {"sitemap", "site-map"})) return Key::kSitemap;
  return Key::kUnknown;
}

bool SplitLine(std::string_view line, std::string_view* name, std::string_view* value) {
  if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  line = TrimHttpOws(line);  // RFC 9309 §2.2 WS: space and tab, HTTP's OWS set
  if (line.empty()) return false;
  size_t sep = line.find(':');
  size_t value_start;
  if (sep != std::string_view::npos) {
    value_start = sep + 1;
  } else {
    // google/robotstxt: a missing colon is tolerated when whitespace separates exactly two
    // words ("Disallow /path"); more words are ambiguous and the line is dropped.
    sep = line.find_first_of(" \t");
    if (sep == std::string_view::npos) return false;
    value_start = sep;
    if (TrimHttpOws(line.substr(value_start)).find_first_of(" \t") != std::string_view::npos) {
      return false;
    }
  }
  *name = TrimHttpOws(line.substr(0, sep));
  *value = TrimHttpOws(line.substr(value_start));
  return !name->empty();
}

int ParseRobotsLines(std::string_view body, const std::function<void(const RobotsLine&)>& on_line) {
  bool truncated = body.size() > kMaxRobotsBytes;
  if (truncated) body = body.substr(0, kMaxRobotsBytes);
  // A UTF-8 byte order mark (or the part of one that fits) is not content.
  static constexpr std::string_view kBom = "\xEF\xBB\xBF";
  size_t bom = 0;
  while (bom < kBom.size() && bom < body.size() && body[bom] == kBom[bom]) ++bom;
  body.remove_prefix(bom);

  int number = 0;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find_first_of("\r\n", pos);
    if (end == std::string_view::npos) {
      // The last line: dropped if the size limit cut it (see robots.h).
      if (truncated) break;
      end = body.size();
    }
    std::string_view text = body.substr(pos, end - pos);
    ++number;
    RobotsLine line;
    line.number = number;
    if (SplitLine(text, &line.name, &line.value)) {
      line.key = ClassifyKey(line.name);
      on_line(line);
    }
    pos = end;
    if (pos < body.size() && body[pos] == '\r') ++pos;
    if (pos < body.size() && body[pos] == '\n' && (pos == end || body[pos - 1] == '\r')) ++pos;
  }
  return number;
}

}  // namespace harvest::robots
