// PinTable: the --resolve-file parser and its lookup (exact name, then the longest
// "*.suffix" wildcard).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "base/ascii.h"
#include "fetch/dns_cache.h"
#include "fetch/resolver.h"

namespace harvest::fetch {
namespace {

// The next field of `line` separated by C whitespace (advanced past it); "" at the end.
std::string_view NextField(std::string_view& line) {
  size_t start = 0;
  while (start < line.size() && IsCSpace(line[start])) ++start;
  size_t end = start;
  while (end < line.size() && !IsCSpace(line[end])) ++end;
  std::string_view field = line.substr(start, end - start);
  line.remove_prefix(end);
  return field;
}

// A host name as DNS spells it: labels of letters, digits, '-' and '_' (seen in the wild),
// 1..63 bytes each, 253 in all. Already lower-cased, trailing dot dropped.
bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  size_t label = 0;
  for (char c : name) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok || ++label > 63) return false;
  }
  return label > 0;
}

// "1.2.3.4", "1.2.3.4:80", "::1", "[::1]", "[::1]:80" -> Pin; an error text otherwise.
std::string ParseAddress(std::string_view text, Pin* pin) {
  std::string_view host = text;
  std::string_view port;
  bool has_port = false;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return "bad address '" + std::string(text) + "'";
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return "bad address '" + std::string(text) + "'";
      port = rest.substr(1);
      has_port = true;
    }
    if (host.find(':') == std::string_view::npos) {
      return "bad address '" + std::string(text) + "' (brackets are for IPv6)";
    }
  } else if (const size_t colon = text.find(':');
             colon != std::string_view::npos &&
             text.find(':', colon + 1) == std::string_view::npos) {
    host = text.substr(0, colon);  // IPv4 with a port (an IPv6 address has several colons)
    port = text.substr(colon + 1);
    has_port = true;
  }
  if (!IsNumericAddress(host)) {
    return "bad address '" + std::string(text) + "' (not a numeric IPv4 or IPv6 address)";
  }
  pin->address = NormalizeHostName(host);
  pin->port = 0;
  if (has_port) {
    int value = 0;
    bool ok = !port.empty() && port.size() <= 5;
    for (char c : port) {
      if (c < '0' || c > '9') {
        ok = false;
        break;
      }
      value = value * 10 + (c - '0');
    }
    if (!ok || value < 1 || value > 65535) {
      return "bad port '" + std::string(port) + "' (1..65535)";
    }
    pin->port = value;
  }
  return "";
}

}  // namespace

Result<PinTable> PinTable::Parse(std::string_view text, std::string_view source) {
  PinTable table;
  int line_no = 0;
  while (!text.empty()) {
    ++line_no;
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    line = line.substr(0, line.find('#'));
    auto fail = [&](const std::string& problem) {
      return Status::InvalidArgument(std::string(source) + ":" + std::to_string(line_no) + ": " +
                                     problem);
    };
    const std::string_view host_field = NextField(line);
    if (host_field.empty()) continue;  // blank or comment
    const std::string_view address_field = NextField(line);
    if (address_field.empty())
      return fail("missing ADDRESS after '" + std::string(host_field) + "'");
    if (const std::string_view extra = NextField(line); !extra.empty()) {
      return fail("unexpected '" + std::string(extra) + "' (a line is HOST ADDRESS)");
    }
    if (host_field.front() == '[' || IsNumericAddress(host_field)) {
      return fail("HOST '" + std::string(host_field) +
                  "' is an address (a line is HOST ADDRESS, not ADDRESS HOST)");
    }
    const bool wildcard = host_field.starts_with("*.");
    std::string host = NormalizeHostName(wildcard ? host_field.substr(2) : host_field);
    if (!ValidName(host)) return fail("bad host '" + std::string(host_field) + "'");
    Pin pin;
    if (std::string problem = ParseAddress(address_field, &pin); !problem.empty()) {
      return fail(problem);
    }
    Map& map = wildcard ? table.wildcard_ : table.exact_;
    if (!map.emplace(std::move(host), std::move(pin)).second) {
      return fail("duplicate host '" + std::string(host_field) + "'");
    }
  }
  return table;
}

Result<PinTable> PinTable::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IOError(path + ": read failed");
  return Parse(text.str(), path);
}

const Pin* PinTable::Find(std::string_view host) const {
  if (host.size() > 1 && host.back() == '.') host.remove_suffix(1);
  std::string lowered;
  for (char c : host) {
    if (c >= 'A' && c <= 'Z') {
      lowered = NormalizeHostName(host);
      host = lowered;
      break;
    }
  }
  if (auto it = exact_.find(host); it != exact_.end()) return &it->second;
  if (wildcard_.empty()) return nullptr;
  // Longest suffix first: the one after the first dot.
  for (size_t dot = host.find('.'); dot != std::string_view::npos; dot = host.find('.', dot + 1)) {
    if (auto it = wildcard_.find(host.substr(dot + 1)); it != wildcard_.end()) return &it->second;
  }
  return nullptr;
}

}  // namespace harvest::fetch
