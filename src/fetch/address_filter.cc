// AddressFilter (resolver.h): the ranges a crawl never connects to unless the operator opens
// them, judged on the numeric address the connection goes to.
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "fetch/resolver.h"

namespace harvest::fetch {
namespace {

using Bytes = std::array<uint8_t, 16>;

// A numeric address as 16 bytes (IPv4 as ::ffff:a.b.c.d); false when it is not one.
bool ToBytes(std::string_view address, Bytes* out) {
  if (address.size() >= INET6_ADDRSTRLEN) return false;
  char buf[INET6_ADDRSTRLEN] = {};
  std::memcpy(buf, address.data(), address.size());
  in_addr v4{};
  if (inet_pton(AF_INET, buf, &v4) == 1) {
    *out = Bytes{};
    (*out)[10] = (*out)[11] = 0xff;
    std::memcpy(out->data() + 12, &v4, 4);
    return true;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, buf, &v6) == 1) {
    std::memcpy(out->data(), &v6, 16);
    return true;
  }
  return false;
}

bool InRange(const Bytes& a, const Bytes& prefix, int bits) {
  for (int i = 0; i < 16 && bits > 0; ++i, bits -= 8) {
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((a[i] & mask) != (prefix[i] & mask)) return false;
  }
  return true;
}

// The IPv4 address an IPv6 one embeds (IPv4-compatible ::a.b.c.d except :: and ::1, NAT64
// 64:ff9b::a.b.c.d), as ::ffff:a.b.c.d; the address itself otherwise.
Bytes Embedded(const Bytes& a) {
  static const Bytes kNat64 = {0, 0x64, 0xff, 0x9b};
  const bool compatible =
      std::all_of(a.begin(), a.begin() + 12, [](uint8_t b) { return b == 0; }) &&
      !((a[12] | a[13] | a[14]) == 0 && a[15] <= 1);  // not :: nor ::1
  if (!compatible && !InRange(a, kNat64, 96)) return a;
  Bytes v4{};
  v4[10] = v4[11] = 0xff;
  std::memcpy(v4.data() + 12, a.data() + 12, 4);
  return v4;
}

struct BlockedRange {
  const char* name;
  const char* cidr;
};
// IPv4 ranges are written in their IPv4 form (matched against ::ffff:a.b.c.d).
constexpr BlockedRange kBlocked[] = {
    {"this network", "0.0.0.0/8"},
    {"private (RFC 1918)", "10.0.0.0/8"},
    {"shared address space (CGNAT)", "100.64.0.0/10"},
    {"loopback", "127.0.0.0/8"},
    {"link-local", "169.254.0.0/16"},
    {"private (RFC 1918)", "172.16.0.0/12"},
    {"IETF protocol assignments", "192.0.0.0/24"},
    {"private (RFC 1918)", "192.168.0.0/16"},
    {"multicast", "224.0.0.0/4"},
    {"reserved", "240.0.0.0/4"},
    {"unspecified", "::/128"},
    {"loopback", "::1/128"},
    {"unique-local", "fc00::/7"},
    {"link-local", "fe80::/10"},
    {"site-local", "fec0::/10"},
    {"multicast", "ff00::/8"},
};

// "a.b.c.d[/n]" or "x::y[/n]": the prefix (IPv4 as ::ffff:a.b.c.d, its bits + 96).
bool ParseCidr(std::string_view text, Bytes* prefix, int* bits) {
  std::string_view address = text;
  std::string_view length;
  if (const size_t slash = text.find('/'); slash != std::string_view::npos) {
    address = text.substr(0, slash);
    length = text.substr(slash + 1);
  }
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']') {
    address = address.substr(1, address.size() - 2);
  }
  if (!ToBytes(address, prefix)) return false;
  const bool v4 = address.find(':') == std::string_view::npos;
  const int max = v4 ? 32 : 128;
  int n = max;
  if (!length.empty() || text.find('/') != std::string_view::npos) {
    if (length.empty() || length.size() > 3) return false;
    n = 0;
    for (char c : length) {
      if (c < '0' || c > '9') return false;
      n = n * 10 + (c - '0');
    }
    if (n > max) return false;
  }
  *bits = v4 ? n + 96 : n;
  return true;
}

}  // namespace

Result<AddressFilter> AddressFilter::Make(const std::vector<std::string>& allowed) {
  AddressFilter f;
  for (const std::string& entry : allowed) {
    Range r;
    if (!ParseCidr(entry, &r.prefix, &r.bits)) {
      return Status::InvalidArgument("allowed address range '" + entry +
                                     "' is not a CIDR (e.g. 10.0.0.0/8, 127.0.0.1, fd00::/8)");
    }
    f.allowed_.push_back(r);
  }
  return f;
}

std::optional<std::string> AddressFilter::Blocked(std::string_view address) const {
  Bytes raw;
  if (!ToBytes(address, &raw)) return "not a numeric address";
  const Bytes a = Embedded(raw);
  for (const Range& r : allowed_) {
    if (InRange(a, r.prefix, r.bits) || InRange(raw, r.prefix, r.bits)) return std::nullopt;
  }
  struct Parsed {
    Bytes prefix;
    int bits;
    const BlockedRange* range;
  };
  static const std::vector<Parsed> kParsed = [] {
    std::vector<Parsed> out;
    for (const BlockedRange& b : kBlocked) {
      Parsed p{};
      p.range = &b;
      ParseCidr(b.cidr, &p.prefix, &p.bits);
      out.push_back(p);
    }
    return out;
  }();
  for (const Parsed& p : kParsed) {
    if (InRange(a, p.prefix, p.bits)) return std::string(p.range->name) + " " + p.range->cidr;
  }
  return std::nullopt;
}

}  // namespace harvest::fetch
