// Private to src/state: the RocksDB-backed frontier::QueueStore.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "state/internal.h"

namespace harvest::state {

class QueueStoreImpl final : public frontier::QueueStore {
 public:
  QueueStoreImpl(StateDb::Impl* db, int priority_classes);
  ~QueueStoreImpl() override;

  // Counts the entries left by an earlier run, per host. Errors are sticky in db->error.
  Status Load();

  void RegisterHost(frontier::HostId id, std::string_view host) override;
  void Push(frontier::HostId id, frontier::UrlItem item, bool front) override;
  std::optional<frontier::UrlItem> Pop(frontier::HostId id) override;
  size_t Size(frontier::HostId id) const override;
  std::vector<frontier::UrlItem> Drain(frontier::HostId id) override;

  void OnDone() { --on_disk_; }
  void FillStats(StateStats* st) const;
  void ForEachLoadedHost(const std::function<void(const std::string&, size_t)>& fn) const;

 private:
  // Position in a host's key space: (class, seq).
  // Within a host: lowest class first; in a class, items put back first (most recent
  // first), then FIFO by sequence. Per class, the items with seq < disk_from[c] are in RAM
  // (or popped); the disk_only[c] items with seq >= disk_from[c] are only on disk.
  struct Host {
    std::string name;
    uint32_t id = 0;  // persistent host id
    size_t size = 0;  // items not yet popped
    std::vector<frontier::UrlItem> front;   // put back after a lease (already persisted)
    std::vector<frontier::UrlItem> window;  // ascending (class, seq) from window_head
    size_t window_head = 0;
    std::vector<uint64_t> disk_from;   // per class; allocated on the first spill
    std::vector<uint32_t> disk_only;   // per class
    size_t InRam() const { return front.size() + window.size() - window_head; }
  };
  // Lowest class with anything to serve, or -1.
  int LowestClass(const Host& h) const;
  void InsertWindow(Host& h, frontier::UrlItem item);
  void Refill(Host& h, int cls, size_t max_items);
  void CompactWindow(Host& h);

  StateDb::Impl* db_;
  int classes_;
  std::vector<Host> hosts_;  // by frontier host id
  uint64_t next_seq_ = 1;
  size_t ram_items_ = 0;
  int64_t on_disk_ = 0;
  size_t per_host_cap_;
  // Loaded at start and not yet registered: name -> (persistent id, entries).
  std::unordered_map<std::string, std::pair<uint32_t, std::vector<size_t>>> loaded_;
};

}  // namespace harvest::state
