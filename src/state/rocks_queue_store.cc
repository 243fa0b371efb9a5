// RocksQueueStore: host queues persisted in the `queues` column family (rocks_queue_store.h).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "state/rocks_queue_store.h"

namespace harvest::state {

RocksQueueStore::RocksQueueStore(StateDb::Impl* db, int priority_classes)
    : db_(db),
      classes_(std::max(priority_classes, 1)),
      per_host_cap_(std::max<size_t>(db->options().window_per_host, 1) * 4) {
  db_->AttachQueueStore(this);
}

RocksQueueStore::~RocksQueueStore() { db_->DetachQueueStore(this); }

Status RocksQueueStore::Load() {
  struct Found {
    std::vector<size_t> n;
    std::vector<uint64_t> first;  // lowest sequence per class
  };
  std::unordered_map<uint32_t, Found> found;
  uint64_t readmitted = 0;
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.readahead_size = 2u << 20;
  ro.total_order_seek = true;
  std::unique_ptr<rocksdb::Iterator> it = db_->NewQueueIterator(ro);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key();
    uint32_t host = 0;
    uint8_t cls = 0;
    uint64_t seq = 0;
    if (!ParseQueueKey(db_->epoch_bits(), std::string_view(k.data(), k.size()), &host, &cls,
                       &seq)) {
      continue;
    }
    if (cls >= classes_) {
      spdlog::error("state: queue entry of class {} >= {} classes ignored", cls, classes_);
      continue;
    }
    Found& f = found[host];
    if (f.n.empty()) {
      f.n.assign(classes_, 0);
      f.first.assign(classes_, UINT64_MAX);
    }
    ++f.n[cls];
    f.first[cls] = std::min(f.first[cls], seq);
    next_seq_ = std::max(next_seq_, seq + 1);
    ++on_disk_;
    const std::string_view value(it->value().data(), it->value().size());
    if (db_->ReadmitIfNotIngested(seq, value)) ++readmitted;
  }
  if (Status s = FromRocks(it->status(), "state: loading host queues"); !s.ok()) return s;
  uint64_t parked_max = 0;
  if (Status s = db_->LoadParked(&parked_max); !s.ok()) return s;
  next_seq_ = std::max(next_seq_, parked_max + 1);
  uint64_t deferred_max = 0;
  if (Status s = db_->LoadDeferred(&deferred_max); !s.ok()) return s;
  next_seq_ = std::max(next_seq_, deferred_max + 1);
  db_->RaiseLastQueueSeq(next_seq_ - 1);
  if (readmitted > 0) {
    spdlog::info("state: {} admitted URLs restored from their queue entries", readmitted);
  }
  for (auto& [id, f] : found) {
    std::string name;
    if (!db_->host_records().GetName(id, &name)) {
      spdlog::error("state: queued items of unknown host id {} ignored", id);
      continue;
    }
    loaded_.emplace(std::move(name), Loaded{id, std::move(f.n), std::move(f.first)});
  }
  return Status::Ok();
}

void RocksQueueStore::ForEachLoadedHost(
    const std::function<void(const std::string&, size_t)>& fn) const {
  std::vector<std::pair<std::string, size_t>> snapshot;
  snapshot.reserve(loaded_.size());
  for (const auto& [name, entry] : loaded_) {
    size_t n = 0;
    for (size_t c : entry.n) n += c;
    snapshot.emplace_back(name, n);
  }
  std::sort(snapshot.begin(), snapshot.end());
  for (const auto& [name, n] : snapshot) fn(name, n);
}

void RocksQueueStore::RegisterHost(frontier::HostId id, std::string_view name) {
  if (id >= hosts_.size()) hosts_.resize(id + 1);
  Host& h = hosts_[id];
  h = Host{};  // a reused slot
  h.name = std::string(name);
  auto it = loaded_.find(h.name);
  if (it == loaded_.end()) {
    // A host evicted earlier in this run keeps its persistent id: entries of its URLs that
    // are still being stored may exist under it, and a restart must find them under one id.
    h.id = db_->host_records().IdOf(name);
    return;
  }
  const Loaded& l = it->second;
  h.id = l.id;
  h.spill = std::make_unique<Spill[]>(static_cast<size_t>(classes_));
  for (int c = 0; c < classes_; ++c) {
    h.spill[c].only = static_cast<uint32_t>(l.n[c]);
    h.spill[c].from = l.n[c] > 0 ? l.first[c] : 0;
    h.size += l.n[c];
  }
  loaded_.erase(it);
}

