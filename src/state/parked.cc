// ParkedTable (parked_table.h): parked URLs, and the prefix extractor of their groups.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>
#include <utility>
#include <vector>

#include "state/internal.h"
#include "state/parked_table.h"

namespace harvest::state {
namespace {

constexpr size_t kSeqBytes = 8;

std::string ParkedKey(int cls, std::string_view host, uint64_t seq) {
  std::string k;
  k.reserve(1 + host.size() + 1 + kSeqBytes);
  k.push_back(static_cast<char>(static_cast<uint8_t>(cls)));
  k.append(host);
  k.push_back('\0');
  PutBigEndian(&k, seq, kSeqBytes);
  return k;
}

// The (class, host) group of a key and its sequence; false for a malformed key.
bool ParseParkedKey(std::string_view key, std::string_view* group, std::string_view* host,
                    uint64_t* seq) {
  if (key.size() < 1 + 1 + kSeqBytes || key[key.size() - kSeqBytes - 1] != '\0') return false;
  *group = key.substr(0, key.size() - kSeqBytes);
  *host = key.substr(1, key.size() - kSeqBytes - 2);
  *seq = ReadBigEndian(key.substr(key.size() - kSeqBytes), kSeqBytes);
  return !host->empty();
}

// The prefix of a parked key: its (class, host) group, class byte to the NUL after the host.
class ParkedGroupPrefix final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "harvest.ParkedGroup"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    if (key.size() < 2) return key;  // not in the domain: RocksDB does not ask
    const void* nul = std::memchr(key.data() + 1, '\0', key.size() - 1);
    if (nul == nullptr) return key;
    return rocksdb::Slice(key.data(), static_cast<const char*>(nul) - key.data() + 1);
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    return key.size() >= 2 && std::memchr(key.data() + 1, '\0', key.size() - 1) != nullptr;
  }
};

// Reads across groups (the cursor's walk, loading).
rocksdb::ReadOptions TotalOrder() {
  rocksdb::ReadOptions ro;
  ro.total_order_seek = true;
  return ro;
}

}  // namespace

std::shared_ptr<const rocksdb::SliceTransform> NewParkedGroupPrefix() {
  return std::make_shared<ParkedGroupPrefix>();
}

void ParkedTable::Add(const frontier::UrlItem& item, uint64_t seq) {
  EncodeItemTo(item, &scratch_);
  committer_->batch()->Put(cf_, ParkedKey(item.priority, item.host, seq), scratch_);
  ++count_;
  committer_->MaybeHandOver();
}

size_t ParkedTable::Take(size_t max_hosts, int classes,
                         const std::function<void(frontier::UrlItem)>& fn) {
  if (count_ == 0 || max_hosts == 0) return 0;
  // Entries parked in the pending batch must be visible to the iterators.
  if (!committer_->WritePending().ok()) return 0;
  rocksdb::WriteBatch* batch = committer_->batch();
  std::vector<TakenEntry> taken;
  // Collects the entry under `it` (false: malformed or undecodable, deleted).
  auto collect = [&](rocksdb::Iterator* it, std::string_view host) {
    TakenEntry t;
    t.key.assign(it->key().ToStringView());
    t.item.host.assign(host);
    if (!DecodeItem(it->value().ToStringView(), &t.item)) {
      spdlog::error("state: undecodable parked entry for {} dropped", host);
      batch->Delete(cf_, it->key());
      if (count_ > 0) --count_;
      return;
    }
    taken.push_back(std::move(t));
  };
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(TotalOrder(), cf_));
  // Within one group: a seek does not walk the deleted entries of the groups after it (a
  // class whose earlier hosts were all taken is a long run of them until compacted).
  rocksdb::ReadOptions group_only;
  group_only.prefix_same_as_start = true;
  std::unique_ptr<rocksdb::Iterator> other(db_->NewIterator(group_only, cf_));
  // Every other class of a host met at the cursor comes with it: a host that came in for
  // its seed would otherwise be evicted once done and reloaded for each later class.
  auto take_other_classes = [&](int cls, std::string_view host) {
    for (int c = 0; c < classes; ++c) {
      if (c == cls) continue;
      const std::string prefix = ParkedKey(c, host, 0).substr(0, 1 + host.size() + 1);
      for (other->Seek(prefix); other->Valid() && other->key().starts_with(prefix); other->Next()) {
        collect(other.get(), host);
      }
    }
    if (!other->status().ok()) {
      committer_->SetError(FromRocks(other->status(), "state: read parked URLs"));
    }
  };
  std::unordered_set<std::string> hosts_taken;  // in this call
  size_t hosts = 0;
  std::string last_group;
  bool skipping = false;  // the cursor's group is of a host taken with an earlier group
  const std::string start = cursor_;
  bool wrapped = start.empty();  // from the start: no wrapping
  it->Seek(cursor_);
  while (true) {
    if (!it->Valid()) {
      if (wrapped || !it->status().ok()) {
        cursor_.clear();
        break;
      }
      wrapped = true;
      last_group.clear();  // the first key after wrapping is a group start
      it->SeekToFirst();
      continue;
    }
    std::string_view key = it->key().ToStringView();
    std::string_view group, host;
    uint64_t seq = 0;
    if (!ParseParkedKey(key, &group, &host, &seq)) {
      spdlog::error("state: malformed parked key dropped");
      batch->Delete(cf_, it->key());
      it->Next();
      continue;
    }
    if (group != last_group) {
      // Wrapped around to where this call began (what it took is deleted only in the batch).
      if (!start.empty() && wrapped && key >= std::string_view(start)) {
        cursor_ = start;
        break;
      }
      last_group.assign(group);
      skipping = hosts_taken.contains(std::string(host));
      if (!skipping) {
        if (hosts == max_hosts) {
          cursor_.assign(key);
          break;
        }
        ++hosts;
        hosts_taken.emplace(host);
        take_other_classes(static_cast<uint8_t>(group[0]), host);
      }
    }
    if (!skipping) collect(it.get(), host);
    it->Next();
  }
  if (!it->status().ok()) committer_->SetError(FromRocks(it->status(), "state: read parked URLs"));
  it.reset();
  other.reset();
  return HandOverTaken(&taken, batch, cf_, &count_, fn);
}

Status ParkedTable::Load(uint64_t* max_seq,
                         const std::function<bool(uint64_t seq, std::string_view value)>& readmit) {
  *max_seq = 0;
  count_ = 0;
  uint64_t readmitted = 0;
  rocksdb::ReadOptions ro = TotalOrder();
  ro.fill_cache = false;
  ro.readahead_size = 2u << 20;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf_));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view group, host;
    uint64_t seq = 0;
    if (!ParseParkedKey(it->key().ToStringView(), &group, &host, &seq)) continue;
    ++count_;
    *max_seq = std::max(*max_seq, seq);
    if (readmit(seq, it->value().ToStringView())) ++readmitted;
  }
  if (Status s = FromRocks(it->status(), "state: loading parked URLs"); !s.ok()) return s;
  if (count_ > 0) {
    spdlog::info("state: {} parked URLs ({} admissions restored from them)", count_, readmitted);
  }
  return Status::Ok();
}

}  // namespace harvest::state
