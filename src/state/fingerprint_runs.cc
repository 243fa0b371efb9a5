// FingerprintRuns (fingerprint_runs.h): runs of sorted fingerprints, their manifest, merging.
#include "state/fingerprint_runs.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>

#include "base/hash.h"
#include "dedup/dedup.h"

namespace harvest::state {
namespace {

static_assert(std::endian::native == std::endian::little, "run files are little-endian");

constexpr char kMagic[8] = {'H', 'V', 'F', 'P', 'R', 'U', 'N', '1'};
constexpr size_t kHeaderBytes = 4096;
constexpr size_t kPageKeys = 512;        // keys per page: 4 KiB
constexpr size_t kWindowKeys = 64;       // keys a lookup reads first (Run::Find)
constexpr size_t kChunkKeys = 1u << 17;  // sequential reads and writes: 1 MiB
constexpr char kManifest[] = "MANIFEST";
constexpr char kManifestHeader[] = "harvest-fingerprint-runs 1";

uint32_t Crc(uint32_t crc, const void* data, size_t bytes) {
  return libdeflate_crc32(crc, data, bytes);
}

std::string ErrnoText() { return std::error_code(errno, std::generic_category()).message(); }

Status IoError(const std::filesystem::path& path, const std::string& what) {
  return Status::IOError("admitted set: " + what + " " + path.string() + ": " + ErrnoText());
}

Status PreadAll(int fd, void* buf, size_t bytes, uint64_t offset, const std::filesystem::path& p) {
  auto* out = static_cast<char*>(buf);
  while (bytes > 0) {
    ssize_t n = ::pread(fd, out, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError(p, "cannot read");
    if (n == 0) return Status::Corruption("admitted set: " + p.string() + " is truncated");
    out += n;
    bytes -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status WriteAll(int fd, const void* buf, size_t bytes, const std::filesystem::path& p) {
  const auto* in = static_cast<const char*>(buf);
  while (bytes > 0) {
    ssize_t n = ::write(fd, in, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError(p, "cannot write");
    in += n;
    bytes -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status SyncDirectory(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError(dir, "cannot open");
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return IoError(dir, "cannot sync");
  return Status::Ok();
}

// The header of a run file: magic, count, CRC of the keys, CRC of the 20 bytes before it.
std::string EncodeHeader(uint64_t count, uint32_t crc) {
  std::string h(kHeaderBytes, '\0');
  std::memcpy(h.data(), kMagic, 8);
  std::memcpy(h.data() + 8, &count, 8);
  std::memcpy(h.data() + 16, &crc, 4);
  const uint32_t own = Crc(0, h.data(), 20);
  std::memcpy(h.data() + 20, &own, 4);
  return h;
}

std::filesystem::path RunPath(const std::filesystem::path& dir, uint64_t id) {
  return dir / (std::to_string(id) + ".run");
}

// Writes one run: the keys given by `next` (false at the end) to a new file, with a header.
// Builds the fences and, when `bloom` is set, inserts every key into it.
class RunWriter {
 public:
  explicit RunWriter(std::filesystem::path path) : path_(std::move(path)) {}
  ~RunWriter() {
    if (fd_ >= 0) ::close(fd_);
  }
  Status Open() {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) return IoError(path_, "cannot create");
    const std::string blank(kHeaderBytes, '\0');
    return WriteAll(fd_, blank.data(), blank.size(), path_);
  }
  Status Append(uint64_t key, dedup::BloomFilter* bloom) {
    if (count_ % kPageKeys == 0) fences_.push_back(key);
    if (bloom != nullptr) bloom->Insert(key);
    buffer_.push_back(key);
    ++count_;
    if (buffer_.size() == kChunkKeys) return Flush();
    return Status::Ok();
  }
  Status Finish(bool sync) {
    if (Status s = Flush(); !s.ok()) return s;
    const std::string header = EncodeHeader(count_, crc_);
    if (::pwrite(fd_, header.data(), header.size(), 0) != static_cast<ssize_t>(header.size())) {
      return IoError(path_, "cannot write");
    }
    if (sync && ::fsync(fd_) != 0) return IoError(path_, "cannot sync");
    return Status::Ok();
  }
  // The finished file's descriptor (the writer no longer closes it).
  int Release() { return std::exchange(fd_, -1); }
  uint64_t count() const { return count_; }
  uint32_t crc() const { return crc_; }
  std::vector<uint64_t> TakeFences() { return std::move(fences_); }

 private:
  Status Flush() {
    const size_t bytes = buffer_.size() * sizeof(uint64_t);
    crc_ = Crc(crc_, buffer_.data(), bytes);
    Status s = WriteAll(fd_, buffer_.data(), bytes, path_);
    buffer_.clear();
    return s;
  }

  const std::filesystem::path path_;
  int fd_ = -1;
  std::vector<uint64_t> buffer_;
  std::vector<uint64_t> fences_;
  uint64_t count_ = 0;
  uint32_t crc_ = 0;
};

}  // namespace

struct FingerprintRuns::Run {
  uint64_t id = 0;
  uint64_t count = 0;
  uint32_t crc = 0;
  int fd = -1;
  std::filesystem::path path;
  std::vector<uint64_t> fences;             // first key of each page
  std::optional<dedup::BloomFilter> bloom;  // every run but the oldest

  ~Run() {
    if (fd >= 0) ::close(fd);
  }
  // The page that may hold fp: the last whose first key is <= fp (npos: fp is below them all).
  // Fingerprints are hashes, spread evenly over 64 bits, so fp's page is about
  // fp / 2^64 x pages: the search starts there and widens by doubling steps until two fences
  // bracket fp, then bisects between them. A plain bisection of 200,000 fences (100 M keys)
  // misses the CPU cache at most of its 18 steps; this touches a few neighbouring lines.
  // Keys bunched anywhere are still found, in O(log distance) steps.
  size_t PageOf(uint64_t fp) const {
    const size_t n = fences.size();
    if (n == 0 || fp < fences[0]) return std::string::npos;
    size_t lo = static_cast<size_t>(RangeReduce(fp, n));
    size_t hi = lo + 1;
    size_t step = 4;
    if (fences[lo] > fp) {
      // Left of the guess: fences[0] <= fp ends the widening.
      hi = lo;
      while (true) {
        lo = hi > step ? hi - step : 0;
        if (fences[lo] <= fp) break;
        hi = lo;
        step *= 2;
      }
    } else {
      while (hi < n && fences[hi] <= fp) {
        lo = hi;
        hi = std::min(n, hi + step);
        step *= 2;
      }
    }
    // fences[lo] <= fp, and fp < fences[hi] unless hi == n.
    auto it = std::upper_bound(fences.begin() + static_cast<std::ptrdiff_t>(lo),
                               fences.begin() + static_cast<std::ptrdiff_t>(hi), fp);
    return static_cast<size_t>(it - fences.begin()) - 1;
  }

  // Reads the window of fp's page where an even spread of the page's keys puts fp, and the
  // whole page only when fp lies beyond the window's ends (a page whose keys bunch).
  // Fingerprints are hashes: the keys between a page's first key and the next page's spread
  // evenly over that interval, so fp's rank in the page is estimated within ~11 keys (one
  // standard deviation, at most), and a window of 64 keys (512 bytes, eight cache lines)
  // holds fp's place in all but under half a percent of lookups (the binomial spread). At
  // 100 M keys the run files are 800 MB, beyond the CPU caches: the kernel's copy of a whole
  // page read 64 cache lines per lookup (docs/benchmarks.md, "The admitted set reads a
  // window of a page").
  Result<bool> Find(uint64_t fp) const {
    const size_t page = PageOf(fp);
    if (page == std::string::npos) return false;
    const size_t keys = std::min<uint64_t>(kPageKeys, count - page * kPageKeys);
    const uint64_t page_offset = kHeaderBytes + page * kPageKeys * sizeof(uint64_t);
    uint64_t buf[kPageKeys];
    if (keys > kWindowKeys && page + 1 < fences.size()) {
      const uint64_t first = fences[page], next = fences[page + 1];  // first <= fp < next
      const auto rank =
          static_cast<size_t>(static_cast<double>(fp - first) / static_cast<double>(next - first) *
                              static_cast<double>(keys));  // <= keys
      const size_t begin =
          std::min(rank > kWindowKeys / 2 ? rank - kWindowKeys / 2 : 0, keys - kWindowKeys);
      if (Status s = PreadAll(fd, buf, kWindowKeys * sizeof(uint64_t),
                              page_offset + begin * sizeof(uint64_t), path);
          !s.ok()) {
        return s;
      }
      // Keys are ascending and unique: between the window's ends, fp is in it or nowhere;
      // below the page's first key or above its last, nowhere.
      const bool low_end = begin == 0 || buf[0] <= fp;
      const bool high_end = begin + kWindowKeys == keys || fp <= buf[kWindowKeys - 1];
      if (low_end && high_end) return std::binary_search(buf, buf + kWindowKeys, fp);
    }
    if (Status s = PreadAll(fd, buf, keys * sizeof(uint64_t), page_offset, path); !s.ok()) {
      return s;
    }
    return std::binary_search(buf, buf + keys, fp);
  }
};

// Reads a run's keys in order, a chunk at a time.
class RunReader {
 public:
  explicit RunReader(const FingerprintRuns::Run* run) : run_(run) {}
  // The next key into *key; false at the end or on an error (status()).
  bool Next(uint64_t* key) {
    if (pos_ == buffer_.size()) {
      if (read_ == run_->count || !status_.ok()) return false;
      const uint64_t n = std::min<uint64_t>(kChunkKeys, run_->count - read_);
      buffer_.resize(n);
      status_ = PreadAll(run_->fd, buffer_.data(), n * sizeof(uint64_t),
                         kHeaderBytes + read_ * sizeof(uint64_t), run_->path);
      if (!status_.ok()) return false;
      read_ += n;
      pos_ = 0;
    }
    *key = buffer_[pos_++];
    return true;
  }
  const Status& status() const { return status_; }

 private:
  const FingerprintRuns::Run* run_;
  std::vector<uint64_t> buffer_;
  size_t pos_ = 0;
  uint64_t read_ = 0;
  Status status_;
};

namespace {

// K-way merge of `runs` in key order, each key once. False from `fn` stops it.
Status MergeKeys(const std::vector<const FingerprintRuns::Run*>& runs,
                 const FingerprintRuns::KeySink& fn) {
  std::vector<RunReader> readers;
  readers.reserve(runs.size());
  for (const auto* r : runs) readers.emplace_back(r);
  std::vector<uint64_t> heads(runs.size());
  std::vector<bool> live(runs.size());
  for (size_t i = 0; i < readers.size(); ++i) live[i] = readers[i].Next(&heads[i]);
  bool have_last = false;
  uint64_t last = 0;
  while (true) {
    size_t best = runs.size();
    for (size_t i = 0; i < runs.size(); ++i) {
      if (live[i] && (best == runs.size() || heads[i] < heads[best])) best = i;
    }
    if (best == runs.size()) break;
    const uint64_t key = heads[best];
    live[best] = readers[best].Next(&heads[best]);
    if (have_last && key == last) continue;
    have_last = true;
    last = key;
    if (Status s = fn(key); !s.ok()) return s;
  }
  for (const RunReader& r : readers) {
    if (!r.status().ok()) return r.status();
  }
  return Status::Ok();
}

}  // namespace

FingerprintRuns::FingerprintRuns(Options options)
    : options_(std::move(options)), runs_(std::make_shared<RunList>()) {}

Result<std::unique_ptr<FingerprintRuns>> FingerprintRuns::Open(Options options) {
  if (options.dir.empty()) return Status::InvalidArgument("admitted set: no directory given");
  options.merge_ratio = std::max<uint64_t>(options.merge_ratio, 1);
  options.max_runs = std::max<size_t>(options.max_runs, 2);
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) {
    return Status::IOError("admitted set: cannot create " + options.dir.string() + ": " +
                           ec.message());
  }
  std::unique_ptr<FingerprintRuns> set(new FingerprintRuns(std::move(options)));
  if (Status s = set->Load(); !s.ok()) return s;
  if (set->options_.background)
    set->merge_thread_ = std::thread([p = set.get()] { p->MergeLoop(); });
  return set;
}

FingerprintRuns::~FingerprintRuns() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  if (merge_thread_.joinable()) merge_thread_.join();
}

Status FingerprintRuns::Load() {
  const std::filesystem::path manifest = options_.dir / kManifest;
  struct Entry {
    uint64_t id, count;
    uint32_t crc;
  };
  std::vector<Entry> entries;
  uint64_t next_id = 1;
  std::ifstream in(manifest);
  if (in) {
    std::string line, text;
    bool ended = false;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string word;
      words >> word;
      if (word == "crc") {
        uint32_t crc = 0;
        words >> crc;
        if (!words || crc != Crc(0, text.data(), text.size())) break;
        ended = true;
        break;
      }
      if (text.empty() && line != kManifestHeader) break;
      if (word == "run") {
        Entry e{};
        words >> e.id >> e.count >> e.crc;
        if (!words) break;
        entries.push_back(e);
      } else if (word == "next") {
        words >> next_id;
        if (!words) break;
      } else if (line != kManifestHeader) {
        break;
      }
      text += line + "\n";
    }
    if (!ended) {
      return Status::Corruption("admitted set: " + manifest.string() +
                                " is damaged (no valid checksum line)");
    }
  }
  auto runs = std::make_shared<RunList>();
  std::set<std::string> live;
  for (size_t i = 0; i < entries.size(); ++i) {
    auto run = std::make_shared<Run>();
    run->id = entries[i].id;
    run->count = entries[i].count;
    run->crc = entries[i].crc;
    run->path = RunPath(options_.dir, run->id);
    live.insert(run->path.filename().string());
    run->fd = ::open(run->path.c_str(), O_RDONLY | O_CLOEXEC);
    if (run->fd < 0) return IoError(run->path, "cannot open");
    char header[24];
    if (Status s = PreadAll(run->fd, header, sizeof header, 0, run->path); !s.ok()) return s;
    uint64_t count = 0;
    uint32_t crc = 0, own = 0;
    std::memcpy(&count, header + 8, 8);
    std::memcpy(&crc, header + 16, 4);
    std::memcpy(&own, header + 20, 4);
    if (std::memcmp(header, kMagic, 8) != 0 || own != Crc(0, header, 20) || count != run->count ||
        crc != run->crc) {
      return Status::Corruption("admitted set: " + run->path.string() +
                                " does not match the manifest");
    }
    if (i > 0) run->bloom.emplace(run->count, 0.01);
    // Verifies the keys (checksum, order) and rebuilds the fences and the filter.
    RunReader reader(run.get());
    uint32_t check = 0;
    uint64_t key = 0, prev = 0, n = 0;
    std::vector<uint64_t> chunk;
    while (reader.Next(&key)) {
      if (n > 0 && key <= prev) {
        return Status::Corruption("admitted set: " + run->path.string() + " is out of order");
      }
      if (n % kPageKeys == 0) run->fences.push_back(key);
      if (run->bloom) run->bloom->Insert(key);
      chunk.push_back(key);
      if (chunk.size() == kChunkKeys) {
        check = Crc(check, chunk.data(), chunk.size() * sizeof(uint64_t));
        chunk.clear();
      }
      prev = key;
      ++n;
    }
    if (!reader.status().ok()) return reader.status();
    check = Crc(check, chunk.data(), chunk.size() * sizeof(uint64_t));
    if (check != run->crc) {
      return Status::Corruption("admitted set: " + run->path.string() + " fails its checksum");
    }
    next_id = std::max(next_id, run->id + 1);
    runs->push_back(std::move(run));
  }
  // Files of runs no manifest names: written before a crash, never acknowledged.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(options_.dir, ec)) {
    const std::string name = entry.path().filename().string();
    if ((name.ends_with(".run") && !live.contains(name)) || name == "MANIFEST.tmp") {
      std::filesystem::remove(entry.path(), ec);
    }
  }
  MutexLock lock(&mu_);
  runs_ = std::move(runs);
  next_id_ = next_id;
  merge_wanted_ = MergeStart(*runs_) < runs_->size();
  return Status::Ok();
}

Status FingerprintRuns::WriteManifest(const RunList& runs, uint64_t next_id) const {
  std::string text = std::string(kManifestHeader) + "\n";
  for (const auto& r : runs) {
    text += "run " + std::to_string(r->id) + " " + std::to_string(r->count) + " " +
            std::to_string(r->crc) + "\n";
  }
  text += "next " + std::to_string(next_id) + "\n";
  const std::string body = "crc " + std::to_string(Crc(0, text.data(), text.size())) + "\n";
  const std::filesystem::path tmp = options_.dir / "MANIFEST.tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(tmp, "cannot create");
  Status s = WriteAll(fd, text.data(), text.size(), tmp);
  if (s.ok()) s = WriteAll(fd, body.data(), body.size(), tmp);
  if (s.ok() && options_.sync && ::fsync(fd) != 0) s = IoError(tmp, "cannot sync");
  ::close(fd);
  if (!s.ok()) return s;
  if (::rename(tmp.c_str(), (options_.dir / kManifest).c_str()) != 0) {
    return IoError(tmp, "cannot rename");
  }
  return options_.sync ? SyncDirectory(options_.dir) : Status::Ok();
}

std::shared_ptr<const FingerprintRuns::RunList> FingerprintRuns::Snapshot() const {
  MutexLock lock(&mu_);
  return runs_;
}

Result<std::shared_ptr<FingerprintRuns::Run>> FingerprintRuns::WriteRun(
    uint64_t bloom_keys, const std::function<Status(const KeySink&)>& produce) {
  auto run = std::make_shared<Run>();
  {
    MutexLock lock(&mu_);
    run->id = next_id_++;
  }
  run->path = RunPath(options_.dir, run->id);
  if (bloom_keys > 0) run->bloom.emplace(bloom_keys, 0.01);
  dedup::BloomFilter* bloom = run->bloom ? &*run->bloom : nullptr;
  RunWriter writer(run->path);
  Status s = writer.Open();
  if (s.ok()) s = produce([&](uint64_t key) { return writer.Append(key, bloom); });
  if (s.ok()) s = writer.Finish(options_.sync);
  if (!s.ok()) {
    std::error_code ec;
    std::filesystem::remove(run->path, ec);
    return s;
  }
  run->count = writer.count();
  run->crc = writer.crc();
  run->fences = writer.TakeFences();
  run->fd = writer.Release();
  return run;
}

Status FingerprintRuns::InstallLocked(std::shared_ptr<const RunList> next) {
  uint64_t next_id = 0;
  {
    MutexLock lock(&mu_);
    next_id = next_id_;
  }
  if (Status w = WriteManifest(*next, next_id); !w.ok()) return w;
  MutexLock lock(&mu_);
  runs_ = std::move(next);
  return Status::Ok();
}

Status FingerprintRuns::Add(std::span<const uint64_t> sorted) {
  if (sorted.empty()) return Status::Ok();
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] <= sorted[i - 1]) {
      return Status::InvalidArgument("admitted set: keys to add are not ascending and unique");
    }
  }
  {
    MutexLock lock(&mu_);
    while (options_.background && runs_->size() >= options_.max_runs &&
           (merge_wanted_ || merging_) && merge_error_.ok() && !stop_) {
      cv_.Wait(&mu_);
    }
  }
  Result<std::shared_ptr<Run>> run = WriteRun(sorted.size(), [&](const KeySink& sink) {
    for (uint64_t key : sorted) {
      if (Status s = sink(key); !s.ok()) return s;
    }
    return Status::Ok();
  });
  if (!run.ok()) return run.status();
  {
    MutexLock manifest(&manifest_mu_);
    auto next = std::make_shared<RunList>(*Snapshot());
    if (next->empty()) (*run)->bloom.reset();  // the oldest run has none
    next->push_back(*run);
    if (Status w = InstallLocked(std::move(next)); !w.ok()) return w;
    MutexLock lock(&mu_);
    merge_wanted_ = true;
  }
  if (!options_.background) return MergeDue();
  cv_.SignalAll();
  return Status::Ok();
}

