// PageTable (page_table.h): page records for the admin API; and StateReader, the
// read-only view `harvest serve` uses (docs/architecture.md §5.5).
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "state/internal.h"
#include "state/page_table.h"

namespace harvest::state {
namespace {

// Format 2 appends the crawler's outcome and reason; format 1 records still decode.
constexpr uint64_t kPageFormat = 2;

std::string PageKey(uint64_t id) {
  std::string k;
  PutBigEndian(&k, id, 8);
  return k;
}

std::string EncodePage(const PageEntry& p) {
  std::string out;
  PutVarint(&out, kPageFormat);
  PutBytes(&out, p.url);
  PutBytes(&out, p.host);
  PutSignedVarint(&out, p.status);
  PutSignedVarint(&out, p.fetched_at_us);
  PutBytes(&out, p.mime);
  PutBytes(&out, p.title);
  PutBytes(&out, p.digest);
  PutBytes(&out, p.warc_file);
  PutVarint(&out, p.warc_offset);
  PutVarint(&out, p.warc_length);
  PutVarint(&out, p.revisit ? 1 : 0);
  PutBytes(&out, p.outcome);
  PutBytes(&out, p.reason);
  return out;
}

bool DecodePage(std::string_view key, std::string_view value, PageEntry* p) {
  if (key.size() != 8) return false;
  p->id = ReadBigEndian(key, 8);
  Reader r(value);
  uint64_t format = 0, revisit = 0;
  int64_t status = 0;
  if (!r.Varint(&format) || format < 1 || format > kPageFormat) return false;
  if (!r.Bytes(&p->url) || !r.Bytes(&p->host) || !r.SignedVarint(&status) ||
      !r.SignedVarint(&p->fetched_at_us) || !r.Bytes(&p->mime) || !r.Bytes(&p->title) ||
      !r.Bytes(&p->digest) || !r.Bytes(&p->warc_file) || !r.Varint(&p->warc_offset) ||
      !r.Varint(&p->warc_length) || !r.Varint(&revisit)) {
    return false;
  }
  p->status = static_cast<int>(status);
  p->revisit = revisit != 0;
  if (format >= 2) return r.Bytes(&p->outcome) && r.Bytes(&p->reason);
  // Format 1 knew only the record type: a 304 revisit answered a recrawl.
  p->outcome = p->revisit ? (p->status == 304 ? "not-modified" : "revisit") : "fetched";
  p->reason.clear();
  return true;
}

bool HostMatches(std::string_view filter, std::string_view host) {
  if (filter.empty() || filter == host) return true;
  // A bare name matches any port.
  return filter.find(':') == std::string_view::npos && host.size() > filter.size() &&
         host.starts_with(filter) && host[filter.size()] == ':';
}

std::optional<PageEntry> ReadPage(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, uint64_t id) {
  if (cf == nullptr) return std::nullopt;
  std::string value;
  const std::string key = PageKey(id);
  if (!db->Get(rocksdb::ReadOptions(), cf, key, &value).ok()) return std::nullopt;
  PageEntry p;
  if (!DecodePage(key, value, &p)) return std::nullopt;
  return p;
}

PageScan ScanPageRecords(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, const PageFilter& f) {
  PageScan out;
  if (cf == nullptr || f.limit == 0) return out;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), cf));
  size_t scanned = 0;
  uint64_t last = f.after_id;
  for (it->Seek(PageKey(f.after_id + 1)); it->Valid(); it->Next()) {
    if (out.pages.size() >= f.limit || scanned >= f.max_scanned) {
      out.next_after_id = last;
      break;
    }
    ++scanned;
    PageEntry p;
    if (!DecodePage(it->key().ToStringView(), it->value().ToStringView(), &p)) continue;
    last = p.id;
    if (!HostMatches(f.host, p.host)) continue;
    if (f.status && p.status != *f.status) continue;
    if (p.fetched_at_us < f.since_us) continue;
    out.pages.push_back(std::move(p));
  }
  return out;
}

uint64_t LastPageId(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf) {
  if (cf == nullptr) return 0;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), cf));
  it->SeekToLast();
  if (!it->Valid() || it->key().size() != 8) return 0;
  return ReadBigEndian(it->key().ToStringView(), 8);
}

}  // namespace

// ---- PageTable ----

void PageTable::Load() {
  last_id_ = LastPageId(db_, cf_);
  // Trimming goes on from the oldest record left.
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf_));
  it->SeekToFirst();
  if (it->Valid() && it->key().size() == 8) {
    trimmed_below_ = ReadBigEndian(it->key().ToStringView(), 8);
  }
}

Result<uint64_t> PageTable::Write(const std::optional<PageEntry>& page,
                                  rocksdb::WriteBatch* batch) {
  const uint64_t id = page ? last_id_.load() + 1 : 0;
  if (page) batch->Put(cf_, PageKey(id), EncodePage(*page));
  if (batch->Count() == 0) return id;
  Status s = FromRocks(db_->Write(rocksdb::WriteOptions(), batch), "state: write");
  if (!s.ok()) {
    committer_->SetError(s);
    return s;
  }
  if (!page) return id;
  last_id_ = id;
  // The oldest records leave in ranges of 1024 (one range tombstone each).
  const uint64_t max = std::max<uint64_t>(max_pages_, 1);
  if (id > max && id - max >= trimmed_below_ + 1024) {
    trimmed_below_ = id - max;
    (void)db_->DeleteRange(rocksdb::WriteOptions(), cf_, PageKey(0), PageKey(trimmed_below_));
  }
  return id;
}

