// Http1Client: connections, the request, the response and the idle pool (see the header).
#include "fetch/http1_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

#include "base/ascii.h"
#include "base/host_key.h"
#include "base/receive_time.h"
#include "fetch/http1_response.h"
#include "fetch/resolver.h"
#include "fetch/tls_client.h"
#include "fetch/transfer.h"

namespace harvest::fetch::internal {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr std::chrono::seconds kIdleLifetime{30};  // as CurlFetcher's kIdlePoolLifetime
constexpr std::chrono::milliseconds kCheckInterval{50};
// One recv(2) takes up to this much; a typical page (17 KB with its head) arrives in one.
constexpr size_t kReceiveBytes = 64 * 1024;
// Reads per readable event before the loop serves other connections.
constexpr int kMaxReadsPerEvent = 16;

int64_t WallMicrosNow() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t MillisSince(SteadyClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - t).count();
}

bool HasForbiddenHeaderChar(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

// A port field: "" (none) or 1..65535.
bool ParsePort(std::string_view s, int* port) {
  if (s.empty() || s.size() > 5) return false;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < 1 || v > 65535) return false;
  *port = v;
  return true;
}

// The body cap of a request: its own, or the fetcher's.
size_t BodyCap(const FetchRequest& request, const FetchOptions& options) {
  return request.max_body_bytes != 0 ? request.max_body_bytes : options.max_body_bytes;
}

}  // namespace

std::vector<ConnectToRule> ParseConnectTo(const std::vector<std::string>& entries) {
  std::vector<ConnectToRule> rules;
  for (const std::string& entry : entries) {
    std::vector<std::string> fields(1);
    bool in_brackets = false;
    for (char c : entry) {
      if (c == '[') in_brackets = true;
      if (c == ']') in_brackets = false;
      if (c == ':' && !in_brackets) {
        fields.emplace_back();
      } else {
        fields.back().push_back(c);
      }
    }
    if (fields.size() != 4) continue;  // CurlFetcher rejects it (status())
    rules.push_back({fields[0], fields[1], fields[2], fields[3]});
  }
  return rules;
}

std::optional<Http1Target> OwnClientTarget(const FetchRequest& request,
                                           const std::vector<ConnectToRule>& connect_to, bool http,
                                           bool https) {
  std::string_view url = request.url;
  if (request.max_redirects > 0) return std::nullopt;
  bool tls = false;
  if (http && url.starts_with("http://")) {
    url.remove_prefix(7);
  } else if (https && url.starts_with("https://")) {
    url.remove_prefix(8);
    tls = true;
  } else {
    return std::nullopt;
  }
  const size_t authority_end = url.find_first_of("/?#");
  const std::string_view authority = url.substr(0, authority_end);
  if (authority.empty() || authority.find('@') != std::string_view::npos) return std::nullopt;
  std::string_view rest =
      authority_end == std::string_view::npos ? std::string_view() : url.substr(authority_end);
  rest = rest.substr(0, rest.find('#'));
  for (char c : rest) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      return std::nullopt;
    }
  }
  for (char c : authority) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      return std::nullopt;
    }
  }
  // host and port of the authority.
  std::string_view host = authority, port_text;
  if (authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = authority.substr(0, close + 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return std::nullopt;
      port_text = after.substr(1);
    }
  } else if (const size_t colon = authority.find(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port_text = authority.substr(colon + 1);
  }
  int url_port = tls ? 443 : 80;
  if (!port_text.empty() && !ParsePort(port_text, &url_port)) return std::nullopt;
  if (host.empty()) return std::nullopt;

  Http1Target t;
  t.tls = tls;
  if (tls) t.host = std::string(Unbracket(host));
  t.authority = std::string(authority);
  t.request_target = rest.empty() || rest.front() != '/' ? "/" + std::string(rest) : rest;
  t.port = url_port;
  if (!request.connect_address.empty()) {
    if (!IsNumericAddress(request.connect_address)) return std::nullopt;  // curl reports it
    if (request.connect_port < 0 || request.connect_port > 65535) return std::nullopt;
    t.address = request.connect_address;
    if (request.connect_port > 0) t.port = request.connect_port;
    return t;
  }
  const std::string_view bare = Unbracket(host);
  if (IsNumericAddress(bare)) {
    t.address = std::string(bare);
    return t;
  }
  std::string port_str = std::to_string(url_port);
  for (const ConnectToRule& rule : connect_to) {
    if (!rule.host.empty() && !EqualsIgnoreAsciiCase(rule.host, host)) continue;
    if (!rule.port.empty() && rule.port != port_str) continue;
    // The first matching rule decides, as in curl.
    const std::string_view to = Unbracket(rule.to_host);
    if (to.empty() || !IsNumericAddress(to)) return std::nullopt;
    t.address = std::string(to);
    if (!rule.to_port.empty() && !ParsePort(rule.to_port, &t.port)) return std::nullopt;
    return t;
  }
  return std::nullopt;
}

