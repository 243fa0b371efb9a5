// Private to src/state: the frontier's queue store in the `queues` column family of a
// StateDb (StateDb::NewQueueStore). Every item is persisted on Push; a bounded RAM window
// at the head of each host's queue saves reads; the rest is read back in key order.
// I/O thread only, like StateDb's writes.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "frontier/queue_store.h"
#include "state/state_db_impl.h"

namespace harvest::state {

class RocksQueueStore final : public frontier::QueueStore {
 public:
  RocksQueueStore(StateDb::Impl* db, int priority_classes);
  ~RocksQueueStore() override;

  // Counts the entries left by an earlier run, per host. Errors are also returned by
  // StateDb::status().
  Status Load();

  void RegisterHost(frontier::HostId id, std::string_view host) override;
  void UnregisterHost(frontier::HostId id) override;
  void Push(frontier::HostId id, frontier::UrlItem item, bool front) override;
  std::optional<frontier::UrlItem> Pop(frontier::HostId id) override;
  size_t Size(frontier::HostId id) const override;
  int BestClass(frontier::HostId id) const override;
  std::vector<frontier::UrlItem> Drain(frontier::HostId id) override;

  void OnDone() { --on_disk_; }
  // A queue sequence for an entry kept elsewhere (a parked URL).
  uint64_t TakeSeq() { return next_seq_++; }
  void FillStats(StateStats* st) const;
  void ForEachLoadedHost(const std::function<void(const std::string&, size_t)>& fn) const;

 private:
  // Position in a host's key space: (class, seq).
  // Within a host: lowest class first; in a class, items put back first (most recent
  // first), then FIFO by sequence. Per class c, the items with seq < spill[c].from are in
  // RAM (or popped); the spill[c].only items with seq >= spill[c].from are only on disk.
  // Memory: a crawl of millions of hosts keeps one Host per host, most with nothing in RAM
  // and some items only on disk, so the RAM window and the per-class disk counters are
  // allocated only while used (~100 bytes per host plus the name).
  struct Ram {
    std::vector<frontier::UrlItem> front;   // put back after a lease (already persisted)
    std::vector<frontier::UrlItem> window;  // ascending (class, seq) from window_head
    size_t window_head = 0;
  };
  struct Spill {  // per class
    uint64_t from = 0;
    uint32_t only = 0;
  };
  struct Host {
    std::string name;
    uint32_t id = 0;                 // persistent host id
    size_t size = 0;                 // items not yet popped
    std::unique_ptr<Ram> ram;        // while items are in RAM
    std::unique_ptr<Spill[]> spill;  // per class; allocated on the first spill
    size_t InRam() const {
      return ram ? ram->front.size() + ram->window.size() - ram->window_head : 0;
    }
    Ram& MutableRam() {
      if (!ram) ram = std::make_unique<Ram>();
      return *ram;
    }
  };
  // Lowest class with anything to serve, or -1.
  int LowestClass(const Host& h) const;
  void InsertWindow(Host& h, frontier::UrlItem item);
  void Refill(Host& h, int cls, size_t max_items);
  void CompactWindow(Host& h);

  StateDb::Impl* db_;
  int classes_;
  // By frontier host id; a deque grows without moving (no transient copy of 1 M hosts).
  std::deque<Host> hosts_;
  uint64_t next_seq_ = 1;
  size_t ram_items_ = 0;
  int64_t on_disk_ = 0;
  size_t per_host_cap_;
  // Loaded at start and not yet registered: name -> persistent id, entries and lowest
  // sequence per class.
  struct Loaded {
    uint32_t id = 0;
    std::vector<size_t> n;
    std::vector<uint64_t> first;
  };
  std::unordered_map<std::string, Loaded> loaded_;
};

}  // namespace harvest::state
