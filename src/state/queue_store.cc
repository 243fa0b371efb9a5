// The RocksDB-backed queue store: every item is persisted on Push; a bounded RAM window at
// the head of each host's queue saves reads; the rest is read back in key order.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "state/queue_store_impl.h"

namespace harvest::state {

QueueStoreImpl::QueueStoreImpl(StateDb::Impl* db, int priority_classes)
    : db_(db),
      classes_(std::max(priority_classes, 1)),
      per_host_cap_(std::max<size_t>(db->options.window_per_host, 1) * 4) {
  db_->queue_store = this;
}

QueueStoreImpl::~QueueStoreImpl() {
  if (db_->queue_store == this) db_->queue_store = nullptr;
}

Status QueueStoreImpl::Load() {
  std::unordered_map<uint32_t, std::vector<size_t>> counts;
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.readahead_size = 2u << 20;
  ro.total_order_seek = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(ro, db_->queues));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key();
    if (k.size() != kQueueKeySize) continue;
    const std::string_view key(k.data(), k.size());
    const auto cls = static_cast<uint8_t>(key[4]);
    if (cls >= classes_) {
      spdlog::error("state: queue entry of class {} >= {} classes ignored", cls, classes_);
      continue;
    }
    auto& per_class = counts[static_cast<uint32_t>(ReadBigEndian(key, 4))];
    if (per_class.empty()) per_class.assign(classes_, 0);
    ++per_class[cls];
    next_seq_ = std::max(next_seq_, ReadBigEndian(key.substr(5), 8) + 1);
    ++on_disk_;
  }
  if (Status s = FromRocks(it->status(), "state: loading host queues"); !s.ok()) return s;
  for (auto& [id, n] : counts) {
    std::string name;
    if (!db_->GetValue(db_->hosts, HostIdKey(id), &name).ok()) {
      spdlog::error("state: queued items of unknown host id {} ignored", id);
      continue;
    }
    loaded_.emplace(std::move(name), std::make_pair(id, std::move(n)));
  }
  return Status::Ok();
}

void QueueStoreImpl::ForEachLoadedHost(
    const std::function<void(const std::string&, size_t)>& fn) const {
  std::vector<std::pair<std::string, size_t>> snapshot;
  snapshot.reserve(loaded_.size());
  for (const auto& [name, entry] : loaded_) {
    size_t n = 0;
    for (size_t c : entry.second) n += c;
    snapshot.emplace_back(name, n);
  }
  std::sort(snapshot.begin(), snapshot.end());
  for (const auto& [name, n] : snapshot) fn(name, n);
}

void QueueStoreImpl::RegisterHost(frontier::HostId id, std::string_view name) {
  if (id >= hosts_.size()) hosts_.resize(id + 1);
  Host& h = hosts_[id];
  h.name = std::string(name);
  auto it = loaded_.find(h.name);
  if (it == loaded_.end()) {
    h.id = db_->HostId(name);
    return;
  }
  h.id = it->second.first;
  h.disk_from.assign(classes_, 0);
  h.disk_only.assign(classes_, 0);
  for (int c = 0; c < classes_; ++c) {
    h.disk_only[c] = static_cast<uint32_t>(it->second.second[c]);
    h.size += it->second.second[c];
  }
  loaded_.erase(it);
}

void QueueStoreImpl::CompactWindow(Host& h) {
  if (h.window_head == h.window.size()) {
    h.window.clear();
    h.window_head = 0;
    if (h.window.capacity() > per_host_cap_) h.window.shrink_to_fit();
  } else if (h.window_head > 8 && h.window_head * 2 > h.window.size()) {
    h.window.erase(h.window.begin(), h.window.begin() + static_cast<ptrdiff_t>(h.window_head));
    h.window_head = 0;
  }
}

void QueueStoreImpl::InsertWindow(Host& h, frontier::UrlItem item) {
  auto before = [](const frontier::UrlItem& a, const frontier::UrlItem& b) {
    return a.priority != b.priority ? a.priority < b.priority : a.store_seq < b.store_seq;
  };
  auto pos = std::upper_bound(h.window.begin() + static_cast<ptrdiff_t>(h.window_head),
                              h.window.end(), item, before);
  h.window.insert(pos, std::move(item));
  ++ram_items_;
}

void QueueStoreImpl::Push(frontier::HostId id, frontier::UrlItem item, bool front) {
  Host& h = hosts_[id];
  ++h.size;
  if (front) {  // a leased item put back: still persisted, keep it in RAM
    h.front.push_back(std::move(item));
    ++ram_items_;
    return;
  }
  item.store_host = h.id;
  item.store_seq = next_seq_++;
  const int c = item.priority;
  db_->batch.Put(db_->queues, QueueKey(h.id, static_cast<uint8_t>(c), item.store_seq),
                 EncodeItem(item));
  ++on_disk_;
  const bool class_spilled = !h.disk_only.empty() && h.disk_only[c] > 0;
  const bool room = ram_items_ < db_->options.queue_ram_items &&
                    h.window.size() - h.window_head < per_host_cap_;
  if (!class_spilled && room) {
    InsertWindow(h, std::move(item));
  } else {
    if (h.disk_only.empty()) {
      h.disk_from.assign(classes_, 0);
      h.disk_only.assign(classes_, 0);
    }
    if (h.disk_only[c]++ == 0) h.disk_from[c] = item.store_seq;
  }
  db_->MaybeCommit();
}

