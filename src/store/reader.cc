// WarcReader: record-at-a-time gzip or plain WARC, hardened against truncated and corrupt
// input (every failure is a Status naming the file and offset).
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "store/internal.h"
#include "store/store.h"

namespace harvest::store {

class WarcReader::Source {
 public:
  virtual ~Source() = default;
  // Reads up to n bytes at `offset`; 0 at end of data.
  virtual Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) = 0;
};

namespace {

// A WARC header block larger than this is not a header: real ones are a few hundred bytes.
constexpr size_t kMaxHeaderBytes = 1 << 20;
constexpr size_t kChunk = 64 * 1024;

class FileSource final : public WarcReader::Source {
 public:
  FileSource(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  ~FileSource() override { ::close(fd_); }
  Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) override {
    while (true) {
      ssize_t r = ::pread(fd_, buf, n, static_cast<off_t>(offset));
      if (r >= 0) return static_cast<size_t>(r);
      if (errno == EINTR) continue;
      return Status::IOError(name_ + ": read at offset " + std::to_string(offset) + ": " +
                             std::system_category().message(errno));
    }
  }

 private:
  int fd_;
  std::string name_;
};

class MemorySource final : public WarcReader::Source {
 public:
  explicit MemorySource(std::string data) : data_(std::move(data)) {}
  Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) override {
    if (offset >= data_.size()) return size_t{0};
    size_t k = std::min<uint64_t>(n, data_.size() - offset);
    std::memcpy(buf, data_.data() + offset, k);
    return k;
  }

 private:
  std::string data_;
};

std::string Where(const std::string& name, uint64_t offset) {
  return name + ": offset " + std::to_string(offset) + ": ";
}

struct Member {
  std::string data;
  uint64_t compressed_length = 0;
};

// Inflates the single gzip member starting at `offset`.
Result<Member> InflateMember(WarcReader::Source* src, uint64_t offset, uint64_t max_out,
                             const std::string& where) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return Status::Internal(where + "inflateInit2");
  Member m;
  std::string in(kChunk, '\0');
  std::string out(kChunk, '\0');
  uint64_t read_pos = offset;
  Status error;
  bool done = false;
  while (!done && error.ok()) {
    if (zs.avail_in == 0) {
      Result<size_t> n = src->ReadAt(read_pos, in.data(), in.size());
      if (!n.ok()) {
        error = n.status();
        break;
      }
      if (*n == 0) {
        error = Status::Corruption(where + "truncated gzip member (file ends inside it)");
        break;
      }
      read_pos += *n;
      zs.next_in = reinterpret_cast<Bytef*>(in.data());
      zs.avail_in = static_cast<uInt>(*n);
    }
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    int rc = inflate(&zs, Z_NO_FLUSH);
    m.data.append(out.data(), out.size() - zs.avail_out);
    if (m.data.size() > max_out) {
      error = Status::ResourceExhausted(where + "record larger than " + std::to_string(max_out) +
                                        " bytes");
    } else if (rc == Z_STREAM_END) {
      done = true;
    } else if (rc == Z_NEED_DICT || rc == Z_DATA_ERROR || rc == Z_MEM_ERROR) {
      error = Status::Corruption(
          where + "corrupt gzip member: " + (zs.msg != nullptr ? zs.msg : "bad data"));
    } else if (rc == Z_BUF_ERROR && zs.avail_in != 0) {
      error = Status::Corruption(where + "gzip member makes no progress");
    }
  }
  m.compressed_length = zs.total_in;
  inflateEnd(&zs);
  if (!error.ok()) return error;
  return m;
}