void RocksQueueStore::UnregisterHost(frontier::HostId id) {
  if (id >= hosts_.size()) return;
  Host& h = hosts_[id];
  ram_items_ -= h.InRam();
  if (!h.name.empty()) db_->host_records().RememberId(h.name, h.id);
  h = Host{};
}

void RocksQueueStore::CompactWindow(Host& h) {
  Ram& r = *h.ram;
  if (r.window_head == r.window.size()) {
    if (r.front.empty()) {  // nothing left in RAM: give the memory back
      h.ram.reset();
      return;
    }
    r.window.clear();
    r.window_head = 0;
    if (r.window.capacity() > per_host_cap_) r.window.shrink_to_fit();
  } else if (r.window_head > 8 && r.window_head * 2 > r.window.size()) {
    r.window.erase(r.window.begin(), r.window.begin() + static_cast<ptrdiff_t>(r.window_head));
    r.window_head = 0;
  }
}

void RocksQueueStore::InsertWindow(Host& h, frontier::UrlItem item) {
  auto before = [](const frontier::UrlItem& a, const frontier::UrlItem& b) {
    return a.priority != b.priority ? a.priority < b.priority : a.store_seq < b.store_seq;
  };
  // The host name is the same for every item of the host: Pop restores it.
  std::string().swap(item.host);
  Ram& r = h.MutableRam();
  auto pos = std::upper_bound(r.window.begin() + static_cast<ptrdiff_t>(r.window_head),
                              r.window.end(), item, before);
  r.window.insert(pos, std::move(item));
  ++ram_items_;
}

void RocksQueueStore::Push(frontier::HostId id, frontier::UrlItem item, bool front) {
  Host& h = hosts_[id];
  ++h.size;
  if (front) {  // a leased item put back: still persisted, keep it in RAM
    h.MutableRam().front.push_back(std::move(item));
    ++ram_items_;
    return;
  }
  item.store_host = h.id;
  item.store_seq = next_seq_++;
  const int c = item.priority;
  db_->AddQueueEntry(item);
  ++on_disk_;
  const bool class_spilled = h.spill && h.spill[c].only > 0;
  const size_t in_window = h.ram ? h.ram->window.size() - h.ram->window_head : 0;
  const bool room = ram_items_ < db_->options().queue_ram_items && in_window < per_host_cap_;
  if (!class_spilled && room) {
    InsertWindow(h, std::move(item));
  } else {
    if (!h.spill) h.spill = std::make_unique<Spill[]>(static_cast<size_t>(classes_));
    if (h.spill[c].only++ == 0) h.spill[c].from = item.store_seq;
  }
  db_->MaybeCommit();
}

int RocksQueueStore::LowestClass(const Host& h) const {
  int best = -1;
  auto consider = [&best](int c) {
    if (best < 0 || c < best) best = c;
  };
  if (h.ram) {
    for (const auto& it : h.ram->front) consider(it.priority);
    if (h.ram->window_head < h.ram->window.size()) {
      consider(h.ram->window[h.ram->window_head].priority);
    }
  }
  for (int c = 0; h.spill && c < classes_; ++c) {
    if (h.spill[c].only > 0) {
      consider(c);
      break;
    }
  }
  return best;
}

