#include "crawl/outcome_log.h"

#include <cerrno>
#include <cstring>

#include "base/log.h"

namespace harvest::crawl {

OutcomeLog::~OutcomeLog() {
  if (file_ != nullptr) std::fclose(file_);
}

Status OutcomeLog::Open(const std::filesystem::path& file) {
  std::lock_guard lock(mu_);
  file_ = std::fopen(file.c_str(), "a");
  if (file_ == nullptr) {
    return Status::IOError("cannot open " + file.string() + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

void OutcomeLog::Record(std::string_view url, std::string_view outcome, int status,
                        std::string_view detail, int64_t time_us) {
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
  std::lock_guard lock(mu_);
  if (file_ != nullptr) std::fwrite(line.data(), 1, line.size(), file_);
  ++count_;
}

Status OutcomeLog::Flush() {
  std::lock_guard lock(mu_);
  if (file_ != nullptr && std::fflush(file_) != 0) {
    return Status::IOError(std::string("writing outcomes.jsonl: ") + std::strerror(errno));
  }
  return Status::Ok();
}

uint64_t OutcomeLog::count() const {
  std::lock_guard lock(mu_);
  return count_;
}

}  // namespace harvest::crawl