std::optional<PageEntry> PageTable::Get(uint64_t id) const { return ReadPage(db_, cf_, id); }

PageScan PageTable::Scan(const PageFilter& filter) const {
  return ScanPageRecords(db_, cf_, filter);
}

// ---- StateReader ----

class StateReader::Impl {
 public:
  ~Impl() {
    for (rocksdb::ColumnFamilyHandle* h : handles) db->DestroyColumnFamilyHandle(h);
  }
  rocksdb::ColumnFamilyHandle* Family(std::string_view name) const {
    for (rocksdb::ColumnFamilyHandle* h : handles) {
      if (h->GetName() == name) return h;
    }
    return nullptr;
  }
  bool GetHost(char kind, std::string_view host, std::string* value) const {
    rocksdb::ColumnFamilyHandle* cf = Family("hosts");
    return cf != nullptr && db->Get(rocksdb::ReadOptions(), cf, HostKey(kind, host), value).ok();
  }

  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
};

Result<std::unique_ptr<StateReader>> StateReader::Open(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir / "CURRENT", ec)) {
    return Status::NotFound("state: no crawl state in " + dir.string());
  }
  rocksdb::DBOptions options;
  std::vector<std::string> names;
  rocksdb::Status rs = rocksdb::DB::ListColumnFamilies(options, dir.string(), &names);
  if (!rs.ok()) return FromRocks(rs, "state: open " + dir.string());
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : names) {
    rocksdb::ColumnFamilyOptions cf;
    // Replaying the write-ahead log needs the families' merge operators (without one, the
    // first merge record ends the replay silently and everything written after it is lost
    // to this reader), and prefix scans of parked and deferred entries their prefix
    // extractors.
    InstallFamilyHooks(name, &cf);
    descriptors.emplace_back(name, cf);
  }
  auto impl = std::make_unique<Impl>();
  rocksdb::DB* raw = nullptr;
  rs = rocksdb::DB::OpenForReadOnly(options, dir.string(), descriptors, &impl->handles, &raw);
  if (!rs.ok()) return FromRocks(rs, "state: open " + dir.string() + " read-only");
  impl->db.reset(raw);
  std::string version;
  rocksdb::ColumnFamilyHandle* meta = impl->Family("meta");
  if (meta == nullptr || !impl->db->Get(rocksdb::ReadOptions(), meta, "version", &version).ok() ||
      (version != kFormatVersion && !IsReadableOlderFormatVersion(version))) {
    return Status::InvalidArgument("state: " + dir.string() + " has format version '" + version +
                                   "'; this harvest reads version " + std::string(kFormatVersion));
  }
  return std::unique_ptr<StateReader>(new StateReader(std::move(impl)));
}

StateReader::StateReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StateReader::~StateReader() = default;

std::optional<PageEntry> StateReader::GetPage(uint64_t id) const {
  return ReadPage(impl_->db.get(), impl_->Family("pages"), id);
}

PageScan StateReader::ScanPages(const PageFilter& filter) const {
  return ScanPageRecords(impl_->db.get(), impl_->Family("pages"), filter);
}

uint64_t StateReader::pages_added() const {
  return LastPageId(impl_->db.get(), impl_->Family("pages"));
}

std::optional<HostPoliteness> StateReader::GetPoliteness(std::string_view host) const {
  std::string value;
  HostPoliteness p;
  if (!impl_->GetHost('p', host, &value) || !DecodePoliteness(value, &p)) return std::nullopt;
  return p;
}

std::optional<RobotsRecord> StateReader::GetRobots(std::string_view host) const {
  std::string value;
  RobotsRecord r;
  if (!impl_->GetHost('r', host, &value) || !DecodeRobots(value, &r)) return std::nullopt;
  return r;
}

std::optional<HostOverride> StateReader::GetHostOverride(std::string_view host) const {
  std::string value;
  HostOverride o;
  if (!impl_->GetHost(kOverrideKind, host, &value) || value.empty() || !DecodeOverride(value, &o)) {
    return std::nullopt;
  }
  return o;
}

uint64_t StateReader::EstimateQueued() const {
  rocksdb::ColumnFamilyHandle* cf = impl_->Family("queues");
  uint64_t n = 0;
  if (cf != nullptr) impl_->db->GetIntProperty(cf, "rocksdb.estimate-num-keys", &n);
  return n;
}

Status StateReader::ForEachHost(const std::function<void(const std::string&)>& fn) const {
  rocksdb::ColumnFamilyHandle* cf = impl_->Family("hosts");
  if (cf == nullptr) return Status::Ok();
  std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(rocksdb::ReadOptions(), cf));
  for (it->Seek("p"); it->Valid() && it->key().starts_with("p"); it->Next()) {
    fn(std::string(it->key().ToStringView().substr(1)));
  }
  return FromRocks(it->status(), "state: read hosts");
}

}  // namespace harvest::state
