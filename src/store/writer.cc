// WarcWriter: WARC/1.1 records, one gzip member each, appended to rotating files, with a
// CDXJ index beside each file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <system_error>

#include "base/ascii.h"
#include "base/mutex.h"
#include "base/version.h"
#include "store/internal.h"
#include "store/store.h"

namespace harvest::store {
namespace {

using internal::AppendDecimal;
using internal::AppendSafe;
using internal::ErrnoText;
using internal::WriteAll;

constexpr std::string_view kConformsTo =
    "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/";
// Serial numbers have five digits; a writer that needs more files than that in one second
// of start-up is misconfigured.
constexpr int kMaxSerial = 99999;

// Appends the header line "name: value\r\n".
void AddHeader(std::string_view name, std::string_view value, std::string* out) {
  out->append(name);
  out->append(": ");
  out->append(value);
  out->append("\r\n");
}

// The same with the value made safe (AppendSafe).
void AddSafeHeader(std::string_view name, std::string_view value, bool is_uri, std::string* out) {
  out->append(name);
  out->append(": ");
  AppendSafe(value, is_uri, out);
  out->append("\r\n");
}

// Whether a response head declares a Content-Encoding other than identity (gzip, br, zstd,
// ...): the payload, stored as received, is compressed already.
bool HasContentEncoding(std::string_view head) {
  static constexpr std::string_view kName = "content-encoding:";
  head = internal::HttpHeadOf(head);
  size_t eol = head.find('\n');  // after the status line
  while (eol != std::string_view::npos) {
    head.remove_prefix(eol + 1);
    eol = head.find('\n');
    std::string_view line = head.substr(0, eol);
    if (line.size() <= kName.size() ||
        !EqualsIgnoreAsciiCase(line.substr(0, kName.size()), kName)) {
      continue;
    }
    const std::string_view v = TrimHttpOwsAndCr(line.substr(kName.size()));
    return !v.empty() && !EqualsIgnoreAsciiCase(v, "identity");
  }
  return false;
}

// Payloads at least this long with a Content-Encoding go into stored deflate blocks
// (GzipCompressor::AppendMemberStored); shorter ones are not worth a second code path.
constexpr size_t kMinStoredPayload = 512;

std::string HostName(const std::string& configured) {
  if (!configured.empty()) return configured;
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "localhost";
  return buf;
}

// The response or revisit record of a fetch, before serialisation: its block is `head`
// followed by `payload` (not copied together: digested and appended in two parts).
struct MainRecord {
  std::string_view type;
  std::string_view headers;         // lines beyond the common ones, id, type and digests
  std::string_view head;            // the rewritten HTTP response head
  std::string_view payload;         // "" for a revisit
  bool payload_compressed = false;  // has a Content-Encoding: stored, not deflated again
};

// The payload digest to write, into `*out` (replaced): the capture's own when it is of
// algorithm `algo`, else computed with `digester`.
void PayloadDigestFor(const Capture& c, DigestAlgorithm algo, internal::Digester* digester,
                      std::string* out) {
  out->clear();
  const std::string_view prefix = internal::DigestPrefix(algo);
  if (c.payload_digest.size() > prefix.size() && c.payload_digest.starts_with(prefix) &&
      c.payload_digest[prefix.size()] == ':') {
    AppendSafe(c.payload_digest, true, out);
    return;
  }
  digester->Update(c.payload);
  digester->AppendLabelAndReset(out);
}

// The header lines every record of a fetch starts with, into `*common` (replaced); also the
// target URI as written, into `*uri` (replaced), which its CDXJ line repeats.
void CommonHeaders(const Capture& c, std::string_view date, std::string* uri, std::string* common) {
  uri->clear();
  AppendSafe(c.target_uri, true, uri);
  common->clear();
  AddHeader("WARC-Date", date, common);
  AddHeader("WARC-Target-URI", *uri, common);
  if (!c.ip.empty()) AddSafeHeader("WARC-IP-Address", c.ip, true, common);
}

// The main record's own header lines (beyond the common ones) of a response, into
// `*headers`, and its rewritten HTTP head, into `*head` (both replaced).
void ResponseParts(const Capture& c, std::string_view payload_digest, std::string* headers,
                   std::string* head) {
  headers->clear();
  AddHeader("WARC-Payload-Digest", payload_digest, headers);
  if (!c.truncated.empty()) AddSafeHeader("WARC-Truncated", c.truncated, false, headers);
  head->clear();
  internal::AppendRewrittenResponseHead(c.response_header, head);
}

// Serialises a record into `*out` (replaced): its header lines are `headers1` then
// `headers2` (neither holding the id, type, digests or lengths), its block `block1` then
// `block2`; WARC-Warcinfo-ID names `warcinfo_id` (none when "" or for the warcinfo itself).
void BuildRecord(std::string_view type, std::string_view id, std::string_view warcinfo_id,
                 std::string_view headers1, std::string_view headers2,
                 std::string_view content_type, std::string_view block1, std::string_view block2,
                 internal::Digester* digester, std::string* out) {
  out->clear();
  out->reserve(headers1.size() + headers2.size() + block1.size() + block2.size() + 512);
  *out += "WARC/1.1\r\nWARC-Type: ";
  *out += type;
  *out += "\r\nWARC-Record-ID: ";
  *out += id;
  *out += "\r\n";
  *out += headers1;
  *out += headers2;
  if (!warcinfo_id.empty() && type != "warcinfo") AddHeader("WARC-Warcinfo-ID", warcinfo_id, out);
  *out += "Content-Type: ";
  *out += content_type;
  *out += "\r\nWARC-Block-Digest: ";
  digester->Update(block1);
  digester->Update(block2);
  digester->AppendLabelAndReset(out);
  *out += "\r\nContent-Length: ";
  AppendDecimal(block1.size() + block2.size(), out);
  *out += "\r\n\r\n";
  *out += block1;
  *out += block2;
  *out += "\r\n\r\n";
}

// Appends the gzip member of the main record `record` (BuildRecord's text of `main`).
Status AppendMainMember(const std::string& record, const MainRecord& main,
                        internal::GzipCompressor* gzip, std::string* out) {
  if (!main.payload_compressed) return gzip->AppendMember(record, out);
  // record = WARC head + HTTP head, the payload, CRLF CRLF (BuildRecord).
  const std::string_view text = record;
  const size_t payload_at = text.size() - main.payload.size() - 4;
  return gzip->AppendMemberStored(text.substr(0, payload_at),
                                  text.substr(payload_at, main.payload.size()),
                                  text.substr(payload_at + main.payload.size()), out);
}

constexpr std::string_view kResponseType = "application/http;msgtype=response";

}  // namespace

class WarcWriter::Impl {
 public:
  explicit Impl(WarcOptions o)
      : opt_(std::move(o)),
        clock_(opt_.clock != nullptr ? opt_.clock : SystemClock::Default()),
        gzip_(opt_.gzip_level),
        digester_(opt_.digest),
        hostname_(HostName(opt_.hostname)) {
    if (opt_.software.empty()) {
      opt_.software = DefaultUserAgent();
    }
  }
  ~Impl() { (void)Close(); }

