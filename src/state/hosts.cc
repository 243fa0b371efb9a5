// HostRecordTable (host_record_table.h): per-host records and persistent host ids.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "state/host_record_table.h"
#include "state/internal.h"

namespace harvest::state {
namespace {

// An AddAdmitted operand: the increment, a varint.
std::string EncodeAdmittedDelta(uint64_t n) {
  std::string v;
  PutVarint(&v, n);
  return v;
}

bool DecodeAdmittedDelta(const rocksdb::Slice& value, uint64_t* n) {
  Reader r(value.ToStringView());
  return r.Varint(n) && r.done();
}

// Counters record + increments -> counters record; increments -> their sum. An unreadable
// record counts as none (as GetCounters reads it), an unreadable operand as 0: logged.
class HostCountersOperator final : public rocksdb::MergeOperator {
 public:
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    frontier::HostCounters c;
    if (in.existing_value != nullptr && !DecodeCounters(in.existing_value->ToStringView(), &c)) {
      spdlog::warn("state: unreadable admission counters record replaced by its increments");
      c = frontier::HostCounters{};
    }
    for (const rocksdb::Slice& operand : in.operand_list) {
      uint64_t n = 0;
      if (DecodeAdmittedDelta(operand, &n)) {
        c.admitted += n;
      } else {
        spdlog::warn("state: unreadable admission counters increment ignored");
      }
    }
    out->new_value = EncodeCounters(c);
    return true;
  }
  bool PartialMerge(const rocksdb::Slice& /*key*/, const rocksdb::Slice& left,
                    const rocksdb::Slice& right, std::string* new_value,
                    rocksdb::Logger* /*logger*/) const override {
    uint64_t a = 0, b = 0;
    if (!DecodeAdmittedDelta(left, &a) || !DecodeAdmittedDelta(right, &b)) return false;
    *new_value = EncodeAdmittedDelta(a + b);
    return true;
  }
  const char* Name() const override { return "harvest.HostCounters"; }
};

}  // namespace

std::shared_ptr<rocksdb::MergeOperator> NewHostCountersOperator() {
  return std::make_shared<HostCountersOperator>();
}

HostRecordTable::HostRecordTable(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* hosts,
                                 rocksdb::ColumnFamilyHandle* meta, Committer* committer,
                                 size_t evicted_hosts)
    : db_(db),
      hosts_(hosts),
      meta_(meta),
      committer_(committer),
      evicted_(std::max<size_t>(evicted_hosts, 1)) {}

void HostRecordTable::Load() {
  std::string next;
  if (ReadValue(db_, meta_, "next_host", &next).ok() && next.size() == 4) {
    next_id_ = static_cast<uint32_t>(ReadBigEndian(next, 4));
  }
}

void HostRecordTable::Put(const std::string& key, const std::string& value) {
  committer_->batch()->Put(hosts_, key, value);
  committer_->MaybeHandOver();
}

bool HostRecordTable::Get(const std::string& key, std::string* value) const {
  (void)committer_->WaitWritten();  // read what was committed
  return ReadValue(db_, hosts_, key, value).ok();
}

// ---- Records ----

void HostRecordTable::PutPoliteness(std::string_view host, const HostPoliteness& p) {
  Put(HostKey('p', host), EncodePoliteness(p));
}

std::optional<HostPoliteness> HostRecordTable::GetPoliteness(std::string_view host) const {
  std::string value;
  if (!Get(HostKey('p', host), &value)) return std::nullopt;
  HostPoliteness p;
  if (!DecodePoliteness(value, &p)) {
    spdlog::warn("state: unreadable politeness record of {} ignored", host);
    return std::nullopt;
  }
  return p;
}

void HostRecordTable::PutRobots(std::string_view host, const RobotsRecord& r) {
  Put(HostKey('r', host), EncodeRobots(r));
}

std::optional<RobotsRecord> HostRecordTable::GetRobots(std::string_view host) const {
  std::string value;
  if (!Get(HostKey('r', host), &value)) return std::nullopt;
  RobotsRecord r;
  if (!DecodeRobots(value, &r)) {
    spdlog::warn("state: unreadable robots record of {} ignored", host);
    return std::nullopt;
  }
  return r;
}

void HostRecordTable::PutUpgrade(std::string_view name, const UpgradeRecord& u) {
  Put(HostKey('u', name), u.empty() ? std::string() : EncodeUpgrade(u));
}

std::optional<UpgradeRecord> HostRecordTable::GetUpgrade(std::string_view name) const {
  std::string value;
  if (!Get(HostKey('u', name), &value) || value.empty()) return std::nullopt;
  UpgradeRecord u;
  if (!DecodeUpgrade(value, &u)) {
    spdlog::warn("state: unreadable upgrade record of {} ignored", name);
    return std::nullopt;
  }
  return u;
}

void HostRecordTable::PutBreaker(std::string_view host, const BreakerRecord& b) {
  Put(HostKey('b', host), EncodeBreaker(b));
}

std::optional<BreakerRecord> HostRecordTable::GetBreaker(std::string_view host) const {
  std::string value;
  if (!Get(HostKey('b', host), &value)) return std::nullopt;
  BreakerRecord b;
  if (!DecodeBreaker(value, &b)) {
    spdlog::warn("state: unreadable breaker record of {} ignored", host);
    return std::nullopt;
  }
  return b;
}

