// Private helpers shared by the url component's files: the mutable URL record the parser
// fills, the serializer that turns it into a Url, percent-encode sets and host parsing.
// Not part of the public API.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/ascii.h"  // AsciiLower, EqualsIgnoreAsciiCase
#include "url/url.h"

namespace harvest::url {

// WHATWG percent-encode sets, as bit masks tested per byte (bytes >= 0x7F are always in).
enum EncodeSet : uint8_t {
  kC0ControlSet = 1,
  kFragmentSet = 2,
  kQuerySet = 4,
  kSpecialQuerySet = 8,
  kPathSet = 16,
  kUserinfoSet = 32,
};

// Bit set of the encode sets that contain byte `c`.
extern const uint8_t kEncodeTable[256];

inline bool InSet(unsigned char c, EncodeSet set) { return (kEncodeTable[c] & set) != 0; }

// Appends c to out, percent-encoded ("%XX", uppercase) when it is in `set`.
inline void AppendEncoded(std::string& out, unsigned char c, EncodeSet set) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  if (InSet(c, set)) {
    char buf[3] = {'%', kHex[c >> 4], kHex[c & 15]};
    out.append(buf, 3);
  } else {
    out.push_back(static_cast<char>(c));
  }
}

inline bool IsAsciiAlpha(unsigned char c) { return static_cast<unsigned>((c | 0x20) - 'a') < 26u; }
inline bool IsAsciiDigit(unsigned char c) { return static_cast<unsigned>(c - '0') < 10u; }
inline bool IsAsciiHex(unsigned char c) {
  return IsAsciiDigit(c) || static_cast<unsigned>((c | 0x20) - 'a') < 6u;
}
inline int HexValue(unsigned char c) { return IsAsciiDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10; }

// The mutable URL record the parser fills (WHATWG "URL record"). Strings keep their capacity
// between parses (the parser reuses a thread_local record), so parsing rarely allocates.
struct Record {
  std::string scheme;
  std::string username;
  std::string password;
  std::string host;  // serialized host
  bool has_host = false;
  int port = -1;
  std::string path;  // serialized: "/seg/seg" (list) or the opaque path
  bool opaque_path = false;
  std::string query;
  bool has_query = false;
  std::string fragment;
  bool has_fragment = false;

  void Clear();
};

// Default port of a special scheme, -1 for none (also for file and non-special schemes).
int DefaultPort(std::string_view scheme);
bool IsSpecialScheme(std::string_view scheme);

// WHATWG URL parsing of `input` against `base` into `record` (cleared first): Parse without
// the serialization. False on failure (then `record` holds a partial parse).
bool ParseRecord(std::string_view input, const Url* base, Record& record);

// Builds Url values (the only code that writes Url's private fields).
class Builder {
 public:
  // Serializes `record` (WHATWG URL serializer, without exclude-fragment) into a Url.
  static Url Serialize(const Record& record);
};

// WHATWG host parser. Appends the serialized host to `out` (cleared first); false on
// failure. `special` selects domain parsing; otherwise opaque-host parsing.
bool ParseHost(std::string_view input, bool special, std::string& out);

// WHATWG "ends in a number": a domain for which this holds is parsed as IPv4.
bool EndsInNumber(std::string_view domain);

// True when `host` (serialized) is an IPv4 or IPv6 address.
bool IsIpHost(std::string_view host);

}  // namespace harvest::url