bool ParseUint(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

// Parses the WARC header block `head` (version line + fields, without the empty line).
Status ParseWarcHead(std::string_view head, const std::string& where, WarcRecord* rec,
                     uint64_t* content_length) {
  size_t eol = head.find('\n');
  std::string_view first = head.substr(0, eol);
  if (!first.empty() && first.back() == '\r') first.remove_suffix(1);
  if (first.substr(0, 5) != "WARC/") {
    return Status::Corruption(where + "record does not start with a WARC/ version line");
  }
  rec->version = std::string(first);
  if (eol != std::string_view::npos)
    internal::ParseHeaderLines(head.substr(eol + 1), &rec->headers);
  rec->type = rec->header("WARC-Type");
  rec->target_uri = rec->header("WARC-Target-URI");
  rec->date = rec->header("WARC-Date");
  std::string cl = rec->header("Content-Length");
  if (!ParseUint(cl, content_length)) {
    return Status::Corruption(where + "missing or invalid Content-Length '" + cl.substr(0, 40) +
                              "'");
  }
  return Status::Ok();
}

// Position after the header's empty line and the length of the header text before it.
bool FindHeaderEnd(std::string_view s, size_t* head_len, size_t* body_start) {
  size_t crlf = s.find("\r\n\r\n");
  size_t lf = s.find("\n\n");
  if (crlf == std::string_view::npos && lf == std::string_view::npos) return false;
  if (lf == std::string_view::npos || (crlf != std::string_view::npos && crlf < lf)) {
    *head_len = crlf;
    *body_start = crlf + 4;
  } else {
    *head_len = lf;
    *body_start = lf + 2;
  }
  return true;
}

bool OnlyLineEnds(std::string_view s) {
  return s.find_first_not_of("\r\n") == std::string_view::npos;
}

// A record from a decompressed gzip member: exactly one record plus line ends.
Result<WarcRecord> ParseMemberText(std::string_view text, const std::string& where) {
  WarcRecord rec;
  size_t head_len = 0;
  size_t body_start = 0;
  if (!FindHeaderEnd(text, &head_len, &body_start)) {
    return Status::Corruption(where + "WARC header not terminated by an empty line");
  }
  uint64_t cl = 0;
  Status s = ParseWarcHead(text.substr(0, head_len), where, &rec, &cl);
  if (!s.ok()) return s;
  if (cl > text.size() - body_start) {
    return Status::Corruption(where + "block shorter than Content-Length " + std::to_string(cl));
  }
  rec.block = std::string(text.substr(body_start, cl));
  std::string_view rest = text.substr(body_start + cl);
  if (!OnlyLineEnds(rest)) {
    if (rest.find("WARC/") != std::string_view::npos) {
      return Status::Corruption(where +
                                "gzip member holds more than one record "
                                "(not record-at-a-time compression)");
    }
    return Status::Corruption(where + "unexpected bytes after the record block");
  }
  return rec;
}

Result<std::optional<WarcRecord>> ReadPlain(WarcReader::Source* src, uint64_t offset,
                                            uint64_t max_bytes, const std::string& name) {
  std::string where = Where(name, offset);
  std::string buf;
  size_t head_len = 0;
  size_t body_start = 0;
  std::string chunk(4096, '\0');
  while (!FindHeaderEnd(buf, &head_len, &body_start)) {
    if (buf.size() > kMaxHeaderBytes) {
      return Status::Corruption(where + "WARC header longer than " +
                                std::to_string(kMaxHeaderBytes) + " bytes");
    }
    Result<size_t> n = src->ReadAt(offset + buf.size(), chunk.data(), chunk.size());
    if (!n.ok()) return n.status();
    if (*n == 0) return Status::Corruption(where + "truncated WARC header");
    buf.append(chunk.data(), *n);
  }
  WarcRecord rec;
  uint64_t cl = 0;
  Status s = ParseWarcHead(std::string_view(buf).substr(0, head_len), where, &rec, &cl);
  if (!s.ok()) return s;
  if (cl > max_bytes) {
    return Status::ResourceExhausted(where + "record larger than " + std::to_string(max_bytes) +
                                     " bytes");
  }
  uint64_t want = body_start + cl + 4;  // block + CRLF CRLF
  while (buf.size() < want) {
    size_t k = static_cast<size_t>(std::min<uint64_t>(want - buf.size(), 1 << 20));
    chunk.resize(std::max(chunk.size(), k));
    Result<size_t> n = src->ReadAt(offset + buf.size(), chunk.data(), k);
    if (!n.ok()) return n.status();
    if (*n == 0) return Status::Corruption(where + "truncated record block");
    buf.append(chunk.data(), *n);
  }
  if (std::string_view(buf).substr(body_start + cl, 4) != "\r\n\r\n") {
    return Status::Corruption(where + "record not followed by CRLF CRLF");
  }
  rec.block = buf.substr(body_start, cl);
  rec.offset = offset;
  rec.length = want;
  return std::optional<WarcRecord>(std::move(rec));
}

// Reads the record at `offset`, skipping line ends before a plain record.
Result<std::optional<WarcRecord>> ReadOne(WarcReader::Source* src, uint64_t offset,
                                          uint64_t max_bytes, const std::string& name) {
  char magic[2];
  while (true) {
    Result<size_t> n = src->ReadAt(offset, magic, 2);
    if (!n.ok()) return n.status();
    if (*n == 0) return std::optional<WarcRecord>();
    if (magic[0] != '\r' && magic[0] != '\n') {
      if (*n < 2) return Status::Corruption(Where(name, offset) + "truncated record");
      break;
    }
    ++offset;
  }
  if (static_cast<unsigned char>(magic[0]) == 0x1f &&
      static_cast<unsigned char>(magic[1]) == 0x8b) {
    std::string where = Where(name, offset);
    Result<Member> m = InflateMember(src, offset, max_bytes, where);
    if (!m.ok()) return m.status();
    Result<WarcRecord> rec = ParseMemberText(m->data, where);
    if (!rec.ok()) return rec.status();
    rec->offset = offset;
    rec->length = m->compressed_length;
    return std::optional<WarcRecord>(std::move(rec).value());
  }
  char version[5];
  Result<size_t> n = src->ReadAt(offset, version, sizeof(version));
  if (!n.ok()) return n.status();
  if (*n < sizeof(version) || std::string_view(version, sizeof(version)) != "WARC/") {
    return Status::Corruption(Where(name, offset) +
                              "no record starts here (neither a gzip member nor 'WARC/')");
  }
  return ReadPlain(src, offset, max_bytes, name);
}

}  // namespace

