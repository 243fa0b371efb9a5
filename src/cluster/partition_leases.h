// PartitionLeases, private to src/cluster: which partitions a worker of a shared crawl holds
// and until when (cluster.h, docs/distributed.md "Leases, failures and what can be
// repeated"). It sends the worker's heartbeat, keeps its sticky share (takes free partitions
// up to ceil(partitions / live workers), drains some only above that), renews the leases
// (timed from before the renewal is sent, less the margin) and gives them up; for a
// partition it acquires, it reads the saved state of the partition's hosts for the crawl.
// The URL flow under the leases (admissions, taking, done marks, host records) is
// RedisCrawl::Impl's (worker.h), which owns this class and calls it on its round-trip thread.
//
// It reports, it does not act for the worker: a failed round trip or a lost lease comes back
// as a Status (the worker then fails and calls RevokeAll), a partition acquired as an
// Acquired (the worker hands its hosts to the crawl and counts it).
//
// Thread-safety: Valid, ValidCount and RevokeAll from any thread (atomics); everything else
// on one thread, the worker's round-trip thread (asserted).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/thread_checker.h"
#include "cluster/cluster.h"
#include "crawl/shared_crawl.h"
#include "redis/redis.h"

namespace harvest::cluster {

class PartitionLeases {
 public:
  // A partition's lease as this worker holds it.
  struct Lease {
    bool owned = false;
    bool draining = false;  // above the share: no more URLs taken, given up when idle
    std::string token;      // "<member> <epoch>": the scripts' fencing check
    std::string epoch;
    int64_t hold_until_wall = 0;  // no URL handed out before (ms)
  };

  // A partition Balance acquired: its hosts go to the crawl before any of its URLs.
  struct Acquired {
    int partition = 0;
    bool graceful = false;     // given up by its last owner; false: its lease expired
    int64_t requeued = 0;      // URLs the last owner had taken, put back in their queues
    size_t hosts_in_hand = 0;  // the hosts of those URLs
    std::vector<crawl::SharedCrawl::HostHandover> hosts;  // HandOverHosts
  };

  // `redis`: the worker's connection, used on its thread only; `member`: the worker's id in
  // the crawl ("<worker_id>#<nonce>", the lease owner); `taken(p)`: the URLs of partition p
  // handed out and not yet done (the worker's count; a draining partition waits for 0).
  PartitionLeases(WorkerOptions o, Clock* clock, redis::Cluster* redis, std::string member,
                  std::function<size_t(int partition)> taken);
  PartitionLeases(const PartitionLeases&) = delete;
  PartitionLeases& operator=(const PartitionLeases&) = delete;

  // Any thread: true iff a request to a host of partition `p` may start at steady ms `now`
  // (the lease has more than the margin left).
  bool Valid(int p, int64_t now) const {
    return now < valid_until_[p].load(std::memory_order_relaxed);
  }
  // Any thread: the partitions Valid at steady ms `now`.
  int ValidCount(int64_t now) const;
  // Any thread: no request starts on any partition from now on (the worker failed).
  void RevokeAll();

  int count() const { return count_; }
  const Lease& lease(int p) const;
  // A script found partition p's lease gone: it is not ours any more.
  void Drop(int p);

  // Refreshes this worker's entry in the crawl's set of live workers (or, `leave`, removes
  // it) and notes how many are live.
  [[nodiscard]] Status Heartbeat(bool leave);
  // Sticky shares: above the share, marks the partitions with the fewest URLs taken as
  // draining; below it, acquires free partitions (appended to `acquired`, also when an error
  // stops it part way).
  [[nodiscard]] Status Balance(std::vector<Acquired>* acquired);
  // Renews every lease held. Aborted when one was lost (expired before it was renewed).
  [[nodiscard]] Status Renew();

  // The draining partitions with nothing taken here any more: to give up.
  std::vector<int> Drained() const;
  // Every partition held, draining or not.
  std::vector<int> Held() const;
  // Gives up partition p: no request starts there from now on; `host_records` (the done
  // script with the partition's host records still to write, if any) is run; then the lease
  // is released with the quiet time before which the next owner makes no request (now plus
  // the largest host delay `delay_ms`, at least 1 s). Errors are logged: the lease expires.
  void GiveUp(int p, int64_t delay_ms, std::optional<redis::Request> host_records);

  // The saved state of a partition's hosts, for the crawl (TakeReady), before any of its
  // URLs. A host's first request waits for its last recorded request's end plus its delay
  // (the previous owner's clock: plus the margin). When the lease expired (!graceful), a host
  // whose URL the dead owner had in hand (`in_hand`) may still have a request running: it
  // waits the longest a request lasts plus its delay (takeover_hold covers the default
  // delay; a longer Crawl-delay adds). A host with no URL in hand had its last request's end
  // recorded with its done mark. `records`: the partition's `hosts` hash (field, value, ...).
  std::vector<crawl::SharedCrawl::HostHandover> HandOverHosts(int partition, bool graceful,
                                                              const redis::Reply& in_hand,
                                                              const redis::Reply& records) const;

 private:
  // Partitions held and not draining.
  size_t Owned() const;
  // Pipelined; an empty list needs no round trip.
  Result<std::vector<redis::Reply>> RunAll(const std::vector<redis::Request>& reqs);
  // When a lease renewed or acquired with a request sent at steady ms `sent` stops serving.
  int64_t ValidUntil(int64_t sent) const;
  int64_t SteadyMs() const;

  const WorkerOptions o_;
  Clock* const clock_;
  redis::Cluster* const redis_;
  const std::string member_;
  const std::function<size_t(int)> taken_;
  const int count_;
  ThreadChecker thread_;
  std::vector<Lease> leases_;
  std::unique_ptr<std::atomic<int64_t>[]> valid_until_;  // steady ms; 0: not ours
  size_t live_workers_ = 1;
};

}  // namespace harvest::cluster
