// Private: the line tokenizer of robots.txt (RFC 9309 §2.2 syntax, google/robotstxt leniency).
// Splits a body into lines (LF, CR or CRLF), strips an initial UTF-8 BOM, comments and
// surrounding whitespace, recognises keys (with Google's frequent typos) and hands each
// key/value line to a callback with its 1-based line number. Never fails.
#pragma once

#include <functional>
#include <string_view>

namespace harvest::robots {

enum class Key { kUserAgent, kAllow, kDisallow, kCrawlDelay, kSitemap, kUnknown };

struct RobotsLine {
  int number = 0;  // 1-based line number in the body
  Key key = Key::kUnknown;
  std::string_view name;   // the key as written (trimmed)
  std::string_view value;  // the value, trimmed; comments removed
};

// Classifies a key as written (case-insensitive, typos accepted).
Key ClassifyKey(std::string_view name);

// Splits one line (without its terminator) into key and value. Returns false for blank
// lines, comment-only lines and lines with no recognisable key/value separator.
bool SplitLine(std::string_view line, std::string_view* name, std::string_view* value);

// Calls on_line for every key/value line of the first kMaxRobotsBytes of body. Returns the
// number of lines seen.
int ParseRobotsLines(std::string_view body, const std::function<void(const RobotsLine&)>& on_line);

}  // namespace harvest::robots