  Status Init() {
    if (opt_.dir.empty()) return Status::InvalidArgument("WarcOptions.dir is empty");
    std::error_code ec;
    std::filesystem::create_directories(opt_.dir, ec);
    if (ec)
      return Status::IOError(opt_.dir.string() + ": cannot create directory: " + ec.message());
    if (opt_.max_file_bytes == 0) return Status::InvalidArgument("max_file_bytes must be > 0");
    return Status::Ok();
  }

  Result<RecordLocation> WriteResponse(const Capture& c, const PreparedResponse* prepared) {
    std::string date = prepared != nullptr ? prepared->date
                                           : WarcDate(c.fetch_time_us != 0 ? c.fetch_time_us
                                                                           : clock_->WallMicros());
    if (prepared != nullptr) {
      payload_digest_ = prepared->payload_digest;
    } else {
      PayloadDigestFor(c, opt_.digest, &digester_, &payload_digest_);
    }
    ResponseParts(c, payload_digest_, &main_headers_, &head_);
    return WriteFetch(
        c, date, {"response", main_headers_, head_, c.payload, WarcWriter::StoresPayloadAsIs(c)},
        payload_digest_, false, prepared);
  }

  // Any thread: the writer's options and clock are not changed after Open, and
  // warcinfo_shared_ is guarded; compressor, digester and buffers are the thread's own.
  Result<PreparedResponse> PrepareResponse(const Capture& c) const {
    if (c.response_header.empty()) {
      return Status::InvalidArgument("capture of " + c.target_uri + " has no response head");
    }
    struct Scratch {
      int level = 0;
      DigestAlgorithm digest = DigestAlgorithm::kSha256;
      std::unique_ptr<internal::GzipCompressor> gzip;
      std::unique_ptr<internal::Digester> digester;
      std::string uri, common, headers, head, record;
    };
    thread_local Scratch t;
    if (!t.gzip || t.level != opt_.gzip_level || t.digest != opt_.digest) {
      t.level = opt_.gzip_level;
      t.digest = opt_.digest;
      t.gzip = std::make_unique<internal::GzipCompressor>(opt_.gzip_level);
      t.digester = std::make_unique<internal::Digester>(opt_.digest);
    }
    PreparedResponse p;
    p.record_id = internal::NewRecordId();
    p.date = WarcDate(c.fetch_time_us != 0 ? c.fetch_time_us : clock_->WallMicros());
    {
      MutexLock lock(&warcinfo_mu_);
      p.warcinfo_id = warcinfo_shared_;
    }
    PayloadDigestFor(c, opt_.digest, t.digester.get(), &p.payload_digest);
    CommonHeaders(c, p.date, &t.uri, &t.common);
    ResponseParts(c, p.payload_digest, &t.headers, &t.head);
    const MainRecord main{"response", t.headers, t.head, c.payload,
                          WarcWriter::StoresPayloadAsIs(c)};
    BuildRecord(main.type, p.record_id, p.warcinfo_id, t.common, main.headers, kResponseType,
                main.head, main.payload, t.digester.get(), &t.record);
    Status s = AppendMainMember(t.record, main, t.gzip.get(), &p.member);
    if (!s.ok()) return s;
    return p;
  }

