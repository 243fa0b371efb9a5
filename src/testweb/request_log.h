// RequestLog: the JSON-lines request log of the test web (format in docs/testweb.md).
//
// Thread-safety: Append() may be called from any thread; lines are buffered and written by a
// flusher thread at least every second, and by Close()/the destructor.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "base/status.h"
#include "testweb/testweb.h"

namespace harvest::testweb {

struct LogEntry {
  std::string host;  // host name (lower case) when known, else the Host header as sent
  std::string path;  // request target as sent
  std::string page;  // page identity, empty = null
  int64_t start_us = 0;
  int64_t end_us = 0;
  int status = 0;
  uint64_t bytes = 0;
  uint64_t conn = 0;
  // The server-side IPv4 address the request's connection arrived at ("127.0.0.3"): which of
  // the listening addresses the client connected to. Omitted when empty.
  std::string ip;
  RequestKind kind = RequestKind::kUnknown;
  bool disallowed = false;
  int retry_after_s = -1;  // omitted when < 0
  bool cond = false;       // omitted when false
  // The validators as received (If-None-Match, If-Modified-Since); each omitted when empty.
  std::string inm;
  std::string ims;
  bool https = false;    // "scheme": "https" or "http"
  bool h2 = false;       // "proto": "2" or "1.1"
  bool upgrade = false;  // a --http-redirect 301 to https://; omitted when false
};

// One JSON object, without the trailing newline.
std::string FormatLogLine(const LogEntry& e);

class RequestLog {
 public:
  // How often buffered lines reach the file at the latest.
  static constexpr int kFlushIntervalMs = 200;

  static Result<std::unique_ptr<RequestLog>> Open(const std::string& path);
  ~RequestLog();
  void Append(const LogEntry& entry);
  // Writes everything appended so far and stops the flusher. Idempotent.
  void Close();

 private:
  explicit RequestLog(std::FILE* file);
  void FlusherLoop() EXCLUDES(mu_, write_mu_);
  void WriteOut() EXCLUDES(mu_, write_mu_);

  Mutex write_mu_;  // serialises writes to file_; taken before mu_
  std::FILE* file_ PT_GUARDED_BY(write_mu_);
  Mutex mu_ ACQUIRED_AFTER(write_mu_);
  CondVar cv_;
  std::string buffer_ GUARDED_BY(mu_);
  bool closing_ GUARDED_BY(mu_) = false;
  std::thread flusher_;
};

}  // namespace harvest::testweb
