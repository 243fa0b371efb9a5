// DnsCache: TTL clamping, expiry and LRU eviction.
#include "fetch/dns_cache.h"

#include <arpa/inet.h>

#include <algorithm>

#include "base/ascii.h"

namespace harvest::fetch {

std::string NormalizeHostName(std::string_view name) {
  if (name.size() >= 2 && name.front() == '[' && name.back() == ']') {
    name = name.substr(1, name.size() - 2);
  } else if (name.size() > 1 && name.back() == '.') {
    name.remove_suffix(1);
  }
  return ToLowerAscii(name);
}

bool IsNumericAddress(std::string_view host) {
  if (host.empty() || host.size() >= INET6_ADDRSTRLEN) return false;
  const std::string s(host);
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

std::optional<Resolution> NumericResolution(const std::string& normalized) {
  if (!IsNumericAddress(normalized)) return std::nullopt;
  return Resolution{.name = normalized, .ok = true, .address = normalized};
}

std::optional<Resolution> DnsCache::Get(std::string_view name, Clock::TimePoint now) {
  auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  auto entry = it->second;
  if (entry->expires <= now) {
    index_.erase(it);
    lru_.erase(entry);
    return std::nullopt;
  }
  lru_.splice(lru_.begin(), lru_, entry);
  return entry->r;
}

Resolution DnsCache::Put(Resolution r, std::chrono::seconds record_ttl, Clock::TimePoint now) {
  if (r.ok) {
    r.ttl = std::min(std::max(record_ttl, options_.min_ttl), options_.max_ttl);
  } else {
    r.ttl = options_.negative_ttl;
  }
  if (auto it = index_.find(r.name); it != index_.end()) {
    auto entry = it->second;
    index_.erase(it);
    lru_.erase(entry);
  }
  if (options_.max_entries == 0 || r.ttl.count() <= 0) return r;
  while (index_.size() >= options_.max_entries) {
    index_.erase(std::string_view(lru_.back().r.name));
    lru_.pop_back();
  }
  lru_.push_front(
      Entry{.r = r, .expires = now + std::chrono::duration_cast<Clock::Duration>(r.ttl)});
  index_.emplace(std::string_view(lru_.front().r.name), lru_.begin());
  return r;
}

}  // namespace harvest::fetch