struct Http1Client::Conn {
  int fd = -1;
  std::string pool_key;
  Xfer* xfer = nullptr;  // the transfer it serves; nullptr while idle
  bool used = false;     // carried a complete response before (a kept connection)
  bool closed = false;
  uint32_t events = 0;                 // the epoll interest registered
  std::unique_ptr<TlsConnection> tls;  // https
  bool read_wants_write = false;       // TLS: SSL_read waits for the socket to take a write
  SteadyClock::time_point idle_since;
};

struct Http1Client::Xfer {
  FetchRequest request;
  FetchCallback done;
  FetchResult result;
  Http1Target target;
  std::string host_key;
  std::string pool_key;
  std::string out;  // the request head
  size_t out_sent = 0;
  std::unique_ptr<Conn> conn;
  std::optional<Http1Response> response;
  SteadyClock::time_point start, speed_window_start;
  uint64_t bytes_in = 0, speed_window_bytes = 0;
  bool connecting = false;   // TCP connect, and for https the TLS handshake
  bool handshaking = false;  // https: the TCP connection is up, the handshake running
  bool retried = false;
  bool first_byte = false;
  bool reusable = true;    // false: the server sent more than the response
  int64_t rx_wall_us = 0;  // the kernel's receive time of the last bytes read
};

Http1Client::Http1Client(const FetchOptions& options, std::string user_agent, int epoll_fd,
                         std::unique_ptr<TlsClientContext> tls)
    : tls_(std::move(tls)),
      options_(options),
      user_agent_(std::move(user_agent)),
      epoll_fd_(epoll_fd) {
  buffer_.resize(kReceiveBytes);
}

Http1Client::~Http1Client() {
  for (auto& [ptr, x] : running_) {
    if (x->conn && x->conn->fd >= 0) close(x->conn->fd);
  }
  for (auto& c : idle_) close(c->fd);
  for (auto& c : closed_) {
    if (c->fd >= 0) close(c->fd);
  }
}

void Http1Client::Start(FetchRequest request, Http1Target target, FetchCallback done) {
  auto owned = std::make_unique<Xfer>();
  Xfer* x = owned.get();
  x->request = std::move(request);
  x->done = std::move(done);
  x->target = std::move(target);
  x->host_key = HostKey(x->request.url);
  x->pool_key = (x->target.tls ? "https " : "http ") + x->host_key + ' ' + x->target.address + ':' +
                std::to_string(x->target.port);
  x->result.id = x->request.id;
  x->result.url = x->request.url;
  x->result.effective_url = x->request.url;
  x->result.start_wall_us = WallMicrosNow();
  x->start = SteadyClock::now();
  x->speed_window_start = x->start;
  running_.emplace(x, std::move(owned));
  if (next_check_ == SteadyClock::time_point{}) next_check_ = x->start + kCheckInterval;

  // The request head, as curl writes it: Host, User-Agent, Accept, Accept-Encoding, then the
  // caller's fields (a caller's field of one of those names replaces the default).
  for (const auto& [name, value] : x->request.headers) {
    if (name.empty() || name.find(':') != std::string::npos || HasForbiddenHeaderChar(name) ||
        HasForbiddenHeaderChar(value)) {
      Complete(x, FetchOutcome::kOtherError,
               "request header '" + name + "' has a forbidden character");
      return;
    }
  }
  auto overridden = [x](std::string_view name) {
    for (const auto& h : x->request.headers) {
      if (EqualsIgnoreAsciiCase(h.first, name)) return true;
    }
    return false;
  };
  std::string& out = x->out;
  out.reserve(256);
  out.append("GET ").append(x->target.request_target).append(" HTTP/1.1\r\n");
  if (!overridden("Host")) out.append("Host: ").append(x->target.authority).append("\r\n");
  if (!overridden("User-Agent")) out.append("User-Agent: ").append(user_agent_).append("\r\n");
  if (!overridden("Accept")) out.append("Accept: */*\r\n");
  if (!options_.accept_encoding.empty() && !overridden("Accept-Encoding")) {
    out.append("Accept-Encoding: ").append(options_.accept_encoding).append("\r\n");
  }
  for (const auto& [name, value] : x->request.headers) {
    out.append(name).append(value.empty() ? ":" : ": ").append(value).append("\r\n");
  }
  out.append("\r\n");
  x->response.emplace(options_.max_header_bytes, BodyCap(x->request, options_));

  if (std::unique_ptr<Conn> conn = TakeIdle(x->pool_key)) {
    x->conn = std::move(conn);
    x->conn->xfer = x;
    SendRequest(x);
    return;
  }
  Connect(x);
}

