// cluster: one crawl shared by many worker processes over a Redis Cluster (docs/architecture.md
// §6, docs/distributed.md). `RedisCrawl` implements crawl::SharedCrawl.
//
// Hosts are split into partitions by a hash of the host name (or of its registrable domain),
// many more partitions than workers; an operator's hot hosts get a partition each. A worker
// holds leases on partitions — a key with an expiry and a fencing epoch, renewed — and only
// the holder fetches a partition's hosts, so politeness stays inside one process with no
// remote call per request. A worker takes free partitions up to its share (partitions /
// live workers, rounded up) and gives one away only when it holds more than that (sticky),
// after its work there is finished; a dead worker's leases expire and the others take them.
//
// Every key of a partition carries the partition's hash tag, so one Lua script (atomic, one
// round trip) does each step on one shard:
//   <prefix>:{p<N>}:seen      set of URL fingerprints admitted (the exact seen set)
//   <prefix>:{p<N>}:q:<host>  list of URLs of <host> not yet taken
//   <prefix>:{p<N>}:ready     list of the hosts whose list is not empty (round robin)
//   <prefix>:{p<N>}:taken     hash fingerprint → URL taken by the owner, not yet done
//   <prefix>:{p<N>}:pending   count of URLs admitted and not done (queued + taken)
//   <prefix>:{p<N>}:done      count of URLs done
//   <prefix>:{p<N>}:lease     "<worker>#<nonce> <epoch>", with an expiry
//   <prefix>:{p<N>}:epoch     the fencing counter
//   <prefix>:{p<N>}:released  the epoch of the last lease given up on purpose
//   <prefix>:{p<N>}:quiet     wall ms before which a new owner makes no request there
//   <prefix>:{p<N>}:hosts     hash "p:<host>" / "b:<host>" / "r:<host>" → the host's
//                             politeness (next-allowed time, Crawl-delay, given-up reason),
//                             circuit breaker, robots.txt record (the crawl state's encodings)
//   <prefix>:{p<N>}:due       sorted set: fingerprint by the wall ms its recrawl is due
//   <prefix>:{p<N>}:recs      hash "s:<fp>" → the URL's last seen record, "i:<fp>" → the URL
//                             as it comes back due (a continuous crawl, --recrawl)
// and once per crawl <prefix>:{g}:workers (sorted set of live workers by expiry) and
// <prefix>:{g}:config (the partitioning every worker must share); payload digests are
// <prefix>:d:<digest> (spread over the cluster).
//
// Rules (docs/distributed.md):
//   - Admission is idempotent (SADD): every worker may be given the same seeds.
//   - A URL is taken (moved to `taken`) by the lease holder only, and done (removed, counted)
//     after its records are durable and its links admitted. A new owner first puts every
//     taken URL back in its queue: a dead worker's URLs are served again.
//   - A worker starts no request once its lease has less than `lease_margin` left by its own
//     clock (renewals are timed from before they are sent), and stops.
//   - A new owner starts from each host's saved state (robots.txt rules, breaker, Crawl-delay)
//     and makes its first request to a host after its last recorded request's end plus its
//     delay (plus the margin); when the lease was given up, not before the previous owner's
//     quiet time either; when it expired, a host the dead owner had a URL of in hand waits
//     `takeover_hold` (the longest a request may last, plus the default delay) plus its
//     Crawl-delay. Host records are written with the done marks, under the lease.
//
// Thread-safety: see crawl::SharedCrawl; RedisCrawl runs its round trips on its own thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "crawl/shared_crawl.h"
#include "redis/redis.h"

namespace harvest::cluster {

struct PartitionOptions {
  // Partitions of ordinary hosts. Every worker of a crawl must use the same partitioning
  // (checked against the cluster at start). Default 256.
  int partitions = 256;
  // Partition by registrable domain instead of host name (all of a site's hosts together).
  bool by_domain = false;
  // Host names that each get a partition of their own (numbered after the others).
  std::vector<std::string> hot_hosts;
};

// The partition of a host key ("h.test", "http://h.test:8080"): by host name, lower-cased,
// without scheme and port.
int PartitionOf(std::string_view host, const PartitionOptions& options);
int PartitionCount(const PartitionOptions& options);

struct WorkerOptions {
  redis::ClusterOptions redis;
  std::string prefix = "harvest";  // key namespace: one crawl per prefix
  std::string worker_id;           // required; letters, digits, '-', '_', '.'
  PartitionOptions partitions;
  std::chrono::milliseconds lease_ttl{15000};
  // No request starts when less than this is left of a lease (more than the clock skew
  // between workers and the time a renewal may take). Default 3 s.
  std::chrono::milliseconds lease_margin{3000};
  // After a lease that expired (its worker died), for a host it had a URL of in hand: the
  // longest a request may last plus the default host delay (a Crawl-delay adds). Default 60 s.
  std::chrono::milliseconds takeover_hold{60000};
  // URLs of one partition taken and not done at most (the local frontier's share). Default 256.
  size_t max_taken_per_partition = 256;
  // URLs taken from one host per round (round robin over the partition's hosts). Default 8.
  size_t take_per_host = 8;
  Clock* clock = nullptr;  // nullptr: the system clock
};

// Round trips and bytes of one worker (its own counters; docs/distributed.md).
struct WorkerStats {
  uint64_t admitted_sent = 0, admitted_new = 0, taken = 0, done = 0;
  uint64_t partitions_owned = 0, partitions_taken_over = 0, partitions_given_up = 0;
  uint64_t requeued = 0;  // URLs a dead owner had taken, put back by this worker
  redis::Cluster::Stats redis;
};

class RedisCrawl : public crawl::SharedCrawl {
 public:
  // Connects and checks the crawl's partitioning against the cluster's.
  static Result<std::unique_ptr<RedisCrawl>> Create(WorkerOptions options);
  ~RedisCrawl() override;

  Status Start(std::function<void()> wake) override;
  Status Stop() override;
  void Admit(frontier::UrlItem item) override;
  void TakeReady(Taken* out) override;
  void PutHost(const std::string& host, const HostRecords& parts) override;
  void Done(const frontier::UrlItem& item, std::chrono::milliseconds delay,
            const state::SeenRecord* record) override;
  bool MayFetch(std::string_view host) override;
  bool Complete() override;
  Status status() override;
  Share share() override;
  std::optional<state::DigestRecord> FindDigest(const std::string& digest) override;
  void PutDigest(const std::string& digest, const state::DigestRecord& record) override;

  WorkerStats stats() const;
  // Testing: what a kill -9 leaves — the round-trip thread ends at once, nothing buffered is
  // written and no lease is given up (they expire).
  void AbandonForTesting();

  class Impl;

 private:
  explicit RedisCrawl(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// What `harvest status --redis` prints (docs/distributed.md).
struct ClusterStatus {
  struct Worker {
    std::string id;
    int64_t expires_ms = 0;  // wall
    int partitions = 0;
  };
  std::vector<Worker> workers;
  int partitions = 0, unowned = 0;
  int64_t pending = 0, done = 0, seen = 0;
  std::string config;
};
Result<ClusterStatus> ReadStatus(const redis::ClusterOptions& redis, const std::string& prefix);
std::string StatusJson(const ClusterStatus& status);

}  // namespace harvest::cluster
