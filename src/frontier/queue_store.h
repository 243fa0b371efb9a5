// QueueStore: where the frontier keeps the URLs waiting in each host's queue.
//
// The scheduler (Frontier) owns host state and timing; the queued items live behind this
// small interface so that a disk-backed store (RocksDB, Redis — docs/architecture.md §5, §6) can
// replace the in-memory one without touching the scheduler. Hosts are identified by a dense id the
// frontier assigns; RegisterHost tells the store the id's name (a persistent store keys its
// records by name).
//
// Order within a host: lowest priority class first; FIFO within a class; PushFront puts an
// item ahead of the others of its class.
//
// Thread-safety: none; called only from the frontier's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "frontier/url_item.h"

namespace harvest::frontier {

using HostId = uint32_t;

class QueueStore {
 public:
  virtual ~QueueStore() = default;
  virtual void RegisterHost(HostId id, std::string_view host) = 0;
  // The frontier forgot the host (its queue is empty; docs/architecture.md §1.5): its RAM is
  // freed and `id` may be registered again for another host.
  virtual void UnregisterHost(HostId id) = 0;
  // REQUIRES: 0 <= item.priority < priority classes (the frontier clamps).
  // front = true puts back an item that was popped (a lease served something else): a
  // persistent store still holds it and does not write it again.
  virtual void Push(HostId id, UrlItem item, bool front) = 0;
  // The next item of the host (see order above), or nullopt when its queue is empty.
  virtual std::optional<UrlItem> Pop(HostId id) = 0;
  virtual size_t Size(HostId id) const = 0;
  // The class of the item Pop would return (the host's best), or -1 when its queue is
  // empty. Cheap: the scheduler asks it whenever a host becomes ready.
  virtual int BestClass(HostId id) const = 0;
  // Removes and returns every item of the host, in Pop order.
  virtual std::vector<UrlItem> Drain(HostId id) = 0;
};

std::unique_ptr<QueueStore> NewMemoryQueueStore(int priority_classes);

}  // namespace harvest::frontier
