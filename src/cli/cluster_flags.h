// The flags of a shared crawl over a Redis Cluster (`harvest crawl --redis`, `harvest status
// --redis`; docs/distributed.md).
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cluster/cluster.h"
#include "crawl/crawl.h"

namespace harvest::cli {

struct ClusterFlags {
  std::string redis;      // --redis redis://HOST:PORT[,HOST:PORT...] ("" = not shared)
  std::string worker_id;  // --worker-id
  std::string prefix = "harvest";
  int partitions = 256;
  std::string partition_by = "host";
  std::vector<std::string> hot_hosts;
  std::optional<std::string> lease_ttl;
};

// --redis and --redis-prefix (both commands).
void AddRedisFlags(CLI::App* app, ClusterFlags* f);
// The worker flags of `harvest crawl`.
void AddWorkerFlags(CLI::App* app, ClusterFlags* f);

// The worker for a crawl with these options (its takeover hold from the fetch timeout and
// delay). InvalidArgument for bad flags; Unavailable when the cluster cannot be reached.
Result<std::unique_ptr<cluster::RedisCrawl>> MakeWorker(const ClusterFlags& f,
                                                        const crawl::CrawlOptions& options);

}  // namespace harvest::cli
