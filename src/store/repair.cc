// Crash recovery: RepairWarcTail cuts a torn record off the end of a WARC; RecoverWarc also
// indexes the complete records whose CDXJ lines were not yet written when the process died.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <functional>
#include <iterator>
#include <system_error>

#include "store/internal.h"
#include "store/store.h"

namespace harvest::store {
namespace {

using internal::ErrnoText;
using internal::ReplaceFile;

// A torn tail is at most one group of records (one write); more than this many bytes
// after the last good record suggests mid-file corruption rather than a torn append.
constexpr uint64_t kMaxTornTailBytes = 64ull << 20;

// "<stem>.cdxj" beside "<stem>.warc.gz" or "<stem>.warc"; empty for other names.
std::filesystem::path CdxjPathFor(const std::filesystem::path& warc) {
  std::string name = warc.filename().string();
  size_t cut = 0;
  if (name.size() > 8 && name.ends_with(".warc.gz")) {
    cut = 8;
  } else if (name.size() > 5 && name.ends_with(".warc")) {
    cut = 5;
  }
  if (cut == 0) return {};
  return warc.parent_path() / (name.substr(0, name.size() - cut) + ".cdxj");
}

Status SyncPath(const std::filesystem::path& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Status::IOError(path.string() + ": open: " + ErrnoText(errno));
  Status s;
  if (::fsync(fd) != 0) s = Status::IOError(path.string() + ": fsync: " + ErrnoText(errno));
  ::close(fd);
  return s;
}

// The CDXJ of one WARC, cleaned for reconciliation with it.
struct CdxjFile {
  bool exists = false;
  std::string text;          // the kept lines, each ending in '\n'
  bool changed = false;      // `text` differs from the file's content
  uint64_t indexed_end = 0;  // largest offset + length over the kept lines naming the WARC
  uint64_t last_offset = 0;  // offset of the record ending at indexed_end
};

// Loads `path`, dropping an unterminated last line (torn by a crash while the writer
// appended index lines) and lines naming `warc_name` whose record ends past `warc_size`.
// Other lines (other files, unparsable ones) are kept as they are.
Result<CdxjFile> LoadCdxj(const std::filesystem::path& path, std::string_view warc_name,
                          uint64_t warc_size) {
  CdxjFile f;
  std::error_code ec;
  f.exists = std::filesystem::exists(path, ec);
  if (ec) return Status::IOError(path.string() + ": " + ec.message());
  if (!f.exists) return f;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path.string() + ": cannot open");
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Status::IOError(path.string() + ": read failed");
  size_t last_nl = raw.rfind('\n');
  size_t complete = last_nl == std::string::npos ? 0 : last_nl + 1;
  f.changed = complete != raw.size();
  std::string_view rest = std::string_view(raw).substr(0, complete);
  f.text.reserve(complete);
  while (!rest.empty()) {
    size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol + 1);
    rest.remove_prefix(eol + 1);
    Result<internal::CdxjEntry> e = internal::ParseCdxjLine(line.substr(0, line.size() - 1));
    if (e.ok() && e->filename == warc_name) {
      uint64_t end = e->offset + e->length;
      if (end > warc_size || end < e->offset) {
        f.changed = true;
        continue;
      }
      if (end > f.indexed_end) {
        f.indexed_end = end;
        f.last_offset = e->offset;
      }
    }
    f.text += line;
  }
  return f;
}

RecoveredRecord ToRecovered(const WarcRecord& rec) {
  RecoveredRecord r;
  r.type = rec.type;
  r.target_uri = rec.target_uri;
  r.date_us = internal::ParseWarcDate(rec.date).value_or(0);
  r.record_id = rec.header("WARC-Record-ID");
  r.payload_digest = rec.header("WARC-Payload-Digest");
  r.offset = rec.offset;
  r.length = rec.length;
  return r;
}

// The value of the first `name: value` line of an application/warc-fields block ("" when
// absent).
std::string WarcField(std::string_view block, std::string_view name) {
  while (!block.empty()) {
    size_t eol = block.find('\n');
    std::string_view line = block.substr(0, eol);
    block = eol == std::string_view::npos ? std::string_view() : block.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > name.size() + 1 && line.substr(0, name.size()) == name &&
        line[name.size()] == ':') {
      line.remove_prefix(name.size() + 1);
      while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      return std::string(line);
    }
  }
  return {};
}

// The CDXJ line WarcWriter writes for a response or revisit record, rebuilt from the record
// (and `near_dup_of`, from the metadata record written with it).
std::string LineFor(const WarcRecord& rec, const std::string& filename,
                    std::string_view near_dup_of) {
  std::string_view head = internal::HttpHeadOf(rec.block);
  Result<HttpResponse> http = ParseHttpResponse(head);
  std::string digest = rec.header("WARC-Payload-Digest");
  internal::CdxjSource src;
  src.target_uri = rec.target_uri;
  src.warc_date = rec.date;
  src.revisit = rec.type == "revisit";
  src.response_head = head;
  src.status = http.ok() ? http->status : 0;
  src.payload_digest = digest;
  src.near_dup_of = near_dup_of;
  src.offset = rec.offset;
  src.length = rec.length;
  src.filename = filename;
  return internal::CdxjLineFor(src);
}