size_t FingerprintRuns::MergeStart(const RunList& runs) const {
  uint64_t newer = 0;  // keys in the runs after i
  size_t start = runs.size();
  for (size_t i = runs.size(); i-- > 0;) {
    if (newer > 0 && newer * options_.merge_ratio >= runs[i]->count) start = i;
    newer += runs[i]->count;
  }
  return start;
}

Status FingerprintRuns::Merge(const RunList& runs, size_t start) {
  std::vector<const Run*> inputs;
  uint64_t total = 0;
  for (size_t i = start; i < runs.size(); ++i) {
    inputs.push_back(runs[i].get());
    total += runs[i]->count;
  }
  // The oldest run has no Bloom filter.
  Result<std::shared_ptr<Run>> run =
      WriteRun(start > 0 ? total : 0, [&](const KeySink& sink) { return MergeKeys(inputs, sink); });
  if (!run.ok()) return run.status();
  std::vector<std::filesystem::path> obsolete;
  {
    MutexLock manifest(&manifest_mu_);
    std::shared_ptr<const RunList> current = Snapshot();
    // Only Add changes the list meanwhile, and it only appends: the merged runs are still
    // runs [start, start + inputs.size()) of it.
    auto next = std::make_shared<RunList>(current->begin(), current->begin() + start);
    next->push_back(*run);
    next->insert(next->end(), current->begin() + start + inputs.size(), current->end());
    if (Status w = InstallLocked(std::move(next)); !w.ok()) return w;
    for (const Run* r : inputs) obsolete.push_back(r->path);
    MutexLock lock(&mu_);
    ++merges_;
    merged_keys_ += (*run)->count;
  }
  cv_.SignalAll();  // an Add waiting for fewer runs
  // Readers holding the old list keep the files' descriptors: unlinking does not disturb them.
  std::error_code ec;
  for (const auto& p : obsolete) std::filesystem::remove(p, ec);
  return Status::Ok();
}