std::unique_ptr<Http1Client::Conn> Http1Client::TakeIdle(const std::string& pool_key) {
  auto it = idle_by_key_.find(pool_key);
  if (it == idle_by_key_.end()) return nullptr;
  auto pos = it->second;
  idle_by_key_.erase(it);
  std::unique_ptr<Conn> conn = std::move(*pos);
  idle_.erase(pos);
  return conn;
}

void Http1Client::Connect(Xfer* x) {
  auto conn = std::make_unique<Conn>();
  conn->pool_key = x->pool_key;
  conn->xfer = x;
  x->conn = std::move(conn);
  x->connecting = true;
  sockaddr_storage addr{};
  socklen_t len = 0;
  const bool v6 = x->target.address.find(':') != std::string::npos;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(x->target.port));
    inet_pton(AF_INET6, x->target.address.c_str(), &a->sin6_addr);
    len = sizeof(*a);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<uint16_t>(x->target.port));
    inet_pton(AF_INET, x->target.address.c_str(), &a->sin_addr);
    len = sizeof(*a);
  }
  const int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    Complete(x, FetchOutcome::kConnectError, std::string("socket: ") + std::strerror(errno));
    return;
  }
  x->conn->fd = fd;
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  // Each read's receive time comes with it: the host's delay counts from the arrival of the
  // response's last byte, not from when the loop got round to it.
  EnableReceiveTime(fd);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 && errno != EINPROGRESS) {
    Complete(x, FetchOutcome::kConnectError,
             "Failed to connect to " + x->target.address + " port " +
                 std::to_string(x->target.port) + ": " + std::strerror(errno));
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLOUT;
  ev.data.ptr = x->conn.get();
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    Complete(x, FetchOutcome::kOtherError, std::string("epoll_ctl: ") + std::strerror(errno));
    return;
  }
  x->conn->events = EPOLLOUT;
}

void Http1Client::SetEvents(Conn* c, uint32_t events) {
  if (c->events == events || c->fd < 0) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = c;
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c->fd, &ev);
  c->events = events;
}

void Http1Client::StartTls(Xfer* x) {
  Conn* c = x->conn.get();
  if (tls_ == nullptr) {
    Complete(x, FetchOutcome::kOtherError, "https is not enabled on this client");
    return;
  }
  c->tls = tls_->Open(c->fd, x->target.host, c->pool_key,
                      x->target.host + ":" + std::to_string(x->target.port));
  if (c->tls == nullptr) {
    Complete(x, FetchOutcome::kTlsError, "TLS setup failed for " + x->target.host);
    return;
  }
  x->handshaking = true;
  Handshake(x);
}

void Http1Client::Handshake(Xfer* x) {
  Conn* c = x->conn.get();
  // SSL_get_error reads the thread's error queue, which other code on this thread (libcurl)
  // shares: it must start empty.
  ERR_clear_error();
  const int ret = SSL_connect(c->tls->ssl());
  if (ret == 1) {
    x->handshaking = false;
    x->connecting = false;
    SendRequest(x);
    return;
  }
  switch (SSL_get_error(c->tls->ssl(), ret)) {
    case SSL_ERROR_WANT_READ:
      SetEvents(c, EPOLLIN | EPOLLRDHUP);  // as while reading the response: no change later
      return;
    case SSL_ERROR_WANT_WRITE:
      SetEvents(c, EPOLLOUT);
      return;
    default:
      Complete(x, FetchOutcome::kTlsError, c->tls->HandshakeError(ret));
      return;
  }
}

