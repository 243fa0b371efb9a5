#include "testweb/request_log.h"

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

namespace harvest::testweb {

std::string FormatLogLine(const LogEntry& e) {
  nlohmann::ordered_json j;
  j["host"] = e.host;
  j["path"] = e.path;
  if (e.page.empty()) {
    j["page"] = nullptr;
  } else {
    j["page"] = e.page;
  }
  j["start_us"] = e.start_us;
  j["end_us"] = e.end_us;
  j["status"] = e.status;
  j["bytes"] = e.bytes;
  j["conn"] = e.conn;
  if (!e.ip.empty()) j["ip"] = e.ip;
  j["scheme"] = e.https ? "https" : "http";
  j["proto"] = e.h2 ? "2" : "1.1";
  if (e.upgrade) j["upgrade"] = true;
  j["kind"] = RequestKindName(e.kind);
  j["disallowed"] = e.disallowed;
  if (e.retry_after_s >= 0) j["retry_after_s"] = e.retry_after_s;
  if (e.cond) j["cond"] = true;
  if (!e.inm.empty()) j["inm"] = e.inm;
  if (!e.ims.empty()) j["ims"] = e.ims;
  // Replace invalid UTF-8 (a hostile client's path) instead of throwing.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::unique_ptr<RequestLog>> RequestLog::Open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    return Status::IOError("request log " + path + ": " + std::strerror(errno));
  }
  return std::unique_ptr<RequestLog>(new RequestLog(f));
}

RequestLog::RequestLog(std::FILE* file) : file_(file) {
  flusher_ = std::thread([this] { FlusherLoop(); });
}

RequestLog::~RequestLog() {
  Close();
  std::fclose(file_);
}

void RequestLog::Append(const LogEntry& entry) {
  std::string line = FormatLogLine(entry);
  line += '\n';
  MutexLock lock(&mu_);
  buffer_ += line;
}

void RequestLog::FlusherLoop() {
  for (;;) {
    {
      MutexLock lock(&mu_);
      if (closing_) return;
      cv_.WaitFor(&mu_, std::chrono::milliseconds(kFlushIntervalMs));
    }
    WriteOut();
  }
}

void RequestLog::WriteOut() {
  MutexLock write_lock(&write_mu_);
  std::string out;
  {
    MutexLock lock(&mu_);
    out.swap(buffer_);
  }
  if (!out.empty()) std::fwrite(out.data(), 1, out.size(), file_);
  std::fflush(file_);
}

void RequestLog::Close() {
  {
    MutexLock lock(&mu_);
    closing_ = true;
  }
  cv_.SignalAll();
  if (flusher_.joinable()) flusher_.join();
  WriteOut();
}

}  // namespace harvest::testweb
