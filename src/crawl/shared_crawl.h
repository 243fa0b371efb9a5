// crawl::SharedCrawl: the seam through which one crawl process works as one worker of a crawl
// shared by many (docs/architecture.md §6, docs/distributed.md). src/cluster implements it over
// a Redis Cluster; without one (the default) the crawl is a single process and nothing here is
// called.
//
// A worker keeps its own frontier, robots gate, fetcher, process pool and WARC writer, and its
// own RocksDB state as a working store. What the workers share lives behind this interface:
// which URLs were admitted (the authoritative seen set), the queues of URLs not yet fetched,
// the URLs a worker took and has not finished, which worker crawls which hosts (partition
// leases), and the payload-digest index. The crawl talks to it like this:
//   - a URL that passes the local admission checks goes to Admit() instead of the frontier;
//   - URLs of the hosts this worker owns come back from TakeReady() and enter the frontier;
//   - when such a URL is finished (outcome recorded, records durable, links passed to Admit)
//     the crawl calls Done();
//   - a host's politeness, robots.txt and circuit breaker, saved locally, also go to PutHost();
//     a worker that takes the host over gets them back with TakeReady() (HostHandover);
//   - before each request, MayFetch() says whether this worker still owns the host;
//   - the crawl is finished when Complete() says the whole shared crawl is.
//
// Thread-safety: every method is called from the crawl's I/O thread, except FindDigest and
// PutDigest (the WARC writer thread), PutHost (the I/O thread or, for a robots.txt record
// once its capture is durable, the writer thread) and status() (any thread). Implementations do
// their network round trips on their own thread; these calls only exchange batches under a lock.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "frontier/url_item.h"
#include "state/state.h"

namespace harvest::crawl {

class SharedCrawl {
 public:
  virtual ~SharedCrawl() = default;

  // Called once by the crawl after its setup; `wake` wakes the I/O thread (new URLs ready, a
  // failure, completion). Non-OK: the crawl does not start.
  virtual Status Start(std::function<void()> wake) = 0;
  // Flushes what was passed to Admit and Done, gives up this worker's partitions (so another
  // worker may take them at once) and stops. Called by the crawl when it finishes or stops.
  virtual Status Stop() = 0;

  // A URL that passed the local checks (depth, scope, traps, the local seen set): admitted to
  // the shared crawl if no worker admitted it before (idempotent), batched.
  virtual void Admit(frontier::UrlItem item) = 0;
  // A host's state as its owner saved it last (each part absent when never saved).
  struct HostRecords {
    std::optional<state::HostPoliteness> politeness;
    std::optional<state::BreakerRecord> breaker;
    std::optional<state::RobotsRecord> robots;
    // By host name (PutHost's `host` is then a name, not an origin): http->https upgrades,
    // and the budget counters (the daily quota's requests: docs/admission.md "Budgets"),
    // so the worker that takes the host over goes on counting.
    std::optional<state::UpgradeRecord> upgrade;
    std::optional<frontier::HostCounters> counters;
  };
  // What a worker starts from when it takes a host over with its partition.
  struct HostHandover {
    std::string host;
    HostRecords records;
    // Wall µs before which no request to the host may start: its last recorded request's end
    // plus its delay, or — when the previous owner died with a URL of the host in hand, so a
    // request may still be running — the longest a request lasts plus the delay.
    int64_t not_before_us = 0;
  };

  // What TakeReady hands over.
  struct Taken {
    // URLs of this worker's hosts to crawl now (item.recrawl: due again, docs/freshness.md).
    std::vector<frontier::UrlItem> urls;
    // The saved state of the hosts of partitions taken since the last call. A host's state
    // comes in the same call as its partition's first URLs or earlier, never later.
    std::vector<HostHandover> hosts;
    // For a recrawl URL, the record of its last fetch by whichever worker made it
    // (validators for a conditional GET, digest and SimHash for change detection).
    std::vector<std::pair<uint64_t, state::SeenRecord>> previous;  // by fingerprint
  };
  // Appends to `out`.
  virtual void TakeReady(Taken* out) = 0;
  // Saves the parts of `host`'s state that are set (replacing what was saved), written no
  // later than the next Done of the host's partition, and only while this worker owns it.
  virtual void PutHost(const std::string& host, const HostRecords& parts) = 0;
  // A URL from TakeReady is finished; `delay` is its host's delay now (a worker taking the host
  // over waits it out). With `record` (a continuous crawl): the URL's new seen record, whose
  // next_due_us (when not 0) schedules its recrawl in the shared crawl — by whichever worker
  // then holds its host.
  virtual void Done(const frontier::UrlItem& item, std::chrono::milliseconds delay,
                    const state::SeenRecord* record) = 0;
  // False when this worker no longer holds the lease on `host`'s partition (or holds it with
  // less than the safety margin left): no request may start.
  virtual bool MayFetch(std::string_view host) = 0;
  // True when no URL is queued or taken anywhere in the shared crawl and everything passed to
  // Admit and Done has been written.
  virtual bool Complete() = 0;
  // Non-OK once the shared crawl failed for this worker (store unreachable beyond its retry
  // time, a lease lost): the crawl stops and returns it.
  virtual Status status() = 0;

  // This worker's share, for its admin API (any thread).
  struct Share {
    std::string worker;
    int partitions_held = 0, partitions = 0;
    uint64_t taken = 0, done = 0, admitted_new = 0;
  };
  virtual Share share() = 0;

  // The shared payload-digest index (revisit records across workers). Writer thread.
  virtual std::optional<state::DigestRecord> FindDigest(const std::string& digest) = 0;
  virtual void PutDigest(const std::string& digest, const state::DigestRecord& record) = 0;
};

}  // namespace harvest::crawl
