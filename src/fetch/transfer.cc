// Transfer: easy-handle configuration, capture callbacks and curl error mapping.
#include "fetch/transfer.h"

#include <cerrno>
#include <cstring>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "base/ascii.h"
#include "base/host_key.h"

namespace harvest::fetch {
namespace {

constexpr long kReceiveBufferBytes = 24 * 1024 - 1;  // curl allocates one byte more: 24 KiB

bool StartsWithStatusLine(std::string_view line) { return line.substr(0, 5) == "HTTP/"; }

bool HeadComplete(std::string_view head) {
  return head.ends_with("\r\n\r\n") || head.ends_with("\n\n") || head == "\r\n" || head == "\n";
}

bool HasForbiddenHeaderChar(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

const char* HttpVersionName(long v) {
  switch (v) {
    case CURL_HTTP_VERSION_1_0:
      return "1.0";
    case CURL_HTTP_VERSION_1_1:
      return "1.1";
    case CURL_HTTP_VERSION_2_0:
      return "2";
    case CURL_HTTP_VERSION_3:
      return "3";
    default:
      return "";
  }
}

bool IsTlsError(CURLcode code) {
  switch (code) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CLIENTCERT:
    case CURLE_USE_SSL_FAILED:
      return true;
    default:
      return false;
  }
}

template <typename T>
void Set(CURL* easy, CURLoption opt, T value) {
  // Every option used here exists in the libcurl we build against; a failure would be a
  // programming error, and the transfer would then fail visibly at perform time.
  (void)curl_easy_setopt(easy, opt, value);
}

}  // namespace

std::string HostKey(std::string_view url) {
  return ToLowerAscii(url.find("://") == std::string_view::npos ? url : AuthorityOfUrl(url));
}

Transfer::Transfer(FetchRequest request, FetchCallback done)
    : request_(std::move(request)), host_key_(HostKey(request_.url)), done_(std::move(done)) {
  result_.id = request_.id;
  result_.url = request_.url;
}

namespace {

// The whole file, or nullopt when it cannot be read.
std::optional<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

}  // namespace

Result<std::unique_ptr<CaBundle>> CaBundle::Make(const std::string& extra_pem_file) {
  const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
  std::optional<std::string> system;
  std::string system_path;
  if (info != nullptr && info->cainfo != nullptr) {
    system_path = info->cainfo;
    if (access(system_path.c_str(), R_OK) == 0) system = ReadWholeFile(system_path);
  }
  std::unique_ptr<CaBundle> bundle(new CaBundle());
  if (extra_pem_file.empty()) {
    if (!system) return std::unique_ptr<CaBundle>();  // curl's defaults
    bundle->path_ = system_path;
    return bundle;
  }
  std::optional<std::string> extra = ReadWholeFile(extra_pem_file);
  if (!extra) {
    return Status::InvalidArgument("ca_file " + extra_pem_file + ": " + std::strerror(errno));
  }
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(extra->data(), static_cast<int>(extra->size())), &BIO_free);
  X509* first = bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr;
  ERR_clear_error();
  if (first == nullptr) {
    return Status::InvalidArgument("ca_file " + extra_pem_file + ": no PEM certificate in it");
  }
  X509_free(first);
  bundle->fd_ = memfd_create("harvest-ca-bundle", MFD_CLOEXEC);
  if (bundle->fd_ < 0) return Status::IOError(std::string("memfd_create: ") + std::strerror(errno));
  const std::string text = system.value_or("") + "\n" + *extra;
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = write(bundle->fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IOError(std::string("CA bundle: write: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  bundle->path_ = "/proc/self/fd/" + std::to_string(bundle->fd_);
  return bundle;
}

CaBundle::~CaBundle() {
  if (fd_ >= 0) close(fd_);
}

Transfer::~Transfer() {
  if (easy_ != nullptr) curl_easy_cleanup(easy_);
  curl_slist_free_all(headers_);
  curl_slist_free_all(connect_to_);
}

// CURLOPT_CONNECT_TO entries "HOST::ADDRESS:PORT" for the URL's host (any port, so an
// http->https redirect on the same host goes to the same address; an empty PORT keeps the
// URL's). Keyed by host rather than "::" so a redirect to another host is not sent to this
// address. curl matches HOST case-insensitively against the URL's host; a trailing dot is
// covered by a second entry.
Status Transfer::ConfigureConnectAddress() {
  const std::string& address = request_.connect_address;
  unsigned char buf[sizeof(in6_addr)];
  const bool v4 = inet_pton(AF_INET, address.c_str(), buf) == 1;
  const bool v6 = !v4 && inet_pton(AF_INET6, address.c_str(), buf) == 1;
  if (!v4 && !v6) {
    return Status::InvalidArgument("connect_address '" + address +
                                   "' is not a numeric IPv4 or IPv6 address");
  }
  if (request_.connect_port < 0 || request_.connect_port > 65535) {
    return Status::InvalidArgument("connect_port " + std::to_string(request_.connect_port) +
                                   " is out of range");
  }
  const std::string target =
      (v6 ? "[" + address + "]" : address) + ":" +
      (request_.connect_port > 0 ? std::to_string(request_.connect_port) : "");
  std::string host(NameOfAuthority(host_key_));
  if (host.empty()) return Status::InvalidArgument("URL has no host: " + request_.url);
  std::vector<std::string> entries = {host + "::" + target};
  if (host.size() > 1 && host.back() == '.') {
    entries.push_back(host.substr(0, host.size() - 1) + "::" + target);
  }
  for (const std::string& entry : entries) {
    curl_slist* next = curl_slist_append(connect_to_, entry.c_str());
    if (next == nullptr) return Status::ResourceExhausted("curl_slist_append failed");
    connect_to_ = next;
  }
  return Status::Ok();
}

Status Transfer::Configure(const ResolvedOptions& r, int64_t start_wall_us, CURL* reuse) {
  easy_ = reuse;  // owned from here on, even if configuring fails (cleaned up with us)
  const FetchOptions& o = r.options;
  result_.start_wall_us = start_wall_us;
  max_body_bytes_ = request_.max_body_bytes != 0 ? request_.max_body_bytes : o.max_body_bytes;
  max_header_bytes_ = o.max_header_bytes;
  for (const auto& [name, value] : request_.headers) {
    if (name.empty() || name.find(':') != std::string::npos || HasForbiddenHeaderChar(name) ||
        HasForbiddenHeaderChar(value)) {
      return Status::InvalidArgument("request header '" + name + "' has a forbidden character");
    }
  }
  if (!request_.connect_address.empty()) {
    if (Status s = ConfigureConnectAddress(); !s.ok()) return s;
  }
  if (easy_ == nullptr) easy_ = curl_easy_init();
  if (easy_ == nullptr) return Status::ResourceExhausted("curl_easy_init failed");

  auto add_header = [this](const std::string& line) {
    curl_slist* next = curl_slist_append(headers_, line.c_str());
    if (next != nullptr) headers_ = next;
  };
  if (!o.accept_encoding.empty()) add_header("Accept-Encoding: " + o.accept_encoding);
  for (const auto& [name, value] : request_.headers) {
    // "Name;" is curl's spelling of a header with an empty value ("Name:" would remove it).
    add_header(value.empty() ? name + ";" : name + ": " + value);
  }

  Set(easy_, CURLOPT_PRIVATE, static_cast<void*>(this));
  Set(easy_, CURLOPT_URL, request_.url.c_str());
  Set(easy_, CURLOPT_ERRORBUFFER, error_buffer_);
  Set(easy_, CURLOPT_NOSIGNAL, 1L);
  Set(easy_, CURLOPT_PROTOCOLS_STR, "http,https");
  Set(easy_, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  Set(easy_, CURLOPT_USERAGENT, r.user_agent.c_str());
  Set(easy_, CURLOPT_HTTPHEADER, headers_);
  Set(easy_, CURLOPT_HTTP_CONTENT_DECODING, 0L);
  Set(easy_, CURLOPT_HTTP_TRANSFER_DECODING, 1L);
  Set(easy_, CURLOPT_HTTP_VERSION,
      o.http2 ? static_cast<long>(CURL_HTTP_VERSION_2TLS)
              : static_cast<long>(CURL_HTTP_VERSION_1_1));
  // PIPEWAIT only where multiplexing is possible (h2 over TLS). On plain http it made every
  // new transfer wait for a still-unconfirmed connection of the same connection bundle —
  // with --connect-to routing all hosts to one address, a single slow response held up
  // every host (seen after a crawl restart whose first request was a slow page).
  if (o.http2 && request_.url.starts_with("https:")) Set(easy_, CURLOPT_PIPEWAIT, 1L);
  Set(easy_, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o.connect_timeout.count()));
  Set(easy_, CURLOPT_TIMEOUT_MS, static_cast<long>(o.total_timeout.count()));
  Set(easy_, CURLOPT_LOW_SPEED_LIMIT, o.low_speed_limit_bytes);
  Set(easy_, CURLOPT_LOW_SPEED_TIME, static_cast<long>(o.low_speed_time.count()));
  Set(easy_, CURLOPT_FOLLOWLOCATION, request_.max_redirects > 0 ? 1L : 0L);
  Set(easy_, CURLOPT_MAXREDIRS, static_cast<long>(request_.max_redirects));
  if (!request_.connect_address.empty()) {
    Set(easy_, CURLOPT_CONNECT_TO, connect_to_);
  } else if (r.connect_to != nullptr) {
    Set(easy_, CURLOPT_CONNECT_TO, r.connect_to);
  }
  if (!request_.reuse_connection) Set(easy_, CURLOPT_FORBID_REUSE, 1L);
  Set(easy_, CURLOPT_SSL_VERIFYPEER, o.verify_tls ? 1L : 0L);
  Set(easy_, CURLOPT_SSL_VERIFYHOST, o.verify_tls ? 2L : 0L);
  if (r.ca_bundle != nullptr) {
    Set(easy_, CURLOPT_CAINFO, r.ca_bundle->path().c_str());
    Set(easy_, CURLOPT_CAPATH, static_cast<const char*>(nullptr));
  }
  Set(easy_, CURLOPT_PROXY, o.proxy.c_str());  // "" disables proxies, environment included
  Set(easy_, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
  Set(easy_, CURLOPT_DNS_CACHE_TIMEOUT, static_cast<long>(o.dns_cache_ttl.count()));
  // curl reads a response into a buffer of this size, one recv(2) per fill. Its default
  // (16 KiB) takes two reads and two passes of its receive loop for a typical page (17 KB
  // with its head); 24 KiB mostly one (bench-peers: 1.57 recv(2) and 2.76 poll(2) per page
  // before, 1.14 and 2.34 after, peak RSS unchanged; 32 KiB took 1.0 recv(2) but 40 MiB
  // more peak RSS). Finished handles are kept for reuse (RecycleEasy), so the buffer is
  // allocated once per handle, not per transfer.
  Set(easy_, CURLOPT_BUFFERSIZE, kReceiveBufferBytes);
  Set(easy_, CURLOPT_WRITEFUNCTION, &Transfer::OnBody);
  Set(easy_, CURLOPT_WRITEDATA, static_cast<void*>(this));
  Set(easy_, CURLOPT_HEADERFUNCTION, &Transfer::OnHeader);
  Set(easy_, CURLOPT_HEADERDATA, static_cast<void*>(this));
  // The request head as sent is only reported through the debug callback, which libcurl
  // calls only in verbose mode.
  Set(easy_, CURLOPT_DEBUGFUNCTION, &Transfer::OnDebug);
  Set(easy_, CURLOPT_DEBUGDATA, static_cast<void*>(this));
  Set(easy_, CURLOPT_VERBOSE, 1L);
  return Status::Ok();
}

size_t Transfer::OnBody(char* data, size_t size, size_t n, void* self) {
  auto* t = static_cast<Transfer*>(self);
  const size_t len = size * n;
  std::string& body = t->result_.body;
  if (body.empty()) {
    // Size the body once from Content-Length instead of growing it by doubling (each
    // growth copies everything received so far).
    curl_off_t expected = -1;
    if (curl_easy_getinfo(t->easy_, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &expected) == CURLE_OK &&
        expected > 0) {
      body.reserve(std::min(static_cast<size_t>(expected), t->max_body_bytes_));
    }
  }
  if (body.size() + len > t->max_body_bytes_) {
    body.append(data, t->max_body_bytes_ - body.size());
    t->body_over_cap_ = true;
    return 0;  // curl aborts with CURLE_WRITE_ERROR
  }
  body.append(data, len);
  return len;
}

size_t Transfer::OnHeader(char* data, size_t size, size_t n, void* self) {
  auto* t = static_cast<Transfer*>(self);
  const size_t len = size * n;
  const std::string_view line(data, len);
  t->head_bytes_total_ += len;
  if (t->head_bytes_total_ > t->max_header_bytes_) {
    t->head_over_cap_ = true;
    return 0;
  }
  std::string& head = t->result_.response_head;
  const bool complete = HeadComplete(head);
  if (StartsWithStatusLine(line) && (head.empty() || complete)) {
    // A new response (after 1xx or a followed redirect): keep only the final one.
    head.clear();
    t->result_.body.clear();
  } else if (complete) {
    return len;  // trailer fields after a chunked body: not part of the head
  }
  t->response_started_ = true;
  head.append(line);
  return len;
}

int Transfer::OnDebug(CURL*, curl_infotype type, char* data, size_t size, void* self) {
  if (type != CURLINFO_HEADER_OUT) return 0;
  auto* t = static_cast<Transfer*>(self);
  if (t->response_started_) {  // a new request (redirect followed): keep only the last one
    t->result_.request_head.clear();
    t->response_started_ = false;
  }
  t->result_.request_head.append(data, size);
  return 0;
}

FetchResult Transfer::Fail(FetchOutcome outcome, std::string error) {
  result_.outcome = outcome;
  result_.error = std::move(error);
  return std::move(result_);
}

FetchResult Transfer::Finish(CURLcode code) {
  long status = 0, version = 0, redirects = 0;
  char* effective = nullptr;
  char* ip = nullptr;
  curl_off_t total = 0, ttfb = 0;
  curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_getinfo(easy_, CURLINFO_HTTP_VERSION, &version);
  curl_easy_getinfo(easy_, CURLINFO_REDIRECT_COUNT, &redirects);
  curl_easy_getinfo(easy_, CURLINFO_EFFECTIVE_URL, &effective);
  curl_easy_getinfo(easy_, CURLINFO_PRIMARY_IP, &ip);
  curl_easy_getinfo(easy_, CURLINFO_TOTAL_TIME_T, &total);
  curl_easy_getinfo(easy_, CURLINFO_STARTTRANSFER_TIME_T, &ttfb);
  result_.status = static_cast<int>(status);
  result_.http_version = status > 0 ? HttpVersionName(version) : "";
  result_.redirects_followed = static_cast<int>(redirects);
  result_.effective_url = effective != nullptr ? effective : result_.url;
  result_.ip = ip != nullptr ? ip : "";
  result_.total_time = std::chrono::microseconds(total);
  result_.ttfb = std::chrono::microseconds(ttfb);
  result_.headers = ParseResponseHeaders(result_.response_head);
  MapError(code);
  return std::move(result_);
}

void Transfer::MapError(CURLcode code) {
  FetchResult& r = result_;
  const bool got_response = r.status > 0;
  if (code == CURLE_OK) {
    r.outcome = FetchOutcome::kOk;
    return;
  }
  r.error = error_buffer_[0] != '\0' ? error_buffer_ : curl_easy_strerror(code);
  if (code == CURLE_WRITE_ERROR && body_over_cap_) {
    r.outcome = FetchOutcome::kTruncated;
    r.truncated = "length";
    r.error = "body exceeds max_body_bytes (" + std::to_string(max_body_bytes_) + ")";
  } else if (code == CURLE_WRITE_ERROR && head_over_cap_) {
    r.outcome = FetchOutcome::kProtocolError;
    r.error = "response head exceeds max_header_bytes (" + std::to_string(max_header_bytes_) + ")";
  } else if (code == CURLE_OPERATION_TIMEDOUT) {
    r.outcome = FetchOutcome::kTimeout;
    if (got_response) r.truncated = "time";
  } else if (code == CURLE_COULDNT_CONNECT) {
    r.outcome = FetchOutcome::kConnectError;
  } else if (code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY) {
    r.outcome = FetchOutcome::kDnsError;
  } else if (IsTlsError(code)) {
    r.outcome = FetchOutcome::kTlsError;
  } else if (code == CURLE_TOO_MANY_REDIRECTS) {
    r.outcome = FetchOutcome::kTooManyRedirects;
  } else if (code == CURLE_ABORTED_BY_CALLBACK) {
    r.outcome = FetchOutcome::kAborted;
  } else if (code == CURLE_PARTIAL_FILE || code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR ||
             code == CURLE_GOT_NOTHING || code == CURLE_WEIRD_SERVER_REPLY || code == CURLE_HTTP2 ||
             code == CURLE_HTTP2_STREAM || code == CURLE_HTTP3 ||
             code == CURLE_BAD_CONTENT_ENCODING) {
    r.outcome = FetchOutcome::kProtocolError;
    if (got_response) r.truncated = "disconnect";
  } else {
    r.outcome = FetchOutcome::kOtherError;
  }
}

}  // namespace harvest::fetch
