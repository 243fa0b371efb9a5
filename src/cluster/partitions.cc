// Partitions, key names and the item codec (docs/distributed.md).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>

#include "base/ascii.h"
#include "base/hash.h"
#include "base/host_key.h"
#include "cluster/cluster.h"
#include "cluster/internal.h"
#include "url/url.h"

namespace harvest::cluster {
namespace internal {

std::string PartitionTag(const std::string& prefix, int partition) {
  return prefix + ":{p" + std::to_string(partition) + "}:";
}

std::string GlobalTag(const std::string& prefix) { return prefix + ":{g}:"; }

std::string DigestKey(const std::string& prefix, std::string_view digest) {
  return prefix + ":d:" + std::string(digest);
}

std::string WakeKey(const std::string& prefix, const std::string& member) {
  return GlobalTag(prefix) + "wake:" + member;
}

std::string FpHex(uint64_t fp) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fp));
  return buf;
}

std::string HostName(std::string_view host) { return ToLowerAscii(NameOfHostKey(host)); }

std::string EncodeItem(const frontier::UrlItem& item) {
  std::string s = FpHex(item.fp);
  auto field = [&s](std::string_view v) {
    s += '\t';
    s += v;
  };
  field(item.host);
  field(std::to_string(item.depth));
  field(std::to_string(item.priority));
  field(std::to_string(item.hops));
  field(std::to_string((item.sitemap ? 1 : 0) | (item.recrawl ? 2 : 0)));
  field(std::to_string(item.attempts));
  field(item.url);
  field(item.via);
  return s;
}

namespace {

bool ParseInt(std::string_view s, int* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::optional<frontier::UrlItem> DecodeItem(std::string_view s) {
  std::string_view f[9];
  for (int i = 0; i < 8; ++i) {
    size_t t = s.find('\t');
    if (t == std::string_view::npos) return std::nullopt;
    f[i] = s.substr(0, t);
    s.remove_prefix(t + 1);
  }
  f[8] = s;
  frontier::UrlItem item;
  if (f[0].size() != 16) return std::nullopt;
  auto [p, ec] = std::from_chars(f[0].data(), f[0].data() + 16, item.fp, 16);
  if (ec != std::errc() || p != f[0].data() + 16) return std::nullopt;
  item.host = std::string(f[1]);
  if (!ParseInt(f[2], &item.depth) || !ParseInt(f[3], &item.priority) ||
      !ParseInt(f[4], &item.hops) || !ParseInt(f[6], &item.attempts)) {
    return std::nullopt;
  }
  if (f[5].size() != 1 || f[5][0] < '0' || f[5][0] > '3') return std::nullopt;
  item.sitemap = (f[5][0] - '0') & 1;
  item.recrawl = (f[5][0] - '0') & 2;
  item.url = std::string(f[7]);
  item.via = std::string(f[8]);
  if (item.host.empty() || item.url.empty()) return std::nullopt;
  return item;
}

}  // namespace internal

int PartitionCount(const PartitionOptions& options) {
  return options.partitions + static_cast<int>(options.hot_hosts.size());
}

int PartitionOf(std::string_view host, const PartitionOptions& options) {
  std::string name = internal::HostName(host);
  for (size_t i = 0; i < options.hot_hosts.size(); ++i) {
    if (options.hot_hosts[i] == name) return options.partitions + static_cast<int>(i);
  }
  std::string key = name;
  if (options.by_domain) {
    std::string domain = url::RegistrableDomain(name);
    if (!domain.empty()) key = std::move(domain);
  }
  return static_cast<int>(Fnv1a64(key) % static_cast<uint64_t>(std::max(options.partitions, 1)));
}

}  // namespace harvest::cluster
