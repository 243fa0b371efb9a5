// Fuzz target for what a shared crawl reads from outside: queue entries read back from Redis
// (internal::DecodeItem; the host and seen records, state::Decode*), --redis URLs
// (redis::ParseRedisUrl), key slots and partitions of any host string. Never a crash; a decoded
// entry encodes back to itself; slots and partitions stay in range.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cluster/cluster.h"
#include "cluster/internal.h"
#include "state/state.h"

using namespace harvest;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  if (std::optional<frontier::UrlItem> item = cluster::internal::DecodeItem(in)) {
    std::optional<frontier::UrlItem> again =
        cluster::internal::DecodeItem(cluster::internal::EncodeItem(*item));
    if (!again || again->url != item->url || again->host != item->host || again->fp != item->fp ||
        again->depth != item->depth || again->via != item->via) {
      __builtin_trap();
    }
  }
  // Host and seen records a worker reads back from the cluster: decoded or refused.
  state::HostPoliteness politeness;
  (void)state::DecodePoliteness(in, &politeness);
  state::BreakerRecord breaker;
  (void)state::DecodeBreaker(in, &breaker);
  state::RobotsRecord robots;
  (void)state::DecodeRobots(in, &robots);
  state::SeenRecord seen;
  (void)state::DecodeSeen(in, &seen);
  Result<redis::ClusterOptions> url = redis::ParseRedisUrl(in);
  if (url.ok() && url->seeds.empty()) __builtin_trap();
  if (redis::KeySlot(in) >= redis::kSlots) __builtin_trap();
  cluster::PartitionOptions p;
  p.partitions = 7;
  p.hot_hosts = {"hot.test"};
  const int part = cluster::PartitionOf(in, p);
  if (part < 0 || part >= cluster::PartitionCount(p)) __builtin_trap();
  return 0;
}