WarcReader::WarcReader(std::unique_ptr<Source> source, std::string name, WarcReaderOptions options)
    : source_(std::move(source)),
      name_(std::move(name)),
      options_(options),
      offset_(options.start_offset) {}
WarcReader::~WarcReader() = default;

Result<std::unique_ptr<WarcReader>> WarcReader::Open(const std::filesystem::path& file,
                                                     WarcReaderOptions options) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string msg = file.string() + ": " + std::system_category().message(err);
    return err == ENOENT ? Status::NotFound(msg) : Status::IOError(msg);
  }
  auto src = std::make_unique<FileSource>(fd, file.string());
  return std::unique_ptr<WarcReader>(new WarcReader(std::move(src), file.string(), options));
}

std::unique_ptr<WarcReader> WarcReader::FromBuffer(std::string data, std::string name,
                                                   WarcReaderOptions options) {
  return std::unique_ptr<WarcReader>(
      new WarcReader(std::make_unique<MemorySource>(std::move(data)), std::move(name), options));
}

Result<std::optional<WarcRecord>> WarcReader::Next() {
  if (!error_.ok()) return error_;
  Result<std::optional<WarcRecord>> r =
      ReadOne(source_.get(), offset_, options_.max_record_bytes, name_);
  if (!r.ok()) {
    error_ = r.status();
    return error_;
  }
  if (r->has_value()) offset_ = (*r)->offset + (*r)->length;
  return r;
}

Result<WarcRecord> ReadRecordAt(const std::filesystem::path& file, uint64_t offset) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string msg = file.string() + ": " + std::system_category().message(err);
    return err == ENOENT ? Status::NotFound(msg) : Status::IOError(msg);
  }
  FileSource src(fd, file.string());
  Result<std::optional<WarcRecord>> r =
      ReadOne(&src, offset, WarcReaderOptions().max_record_bytes, file.string());
  if (!r.ok()) return r.status();
  if (!r->has_value()) {
    return Status::NotFound(Where(file.string(), offset) + "no record (end of file)");
  }
  return std::move(**r);
}

}  // namespace harvest::store