void Http1Client::SendRequest(Xfer* x) {
  Conn* c = x->conn.get();
  while (x->out_sent < x->out.size()) {
    const char* data = x->out.data() + x->out_sent;
    const size_t size = x->out.size() - x->out_sent;
    if (c->tls != nullptr) {
      size_t n = 0;
      ERR_clear_error();
      const int ret = SSL_write_ex(c->tls->ssl(), data, size, &n);
      if (ret == 1) {
        x->out_sent += n;
        continue;
      }
      const int e = SSL_get_error(c->tls->ssl(), ret);
      if (e == SSL_ERROR_WANT_WRITE) {
        SetEvents(c, EPOLLOUT);
        return;
      }
      if (e == SSL_ERROR_WANT_READ) {
        SetEvents(c, EPOLLIN | EPOLLRDHUP);
        return;
      }
      std::string why = c->tls->IoError(e);
      if (RetryOnNewConnection(x)) return;
      Complete(x, FetchOutcome::kProtocolError, "Send failure: " + why);
      return;
    }
    const ssize_t n = send(c->fd, data, size, MSG_NOSIGNAL);
    if (n > 0) {
      x->out_sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      SetEvents(c, EPOLLOUT);
      return;
    }
    const int err = errno;
    if (RetryOnNewConnection(x)) return;
    Complete(x, FetchOutcome::kProtocolError, std::string("Send failure: ") + std::strerror(err));
    return;
  }
  SetEvents(c, EPOLLIN | EPOLLRDHUP);
  x->result.request_head = x->out;
  // A TLS record read along with the handshake's last one may hold the response already
  // (never before the request, but a server may answer anything at once): read what OpenSSL
  // buffered, since epoll will not report it.
  if (c->tls != nullptr && SSL_has_pending(c->tls->ssl()) == 1) OnReadableTls(x);
}

bool Http1Client::RetryOnNewConnection(Xfer* x) {
  if (!x->conn->used || x->retried || x->response->started()) return false;
  x->retried = true;
  CloseConn(std::move(x->conn));
  x->out_sent = 0;
  x->response.emplace(options_.max_header_bytes, BodyCap(x->request, options_));
  Connect(x);
  return true;
}

bool Http1Client::IdleTlsStillOpen(Conn* c) {
  char byte;
  size_t n = 0;
  ERR_clear_error();
  const int ret = SSL_read_ex(c->tls->ssl(), &byte, 1, &n);
  if (ret == 1) return false;  // data nobody asked for
  const int e = SSL_get_error(c->tls->ssl(), ret);
  if (e == SSL_ERROR_WANT_READ) return true;  // a session ticket or key update, consumed
  if (e != SSL_ERROR_ZERO_RETURN) c->tls->IoError(e);
  return false;
}

void Http1Client::HandleEvent(void* ptr, uint32_t events) {
  Conn* c = static_cast<Conn*>(ptr);
  if (c->closed) return;
  if (c->xfer == nullptr) {
    // An idle connection became readable: the server closed it (or sent what nobody asked
    // for). Either way it cannot carry the next request. Over TLS it may have been a session
    // ticket only.
    if (c->tls != nullptr && IdleTlsStillOpen(c)) return;
    RemoveIdle(c);
    return;
  }
  Xfer* x = c->xfer;
  if (x->handshaking) {
    Handshake(x);
    return;
  }
  if (x->connecting) {
    if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) == 0) return;
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) {
      Complete(x, FetchOutcome::kConnectError,
               "Failed to connect to " + x->target.address + " port " +
                   std::to_string(x->target.port) + " after " +
                   std::to_string(MillisSince(x->start)) + " ms: " + std::strerror(err));
      return;
    }
    if (x->target.tls) {
      StartTls(x);
      return;
    }
    x->connecting = false;
    SendRequest(x);
    return;
  }
  if (x->out_sent < x->out.size()) {
    if (c->tls != nullptr || (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) SendRequest(x);
    return;
  }
  if (c->tls != nullptr) {
    OnReadableTls(x);
    return;
  }
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) OnReadable(x);
}

bool Http1Client::Consume(Xfer* x, std::string_view data, int64_t rx_wall_us) {
  Http1Response& r = *x->response;
  x->rx_wall_us = rx_wall_us;
  if (!x->first_byte) {
    x->first_byte = true;
    x->result.ttfb =
        std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - x->start);
  }
  x->bytes_in += data.size();
  const size_t used = r.Feed(data);
  if (r.done()) {
    // Bytes beyond the response (nothing asked for them): the connection is not reused.
    if (used < data.size()) x->reusable = false;
    // Over TLS also records read ahead and not yet decrypted (SSL_pending counts only the
    // current record's plaintext).
    if (x->conn->tls != nullptr && SSL_has_pending(x->conn->tls->ssl()) == 1) x->reusable = false;
    Complete(x, FetchOutcome::kOk, "");
    return true;
  }
  if (r.failed()) {
    Complete(x, r.body_over_cap() ? FetchOutcome::kTruncated : FetchOutcome::kProtocolError,
             r.error());
    return true;
  }
  return false;
}