// The line of a near-duplicate metadata record (WarcWriter::WriteNearDuplicateMetadata).
std::string MetadataLineFor(const WarcRecord& rec, const std::string& filename) {
  std::string near = WarcField(rec.block, "nearDuplicateOf");
  std::string digest = WarcField(rec.block, "payloadDigest");
  std::string status_text = WarcField(rec.block, "httpStatus");
  int status = 0;
  for (char c : status_text) {
    if (c < '0' || c > '9' || status > 999) {
      status = 0;
      break;
    }
    status = status * 10 + (c - '0');
  }
  internal::CdxjSource src;
  src.target_uri = rec.target_uri;
  src.warc_date = rec.date;
  src.metadata = true;
  src.near_dup_of = near;
  src.status = status;
  src.payload_digest = digest;
  src.offset = rec.offset;
  src.length = rec.length;
  src.filename = filename;
  return internal::CdxjLineFor(src);
}

// What RecoverWarc learns from the records after the last indexed one.
struct TailIndex {
  std::vector<RecoveredRecord> records;  // all of them, in file order
  std::string lines;                     // CDXJ lines of the responses and revisits
  uint64_t line_count = 0;
  // The last response or revisit (block cut to its HTTP head), not yet indexed: its line
  // takes "near_dup_of" from the metadata record written with it, which follows it.
  std::optional<WarcRecord> pending;
};

void AddLine(std::string line, TailIndex* tail) {
  tail->lines += line;
  tail->lines += '\n';
  ++tail->line_count;
}

void FlushPending(const std::string& filename, std::string_view near_dup_of, TailIndex* tail) {
  if (!tail->pending) return;
  AddLine(LineFor(*tail->pending, filename, near_dup_of), tail);
  tail->pending.reset();
}

void AddToTail(const WarcRecord& rec, const std::string& filename, TailIndex* tail) {
  tail->records.push_back(ToRecovered(rec));
  const std::string concurrent_to = rec.header("WARC-Concurrent-To");
  if (rec.type == "metadata" && tail->pending &&
      concurrent_to == tail->pending->header("WARC-Record-ID")) {
    FlushPending(filename, WarcField(rec.block, "nearDuplicateOf"), tail);
    return;
  }
  FlushPending(filename, "", tail);
  if (rec.type == "response" || rec.type == "revisit") {
    WarcRecord head_only = rec;
    head_only.block = std::string(internal::HttpHeadOf(rec.block));
    tail->pending = std::move(head_only);
  } else if (rec.type == "metadata" && concurrent_to.empty() &&
             !WarcField(rec.block, "nearDuplicateOf").empty()) {
    AddLine(MetadataLineFor(rec, filename), tail);
  }
}

// Reads `warc` from `start` (the end of the last indexed record) to its end into `tail`.
Status IndexTail(const std::filesystem::path& warc, uint64_t start, TailIndex* tail) {
  WarcReaderOptions ro;
  ro.start_offset = start;
  Result<std::unique_ptr<WarcReader>> reader = WarcReader::Open(warc, ro);
  if (!reader.ok()) return reader.status();
  std::string filename = warc.filename().string();
  while (true) {
    Result<std::optional<WarcRecord>> r = (*reader)->Next();
    if (!r.ok()) {
      if (r.status().code() != Status::Code::kCorruption) return r.status();
      return Status::Corruption(r.status().message() + " (reading on from offset " +
                                std::to_string(start) +
                                ", the end of the last record its CDXJ indexes: the CDXJ does "
                                "not match the WARC)");
    }
    if (!r->has_value()) return Status::Ok();
    AddToTail(**r, filename, tail);
  }
}

// RepairWarcTail reading from `start`, an offset known to be the end of a good record (0:
// the whole file); only the part after it is read. `on_record` (if set) sees every complete
// record read, i.e. every record from `start` to the end after the cut.
Result<uint64_t> RepairTailFrom(const std::filesystem::path& file, uint64_t start, bool force,
                                const std::function<void(const WarcRecord&)>& on_record) {
  WarcReaderOptions ro;
  ro.start_offset = start;
  Result<std::unique_ptr<WarcReader>> reader = WarcReader::Open(file, ro);
  if (!reader.ok()) return reader.status();
  uint64_t good_end = start;
  Status error;
  while (true) {
    Result<std::optional<WarcRecord>> r = (*reader)->Next();
    if (!r.ok()) {
      error = r.status();
      break;
    }
    if (!r->has_value()) break;
    good_end = (*r)->offset + (*r)->length;
    if (on_record) on_record(**r);
  }
  std::error_code ec;
  uint64_t size = std::filesystem::file_size(file, ec);
  if (ec) return Status::IOError(file.string() + ": " + ec.message());
  if (error.ok()) return uint64_t{0};  // intact (at most line ends after the last record)
  if (error.code() != Status::Code::kCorruption) return error;
  if (!force && size - good_end > kMaxTornTailBytes) return error;
  std::filesystem::resize_file(file, good_end, ec);
  if (ec) return Status::IOError(file.string() + ": truncate: " + ec.message());
  Status s = SyncPath(file, O_WRONLY);
  if (!s.ok()) return s;
  std::filesystem::path cdxj_path = CdxjPathFor(file);
  if (!cdxj_path.empty()) {
    Result<CdxjFile> cdxj = LoadCdxj(cdxj_path, file.filename().string(), good_end);
    if (!cdxj.ok()) return cdxj.status();
    if (cdxj->changed) {
      // Sorted, like every CDXJ of a WARC that is not being written (docs/warc.md "CDXJ").
      s = ReplaceFile(cdxj_path, internal::SortedLines(cdxj->text));
      if (!s.ok()) return s;
    }
  }
  return size - good_end;
}

