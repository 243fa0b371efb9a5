// DeferredTable (deferred_table.h): deferred URLs, and the prefix extractor of a host's backlog.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "state/deferred_table.h"
#include "state/internal.h"

namespace harvest::state {
namespace {

constexpr size_t kSeqBytes = 8;

std::string HostPrefix(std::string_view name) {
  std::string k;
  k.reserve(name.size() + 1 + kSeqBytes);
  k.append(name);
  k.push_back('\0');
  return k;
}

// The host name of a key and its sequence; false for a malformed key.
bool ParseDeferredKey(std::string_view key, std::string_view* name, uint64_t* seq) {
  if (key.size() < 1 + 1 + kSeqBytes || key[key.size() - kSeqBytes - 1] != '\0') return false;
  *name = key.substr(0, key.size() - kSeqBytes - 1);
  *seq = ReadBigEndian(key.substr(key.size() - kSeqBytes), kSeqBytes);
  return true;
}

// The prefix of a deferred key: its host name up to and including the NUL after it.
class DeferredHostPrefix final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "harvest.DeferredHost"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    const void* nul = std::memchr(key.data(), '\0', key.size());
    if (nul == nullptr) return key;  // not in the domain: RocksDB does not ask
    return rocksdb::Slice(key.data(), static_cast<const char*>(nul) - key.data() + 1);
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    return key.size() >= 2 && std::memchr(key.data(), '\0', key.size()) != nullptr;
  }
};

// The origin ("scheme://authority") of a canonical URL: the key does not hold it (a name's
// URLs may be of several origins), so the value holds the whole URL.
std::string_view OriginOf(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return {};
  return url.substr(0, url.find('/', scheme_end + 3));
}

}  // namespace

std::shared_ptr<const rocksdb::SliceTransform> NewDeferredHostPrefix() {
  return std::make_shared<DeferredHostPrefix>();
}

void DeferredTable::Add(std::string_view name, const frontier::UrlItem& item, uint64_t seq) {
  frontier::UrlItem whole = item;
  whole.host.clear();  // encoded with its full URL
  EncodeItemTo(whole, &scratch_);
  std::string key = HostPrefix(name);
  PutBigEndian(&key, seq, kSeqBytes);
  committer_->batch()->Put(cf_, key, scratch_);
  ++count_;
  committer_->MaybeHandOver();
}

size_t DeferredTable::Take(std::string_view name, size_t max,
                           const std::function<void(frontier::UrlItem)>& fn) {
  if (count_ == 0 || max == 0) return 0;
  // Entries deferred in the pending batch must be visible to the iterator.
  if (!committer_->WritePending().ok()) return 0;
  rocksdb::WriteBatch* batch = committer_->batch();
  std::vector<TakenEntry> taken;
  rocksdb::ReadOptions ro;
  ro.prefix_same_as_start = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf_));
  const std::string prefix = HostPrefix(name);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix) && taken.size() < max;
       it->Next()) {
    TakenEntry t;
    t.key.assign(it->key().ToStringView());
    if (!DecodeItem(it->value().ToStringView(), &t.item) || OriginOf(t.item.url).empty()) {
      spdlog::error("state: undecodable deferred entry of {} dropped", name);
      batch->Delete(cf_, it->key());
      if (count_ > 0) --count_;
      continue;
    }
    t.item.host.assign(OriginOf(t.item.url));
    taken.push_back(std::move(t));
  }
  if (!it->status().ok())
    committer_->SetError(FromRocks(it->status(), "state: read deferred URLs"));
  it.reset();
  return HandOverTaken(&taken, batch, cf_, &count_, fn);
}

Status DeferredTable::Load(
    uint64_t* max_seq, std::map<std::string, uint64_t>* per_host,
    const std::function<void(uint64_t seq, std::string_view value)>& readmit) {
  *max_seq = 0;
  count_ = 0;
  per_host->clear();
  rocksdb::ReadOptions ro;
  ro.total_order_seek = true;
  ro.fill_cache = false;
  ro.readahead_size = 2u << 20;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf_));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view name;
    uint64_t seq = 0;
    if (!ParseDeferredKey(it->key().ToStringView(), &name, &seq)) continue;
    ++count_;
    ++(*per_host)[std::string(name)];
    *max_seq = std::max(*max_seq, seq);
    readmit(seq, it->value().ToStringView());
  }
  if (Status s = FromRocks(it->status(), "state: loading deferred URLs"); !s.ok()) return s;
  if (count_ > 0) {
    spdlog::info("state: {} deferred URLs of {} hosts over their budget", count_, per_host->size());
  }
  return Status::Ok();
}

}  // namespace harvest::state
