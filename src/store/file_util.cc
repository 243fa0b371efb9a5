// File helpers shared by the writer and crash recovery (see store/internal.h).
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "store/internal.h"

namespace harvest::store::internal {

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

}  // namespace harvest::store::internal