  Result<RecordLocation> WriteRevisit(const Capture& c, const Revisit& r) {
    std::string date = WarcDate(c.fetch_time_us != 0 ? c.fetch_time_us : clock_->WallMicros());
    const bool not_modified = r.profile == RevisitProfile::kServerNotModified;
    // identical-payload-digest: the capture's payload, which equals the original's.
    // server-not-modified: the 304 has no payload; the original's digest when the caller
    // knows it, else none (docs/warc.md "Revisits for 304 Not Modified").
    payload_digest_.clear();
    if (not_modified) {
      AppendSafe(r.refers_to_digest, true, &payload_digest_);
    } else {
      PayloadDigestFor(c, opt_.digest, &digester_, &payload_digest_);
    }
    main_headers_.clear();
    AddHeader("WARC-Profile",
              not_modified ? kServerNotModifiedProfile : kIdenticalPayloadDigestProfile,
              &main_headers_);
    AddSafeHeader("WARC-Refers-To-Target-URI", r.refers_to_uri, true, &main_headers_);
    AddHeader("WARC-Refers-To-Date", WarcDate(r.refers_to_date_us), &main_headers_);
    if (!r.refers_to_record_id.empty()) {
      AddSafeHeader("WARC-Refers-To", r.refers_to_record_id, true, &main_headers_);
    }
    if (!payload_digest_.empty()) {
      AddHeader("WARC-Payload-Digest", payload_digest_, &main_headers_);
    }
    head_.clear();
    internal::AppendRewrittenResponseHead(c.response_header, &head_);
    return WriteFetch(c, date, {"revisit", main_headers_, head_, {}}, payload_digest_, true,
                      nullptr);
  }