void HostRecordTable::PutCounters(uint64_t host_hash, const frontier::HostCounters& c) {
  Put(HostCountersKey(host_hash), EncodeCounters(c));
}

std::optional<frontier::HostCounters> HostRecordTable::GetCounters(uint64_t host_hash) const {
  std::string value;
  if (!Get(HostCountersKey(host_hash), &value)) return std::nullopt;
  frontier::HostCounters c;
  if (!DecodeCounters(value, &c)) {
    spdlog::warn("state: unreadable admission counters record ignored");
    return std::nullopt;
  }
  return c;
}

void HostRecordTable::AddAdmitted(uint64_t host_hash, uint64_t n) {
  committer_->batch()->Merge(hosts_, HostCountersKey(host_hash), EncodeAdmittedDelta(n));
  NoteEvicted(host_hash);
  committer_->MaybeHandOver();
}

Status HostRecordTable::ForEachCounters(
    const std::function<void(uint64_t, const frontier::HostCounters&)>& fn) const {
  if (Status s = committer_->WaitWritten(); !s.ok()) return s;
  const std::string prefix = HostCountersKey(0).substr(0, 1);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), hosts_));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    frontier::HostCounters c;
    const std::string_view key = it->key().ToStringView();
    if (key.size() != 1 + 8 || !DecodeCounters(it->value().ToStringView(), &c)) continue;
    fn(ReadBigEndian(key.substr(1), 8), c);
  }
  return FromRocks(it->status(), "state: read admission counters");
}

void HostRecordTable::PutOverride(std::string_view host, const HostOverride& o) {
  // An empty value is read as "no override" (GetOverride, ForEachOverride).
  Put(HostKey(kOverrideKind, host), o.empty() ? std::string() : EncodeOverride(o));
}

std::optional<HostOverride> HostRecordTable::GetOverride(std::string_view host) const {
  std::string value;
  if (!Get(HostKey(kOverrideKind, host), &value) || value.empty()) return std::nullopt;
  HostOverride o;
  if (!DecodeOverride(value, &o)) return std::nullopt;
  return o;
}

Status HostRecordTable::ForEachOverride(
    const std::function<void(const std::string&, const HostOverride&)>& fn) const {
  if (Status s = committer_->WaitWritten(); !s.ok()) return s;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), hosts_));
  const std::string prefix(1, kOverrideKind);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    HostOverride o;
    if (it->value().empty() || !DecodeOverride(it->value().ToStringView(), &o)) continue;
    fn(std::string(it->key().ToStringView().substr(1)), o);
  }
  return FromRocks(it->status(), "state: read host overrides");
}

// ---- Persistent host ids ----

bool HostRecordTable::GetName(uint32_t id, std::string* name) const {
  return ReadValue(db_, hosts_, HostIdKey(id), name).ok();
}

uint32_t HostRecordTable::NewId(std::string_view name) {
  // A new id, persisted with the pending batch, without looking the name up: a host with
  // queue entries from an earlier run keeps its id (the queue store's Load found it), and
  // any other host has no entry that could refer to an older one. (A lookup per new host
  // would be a RocksDB read per host at admission.)
  const uint32_t id = next_id_++;
  rocksdb::WriteBatch* batch = committer_->batch();
  batch->Put(hosts_, HostIdKey(id), std::string(name));
  std::string next;
  PutBigEndian(&next, next_id_, 4);
  batch->Put(meta_, "next_host", next);
  return id;
}

uint32_t HostRecordTable::IdOf(std::string_view name) {
  if (MaybeEvicted(name)) {
    std::string value;
    if (Get(HostKey('i', name), &value) && value.size() == 4) {
      return static_cast<uint32_t>(ReadBigEndian(value, 4));
    }
  }
  return NewId(name);
}

void HostRecordTable::RememberId(std::string_view name, uint32_t id) {
  std::string v;
  PutBigEndian(&v, id, 4);
  Put(HostKey('i', name), v);
  NoteEvicted(name);
}

bool HostCounterStore::Load(uint64_t host_hash, frontier::HostCounters* counters) {
  if (!resumed_ && !db_->MayHaveHostRecords(host_hash)) return false;
  std::optional<frontier::HostCounters> c = db_->GetHostCounters(host_hash);
  if (!c) return false;
  *counters = *c;
  return true;
}

void HostCounterStore::Save(uint64_t host_hash, const frontier::HostCounters& counters) {
  db_->PutHostCounters(host_hash, counters);
}

void HostCounterStore::Evicted(uint64_t host_hash) { db_->NoteHostEvicted(host_hash); }

bool HostCounterStore::ListSaved(
    const std::function<void(uint64_t, const frontier::HostCounters&)>& fn) {
  // A new crawl's store holds no counters yet (none to list, none to read).
  if (!resumed_) return true;
  Status s = db_->ForEachHostCounters(fn);
  if (!s.ok())
    spdlog::warn("state: admission counters not listed ({}): each is read", s.ToString());
  return s.ok();
}

void HostCounterStore::AddAdmitted(uint64_t host_hash, uint64_t n) {
  db_->AddHostAdmitted(host_hash, n);
}

}  // namespace harvest::state
