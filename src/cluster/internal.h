// Private to src/cluster: key names, the URL item codec, the Lua scripts and a time helper.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "frontier/url_item.h"
#include "redis/redis.h"

namespace harvest::cluster::internal {

// "<prefix>:{p<N>}:" — every key of partition N starts with it (one hash slot).
std::string PartitionTag(const std::string& prefix, int partition);
// "<prefix>:{g}:" — the crawl-wide keys (workers, config).
std::string GlobalTag(const std::string& prefix);
std::string DigestKey(const std::string& prefix, std::string_view digest);
// "<prefix>:{g}:wake:<member>" — the set of a worker's partitions that others admitted URLs
// to since it last looked.
std::string WakeKey(const std::string& prefix, const std::string& member);

// A steady time in ms since the clock's epoch.
inline int64_t Ms(Clock::TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// The 16 lower-case hex digits of a fingerprint (the `taken` hash's field, an item's head).
std::string FpHex(uint64_t fp);
// fp hex \t host \t depth \t priority \t hops \t flags \t attempts \t url \t via; flags: 1
// sitemap, 2 recrawl. Canonical URLs hold no tab (the URL parser removes them).
std::string EncodeItem(const frontier::UrlItem& item);
std::optional<frontier::UrlItem> DecodeItem(std::string_view s);

// The host name of a host key: "http://H:8080" → "h".
std::string HostName(std::string_view host);

struct Scripts {
  redis::Script admit, take, done, acquire, renew, release, heartbeat, config;
  Scripts();
};
const Scripts& LuaScripts();

}  // namespace harvest::cluster::internal
