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
// The last byte of a group's key (format version 4); a version-3 key ends in its sequence.
constexpr char kParkedGroupMark = 1;
// Gathered URLs beyond which Add puts their groups into the batch without waiting for a
// hand-over (the owner commits far more often: a bound, not a tuning).
constexpr size_t kMaxGatheredUrls = 1 << 16;

// A (class, host) group's prefix: class byte, host, '\0' (every key of the group starts with it).
void SetGroupPrefix(int cls, std::string_view host, std::string* out) {
  out->assign(1, static_cast<char>(static_cast<uint8_t>(cls)));
  out->append(host);
  out->push_back('\0');
}

// A parked key, parsed.
struct ParkedKey {
  std::string_view group;  // class byte, host, '\0': the prefix of the (class, host)
  std::string_view host;
  uint64_t seq = 0;      // the first URL's sequence
  bool grouped = false;  // a group of URLs (else a version-3 single URL)
};

// False for a malformed key. A host holds no NUL, so the NUL before the sequence tells the
// two layouts apart: a group's key has it one byte earlier.
bool ParseParkedKey(std::string_view key, ParkedKey* out) {
  size_t tail = kSeqBytes;  // bytes after the NUL
  if (key.size() >= 1 + 1 + 1 + kSeqBytes + 1 && key.back() == kParkedGroupMark &&
      key[key.size() - kSeqBytes - 2] == '\0') {
    tail = kSeqBytes + 1;
    out->grouped = true;
  } else if (key.size() < 1 + 1 + 1 + kSeqBytes || key[key.size() - kSeqBytes - 1] != '\0') {
    return false;
  } else {
    out->grouped = false;
  }
  out->group = key.substr(0, key.size() - tail);
  out->host = key.substr(1, key.size() - tail - 2);
  out->seq = ReadBigEndian(key.substr(key.size() - tail, kSeqBytes), kSeqBytes);
  return !out->host.empty();
}

// Calls fn(sequence, queue entry) for each URL of the entry (one for a version-3 entry);
// false when the value is malformed (fn was called for the URLs before the fault).
template <typename Fn>
bool ForEachParked(const ParkedKey& key, std::string_view value, Fn&& fn) {
  if (!key.grouped) {
    fn(key.seq, value);
    return true;
  }
  Reader r(value);
  uint64_t seq = key.seq;
  while (!r.done()) {
    uint64_t step = 0, size = 0;
    std::string_view entry;
    if (!r.Varint(&step) || !r.Varint(&size) || !r.View(size, &entry)) return false;
    seq += step;
    fn(seq, entry);
  }
  return true;
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
  SetGroupPrefix(item.priority, item.host, &group_);
  auto it = gathered_.find(group_);
  if (it != gathered_.end() && seq <= it->second.last_seq) {
    Flush();  // a step below 0 (never: TakeSeq only grows): a new entry instead
    it = gathered_.end();
  }
  if (it == gathered_.end()) it = gathered_.emplace(group_, Group{seq, seq, {}}).first;
  Group& g = it->second;
  EncodeItemTo(item, &scratch_);
  PutVarint(&g.value, seq - g.last_seq);
  PutVarint(&g.value, scratch_.size());
  g.value.append(scratch_);
  g.last_seq = seq;
  ++count_;
  if (++gathered_urls_ >= kMaxGatheredUrls) Flush();
  committer_->MaybeHandOver();
}

void ParkedTable::Flush() {
  if (gathered_.empty()) return;
  std::vector<std::pair<std::string, const std::string*>> entries;
  entries.reserve(gathered_.size());
  for (const auto& [group, g] : gathered_) {
    std::string key;
    key.reserve(group.size() + kSeqBytes + 1);
    key.append(group);
    PutBigEndian(&key, g.first_seq, kSeqBytes);
    key.push_back(kParkedGroupMark);
    entries.emplace_back(std::move(key), &g.value);
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  rocksdb::WriteBatch* batch = committer_->batch();
  for (const auto& [key, value] : entries) batch->Put(cf_, key, *value);
  gathered_.clear();
  gathered_urls_ = 0;
}

size_t ParkedTable::Take(size_t max_hosts, int classes,
                         const std::function<void(frontier::UrlItem)>& fn) {
  if (count_ == 0 || max_hosts == 0) return 0;
  // Entries parked in the pending batch must be visible to the iterators.
  if (!committer_->WritePending().ok()) return 0;
  rocksdb::WriteBatch* batch = committer_->batch();
  std::vector<TakenEntry> taken;
  // Collects the URLs of the entry under `it`, parsed as `key` (an undecodable URL is
  // dropped, and with it the rest of its entry, whose layout is lost).
  auto collect = [&](rocksdb::Iterator* it, const ParkedKey& key) {
    const size_t before = taken.size();
    bool decoded = true;
    const bool parsed =
        ForEachParked(key, it->value().ToStringView(), [&](uint64_t, std::string_view entry) {
          if (!decoded) return;
          TakenEntry t;
          t.item.host.assign(key.host);
          if (!DecodeItem(entry, &t.item)) {
            decoded = false;
            return;
          }
          if (taken.size() == before) t.key.assign(it->key().ToStringView());  // once per entry
          taken.push_back(std::move(t));
        });
    if (!parsed || !decoded) {
      spdlog::error("state: undecodable parked entry for {} dropped ({} of its URLs kept)",
                    key.host, taken.size() - before);
      batch->Delete(cf_, it->key());
      if (count_ > 0) --count_;
    }
  };
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(TotalOrder(), cf_));
  // Within one group: a seek does not walk the deleted entries of the groups after it (a
  // class whose earlier hosts were all taken is a long run of them until compacted).
  rocksdb::ReadOptions group_only;
  group_only.prefix_same_as_start = true;
  std::unique_ptr<rocksdb::Iterator> other(db_->NewIterator(group_only, cf_));
  // Every other class of a host met at the cursor comes with it: a host that came in for
  // its seed would otherwise be evicted once done and reloaded for each later class.
  std::string prefix;
  auto take_other_classes = [&](int cls, std::string_view host) {
    for (int c = 0; c < classes; ++c) {
      if (c == cls) continue;
      SetGroupPrefix(c, host, &prefix);
      for (other->Seek(prefix); other->Valid() && other->key().starts_with(prefix); other->Next()) {
        ParkedKey key;
        if (ParseParkedKey(other->key().ToStringView(), &key)) collect(other.get(), key);
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
    ParkedKey parsed;
    if (!ParseParkedKey(key, &parsed)) {
      spdlog::error("state: malformed parked key dropped");
      batch->Delete(cf_, it->key());
      it->Next();
      continue;
    }
    const std::string_view group = parsed.group, host = parsed.host;
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
    if (!skipping) collect(it.get(), parsed);
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
    ParkedKey key;
    if (!ParseParkedKey(it->key().ToStringView(), &key)) continue;
    // A malformed group counts the URLs before the fault (Take drops the rest).
    (void)ForEachParked(key, it->value().ToStringView(), [&](uint64_t seq, std::string_view e) {
      ++count_;
      *max_seq = std::max(*max_seq, seq);
      if (readmit(seq, e)) ++readmitted;
    });
  }
  if (Status s = FromRocks(it->status(), "state: loading parked URLs"); !s.ok()) return s;
  if (count_ > 0) {
    spdlog::info("state: {} parked URLs ({} admissions restored from them)", count_, readmitted);
  }
  return Status::Ok();
}

}  // namespace harvest::state
