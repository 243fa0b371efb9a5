#include "crawl/outcome_log.h"

#include <algorithm>
#include <cassert>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/log.h"

namespace harvest::crawl {

OutcomeLog::~OutcomeLog() {
  if (fd_ >= 0) ::close(fd_);
}

Status OutcomeLog::Open(const std::filesystem::path& file) {
  MutexLock lock(&mu_);
  path_ = file.string();
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    return Status::IOError("cannot open " + path_ + ": " + std::strerror(errno));
  }
  // A torn last line (killed mid-write) is cut back to the last complete line.
  const off_t size = ::lseek(fd_, 0, SEEK_END);
  if (size > 0) {
    off_t pos = size;
    char buf[4096];
    off_t keep = 0;
    while (pos > 0) {
      const off_t chunk = std::min<off_t>(pos, sizeof(buf));
      pos -= chunk;
      if (::pread(fd_, buf, static_cast<size_t>(chunk), pos) != chunk) {
        return Status::IOError("reading " + path_ + ": " + std::strerror(errno));
      }
      const void* nl = nullptr;
      for (off_t i = chunk; i-- > 0;) {
        if (buf[i] == '\n') {
          nl = buf + i;
          keep = pos + i + 1;
          break;
        }
      }
      if (nl != nullptr) break;
    }
    if (keep != size && ::ftruncate(fd_, keep) != 0) {
      return Status::IOError("truncating torn line of " + path_ + ": " + std::strerror(errno));
    }
  }
  return Status::Ok();
}

bool IsOutcomeName(std::string_view name) {
  return std::find(kOutcomeNames.begin(), kOutcomeNames.end(), name) != kOutcomeNames.end();
}

void OutcomeLog::Record(std::string_view url, std::string_view outcome, int status,
                        std::string_view detail, int64_t time_us, Write write) {
  assert(IsOutcomeName(outcome));
  std::string line;
  line.reserve(url.size() + detail.size() + 96);
  line += "{\"url\":\"";
  line += JsonEscape(url);
  line += "\",\"outcome\":\"";
  line += JsonEscape(outcome);
  line += "\",\"status\":";
  line += std::to_string(status);
  if (!detail.empty()) {
    line += ",\"detail\":\"";
    line += JsonEscape(detail);
    line += "\"";
  }
  line += ",\"time_us\":";
  line += std::to_string(time_us);
  line += "}\n";
  MutexLock lock(&mu_);
  ++count_;
  if (fd_ < 0) return;
  pending_ += line;
  if (write == Write::kNow || pending_.size() >= kMaxDeferredBytes) (void)WritePending();
}

// Lines that could not be written stay pending (in order) for the next
// Record or Flush: a full disk delays outcomes, it does not lose them.
Status OutcomeLog::WritePending() {
  size_t done = 0;
  Status s;
  while (done < pending_.size()) {
    ssize_t n = ::write(fd_, pending_.data() + done, pending_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      s = Status::IOError("writing " + path_ + ": " + std::strerror(n < 0 ? errno : ENOSPC));
      break;
    }
    done += static_cast<size_t>(n);
  }
  pending_.erase(0, done);
  return s;
}

Status OutcomeLog::Flush() {
  MutexLock lock(&mu_);
  if (fd_ < 0) return Status::Ok();
  if (Status s = WritePending(); !s.ok()) return s;
  if (::fsync(fd_) != 0) {
    return Status::IOError("fsync " + path_ + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

uint64_t OutcomeLog::count() const {
  MutexLock lock(&mu_);
  return count_;
}

}  // namespace harvest::crawl
