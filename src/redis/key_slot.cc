// Key hash slots (Redis Cluster spec, "Key distribution model"), redis:// URLs, host:port.
#include <array>
#include <cctype>
#include <charconv>
#include <string>

#include "base/ascii.h"
#include "redis/connection.h"
#include "redis/redis.h"

namespace harvest::redis {
namespace {

// CRC16-CCITT as XMODEM: polynomial 0x1021, initial value 0, no reflection, no final xor.
constexpr std::array<uint16_t, 256> MakeCrcTable() {
  std::array<uint16_t, 256> table{};
  for (int i = 0; i < 256; ++i) {
    uint16_t crc = static_cast<uint16_t>(i << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
    table[i] = crc;
  }
  return table;
}

constexpr std::array<uint16_t, 256> kCrcTable = MakeCrcTable();

uint16_t Crc16(std::string_view bytes) {
  uint16_t crc = 0;
  for (char c : bytes) {
    uint8_t b = static_cast<uint8_t>(c);
    crc = static_cast<uint16_t>((crc << 8) ^ kCrcTable[((crc >> 8) ^ b) & 0xff]);
  }
  return crc;
}

Status Bad(std::string_view url, const std::string& why) {
  return Status::InvalidArgument("redis URL '" + std::string(url) + "': " + why);
}

}  // namespace

uint16_t KeySlot(std::string_view key) {
  size_t open = key.find('{');
  if (open != std::string_view::npos) {
    size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return Crc16(key) & (kSlots - 1);
}

bool SplitHostPort(std::string_view hp, std::string* host, int* port) {
  size_t colon;
  if (!hp.empty() && hp.front() == '[') {
    size_t close = hp.find(']');
    if (close == std::string_view::npos || close == 1 || close + 1 >= hp.size() ||
        hp[close + 1] != ':') {
      return false;
    }
    *host = std::string(hp.substr(1, close - 1));
    colon = close + 1;
  } else {
    colon = hp.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return false;
    *host = std::string(hp.substr(0, colon));
    if (host->find(':') != std::string::npos) return false;  // IPv6 needs brackets
  }
  for (char c : *host) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ||
              c == ':' || c == '%';
    if (!ok) return false;
  }
  std::string_view digits = hp.substr(colon + 1);
  if (digits.empty() || digits.size() > 5) return false;
  int p = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), p);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || p < 1 || p > 65535) {
    return false;
  }
  *port = p;
  return true;
}

Result<ClusterOptions> ParseRedisUrl(std::string_view url) {
  std::string_view rest = url;
  size_t scheme_end = rest.find("://");
  if (scheme_end != std::string_view::npos) {
    const std::string scheme = ToLowerAscii(rest.substr(0, scheme_end));
    if (scheme == "rediss") return Bad(url, "TLS (rediss://) is not supported");
    if (scheme != "redis") return Bad(url, "the scheme must be redis://");
    rest.remove_prefix(scheme_end + 3);
  }
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('@') != std::string_view::npos) {
    return Bad(url, "credentials (user:password@) are not supported");
  }
  if (rest.find('/') != std::string_view::npos) {
    return Bad(url, "a path or database number is not supported (a cluster has database 0 only)");
  }
  if (rest.find('?') != std::string_view::npos || rest.find('#') != std::string_view::npos) {
    return Bad(url, "query parameters are not supported");
  }
  if (rest.empty()) return Bad(url, "no host:port");
  ClusterOptions options;
  while (true) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    if (item.empty()) return Bad(url, "empty host:port in the list");
    std::string host;
    int port = 0;
    if (!SplitHostPort(item, &host, &port)) {
      return Bad(url, "'" + std::string(item) +
                          "' is not host:port (port 1-65535; an IPv6 address in brackets)");
    }
    options.seeds.emplace_back(item);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return options;
}

}  // namespace harvest::redis
