// File helpers shared by the writer, crash recovery and the CDXJ index (see store/internal.h).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "store/internal.h"

namespace harvest::store::internal {
namespace {

Status SyncDir(const std::filesystem::path& file) {
  std::filesystem::path dir =
      file.parent_path().empty() ? std::filesystem::path(".") : file.parent_path();
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::IOError(dir.string() + ": open: " + ErrnoText(errno));
  Status s;
  if (::fsync(fd) != 0) s = Status::IOError(dir.string() + ": fsync: " + ErrnoText(errno));
  ::close(fd);
  return s;
}

}  // namespace

std::string ErrnoText(int err) { return std::system_category().message(err); }

Status WriteAll(int fd, std::string_view data, const std::filesystem::path& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IOError(path.string() + ": write: " + ErrnoText(errno));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

BufferedFileWriter::BufferedFileWriter(std::filesystem::path path, size_t buffer_bytes)
    : path_(std::move(path)), capacity_(std::max<size_t>(buffer_bytes, 1)) {}

BufferedFileWriter::~BufferedFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status BufferedFileWriter::Open() {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return Status::IOError(path_.string() + ": open: " + ErrnoText(errno));
  buffer_.reserve(capacity_);
  return Status::Ok();
}

Status BufferedFileWriter::Append(std::string_view data) {
  if (buffer_.size() + data.size() > capacity_ && !buffer_.empty()) {
    Status s = WriteAll(fd_, buffer_, path_);
    buffer_.clear();
    if (!s.ok()) return s;
  }
  // A piece as large as the buffer goes straight to the file: it is not copied.
  if (data.size() >= capacity_) return WriteAll(fd_, data, path_);
  buffer_ += data;
  return Status::Ok();
}

Status BufferedFileWriter::Close(bool sync) {
  if (fd_ < 0) return Status::IOError(path_.string() + ": not open");
  Status s;
  if (!buffer_.empty()) s = WriteAll(fd_, buffer_, path_);
  buffer_.clear();
  if (s.ok() && sync && ::fsync(fd_) != 0) {
    s = Status::IOError(path_.string() + ": fsync: " + ErrnoText(errno));
  }
  if (::close(fd_) != 0 && s.ok()) {
    s = Status::IOError(path_.string() + ": close: " + ErrnoText(errno));
  }
  fd_ = -1;
  return s;
}

Status SyncParentDir(const std::filesystem::path& file) { return SyncDir(file); }

Status ReplaceFileFrom(const std::filesystem::path& path, bool sync,
                       const std::function<Status(BufferedFileWriter* out)>& fill) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  Status s;
  {
    BufferedFileWriter out(tmp);
    s = out.Open();
    if (!s.ok()) return s;
    s = fill(&out);
    Status closed = out.Close(sync);
    if (s.ok()) s = closed;
  }
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    s = Status::IOError(path.string() + ": rename: " + ErrnoText(errno));
  }
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  return sync ? SyncDir(path) : Status::Ok();
}

Status ReplaceFile(const std::filesystem::path& path, std::string_view text, bool sync) {
  return ReplaceFileWithLines(path, {text}, sync, /*newlines=*/false);
}

Status ReplaceFileWithLines(const std::filesystem::path& path,
                            const std::vector<std::string_view>& pieces, bool sync, bool newlines) {
  // Through a bounded buffer: the pieces are views into text the caller holds, so the file
  // is never built a second time in memory (a CDXJ file can be ~100 MB).
  return ReplaceFileFrom(path, sync, [&](BufferedFileWriter* out) {
    for (std::string_view piece : pieces) {
      Status s = out->Append(piece);
      if (s.ok() && newlines) s = out->Append("\n");
      if (!s.ok()) return s;
    }
    return Status::Ok();
  });
}

}  // namespace harvest::store::internal
