// RedisCrawl::Impl, private to src/cluster: a worker's side of a crawl shared over a Redis
// Cluster (cluster.h, docs/distributed.md). The crawl's I/O thread exchanges batches with it
// under a mutex; its own thread does every round trip. It owns a PartitionLeases
// (partition_leases.h: heartbeats, sticky shares, acquiring, renewing and giving up leases,
// reading a partition's hosts), which it calls on that thread, and keeps the URL flow under
// the leases. The code: redis_crawl.cc (the exchange with the crawl, the round-trip loop),
// worker_flow.cc (admissions, done marks and host records, taking URLs, completion, handing
// an acquired partition's hosts to the crawl and giving a partition up).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "cluster/cluster.h"
#include "cluster/internal.h"
#include "cluster/partition_leases.h"

namespace harvest::cluster {

class RedisCrawl::Impl {
 public:
  Impl(WorkerOptions o, std::unique_ptr<redis::Cluster> r);
  ~Impl() { (void)Stop(); }
  Status CheckConfig();
  Status Start(std::function<void()> wake);
  Status Stop();

  // A kill -9: the thread ends at once; nothing buffered is written, no lease given up.
  void AbandonForTesting();
  void Admit(frontier::UrlItem item);
  void TakeReady(crawl::SharedCrawl::Taken* out);
  void PutHost(const std::string& host, const crawl::SharedCrawl::HostRecords& parts);
  void Done(const frontier::UrlItem& item, std::chrono::milliseconds delay,
            const state::SeenRecord* record);
  bool MayFetch(std::string_view host);
  bool Complete() { return complete_.load(); }
  Status status();
  std::optional<state::DigestRecord> FindDigest(const std::string& digest);
  void PutDigest(const std::string& digest, const state::DigestRecord& rec);
  crawl::SharedCrawl::Share share() const;
  WorkerStats stats() const;

 private:
  // A partition's URL flow on this worker (its lease: leases_).
  struct Part {
    size_t taken = 0;       // handed out, not yet done
    int64_t next_take = 0;  // steady ms
    int64_t delay_ms = 0;   // the largest host delay Done reported
    int64_t idle_ms = 0;    // the current poll interval of an empty partition
    std::map<std::string, std::string> host_records;  // to write: field → value
    int64_t host_records_since = 0;                   // steady ms of the oldest unwritten
  };
  struct DoneMark {
    int partition;
    uint64_t fp;
    int64_t delay_ms;
    bool schedule = false;  // a continuous crawl: the URL's seen record and recrawl
    int64_t due_ms = 0;     // wall; 0: not scheduled
    std::string record;     // state::EncodeSeen
    std::string item;       // the URL as it comes back due (recrawl flag set)
  };
  struct HostWrite {
    int partition;
    std::string field;  // "p:", "b:" or "r:" and the host key
    std::string value;  // the state's encoding of the record
  };

  int64_t WallMs() const { return clock_->WallMicros() / 1000; }
  int64_t SteadyMs() const { return internal::Ms(clock_->Now()); }
  void Fail(Status s) EXCLUDES(mu_);
  bool failed() EXCLUDES(mu_);

  // The round trips, in an order that keeps the rules: a page's links are admitted before
  // its done mark is sent (both come in one swap), leases are renewed before URLs are taken.
  void Loop();
  void PublishStats() EXCLUDES(mu_);
  Result<std::vector<redis::Reply>> RunAll(const std::vector<redis::Request>& reqs);
  bool FlushAdmits(std::vector<frontier::UrlItem> items);

  // Done marks and host records (worker_flow.cc).
  bool FlushDones(const std::vector<DoneMark>& dones, std::vector<HostWrite> host_writes);
  // The done script for partition `p`: done marks, recrawl schedules and the partition's
  // host records waiting (taken from the partition).
  redis::Request DoneRequest(int p, std::vector<std::string> fps,
                             const std::vector<const DoneMark*>& schedules);

  // The leases' share (PartitionLeases::Balance); an acquired partition's hosts go to the
  // crawl (TakeReady) before any of its URLs, and it is counted.
  void Balance();
  // Gives up partition `p` (PartitionLeases::GiveUp), its host records written first.
  void GiveUp(int p);

  // Partitions of ours another worker admitted URLs to since the last look.
  void ReadWakes();
  void Take();

  // Complete: nothing of ours outstanding and every partition's pending count 0. Returns
  // false when it asked the cluster and the crawl was not complete.
  bool CheckComplete();

  WorkerOptions o_;
  Clock* clock_;
  std::unique_ptr<redis::Cluster> redis_;  // the worker's thread only
  const int count_;
  const std::string member_;
  std::vector<Part> parts_;      // the worker's thread only
  std::set<int> hosts_waiting_;  // partitions with host records to write
  // Valid and ValidCount from any thread (MayFetch, share), the rest the worker's thread only.
  PartitionLeases leases_;
  int64_t check_ms_ = 250;

  // The writer thread's connection (FindDigest, PutDigest); stats() reads its counters,
  // taking digest_mu_ with mu_ held.
  mutable Mutex digest_mu_ ACQUIRED_AFTER(mu_);
  std::unique_ptr<redis::Cluster> digest_redis_ GUARDED_BY(digest_mu_);

  // The crawl's threads exchange batches with the worker's thread under mu_.
  mutable Mutex mu_;
  CondVar cv_;
  std::vector<frontier::UrlItem> admit_buf_ GUARDED_BY(mu_);
  uint64_t admit_gen_ GUARDED_BY(mu_) = 0;  // Admit calls so far
  std::vector<DoneMark> done_buf_ GUARDED_BY(mu_);
  std::vector<HostWrite> host_buf_ GUARDED_BY(mu_);
  std::vector<frontier::UrlItem> ready_ GUARDED_BY(mu_);
  // Before ready_ (TakeReady).
  std::vector<crawl::SharedCrawl::HostHandover> handover_ GUARDED_BY(mu_);
  // Of recrawls in ready_.
  std::vector<std::pair<uint64_t, state::SeenRecord>> previous_ GUARDED_BY(mu_);
  bool started_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool abandon_ GUARDED_BY(mu_) = false;
  Status status_ GUARDED_BY(mu_);
  WorkerStats stats_ GUARDED_BY(mu_);
  redis::Cluster::Stats redis_stats_ GUARDED_BY(mu_);
  std::atomic<bool> complete_{false};
  std::function<void()> wake_;  // set by Start before the thread starts, then constant
  std::thread thread_;
};

}  // namespace harvest::cluster