Status FingerprintRuns::MergeDue() {
  while (true) {
    std::shared_ptr<const RunList> runs = Snapshot();
    const size_t start = MergeStart(*runs);
    if (start >= runs->size()) return Status::Ok();
    if (Status s = Merge(*runs, start); !s.ok()) return s;
  }
}

void FingerprintRuns::MergeLoop() {
  mu_.Lock();
  while (true) {
    while (!stop_ && !merge_wanted_) cv_.Wait(&mu_);
    if (stop_) break;
    merge_wanted_ = false;
    merging_ = true;
    mu_.Unlock();
    Status s = MergeDue();
    mu_.Lock();
    merging_ = false;
    if (!s.ok()) {
      spdlog::error("{} (the runs stay unmerged until the next add)", s.ToString());
      merge_error_ = s;
    }
    cv_.SignalAll();
  }
  mu_.Unlock();
}

Status FingerprintRuns::WaitIdle() {
  if (!options_.background) return MergeDue();
  MutexLock lock(&mu_);
  while ((merge_wanted_ || merging_) && !stop_) cv_.Wait(&mu_);
  return merge_error_;
}

bool FingerprintRuns::Idle() const {
  MutexLock lock(&mu_);
  return !merge_wanted_ && !merging_;
}

Result<bool> FingerprintRuns::Contains(uint64_t fp) const {
  std::shared_ptr<const RunList> runs = Snapshot();
  for (auto it = runs->rbegin(); it != runs->rend(); ++it) {
    const Run& r = **it;
    if (r.bloom && !r.bloom->MayContain(fp)) continue;
    Result<bool> found = r.Find(fp);
    if (!found.ok() || *found) return found;
  }
  return false;
}

Status FingerprintRuns::ForEach(const std::function<void(uint64_t)>& fn) const {
  std::shared_ptr<const RunList> runs = Snapshot();
  std::vector<const Run*> inputs;
  for (const auto& r : *runs) inputs.push_back(r.get());
  return MergeKeys(inputs, [&](uint64_t key) {
    fn(key);
    return Status::Ok();
  });
}

FingerprintRuns::Stats FingerprintRuns::stats() const {
  Stats st;
  std::shared_ptr<const RunList> runs;
  {
    MutexLock lock(&mu_);
    runs = runs_;
    st.merges = merges_;
    st.merged_keys = merged_keys_;
  }
  st.runs = runs->size();
  for (const auto& r : *runs) {
    st.keys += r->count;
    st.ram_bytes += r->fences.capacity() * sizeof(uint64_t);
    if (r->bloom) st.ram_bytes += r->bloom->memory_bytes();
  }
  return st;
}

}  // namespace harvest::state