void Http1Client::OnEndOfStream(Xfer* x, int err, std::string tls_error) {
  Http1Response& r = *x->response;
  if (RetryOnNewConnection(x)) return;
  r.Eof();
  if (r.done()) {
    Complete(x, FetchOutcome::kOk, "");
  } else if (!tls_error.empty()) {
    Complete(x, FetchOutcome::kProtocolError, "Recv failure: " + tls_error);
  } else if (err != 0) {
    Complete(x, FetchOutcome::kProtocolError, std::string("Recv failure: ") + std::strerror(err));
  } else {
    Complete(x, FetchOutcome::kProtocolError, r.error());
  }
}

void Http1Client::OnReadable(Xfer* x) {
  Conn* c = x->conn.get();
  for (int i = 0; i < kMaxReadsPerEvent; ++i) {
    int64_t rx_wall_us = 0;
    const ssize_t n = ReceiveWithTime(c->fd, buffer_.data(), buffer_.size(), &rx_wall_us);
    if (n > 0) {
      if (Consume(x, std::string_view(buffer_.data(), static_cast<size_t>(n)), rx_wall_us)) {
        return;
      }
      if (static_cast<size_t>(n) < buffer_.size()) return;  // drained; epoll reports more
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    OnEndOfStream(x, n < 0 ? errno : 0, "");
    return;
  }
}

void Http1Client::OnReadableTls(Xfer* x) {
  Conn* c = x->conn.get();
  SSL* ssl = c->tls->ssl();
  ERR_clear_error();  // see Handshake()
  for (int i = 0;; ++i) {
    size_t n = 0;
    const int ret = SSL_read_ex(ssl, buffer_.data(), buffer_.size(), &n);
    if (ret == 1) {
      if (c->read_wants_write) {
        c->read_wants_write = false;
        SetEvents(c, EPOLLIN | EPOLLRDHUP);
      }
      if (Consume(x, std::string_view(buffer_.data(), n), c->tls->rx_wall_us())) return;
      // OpenSSL's buffer holds records epoll cannot report: read them now. Without any, and
      // with the socket drained (or after a fair share of reads), epoll reports more.
      if (SSL_has_pending(ssl) == 1) continue;
      if (c->tls->drained() || i + 1 >= kMaxReadsPerEvent) return;
      continue;
    }
    const int e = SSL_get_error(ssl, ret);
    if (e == SSL_ERROR_WANT_READ) {
      if (c->read_wants_write) {
        c->read_wants_write = false;
        SetEvents(c, EPOLLIN | EPOLLRDHUP);
      }
      return;
    }
    if (e == SSL_ERROR_WANT_WRITE) {  // a key update's answer waits for room in the socket
      c->read_wants_write = true;
      SetEvents(c, EPOLLIN | EPOLLOUT | EPOLLRDHUP);
      return;
    }
    if (e == SSL_ERROR_ZERO_RETURN) {
      OnEndOfStream(x, 0, "");
    } else {
      OnEndOfStream(x, 0, c->tls->IoError(e));
    }
    return;
  }
}

void Http1Client::Complete(Xfer* x, FetchOutcome outcome, std::string error) {
  FetchResult& res = x->result;
  Http1Response& r = *x->response;
  res.outcome = outcome;
  res.error = std::move(error);
  res.ip = x->target.address;
  res.total_time =
      std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - x->start);
  if (r.head_done()) {
    res.status = r.status();
    res.http_version = r.version();
    res.response_head = std::move(r.mutable_head());
    res.headers = std::move(r.mutable_headers());
  }
  res.body = std::move(r.mutable_body());
  // Only a response that ended as the server sent it has its end in its last byte; one cut
  // short ends when it is closed (below, before the callback).
  if (outcome == FetchOutcome::kOk) res.last_byte_wall_us = x->rx_wall_us;
  const bool got_response = res.status > 0;
  if (outcome == FetchOutcome::kTruncated) {
    res.truncated = "length";
  } else if (outcome == FetchOutcome::kTimeout && got_response) {
    res.truncated = "time";
  } else if (outcome == FetchOutcome::kProtocolError && got_response && r.disconnected()) {
    res.truncated = "disconnect";
  }
  if (res.request_head.empty() && x->out_sent == x->out.size() && !x->out.empty()) {
    res.request_head = x->out;
  }
  if (x->conn) {
    const bool keep = outcome == FetchOutcome::kOk && r.keep_alive() && r.done() && x->reusable &&
                      x->request.reuse_connection && options_.max_idle_connections > 0;
    x->conn->xfer = nullptr;
    if (keep) {
      x->conn->used = true;
      KeepIdle(std::move(x->conn));
    } else {
      CloseConn(std::move(x->conn));
    }
  }
  finished_.push_back({std::move(x->done), std::move(res), std::move(x->host_key)});
  running_.erase(x);  // destroys x
}