void RocksQueueStore::Refill(Host& h, int cls, size_t max_items) {
  // Disk-only items may still sit in the pending batch: write it first. (Entries the batch
  // deletes or rewrites were popped already: they sort before spill.from and are not read.)
  if (!db_->WriteQueueEntries().ok()) return;
  rocksdb::ReadOptions ro;
  ro.prefix_same_as_start = true;
  std::unique_ptr<rocksdb::Iterator> it = db_->NewQueueIterator(ro);
  size_t got = 0;
  Spill& sp = h.spill[cls];
  // Epoch by epoch from the first unread item; an epoch without more items of this host
  // and class moves `from` to the next one.
  const int bits = db_->epoch_bits();
  const uint64_t last_epoch = EpochOf(bits, db_->last_queue_seq());
  while (got < max_items && sp.only > 0 && EpochOf(bits, sp.from) <= last_epoch) {
    const uint64_t epoch = EpochOf(bits, sp.from);
    for (it->Seek(QueueKey(bits, h.id, static_cast<uint8_t>(cls), sp.from));
         it->Valid() && got < max_items && sp.only > 0; it->Next()) {
      uint32_t host = 0;
      uint8_t key_cls = 0;
      uint64_t seq = 0;
      if (!ParseQueueKey(bits, std::string_view(it->key().data(), it->key().size()), &host,
                         &key_cls, &seq)) {
        continue;
      }
      if (host != h.id || key_cls != cls || EpochOf(bits, seq) != epoch) break;
      sp.from = seq + 1;
      --sp.only;
      frontier::UrlItem item;
      item.host = h.name;
      if (!DecodeItem(std::string_view(it->value().data(), it->value().size()), &item)) {
        spdlog::error("state: unreadable queue entry of {} skipped", h.name);
        --h.size;
        continue;
      }
      item.store_host = h.id;  // host: restored by Pop
      item.store_seq = seq;
      item.priority = cls;
      InsertWindow(h, std::move(item));
      ++got;
    }
    if (!it->status().ok()) break;
    if (got < max_items && sp.only > 0 && EpochOf(bits, sp.from) == epoch) {
      sp.from = (epoch + 1) << bits;  // nothing more of this host and class in it
    }
  }
  if (!it->status().ok()) {
    db_->SetError(FromRocks(it->status(), "state: reading host queue of " + h.name));
    return;
  }
  if (got == 0 && sp.only > 0) {
    // The counters say more items exist than the database holds (a bug or corruption):
    // trust the database so the host does not spin.
    spdlog::error("state: host {} expected {} more queued items on disk, found none", h.name,
                  sp.only);
    h.size -= sp.only;
    sp.only = 0;
  }
}

std::optional<frontier::UrlItem> RocksQueueStore::Pop(frontier::HostId id) {
  if (id >= hosts_.size()) return std::nullopt;
  Host& h = hosts_[id];
  while (h.size > 0) {
    const int c = LowestClass(h);
    if (c < 0) return std::nullopt;
    if (h.ram) {
      Ram& r = *h.ram;
      // Put-back items of the class first, most recent first.
      for (size_t i = r.front.size(); i-- > 0;) {
        if (r.front[i].priority == c) {
          frontier::UrlItem item = std::move(r.front[i]);
          r.front.erase(r.front.begin() + static_cast<ptrdiff_t>(i));
          --ram_items_;
          --h.size;
          if (r.front.empty() && r.window_head == r.window.size()) h.ram.reset();
          return item;
        }
      }
      if (r.window_head < r.window.size() && r.window[r.window_head].priority == c) {
        frontier::UrlItem item = std::move(r.window[r.window_head++]);
        item.host = h.name;
        --ram_items_;
        --h.size;
        CompactWindow(h);
        return item;
      }
    }
    // Class c is only on disk.
    const size_t budget = db_->options().queue_ram_items > ram_items_
                              ? db_->options().queue_ram_items - ram_items_
                              : 0;
    const size_t before = h.spill[c].only;
    Refill(h, c, std::clamp<size_t>(budget, 1, db_->options().window_per_host));
    if (h.spill[c].only == before) return std::nullopt;  // read error (sticky in status())
  }
  return std::nullopt;
}

size_t RocksQueueStore::Size(frontier::HostId id) const {
  return id < hosts_.size() ? hosts_[id].size : 0;
}

int RocksQueueStore::BestClass(frontier::HostId id) const {
  if (id >= hosts_.size() || hosts_[id].size == 0) return -1;
  return LowestClass(hosts_[id]);
}

std::vector<frontier::UrlItem> RocksQueueStore::Drain(frontier::HostId id) {
  std::vector<frontier::UrlItem> out;
  if (id >= hosts_.size()) return out;
  while (auto item = Pop(id)) out.push_back(std::move(*item));
  return out;
}

void RocksQueueStore::FillStats(StateStats* st) const {
  st->queued_on_disk = on_disk_ > 0 ? static_cast<uint64_t>(on_disk_) : 0;
  st->queued_in_ram = ram_items_;
}

}  // namespace harvest::state
