// Flags of a shared crawl (docs/distributed.md).
#include "cli/cluster_flags.h"

#include <algorithm>

#include "base/duration.h"

namespace harvest::cli {

void AddRedisFlags(CLI::App* app, ClusterFlags* f) {
  app->add_option("--redis", f->redis,
                  "Redis Cluster of a shared crawl: redis://HOST:PORT[,HOST:PORT...] "
                  "(docs/distributed.md)");
  app->add_option("--redis-prefix", f->prefix,
                  "Key prefix of the shared crawl in the cluster (default harvest)");
}

void AddWorkerFlags(CLI::App* app, ClusterFlags* f) {
  app->add_option("--worker-id", f->worker_id,
                  "This worker's name in a shared crawl (required with --redis; also in its "
                  "WARC file names)");
  app->add_option("--partitions", f->partitions,
                  "Partitions of the hosts of a shared crawl (default 256; every worker the same)")
      ->check(CLI::Range(1, 65536));
  app->add_option("--partition-by", f->partition_by,
                  "Partition hosts by host name or registrable domain: host|domain (default host)")
      ->check(CLI::IsMember({"host", "domain"}));
  app->add_option("--hot-host", f->hot_hosts,
                  "A host with a partition of its own (repeatable; every worker the same)")
      ->allow_extra_args(false);  // one value each: what follows may be a seed URL
  app->add_option("--lease-ttl", f->lease_ttl,
                  "Partition lease lifetime, e.g. 15s (default 15s; a dead worker's hosts wait "
                  "this long plus the fetch timeout)");
}

Result<std::unique_ptr<cluster::RedisCrawl>> MakeWorker(const ClusterFlags& f,
                                                        const crawl::CrawlOptions& options) {
  Result<redis::ClusterOptions> r = redis::ParseRedisUrl(f.redis);
  if (!r.ok()) return Status::InvalidArgument("--redis: " + r.status().message());
  cluster::WorkerOptions w;
  w.redis = std::move(*r);
  w.prefix = f.prefix;
  w.worker_id = f.worker_id;
  w.partitions.partitions = f.partitions;
  w.partitions.by_domain = f.partition_by == "domain";
  w.partitions.hot_hosts = f.hot_hosts;
  if (f.lease_ttl) {
    Result<std::chrono::milliseconds> ttl = ParseDuration(*f.lease_ttl);
    if (!ttl.ok() || *ttl < std::chrono::seconds(3) || *ttl > std::chrono::hours(1)) {
      return Status::InvalidArgument("--lease-ttl: a duration from 3s to 1h, got " + *f.lease_ttl);
    }
    w.lease_ttl = *ttl;
    w.lease_margin = std::min(w.lease_margin, *ttl / 3);
  }
  // A request of a dead worker may run for the whole fetch timeout, then the host's delay.
  w.takeover_hold = options.fetch.total_timeout + options.fetch.connect_timeout +
                    std::max(options.frontier.default_delay, std::chrono::milliseconds(1000)) +
                    w.lease_margin;
  return cluster::RedisCrawl::Create(std::move(w));
}

}  // namespace harvest::cli