void Http1Client::CloseConn(std::unique_ptr<Conn> conn) {
  if (conn->tls != nullptr) {
    conn->tls->Close();  // close_notify if in order; never waits
    conn->tls.reset();
  }
  if (conn->fd >= 0) {
    close(conn->fd);  // also leaves the epoll set
    conn->fd = -1;
  }
  conn->closed = true;
  conn->xfer = nullptr;
  closed_.push_back(std::move(conn));
}

void Http1Client::KeepIdle(std::unique_ptr<Conn> conn) {
  conn->read_wants_write = false;
  SetEvents(conn.get(), EPOLLIN | EPOLLRDHUP);
  if (conn->tls != nullptr) conn->tls->ReleaseBuffers();
  conn->idle_since = SteadyClock::now();
  const std::string key = conn->pool_key;
  auto pos = idle_.insert(idle_.end(), std::move(conn));
  idle_by_key_.emplace(key, pos);
  TrimIdle((*pos)->idle_since);
}

void Http1Client::RemoveIdle(Conn* conn) {
  auto range = idle_by_key_.equal_range(conn->pool_key);
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second->get() == conn) {
      auto pos = it->second;
      idle_by_key_.erase(it);
      std::unique_ptr<Conn> owned = std::move(*pos);
      idle_.erase(pos);
      CloseConn(std::move(owned));
      return;
    }
  }
}

void Http1Client::TrimIdle(SteadyClock::time_point now) {
  while (!idle_.empty()) {
    Conn* oldest = idle_.front().get();
    if (idle_.size() <= options_.max_idle_connections && now - oldest->idle_since < kIdleLifetime) {
      return;
    }
    RemoveIdle(oldest);
  }
}

void Http1Client::CheckTimers() {
  const auto now = SteadyClock::now();
  if (now < next_check_) return;
  next_check_ = now + kCheckInterval;
  TrimIdle(now);
  std::vector<Xfer*> expired;
  std::vector<std::string> why;
  const uint64_t low_speed_bytes =
      static_cast<uint64_t>(std::max<long>(options_.low_speed_limit_bytes, 0)) *
      static_cast<uint64_t>(options_.low_speed_time.count());
  for (auto& [ptr, x] : running_) {
    const int64_t elapsed = MillisSince(x->start);
    if (x->connecting && now - x->start >= options_.connect_timeout) {
      expired.push_back(ptr);
      why.push_back(
          (x->handshaking ? "TLS handshake timed out after " : "Connection timed out after ") +
          std::to_string(elapsed) + " milliseconds");
    } else if (now - x->start >= options_.total_timeout) {
      expired.push_back(ptr);
      why.push_back("Operation timed out after " + std::to_string(elapsed) + " milliseconds with " +
                    std::to_string(x->response->body().size()) + " bytes received");
    } else if (low_speed_bytes > 0 && now - x->speed_window_start >= options_.low_speed_time) {
      if (x->bytes_in - x->speed_window_bytes < low_speed_bytes) {
        expired.push_back(ptr);
        why.push_back("Operation too slow. Less than " +
                      std::to_string(options_.low_speed_limit_bytes) +
                      " bytes/sec transferred the last " +
                      std::to_string(options_.low_speed_time.count()) + " seconds");
      } else {
        x->speed_window_start = now;
        x->speed_window_bytes = x->bytes_in;
      }
    }
  }
  for (size_t i = 0; i < expired.size(); ++i) {
    Complete(expired[i], FetchOutcome::kTimeout, std::move(why[i]));
  }
}

void Http1Client::EndOfBatch() { closed_.clear(); }

std::chrono::milliseconds Http1Client::WaitBudget(std::chrono::milliseconds cap) const {
  if (running_.empty()) return cap;
  const auto left = next_check_ - SteadyClock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count() + 1;
  return std::chrono::milliseconds(std::clamp<int64_t>(ms, 0, cap.count()));
}

}  // namespace harvest::fetch::internal
