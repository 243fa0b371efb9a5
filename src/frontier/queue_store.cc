// The in-memory QueueStore: per host, one FIFO per priority class.
#include "frontier/queue_store.h"

#include <deque>

namespace harvest::frontier {
namespace {

class MemoryQueueStore final : public QueueStore {
 public:
  explicit MemoryQueueStore(int priority_classes) : classes_(priority_classes) {}

  void RegisterHost(HostId id, std::string_view /*host*/) override {
    if (id >= hosts_.size()) hosts_.resize(id + 1);
  }

  void UnregisterHost(HostId id) override {
    if (id < hosts_.size()) hosts_[id] = HostQueues{};
  }

  void Push(HostId id, UrlItem item, bool front) override {
    HostQueues& h = hosts_[id];
    // Deques are created on first use: an empty std::deque already allocates a 512-byte
    // node, which 100 k hosts x 4 classes would waste.
    if (h.classes.empty()) h.classes.resize(classes_);
    auto& q = h.classes[item.priority];
    if (!q) q = std::make_unique<std::deque<UrlItem>>();
    if (front) {
      q->push_front(std::move(item));
    } else {
      q->push_back(std::move(item));
    }
    ++h.size;
  }

  std::optional<UrlItem> Pop(HostId id) override {
    HostQueues& h = hosts_[id];
    if (h.size == 0) return std::nullopt;
    for (auto& q : h.classes) {
      if (q && !q->empty()) {
        UrlItem item = std::move(q->front());
        q->pop_front();
        if (q->empty()) q.reset();
        --h.size;
        return item;
      }
    }
    return std::nullopt;
  }

  size_t Size(HostId id) const override { return id < hosts_.size() ? hosts_[id].size : 0; }

  int BestClass(HostId id) const override {
    if (id >= hosts_.size() || hosts_[id].size == 0) return -1;
    const auto& classes = hosts_[id].classes;
    for (size_t c = 0; c < classes.size(); ++c) {
      if (classes[c] && !classes[c]->empty()) return static_cast<int>(c);
    }
    return -1;
  }

  std::vector<UrlItem> Drain(HostId id) override {
    std::vector<UrlItem> out;
    while (auto item = Pop(id)) out.push_back(std::move(*item));
    hosts_[id].classes.clear();
    return out;
  }

 private:
  struct HostQueues {
    std::vector<std::unique_ptr<std::deque<UrlItem>>> classes;
    size_t size = 0;
  };
  int classes_;
  std::vector<HostQueues> hosts_;
};

}  // namespace

std::unique_ptr<QueueStore> NewMemoryQueueStore(int priority_classes) {
  return std::make_unique<MemoryQueueStore>(priority_classes < 1 ? 1 : priority_classes);
}

}  // namespace harvest::frontier
