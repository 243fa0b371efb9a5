// File helpers shared by the writer, crash recovery and the CDXJ index (see store/internal.h).
#include <fcntl.h>
#include <unistd.h>

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

Status ReplaceFile(const std::filesystem::path& path, std::string_view text, bool sync) {
  return ReplaceFileWithLines(path, {text}, sync, /*newlines=*/false);
}

Status ReplaceFileWithLines(const std::filesystem::path& path,
                            const std::vector<std::string_view>& pieces, bool sync, bool newlines) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError(tmp.string() + ": open: " + ErrnoText(errno));
  // Through a bounded buffer: the pieces are views into text the caller holds, so the file
  // is never built a second time in memory (a CDXJ file can be ~100 MB).
  constexpr size_t kBuffer = size_t{1} << 20;
  std::string buffer;
  Status s;
  for (std::string_view piece : pieces) {
    if (buffer.size() + piece.size() + 1 > kBuffer && !buffer.empty()) {
      s = WriteAll(fd, buffer, tmp);
      buffer.clear();
      if (!s.ok()) break;
    }
    if (piece.size() >= kBuffer) {
      s = WriteAll(fd, piece, tmp);
      if (!s.ok()) break;
    } else {
      buffer += piece;
    }
    if (newlines) buffer += '\n';
  }
  if (s.ok() && !buffer.empty()) s = WriteAll(fd, buffer, tmp);
  if (s.ok() && sync && ::fsync(fd) != 0) {
    s = Status::IOError(tmp.string() + ": fsync: " + ErrnoText(errno));
  }
  if (::close(fd) != 0 && s.ok()) {
    s = Status::IOError(tmp.string() + ": close: " + ErrnoText(errno));
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

}  // namespace harvest::store::internal
