// WarcWriter: WARC/1.1 records, one gzip member each, appended to rotating files, with a
// CDXJ index beside each file.
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "base/version.h"
#include "store/internal.h"
#include "store/store.h"

namespace harvest::store {
namespace {

using internal::ErrnoText;
using internal::WriteAll;

constexpr std::string_view kConformsTo =
    "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/";
// Serial numbers have five digits; a writer that needs more files than that in one second
// of start-up is misconfigured.
constexpr int kMaxSerial = 99999;

// Header values must stay on one line: CR, LF and other controls in a URI or field value
// are percent-encoded so outside data cannot inject WARC headers.
std::string SafeValue(std::string_view v, bool is_uri) {
  std::string out;
  out.reserve(v.size());
  for (unsigned char c : v) {
    if (c < 0x20 || c == 0x7f || (is_uri && c == ' ')) {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

std::string HostName(const std::string& configured) {
  if (!configured.empty()) return configured;
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "localhost";
  return buf;
}

// The response or revisit record of a fetch, before serialisation.
struct MainRecord {
  std::string type;
  std::vector<std::pair<std::string, std::string>> headers;  // beyond id, type and digests
  std::string content_type;
  std::string block;
};

}  // namespace

class WarcWriter::Impl {
 public:
  explicit Impl(WarcOptions o)
      : opt_(std::move(o)),
        clock_(opt_.clock != nullptr ? opt_.clock : SystemClock::Default()),
        gzip_(opt_.gzip_level),
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

  Result<RecordLocation> WriteResponse(const Capture& c) {
    std::string date = WarcDate(c.fetch_time_us != 0 ? c.fetch_time_us : clock_->WallMicros());
    std::string payload_digest = PayloadDigestFor(c);
    MainRecord m;
    m.type = "response";
    m.headers = CommonHeaders(c, date);
    m.headers.emplace_back("WARC-Payload-Digest", payload_digest);
    if (!c.truncated.empty())
      m.headers.emplace_back("WARC-Truncated", SafeValue(c.truncated, false));
    m.content_type = "application/http;msgtype=response";
    m.block = internal::RewriteResponseHead(c.response_header);
    m.block += c.payload;
    return WriteFetch(c, date, m, payload_digest, false);
  }

  Result<RecordLocation> WriteRevisit(const Capture& c, const Revisit& r) {
    std::string date = WarcDate(c.fetch_time_us != 0 ? c.fetch_time_us : clock_->WallMicros());
    const bool not_modified = r.profile == RevisitProfile::kServerNotModified;
    // identical-payload-digest: the capture's payload, which equals the original's.
    // server-not-modified: the 304 has no payload; the original's digest when the caller
    // knows it, else none (docs/warc.md "Revisits for 304 Not Modified").
    std::string payload_digest =
        not_modified ? SafeValue(r.refers_to_digest, true) : PayloadDigestFor(c);
    MainRecord m;
    m.type = "revisit";
    m.headers = CommonHeaders(c, date);
    m.headers.emplace_back(
        "WARC-Profile",
        std::string(not_modified ? kServerNotModifiedProfile : kIdenticalPayloadDigestProfile));
    m.headers.emplace_back("WARC-Refers-To-Target-URI", SafeValue(r.refers_to_uri, true));
    m.headers.emplace_back("WARC-Refers-To-Date", WarcDate(r.refers_to_date_us));
    if (!r.refers_to_record_id.empty()) {
      m.headers.emplace_back("WARC-Refers-To", SafeValue(r.refers_to_record_id, true));
    }
    if (!payload_digest.empty()) m.headers.emplace_back("WARC-Payload-Digest", payload_digest);
    m.content_type = "application/http;msgtype=response";
    m.block = internal::RewriteResponseHead(c.response_header);
    return WriteFetch(c, date, m, payload_digest, true);
  }

  Result<RecordLocation> WriteNearDuplicateMetadata(const Capture& c) {
    if (closed_) return Status::Aborted("WarcWriter is closed");
    if (!c.near_duplicate_of) {
      return Status::InvalidArgument("capture of " + c.target_uri + " is no near-duplicate");
    }
    std::string date = WarcDate(c.fetch_time_us != 0 ? c.fetch_time_us : clock_->WallMicros());
    std::string payload_digest = PayloadDigestFor(c);
    std::string id = internal::NewRecordId();
    std::vector<std::pair<std::string, std::string>> h = CommonHeaders(c, date);
    if (!c.near_duplicate_of->record_id.empty()) {
      h.emplace_back("WARC-Refers-To", SafeValue(c.near_duplicate_of->record_id, true));
    }
    std::string block = MetadataBlock(c);
    block += "payloadDigest: " + payload_digest + "\r\n";
    if (c.status > 0) block += "httpStatus: " + std::to_string(c.status) + "\r\n";
    std::string member;
    for (int attempt = 0; attempt < 2; ++attempt) {  // see WriteFetch: rotation
      std::string warcinfo_before = warcinfo_id_;
      Result<std::string> m =
          gzip_.Member(BuildRecord("metadata", id, h, "application/warc-fields", block));
      if (!m.ok()) return m.status();
      member = std::move(m).value();
      Status s = EnsureRoom(member.size());
      if (!s.ok()) return s;
      if (warcinfo_id_ == warcinfo_before) break;
    }
    RecordLocation loc{filename_, file_bytes_, member.size(), id};
    Status s = Append(member, 1);
    if (!s.ok()) return s;
    if (opt_.write_cdxj) {
      std::string uri = SafeValue(c.target_uri, true);
      std::string near = SafeValue(c.near_duplicate_of->uri, true);
      internal::CdxjSource src;
      src.target_uri = uri;
      src.surt = c.surt;
      src.warc_date = date;
      src.metadata = true;
      src.near_dup_of = near;
      src.status = c.status;
      src.payload_digest = payload_digest;
      src.offset = loc.offset;
      src.length = loc.length;
      src.filename = filename_;
      cdxj_pending_ += internal::CdxjLineFor(src);
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
      if (!s.ok()) return s;
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
  std::string PayloadDigestFor(const Capture& c) const {
    std::string prefix = std::string(internal::DigestPrefix(opt_.digest)) + ":";
    if (c.payload_digest.compare(0, prefix.size(), prefix) == 0) {
      return SafeValue(c.payload_digest, true);
    }
    return PayloadDigest(c.payload, opt_.digest);
  }

  std::vector<std::pair<std::string, std::string>> CommonHeaders(const Capture& c,
                                                                 const std::string& date) {
    std::vector<std::pair<std::string, std::string>> h;
    h.emplace_back("WARC-Date", date);
    h.emplace_back("WARC-Target-URI", SafeValue(c.target_uri, true));
    if (!c.ip.empty()) h.emplace_back("WARC-IP-Address", SafeValue(c.ip, true));
    return h;
  }

  // Serialises a record. `headers` must not contain the id, type, digests or lengths.
  std::string BuildRecord(std::string_view type, const std::string& id,
                          const std::vector<std::pair<std::string, std::string>>& headers,
                          std::string_view content_type, std::string_view block) const {
    std::string out;
    out.reserve(block.size() + 512);
    out += "WARC/1.1\r\nWARC-Type: ";
    out += type;
    out += "\r\nWARC-Record-ID: " + id + "\r\n";
    for (const auto& [k, v] : headers) out += k + ": " + v + "\r\n";
    if (!warcinfo_id_.empty() && type != "warcinfo") {
      out += "WARC-Warcinfo-ID: " + warcinfo_id_ + "\r\n";
    }
    out += "Content-Type: ";
    out += content_type;
    out += "\r\nWARC-Block-Digest: " + PayloadDigest(block, opt_.digest);
    out += "\r\nContent-Length: " + std::to_string(block.size()) + "\r\n\r\n";
    out += block;
    out += "\r\n\r\n";
    return out;
  }

  // Appends request (if any) + main record + metadata (if any) as one write; the main
  // record's location is returned and indexed.
  Result<RecordLocation> WriteFetch(const Capture& c, const std::string& date,
                                    const MainRecord& main, const std::string& payload_digest,
                                    bool is_revisit) {
    if (closed_) return Status::Aborted("WarcWriter is closed");
    if (main.block.empty() || c.response_header.empty()) {
      // Without a head readers cannot parse the block as HTTP; this is a caller bug.
      return Status::InvalidArgument("capture of " + c.target_uri + " has no response head");
    }
    std::string main_id = internal::NewRecordId();
    std::string request_id = internal::NewRecordId();
    std::string metadata_id = internal::NewRecordId();
    size_t main_index = 0;
    std::vector<std::string> members;
    uint64_t total = 0;
    // Records name the warcinfo of their file, which is only known once rotation has been
    // decided; a rotation therefore re-serialises the group (rare: once per file).
    for (int attempt = 0; attempt < 2; ++attempt) {
      std::string warcinfo_before = warcinfo_id_;
      members.clear();
      total = 0;
      std::vector<std::string> texts;
      if (!c.request_header.empty()) {
        std::vector<std::pair<std::string, std::string>> h = CommonHeaders(c, date);
        h.emplace_back("WARC-Concurrent-To", main_id);
        texts.push_back(BuildRecord("request", request_id, h, "application/http;msgtype=request",
                                    c.request_header));
      }
      main_index = texts.size();
      texts.push_back(BuildRecord(main.type, main_id, main.headers, main.content_type, main.block));
      if (!c.outlinks.empty() || !c.via.empty() || c.near_duplicate_of) {
        texts.push_back(MetadataRecord(c, date, metadata_id, main_id));
      }
      for (const std::string& t : texts) {
        Result<std::string> m = gzip_.Member(t);
        if (!m.ok()) return m.status();
        total += m->size();
        members.push_back(std::move(m).value());
      }
      Status s = EnsureRoom(total);
      if (!s.ok()) return s;
      if (warcinfo_id_ == warcinfo_before) break;
    }
    RecordLocation loc;
    std::string all;
    all.reserve(total);
    for (size_t i = 0; i < members.size(); ++i) {
      if (i == main_index) {
        loc = {filename_, file_bytes_ + all.size(), members[i].size(), main_id};
      }
      all += members[i];
    }
    Status s = Append(all, members.size());
    if (!s.ok()) return s;
    if (opt_.write_cdxj) {
      // The URL as written in WARC-Target-URI (escaped), so that RecoverWarc, which only
      // sees the record, produces the same line.
      std::string uri = SafeValue(c.target_uri, true);
      std::string near = c.near_duplicate_of ? SafeValue(c.near_duplicate_of->uri, true) : "";
      internal::CdxjSource src;
      src.target_uri = uri;
      src.surt = c.surt;
      src.warc_date = date;
      src.revisit = is_revisit;
      src.near_dup_of = near;
      src.mime = c.mime;
      src.response_head = c.response_header;
      src.status = c.status;
      src.payload_digest = payload_digest;
      src.offset = loc.offset;
      src.length = loc.length;
      src.filename = filename_;
      cdxj_pending_ += internal::CdxjLineFor(src);
      cdxj_pending_ += '\n';
    }
    return loc;
  }

  // application/warc-fields lines: via, hopsFromSeed, the near-duplicate fields, outlinks.
  static std::string MetadataBlock(const Capture& c) {
    std::string block;
    if (!c.via.empty()) block += "via: " + SafeValue(c.via, true) + "\r\n";
    if (c.hops > 0) block += "hopsFromSeed: " + std::to_string(c.hops) + "\r\n";
    if (c.near_duplicate_of) {
      const Capture::NearDuplicate& n = *c.near_duplicate_of;
      block += "nearDuplicateOf: " + SafeValue(n.uri, true) + "\r\n";
      if (!n.record_id.empty()) {
        block += "nearDuplicateRecord: " + SafeValue(n.record_id, true) + "\r\n";
      }
      if (n.date_us != 0) block += "nearDuplicateDate: " + WarcDate(n.date_us) + "\r\n";
      block += "simhashDistance: " + std::to_string(n.distance) + "\r\n";
    }
    for (const std::string& link : c.outlinks)
      block += "outlink: " + SafeValue(link, true) + "\r\n";
    return block;
  }

  std::string MetadataRecord(const Capture& c, const std::string& date, const std::string& id,
                             const std::string& concurrent_to) {
    std::string block = MetadataBlock(c);
    std::vector<std::pair<std::string, std::string>> h = CommonHeaders(c, date);
    h.emplace_back("WARC-Concurrent-To", concurrent_to);
    return BuildRecord("metadata", id, h, "application/warc-fields", block);
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
      }
      return WriteWarcinfo();
    }
    return Status::ResourceExhausted("no free WARC serial number for " + ts + " in " +
                                     opt_.dir.string());
  }

  Status WriteWarcinfo() {
    std::string block = "software: " + SafeValue(opt_.software, false) + "\r\n";
    block += "format: WARC File Format 1.1\r\n";
    block += "conformsTo: " + std::string(kConformsTo) + "\r\n";
    block += "hostname: " + SafeValue(hostname_, false) + "\r\n";
    if (!opt_.operator_contact.empty()) {
      block += "operator: " + SafeValue(opt_.operator_contact, false) + "\r\n";
    }
    if (!opt_.description.empty()) {
      block += "description: " + SafeValue(opt_.description, false) + "\r\n";
    }
    std::string id = internal::NewRecordId();
    std::vector<std::pair<std::string, std::string>> h;
    h.emplace_back("WARC-Date", WarcDate(clock_->WallMicros()));
    h.emplace_back("WARC-Filename", filename_);
    warcinfo_id_.clear();
    std::string text = BuildRecord("warcinfo", id, h, "application/warc-fields", block);
    warcinfo_id_ = id;
    Result<std::string> m = gzip_.Member(text);
    if (!m.ok()) return m.status();
    return Append(*m, 1);
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
      Status sorted = SortCdxjFile(cdxj_path_, opt_.fsync_on_flush);
      if (s.ok()) s = sorted;
    }
    cdxj_pending_.clear();
    return s;
  }

  WarcOptions opt_;
  const Clock* clock_;
  internal::GzipCompressor gzip_;
  std::string hostname_;
  int fd_ = -1;
  int cdxj_fd_ = -1;
  std::filesystem::path path_;
  std::filesystem::path cdxj_path_;
  std::string filename_;
  std::string warcinfo_id_;
  std::string cdxj_pending_;
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
  return impl_->WriteResponse(capture);
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