int QueueStoreImpl::LowestClass(const Host& h) const {
  int best = -1;
  auto consider = [&best](int c) {
    if (best < 0 || c < best) best = c;
  };
  for (const auto& it : h.front) consider(it.priority);
  if (h.window_head < h.window.size()) consider(h.window[h.window_head].priority);
  for (int c = 0; c < static_cast<int>(h.disk_only.size()); ++c) {
    if (h.disk_only[c] > 0) {
      consider(c);
      break;
    }
  }
  return best;
}

void QueueStoreImpl::Refill(Host& h, int cls, size_t max_items) {
  // Disk-only items may still sit in the pending batch: write it first.
  if (!db_->Commit().ok()) return;
  rocksdb::ReadOptions ro;
  ro.prefix_same_as_start = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(ro, db_->queues));
  size_t got = 0;
  for (it->Seek(QueueKey(h.id, static_cast<uint8_t>(cls), h.disk_from[cls]));
       it->Valid() && got < max_items; it->Next()) {
    rocksdb::Slice k = it->key();
    if (k.size() != kQueueKeySize) continue;
    const std::string_view key(k.data(), k.size());
    if (ReadBigEndian(key, 4) != h.id || static_cast<uint8_t>(key[4]) != cls) break;
    const uint64_t seq = ReadBigEndian(key.substr(5), 8);
    h.disk_from[cls] = seq + 1;
    --h.disk_only[cls];
    frontier::UrlItem item;
    if (!DecodeItem(std::string_view(it->value().data(), it->value().size()), &item)) {
      spdlog::error("state: unreadable queue entry of {} skipped", h.name);
      --h.size;
      continue;
    }
    item.host = h.name;
    item.store_host = h.id;
    item.store_seq = seq;
    item.priority = cls;
    InsertWindow(h, std::move(item));
    ++got;
    if (h.disk_only[cls] == 0) break;
  }
  if (!it->status().ok()) {
    db_->SetError(FromRocks(it->status(), "state: reading host queue of " + h.name));
    return;
  }
  if (got == 0 && h.disk_only[cls] > 0) {
    // The counters say more items exist than the database holds (a bug or corruption):
    // trust the database so the host does not spin.
    spdlog::error("state: host {} expected {} more queued items on disk, found none", h.name,
                  h.disk_only[cls]);
    h.size -= h.disk_only[cls];
    h.disk_only[cls] = 0;
  }
}

std::optional<frontier::UrlItem> QueueStoreImpl::Pop(frontier::HostId id) {
  if (id >= hosts_.size()) return std::nullopt;
  Host& h = hosts_[id];
  while (h.size > 0) {
    const int c = LowestClass(h);
    if (c < 0) return std::nullopt;
    // Put-back items of the class first, most recent first.
    for (size_t i = h.front.size(); i-- > 0;) {
      if (h.front[i].priority == c) {
        frontier::UrlItem item = std::move(h.front[i]);
        h.front.erase(h.front.begin() + static_cast<ptrdiff_t>(i));
        --ram_items_;
        --h.size;
        return item;
      }
    }
    if (h.window_head < h.window.size() && h.window[h.window_head].priority == c) {
      frontier::UrlItem item = std::move(h.window[h.window_head++]);
      --ram_items_;
      --h.size;
      CompactWindow(h);
      return item;
    }
    // Class c is only on disk.
    const size_t budget = db_->options.queue_ram_items > ram_items_
                              ? db_->options.queue_ram_items - ram_items_
                              : 0;
    const size_t before = h.disk_only[c];
    Refill(h, c, std::clamp<size_t>(budget, 1, db_->options.window_per_host));
    if (h.disk_only[c] == before) return std::nullopt;  // read error (sticky in status())
  }
  return std::nullopt;
}

size_t QueueStoreImpl::Size(frontier::HostId id) const {
  return id < hosts_.size() ? hosts_[id].size : 0;
}

std::vector<frontier::UrlItem> QueueStoreImpl::Drain(frontier::HostId id) {
  std::vector<frontier::UrlItem> out;
  if (id >= hosts_.size()) return out;
  while (auto item = Pop(id)) out.push_back(std::move(*item));
  return out;
}

void QueueStoreImpl::FillStats(StateStats* st) const {
  st->queued_on_disk = on_disk_ > 0 ? static_cast<uint64_t>(on_disk_) : 0;
  st->queued_in_ram = ram_items_;
}

std::unique_ptr<frontier::QueueStore> StateDb::NewQueueStore(int priority_classes) {
  auto store = std::make_unique<QueueStoreImpl>(impl_.get(), priority_classes);
  if (Status s = store->Load(); !s.ok()) impl_->SetError(s);
  return store;
}

void StateDb::ForEachLoadedHost(
    const std::function<void(const std::string& host, size_t n)>& fn) const {
  if (impl_->queue_store != nullptr) impl_->queue_store->ForEachLoadedHost(fn);
}

}  // namespace harvest::state
