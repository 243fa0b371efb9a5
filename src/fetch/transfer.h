// Transfer: one request's libcurl easy handle and everything captured while it runs.
// Private to src/fetch (the only place that includes <curl/curl.h>).
//
// Thread-safety: owned and used by the Fetcher's loop thread only.
#pragma once

#include <curl/curl.h>

#include <memory>
#include <string>
#include <string_view>

#include "fetch/fetch.h"

namespace harvest::fetch {

// The CA certificates every TLS connection of a fetcher verifies against, as one PEM file
// given to curl as CURLOPT_CAINFO with no CURLOPT_CAPATH: then libcurl builds the store once
// and keeps it (CURLOPT_CA_CACHE_TIMEOUT, per multi handle) instead of parsing the system's
// bundle (~140 certificates, milliseconds of CPU) for every new connection, which it does
// whenever a CA directory is set — Debian's libcurl sets /etc/ssl/certs — or a
// CURLOPT_SSL_CTX_FUNCTION is. The file is the system's bundle (curl's default CA file), or,
// with FetchOptions::ca_file, that bundle followed by the extra roots in an in-memory file
// (memfd) named by /proc/self/fd.
class CaBundle {
 public:
  // nullptr (curl's defaults) when there is no extra file and no readable system bundle.
  // An unreadable extra file, or one without a PEM certificate, is an error naming it.
  static Result<std::unique_ptr<CaBundle>> Make(const std::string& extra_pem_file);
  ~CaBundle();
  CaBundle(const CaBundle&) = delete;
  CaBundle& operator=(const CaBundle&) = delete;
  const std::string& path() const { return path_; }

 private:
  CaBundle() = default;
  int fd_ = -1;  // the memfd holding system bundle + extra roots, or -1
  std::string path_;
};

// Options resolved once per Fetcher and shared by all its transfers.
struct ResolvedOptions {
  FetchOptions options;
  std::string user_agent;                     // never empty
  curl_slist* connect_to = nullptr;           // owned by the Fetcher
  std::shared_ptr<const CaBundle> ca_bundle;  // null: curl's default CA file and directory
};

// "host[:port]" of an absolute URL, lower-cased, userinfo dropped; the whole string when it
// has no "://". Its host name is NameOfAuthority() (base/host_key.h).
std::string HostKey(std::string_view url);

class Transfer {
 public:
  Transfer(FetchRequest request, FetchCallback done);
  ~Transfer();
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;

  // Configures `reuse` (a handle a finished transfer released, reset with curl_easy_reset;
  // this transfer owns it from now on) or, when null, a new easy handle. On failure the
  // transfer is not startable and Finish() reports the returned error as kOtherError.
  Status Configure(const ResolvedOptions& opts, int64_t start_wall_us, CURL* reuse = nullptr);
  // Gives up the easy handle (after Finish(), out of the multi handle): the caller cleans it
  // up or resets it for another transfer. The transfer's header lists outlive it only until
  // the transfer is destroyed, so a kept handle must be reset first.
  CURL* ReleaseEasy() {
    CURL* e = easy_;
    easy_ = nullptr;
    return e;
  }
  CURL* easy() const { return easy_; }
  uint64_t id() const { return result_.id; }
  // "host[:port]" of the request URL, lower-cased: the unit of max_host_connections.
  const std::string& host_key() const { return host_key_; }
  bool reuse_connection() const { return request_.reuse_connection; }

  // Builds the result for a transfer curl finished with `code`.
  FetchResult Finish(CURLcode code);
  // Builds the result for a transfer that never ran (setup error).
  FetchResult Fail(FetchOutcome outcome, std::string error);
  FetchCallback TakeCallback() { return std::move(done_); }

 private:
  static size_t OnBody(char* data, size_t size, size_t n, void* self);
  static size_t OnHeader(char* data, size_t size, size_t n, void* self);
  static int OnDebug(CURL* easy, curl_infotype type, char* data, size_t size, void* self);
  void MapError(CURLcode code);
  Status ConfigureConnectAddress();

  FetchRequest request_;
  std::string host_key_;
  FetchCallback done_;
  FetchResult result_;
  CURL* easy_ = nullptr;
  curl_slist* headers_ = nullptr;
  curl_slist* connect_to_ = nullptr;  // this request's connect_address entries
  size_t max_body_bytes_ = 0;
  size_t max_header_bytes_ = 0;
  size_t head_bytes_total_ = 0;  // all response heads of this transfer
  bool body_over_cap_ = false;
  bool head_over_cap_ = false;
  bool response_started_ = false;  // a response header arrived since the last request head
  char error_buffer_[CURL_ERROR_SIZE] = {0};
};

}  // namespace harvest::fetch
