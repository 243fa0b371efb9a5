// OutcomeLog: <out>/outcomes.jsonl, one JSON object per final outcome of a URL (DESIGN §1.3:
// every admitted URL is fetched, retried, or given a final recorded outcome).
//
// Line format: {"url":...,"outcome":...,"status":N,"detail":...,"time_us":N}
// Outcomes: fetched, revisit, disallowed, robots-unavailable, crawl-delay-too-long, gave-up,
// redirect-limit, not-stored, and trap-* verdicts from admission.
//
// Thread-safety: Record() is safe from any thread (internally locked).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"

namespace harvest::crawl {

class OutcomeLog {
 public:
  OutcomeLog() = default;
  ~OutcomeLog();
  OutcomeLog(const OutcomeLog&) = delete;
  OutcomeLog& operator=(const OutcomeLog&) = delete;

  Status Open(const std::filesystem::path& file);
  void Record(std::string_view url, std::string_view outcome, int status, std::string_view detail,
              int64_t time_us);
  Status Flush();
  uint64_t count() const;

 private:
  mutable std::mutex mu_;
  std::FILE* file_ = nullptr;
  uint64_t count_ = 0;
};

}  // namespace harvest::crawl