// Whether the record the CDXJ indexes last really ends at cdxj.indexed_end (read back at
// its offset: same offset and length). Only then may RecoverWarc read from there on; a wrong
// index must not decide where the file is cut.
bool IndexedEndIsRecordEnd(const std::filesystem::path& warc, const CdxjFile& cdxj) {
  if (cdxj.indexed_end == 0) return false;
  Result<WarcRecord> last = ReadRecordAt(warc, cdxj.last_offset);
  return last.ok() && last->offset == cdxj.last_offset &&
         last->offset + last->length == cdxj.indexed_end;
}

Result<uint64_t> FileSize(const std::filesystem::path& file) {
  std::error_code ec;
  uint64_t size = std::filesystem::file_size(file, ec);
  if (!ec) return size;
  std::string msg = file.string() + ": " + ec.message();
  return ec == std::errc::no_such_file_or_directory ? Status::NotFound(msg) : Status::IOError(msg);
}

}  // namespace

Result<uint64_t> RepairWarcTail(const std::filesystem::path& file, bool force) {
  return RepairTailFrom(file, 0, force, nullptr);
}

Result<RecoveryReport> RecoverWarc(const std::filesystem::path& warc) {
  return RecoverWarc(warc, RecoverOptions());
}

Result<RecoveryReport> RecoverWarc(const std::filesystem::path& warc,
                                   const RecoverOptions& options) {
  std::filesystem::path cdxj_path = CdxjPathFor(warc);
  if (cdxj_path.empty()) {
    return Status::InvalidArgument(warc.string() +
                                   ": not a WARC file name (expected *.warc.gz or *.warc)");
  }
  // A crash inside ReplaceFile or SortCdxjFile can leave its temporary file and sorted runs;
  // they hold nothing we need.
  std::filesystem::path tmp = cdxj_path;
  tmp += ".tmp";
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  internal::RemoveCdxjSortRuns(cdxj_path);
  std::string name = warc.filename().string();
  Result<uint64_t> size = FileSize(warc);
  if (!size.ok()) return size.status();
  Result<CdxjFile> loaded = LoadCdxj(cdxj_path, name, *size);
  if (!loaded.ok()) return loaded.status();
  CdxjFile cdxj = std::move(loaded).value();
  uint64_t start = IndexedEndIsRecordEnd(warc, cdxj) ? cdxj.indexed_end : 0;
  // The records the torn-tail check reads are the unindexed ones (unless the cut drops index
  // lines, see below): index them in the same pass.
  TailIndex tail;
  Result<uint64_t> cut = RepairTailFrom(
      warc, start, options.force, [&](const WarcRecord& rec) { AddToTail(rec, name, &tail); });
  if (!cut.ok()) return cut.status();
  RecoveryReport report;
  report.bytes_cut = *cut;
  if (*cut > 0) {  // the cut may have dropped index lines: load again
    size = FileSize(warc);
    if (!size.ok()) return size.status();
    loaded = LoadCdxj(cdxj_path, name, *size);
    if (!loaded.ok()) return loaded.status();
    cdxj = std::move(loaded).value();
  }
  if (cdxj.indexed_end != start) {
    tail = TailIndex();
    Status s = IndexTail(warc, cdxj.indexed_end, &tail);
    if (!s.ok()) return s;
  }
  FlushPending(name, "", &tail);
  report.cdxj_lines_added = tail.line_count;
  report.unindexed = std::move(tail.records);
  // The recovered file is no longer written (the writer starts a new one), so its index is
  // left sorted as a closed file's is; the lines of a crashed writer are in write order.
  // One atomic rewrite covers the cleaning, the added lines and the sort.
  if (cdxj.changed || !tail.lines.empty() || !internal::LinesSorted(cdxj.text)) {
    Status s = ReplaceFile(cdxj_path, internal::SortedLines(cdxj.text + tail.lines));
    if (!s.ok()) return s;
  }
  return report;
}

}  // namespace harvest::store
