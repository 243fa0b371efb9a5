// Host keys: the "scheme://name[:port]" string a crawl keys a host by (the frontier's host key,
// built by url::Url::origin_key(): "https://a.test:8443", "http://[::1]:8080"), and the
// authority "name[:port]" inside it (a Host header, fetch::HostKey()).
//
// The name is what comes before the port. A bracketed IPv6 literal keeps its brackets
// ("[::1]"); a name with one ':' ends there ("a.test:80"); a name with more than one ':' and
// no brackets is a bare IPv6 address and has no port ("::1"). The name is returned as
// written: callers that compare names case-insensitively lower it (ToLowerAscii).
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

namespace harvest {

struct HostKeyParts {
  std::string_view scheme;  // "https"; "" when the key has no "scheme://"
  std::string_view name;    // "a.test", "[::1]"
  std::string_view port;    // "8443" as written; "" when there is none
};

// Splits an authority "name[:port]". A "scheme://" is not looked for: "a://b" is the name "a"
// (use SplitHostKey for a key that may carry a scheme).
inline HostKeyParts SplitAuthority(std::string_view authority) {
  HostKeyParts parts;
  size_t name_end = std::string_view::npos;
  if (authority.starts_with('[')) {
    if (const size_t close = authority.find(']'); close != std::string_view::npos) {
      name_end = close + 1;
    }
  } else if (const size_t colon = authority.find(':');
             colon != std::string_view::npos &&
             authority.find(':', colon + 1) == std::string_view::npos) {
    name_end = colon;
  }
  parts.name = authority.substr(0, name_end);
  if (name_end < authority.size() && authority[name_end] == ':') {
    parts.port = authority.substr(name_end + 1);
  }
  return parts;
}

// Splits "scheme://name[:port]", or a bare "name[:port]" (then `scheme` is empty).
inline HostKeyParts SplitHostKey(std::string_view key) {
  std::string_view scheme;
  if (const size_t sep = key.find("://"); sep != std::string_view::npos) {
    scheme = key.substr(0, sep);
    key.remove_prefix(sep + 3);
  }
  HostKeyParts parts = SplitAuthority(key);
  parts.scheme = scheme;
  return parts;
}

// The name of a host key: "https://A.test:8443" -> "A.test", "http://[::1]:80" -> "[::1]",
// "a.test:80" -> "a.test".
inline std::string_view NameOfHostKey(std::string_view key) { return SplitHostKey(key).name; }

// The name of an authority: "a.test:80" -> "a.test", "[::1]:80" -> "[::1]".
inline std::string_view NameOfAuthority(std::string_view authority) {
  return SplitAuthority(authority).name;
}

// The authority "name[:port]" of an absolute URL, without userinfo: "http://u:p@a.test:8080/x"
// -> "a.test:8080". "" when `url` has no "://".
inline std::string_view AuthorityOfUrl(std::string_view url) {
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos) return {};
  std::string_view authority = url.substr(sep + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);
  }
  return authority;
}

// A name without the brackets of an IPv6 literal: "[::1]" -> "::1"; other names as they are.
inline std::string_view Unbracket(std::string_view name) {
  if (name.size() >= 2 && name.front() == '[' && name.back() == ']') {
    return name.substr(1, name.size() - 2);
  }
  return name;
}

}  // namespace harvest