  Result<RecordLocation> WriteNearDuplicateMetadata(const Capture& c) {
    if (closed_) return Status::Aborted("WarcWriter is closed");
    if (!c.near_duplicate_of) {
      return Status::InvalidArgument("capture of " + c.target_uri + " is no near-duplicate");
    }
    std::string date = WarcDate(c.fetch_time_us != 0 ? c.fetch_time_us : clock_->WallMicros());
    PayloadDigestFor(c, opt_.digest, &digester_, &payload_digest_);
    std::string id = internal::NewRecordId();
    CommonHeaders(c, date, &uri_, &common_);
    main_headers_.clear();
    if (!c.near_duplicate_of->record_id.empty()) {
      AddSafeHeader("WARC-Refers-To", c.near_duplicate_of->record_id, true, &main_headers_);
    }
    MetadataBlock(c, &meta_block_);
    AddHeader("payloadDigest", payload_digest_, &meta_block_);
    if (c.status > 0) AddHeader("httpStatus", std::to_string(c.status), &meta_block_);
    for (int attempt = 0; attempt < 2; ++attempt) {  // see WriteFetch: rotation
      std::string warcinfo_before = warcinfo_id_;
      members_.clear();
      BuildRecord("metadata", id, warcinfo_id_, common_, main_headers_, "application/warc-fields",
                  meta_block_, {}, &digester_, &record_);
      Status s = gzip_.AppendMember(record_, &members_);
      if (!s.ok()) return s;
      s = EnsureRoom(members_.size());
      if (!s.ok()) return s;
      if (warcinfo_id_ == warcinfo_before) break;
    }
    RecordLocation loc{filename_, file_bytes_, members_.size(), id};
    Status s = Append(members_, 1);
    if (!s.ok()) return s;
    if (opt_.write_cdxj) {
      near_uri_.clear();
      AppendSafe(c.near_duplicate_of->uri, true, &near_uri_);
      internal::CdxjSource src;
      src.target_uri = uri_;
      src.surt = c.surt;
      src.warc_date = date;
      src.metadata = true;
      src.near_dup_of = near_uri_;
      src.status = c.status;
      src.payload_digest = payload_digest_;
      src.offset = loc.offset;
      src.length = loc.length;
      src.filename = filename_;
      internal::AppendCdxjLine(src, &cdxj_pending_);
      cdxj_pending_ += '\n';
    }
    return loc;
  }

  Status Flush() {
    if (fd_ < 0) return Status::Ok();
    if (opt_.fsync_on_flush && ::fsync(fd_) != 0) {
      return Status::IOError(path_.string() + ": fsync: " + ErrnoText(errno));
    }
    if (cdxj_fd_ >= 0 && !cdxj_pending_.empty()) {
      Status s = WriteAll(cdxj_fd_, cdxj_pending_, cdxj_path_);
      if (!s.ok()) {
        cdxj_sorter_.reset();  // what reached the file is unknown: it is sorted from disk
        return s;
      }
      // A failed spill leaves the sort to the file at close.
      if (cdxj_sorter_ && !cdxj_sorter_->Add(cdxj_pending_).ok()) cdxj_sorter_.reset();
      cdxj_pending_.clear();
      if (opt_.fsync_on_flush && ::fsync(cdxj_fd_) != 0) {
        return Status::IOError(cdxj_path_.string() + ": fsync: " + ErrnoText(errno));
      }
    }
    return Status::Ok();
  }

  Status Close() {
    if (closed_) return Status::Ok();
    Status s = CloseFile();
    closed_ = true;
    return s;
  }

  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t records_written() const { return records_written_; }
  std::filesystem::path current_file() const { return fd_ >= 0 ? path_ : std::filesystem::path(); }

 private:
  // Appends request (if any) + main record + metadata (if any) as one write; the main
  // record's location is returned and indexed.
  Result<RecordLocation> WriteFetch(const Capture& c, const std::string& date,
                                    const MainRecord& main, std::string_view payload_digest,
                                    bool is_revisit, const PreparedResponse* prepared) {
    if (closed_) return Status::Aborted("WarcWriter is closed");
    if ((main.head.empty() && main.payload.empty()) || c.response_header.empty()) {
      // Without a head readers cannot parse the block as HTTP; this is a caller bug.
      return Status::InvalidArgument("capture of " + c.target_uri + " has no response head");
    }
    std::string main_id = prepared != nullptr ? prepared->record_id : internal::NewRecordId();
    std::string request_id = internal::NewRecordId();
    std::string metadata_id = internal::NewRecordId();
    CommonHeaders(c, date, &uri_, &common_);
    concurrent_.clear();
    AddHeader("WARC-Concurrent-To", main_id, &concurrent_);
    const bool has_metadata = !c.outlinks.empty() || !c.via.empty() || c.near_duplicate_of;
    if (has_metadata) MetadataBlock(c, &meta_block_);
    size_t records = 0;
    uint64_t main_offset = 0, main_length = 0;  // within members_
    // Records name the warcinfo of their file, which is only known once rotation has been
    // decided; a rotation therefore re-serialises the group (rare: once per file).
    for (int attempt = 0; attempt < 2; ++attempt) {
      std::string warcinfo_before = warcinfo_id_;
      members_.clear();
      records = 0;
      if (!c.request_header.empty()) {
        BuildRecord("request", request_id, warcinfo_id_, common_, concurrent_,
                    "application/http;msgtype=request", c.request_header, {}, &digester_, &record_);
        Status s = gzip_.AppendMember(record_, &members_);
        if (!s.ok()) return s;
        ++records;
      }
      main_offset = members_.size();
      Status s;
      if (prepared != nullptr && prepared->warcinfo_id == warcinfo_id_) {
        members_ += prepared->member;
      } else {
        BuildRecord(main.type, main_id, warcinfo_id_, common_, main.headers, kResponseType,
                    main.head, main.payload, &digester_, &record_);
        s = AppendMainMember(record_, main, &gzip_, &members_);
      }
      if (!s.ok()) return s;
      main_length = members_.size() - main_offset;
      ++records;
      if (has_metadata) {
        BuildRecord("metadata", metadata_id, warcinfo_id_, common_, concurrent_,
                    "application/warc-fields", meta_block_, {}, &digester_, &record_);
        s = gzip_.AppendMember(record_, &members_);
        if (!s.ok()) return s;
        ++records;
      }
      s = EnsureRoom(members_.size());
      if (!s.ok()) return s;
      if (warcinfo_id_ == warcinfo_before) break;
    }
    RecordLocation loc{filename_, file_bytes_ + main_offset, main_length, std::move(main_id)};
    Status s = Append(members_, records);
    if (!s.ok()) return s;
    if (opt_.write_cdxj) {
      // The URL as written in WARC-Target-URI (escaped), so that RecoverWarc, which only
      // sees the record, produces the same line.
      near_uri_.clear();
      if (c.near_duplicate_of) AppendSafe(c.near_duplicate_of->uri, true, &near_uri_);
      internal::CdxjSource src;
      src.target_uri = uri_;
      src.surt = c.surt;
      src.warc_date = date;
      src.revisit = is_revisit;
      src.near_dup_of = near_uri_;
      src.mime = c.mime;
      src.response_head = c.response_header;
      src.status = c.status;
      src.payload_digest = payload_digest;
      src.offset = loc.offset;
      src.length = loc.length;
      src.filename = filename_;
      internal::AppendCdxjLine(src, &cdxj_pending_);
      cdxj_pending_ += '\n';
    }
    return loc;
  }

  // application/warc-fields lines into `*block` (replaced): via, hopsFromSeed, the
  // near-duplicate fields, outlinks.
  static void MetadataBlock(const Capture& c, std::string* block) {
    block->clear();
    if (!c.via.empty()) AddSafeHeader("via", c.via, true, block);
    if (c.hops > 0) AddHeader("hopsFromSeed", std::to_string(c.hops), block);
    if (c.near_duplicate_of) {
      const Capture::NearDuplicate& n = *c.near_duplicate_of;
      AddSafeHeader("nearDuplicateOf", n.uri, true, block);
      if (!n.record_id.empty()) AddSafeHeader("nearDuplicateRecord", n.record_id, true, block);
      if (n.date_us != 0) AddHeader("nearDuplicateDate", WarcDate(n.date_us), block);
      AddHeader("simhashDistance", std::to_string(n.distance), block);
    }
    for (const std::string& link : c.outlinks) AddSafeHeader("outlink", link, true, block);
  }

  // Opens a file if none is open; rotates when `bytes` more would pass the size limit
  // (unless the file holds nothing but its warcinfo record).
  Status EnsureRoom(uint64_t bytes) {
    if (fd_ >= 0 && records_in_file_ > 1 && file_bytes_ + bytes > opt_.max_file_bytes) {
      Status s = CloseFile();
      if (!s.ok()) return s;
    }
    if (fd_ < 0) return OpenFile();
    return Status::Ok();
  }

  Status OpenFile() {
    std::string ts = Timestamp14(clock_->WallMicros());
    for (; serial_ <= kMaxSerial; ++serial_) {
      char serial[16];
      std::snprintf(serial, sizeof(serial), "%05d", serial_);
      std::string stem = opt_.prefix + "-" + ts + "-" + serial;
      std::filesystem::path p = opt_.dir / (stem + ".warc.gz");
      int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
      if (fd < 0 && errno == EEXIST) continue;
      if (fd < 0) return Status::IOError(p.string() + ": open: " + ErrnoText(errno));
      fd_ = fd;
      path_ = p;
      filename_ = stem + ".warc.gz";
      file_bytes_ = 0;
      records_in_file_ = 0;
      ++serial_;
      if (opt_.write_cdxj) {
        cdxj_path_ = opt_.dir / (stem + ".cdxj");
        cdxj_fd_ = ::open(cdxj_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (cdxj_fd_ < 0)
          return Status::IOError(cdxj_path_.string() + ": open: " + ErrnoText(errno));
        // Sorted as it grows, unless it held lines already (then sorted from the file).
        struct stat st {};
        cdxj_sorter_.reset();
        if (::fstat(cdxj_fd_, &st) == 0 && st.st_size == 0) cdxj_sorter_.emplace(cdxj_path_);
      }
      return WriteWarcinfo();
    }
    return Status::ResourceExhausted("no free WARC serial number for " + ts + " in " +
                                     opt_.dir.string());
  }

  Status WriteWarcinfo() {
    std::string block;
    AddSafeHeader("software", opt_.software, false, &block);
    AddHeader("format", "WARC File Format 1.1", &block);
    AddHeader("conformsTo", kConformsTo, &block);
    AddSafeHeader("hostname", hostname_, false, &block);
    if (!opt_.operator_contact.empty()) {
      AddSafeHeader("operator", opt_.operator_contact, false, &block);
    }
    if (!opt_.description.empty()) {
      AddSafeHeader("description", opt_.description, false, &block);
    }
    std::string id = internal::NewRecordId();
    std::string headers;
    AddHeader("WARC-Date", WarcDate(clock_->WallMicros()), &headers);
    AddHeader("WARC-Filename", filename_, &headers);
    BuildRecord("warcinfo", id, {}, headers, {}, "application/warc-fields", block, {}, &digester_,
                &record_);
    warcinfo_id_ = id;
    {
      MutexLock lock(&warcinfo_mu_);
      warcinfo_shared_ = id;
    }
    std::string member;
    Status s = gzip_.AppendMember(record_, &member);
    if (!s.ok()) return s;
    return Append(member, 1);
  }

  // One write(2) for the whole buffer; on failure the file is cut back to its old size so
  // the next record does not follow a torn one.
  Status Append(std::string_view data, size_t records) {
    Status s = WriteAll(fd_, data, path_);
    if (!s.ok()) {
      if (::ftruncate(fd_, static_cast<off_t>(file_bytes_)) != 0) {
        return Status::IOError(s.message() + "; ftruncate after failed write: " + ErrnoText(errno));
      }
      return s;
    }
    file_bytes_ += data.size();
    bytes_written_ += data.size();
    records_in_file_ += records;
    records_written_ += records;
    return Status::Ok();
  }

  Status CloseFile() {
    if (fd_ < 0) return Status::Ok();
    Status s = Flush();
    if (::close(fd_) != 0 && s.ok())
      s = Status::IOError(path_.string() + ": close: " + ErrnoText(errno));
    fd_ = -1;
    if (cdxj_fd_ >= 0) {
      if (::close(cdxj_fd_) != 0 && s.ok()) {
        s = Status::IOError(cdxj_path_.string() + ": close: " + ErrnoText(errno));
      }
      cdxj_fd_ = -1;
      // The file is complete: sort its index for replay tools (pywb, OutbackCDX), which
      // expect SURT order. Lines were appended in write order until now. Also after a
      // failed flush, so that what was written is usable (recovery sorts it again anyway).
      // The sorter has every line in memory or in sorted runs; without it (a write or
      // spill failed), or if it fails, the file is read back and sorted.
      const bool sorter = cdxj_sorter_.has_value();
      Status sorted = sorter ? cdxj_sorter_->Finish(opt_.fsync_on_flush)
                             : SortCdxjFile(cdxj_path_, opt_.fsync_on_flush);
      if (!sorted.ok() && sorter) sorted = SortCdxjFile(cdxj_path_, opt_.fsync_on_flush);
      cdxj_sorter_.reset();
      if (s.ok()) s = sorted;
    }
    cdxj_pending_.clear();
    return s;
  }

  WarcOptions opt_;
  const Clock* clock_;
  internal::GzipCompressor gzip_;
  internal::Digester digester_;
  std::string hostname_;
  // Reused per fetch, so that writing allocates little (docs/benchmarks.md "WARC writing").
  std::string record_;          // the text of the record being built
  std::string members_;         // the gzip members of the fetch, appended with one write
  std::string common_;          // header lines of every record of the fetch
  std::string main_headers_;    // further header lines of the main record
  std::string concurrent_;      // "WARC-Concurrent-To: <main id>" line
  std::string head_;            // the rewritten HTTP response head
  std::string meta_block_;      // the metadata record's block
  std::string payload_digest_;  // as written in WARC-Payload-Digest
  std::string uri_, near_uri_;  // target URI and near-duplicate URI as written
  int fd_ = -1;
  int cdxj_fd_ = -1;
  std::filesystem::path path_;
  std::filesystem::path cdxj_path_;
  std::string filename_;
  std::string warcinfo_id_;
  // warcinfo_id_ for PrepareResponse on other threads.
  mutable Mutex warcinfo_mu_;
  std::string warcinfo_shared_ GUARDED_BY(warcinfo_mu_);
  std::string cdxj_pending_;
  std::optional<internal::CdxjSorter> cdxj_sorter_;  // the current file's index, as written
  uint64_t file_bytes_ = 0;
  uint64_t records_in_file_ = 0;
  uint64_t bytes_written_ = 0;
  uint64_t records_written_ = 0;
  int serial_ = 0;
  bool closed_ = false;
};

WarcWriter::WarcWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WarcWriter::~WarcWriter() = default;

Result<std::unique_ptr<WarcWriter>> WarcWriter::Open(WarcOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  Status s = impl->Init();
  if (!s.ok()) return s;
  return std::unique_ptr<WarcWriter>(new WarcWriter(std::move(impl)));
}

Result<RecordLocation> WarcWriter::WriteResponse(const Capture& capture) {
  return impl_->WriteResponse(capture, nullptr);
}
Result<RecordLocation> WarcWriter::WriteResponse(const Capture& capture,
                                                 const PreparedResponse* prepared) {
  return impl_->WriteResponse(capture, prepared);
}
bool WarcWriter::StoresPayloadAsIs(const Capture& capture) {
  return capture.payload.size() >= kMinStoredPayload && HasContentEncoding(capture.response_header);
}

Result<PreparedResponse> WarcWriter::PrepareResponse(const Capture& capture) const {
  return impl_->PrepareResponse(capture);
}
Result<RecordLocation> WarcWriter::WriteRevisit(const Capture& capture, const Revisit& original) {
  return impl_->WriteRevisit(capture, original);
}
Result<RecordLocation> WarcWriter::WriteNearDuplicateMetadata(const Capture& capture) {
  return impl_->WriteNearDuplicateMetadata(capture);
}
Status WarcWriter::Flush() { return impl_->Flush(); }
Status WarcWriter::Close() { return impl_->Close(); }
uint64_t WarcWriter::bytes_written() const { return impl_->bytes_written(); }
uint64_t WarcWriter::records_written() const { return impl_->records_written(); }
std::filesystem::path WarcWriter::current_file() const { return impl_->current_file(); }

}  // namespace harvest::store
