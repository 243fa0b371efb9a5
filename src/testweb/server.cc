// The epoll HTTP/1.1 server behind TestWeb: non-blocking sockets, keep-alive, per-loop timers
// for slow and trickling responses. Each event loop owns its connections (no locks on them);
// loops share only the listening sockets (one per address, each in every loop with
// EPOLLEXCLUSIVE), the Site (immutable), the epoch (atomic) and the RequestLog (internally
// locked).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/ascii.h"
#include "base/mutex.h"
#include "base/receive_time.h"
#include "testweb/internal.h"
#include "testweb/request_log.h"

namespace harvest::testweb {

namespace {

// A request head larger than this gets 431 and the connection is closed.
constexpr size_t kMaxHeadBytes = 16 * 1024;
// Request bodies (only POST /__testweb/epoch has one) larger than this get 413.
constexpr size_t kMaxBodyBytes = 64 * 1024;
// Input buffered while a response is in progress; beyond it the client is misbehaving.
constexpr size_t kMaxPendingInput = 1024 * 1024;
// Ports tried when the port is picked (port 0) and a later address cannot bind the first
// address's port (another process holds it there).
constexpr int kBindAttempts = 8;

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 307:
      return "Temporary Redirect";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 410:
      return "Gone";
    case 413:
      return "Content Too Large";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

// Parses a request head (up to and excluding the blank line). False when malformed.
bool ParseHead(std::string_view head, Request* req, size_t* content_length, bool* keep_alive) {
  size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  size_t sp1 = line.find(' ');
  size_t sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1) return false;
  req->method = std::string(line.substr(0, sp1));
  req->target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  std::string_view version = line.substr(sp2 + 1);
  if (version.substr(0, 5) != "HTTP/") return false;
  *keep_alive = version != "HTTP/1.0";
  *content_length = 0;
  if (req->target.rfind("http://", 0) == 0) {  // absolute-form: the authority is the host
    size_t slash = req->target.find('/', 7);
    req->host = req->target.substr(7, slash == std::string::npos ? std::string::npos : slash - 7);
    req->target = slash == std::string::npos ? "/" : req->target.substr(slash);
  }
  while (eol != std::string_view::npos) {
    size_t start = eol + 2;
    eol = head.find("\r\n", start);
    std::string_view h = head.substr(start, eol == std::string_view::npos ? eol : eol - start);
    size_t colon = h.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = h.substr(0, colon);
    std::string_view value = TrimHttpOwsAndCr(h.substr(colon + 1));
    if (EqualsIgnoreAsciiCase(name, "host")) {
      if (req->host.empty()) req->host = std::string(value);
    } else if (EqualsIgnoreAsciiCase(name, "accept-encoding")) {
      req->accept_encoding = std::string(value);
    } else if (EqualsIgnoreAsciiCase(name, "if-none-match")) {
      req->if_none_match = std::string(value);
    } else if (EqualsIgnoreAsciiCase(name, "if-modified-since")) {
      req->if_modified_since = std::string(value);
    } else if (EqualsIgnoreAsciiCase(name, "connection")) {
      if (EqualsIgnoreAsciiCase(value, "close")) *keep_alive = false;
      if (EqualsIgnoreAsciiCase(value, "keep-alive")) *keep_alive = true;
    } else if (EqualsIgnoreAsciiCase(name, "content-length")) {
      char* end = nullptr;
      std::string v(value);
      unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0') return false;
      *content_length = n > kMaxBodyBytes ? kMaxBodyBytes + 1 : static_cast<size_t>(n);
    }
  }
  return true;
}

class Server;

// One event loop: owns its connections and timers. Event-loop-only after Run() starts.
class Loop {
 public:
  Loop(Server* server, const std::vector<int>& listen_fds);
  ~Loop();
  bool ok() const { return epoll_fd_ >= 0 && wake_fd_ >= 0; }
  void Run();
  void Wake();

 private:
  enum class State { kReading, kWaiting, kWriting, kTrickling };
  struct Conn {
    int fd = -1;
    uint64_t id = 0;
    State state = State::kReading;
    std::string in;
    std::string head;
    size_t head_off = 0;
    std::shared_ptr<const std::string> body;
    size_t body_off = 0;
    bool close_after = false;
    bool want_out = false;
    bool peer_closed = false;
    bool entry_open = false;
    std::string ip;  // the local (server-side) address the connection arrived at
    // When the last byte of the current response was handed to the kernel (taken just before
    // the send call, so it is never later than the client's receipt): the logged end.
    int64_t last_send_us = 0;
    // The kernel's receive time of the first bytes of the request being read (0: none), the
    // logged start: the loop may read them later when its thread waits for a core.
    int64_t head_rx_us = 0;
    Response pending;
    LogEntry entry;
  };

  void Accept(int listen_fd);
  void OnReadable(Conn& c);
  void TryParse(Conn& c);
  void StartResponse(Conn& c);
  void WriteMore(Conn& c);
  void Finished(Conn& c);
  void Close(Conn& c);
  void SetOut(Conn& c, bool want);
  void OnTimer(int fd, uint64_t id);
  int64_t NowMicros() const;
  // The logged start of the request now parsed: its bytes' kernel receive time, which is on
  // the real wall clock, so only when the server runs on that; never later than now.
  int64_t RequestStart(const Conn& c) const;
  std::string DateHeader();

  Server* server_;
  // listening_[fd] is true for the listening sockets (connection fds are never those).
  std::vector<bool> listening_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::unordered_map<int, Conn> conns_;
  std::multimap<int64_t, std::pair<int, uint64_t>> timers_;  // monotonic us -> (fd, conn id)
  time_t date_second_ = 0;
  std::string date_;
};

class Server final : public TestWeb, public EpochControl {
 public:
  explicit Server(const TestWebOptions& options)
      : options_(options),
        site_(options.site),
        clock_(options.clock ? options.clock : SystemClock::Default()),
        start_us_(clock_->WallMicros()),
        change_every_us_(options.change_every.count() > 0
                             ? std::min<int64_t>(options.change_every.count(), INT64_MAX / 1000) *
                                   1000
                             : 0),
        base_epoch_(options.epoch) {}
  ~Server() override {
    Stop();
    CloseListeners();
  }

  Status Init();
  const Site& site() const override { return site_; }
  int port() const override { return port_; }
  std::string address() const override { return addresses_[0]; }
  std::vector<std::string> addresses() const override { return addresses_; }
  int64_t epoch() const override { return base_epoch_.load() + Ticks(); }
  // Not atomic with a tick happening at the same instant; a test that sets the epoch while
  // the schedule runs sees at most one tick of difference.
  void SetEpoch(int64_t epoch) override { base_epoch_.store(epoch - Ticks()); }
  void Stop() override;

  const Clock* clock() const { return clock_; }
  uint64_t NextConnId() { return ++next_conn_id_; }
  void Log(const LogEntry& e) {
    if (log_) log_->Append(e);
  }

 private:
  // Binds and listens on `count` addresses from `first` (host byte order) on `port` (0: pick
  // one for the first address). On failure closes what it opened; *retry tells whether
  // another picked port may succeed.
  Status Listen(uint32_t first, int count, uint16_t port, bool* retry);
  void CloseListeners();

  TestWebOptions options_;
  Site site_;
  // Whole change_every periods since start (0 without a schedule, or when the wall clock
  // went back before the start).
  int64_t Ticks() const {
    if (change_every_us_ == 0) return 0;
    const int64_t elapsed = clock_->WallMicros() - start_us_;
    return elapsed <= 0 ? 0 : elapsed / change_every_us_;
  }

  const Clock* clock_;
  const int64_t start_us_;
  const int64_t change_every_us_;  // 0: no schedule
  // epoch() - Ticks(): the initial epoch plus the net effect of SetEpoch().
  std::atomic<int64_t> base_epoch_;
  std::atomic<uint64_t> next_conn_id_{0};
  std::vector<int> listen_fds_;
  int port_ = 0;
  std::vector<std::string> addresses_;  // "ADDR:PORT" per listening socket
  std::unique_ptr<RequestLog> log_;
  std::vector<std::unique_ptr<Loop>> loops_;
  std::vector<std::thread> threads_;
  Mutex stop_mu_;  // held through Stop(): a second caller waits for the first to finish
  bool stopped_ GUARDED_BY(stop_mu_) = false;
};

Loop::Loop(Server* server, const std::vector<int>& listen_fds) : server_(server) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) return;
  epoll_event ev{};
  for (int fd : listen_fds) {
    if (static_cast<size_t>(fd) >= listening_.size()) listening_.resize(fd + 1, false);
    listening_[fd] = true;
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    ev.data.fd = fd;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      close(epoll_fd_);
      epoll_fd_ = -1;  // ok() is false: a socket no loop serves would hang its clients
      return;
    }
  }
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
}

Loop::~Loop() {
  while (!conns_.empty()) Close(conns_.begin()->second);
  if (wake_fd_ >= 0) close(wake_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

void Loop::Wake() {
  stop_ = true;
  uint64_t one = 1;
  ssize_t n = write(wake_fd_, &one, sizeof(one));
  (void)n;
}

int64_t Loop::NowMicros() const { return server_->clock()->WallMicros(); }

static int64_t MonoMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Loop::Run() {
  epoll_event events[256];
  while (!stop_) {
    int timeout = -1;
    if (!timers_.empty()) {
      int64_t wait = timers_.begin()->first - MonoMicros();
      timeout = wait <= 0 ? 0 : static_cast<int>((wait + 999) / 1000);
    }
    int n = epoll_wait(epoll_fd_, events, 256, timeout);
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == wake_fd_) continue;
      if (static_cast<size_t>(fd) < listening_.size() && listening_[fd]) {
        Accept(fd);
        continue;
      }
      auto it = conns_.find(fd);
      if (it == conns_.end()) continue;
      Conn& c = it->second;
      if (events[i].events & (EPOLLERR | EPOLLHUP)) {
        Close(c);
        continue;
      }
      if (events[i].events & EPOLLOUT) {
        WriteMore(c);
        if (conns_.find(fd) == conns_.end()) continue;
      }
      if (events[i].events & EPOLLIN) OnReadable(c);
    }
    int64_t now = MonoMicros();
    while (!timers_.empty() && timers_.begin()->first <= now) {
      auto [fd, id] = timers_.begin()->second;
      timers_.erase(timers_.begin());
      OnTimer(fd, id);
    }
  }
}

void Loop::Accept(int listen_fd) {
  while (true) {
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a transient error: try on the next event
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    Conn& c = conns_[fd];
    c.fd = fd;
    c.id = server_->NextConnId();
    // The server-side address, for the log's "ip": which listening address the client chose
    // (getsockname rather than the listener's address, so a wildcard listen reports it too).
    sockaddr_in local{};
    socklen_t local_len = sizeof(local);
    char text[INET_ADDRSTRLEN] = "";
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) == 0 &&
        local.sin_family == AF_INET) {
      inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text));
    }
    c.ip = text;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  }
}

void Loop::SetOut(Conn& c, bool want) {
  if (c.want_out == want) return;
  c.want_out = want;
  epoll_event ev{};
  ev.events = (c.peer_closed ? 0u : uint32_t{EPOLLIN}) | (want ? uint32_t{EPOLLOUT} : 0u);
  ev.data.fd = c.fd;
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
}

int64_t Loop::RequestStart(const Conn& c) const {
  const int64_t now = NowMicros();
  if (c.head_rx_us <= 0 || server_->clock() != SystemClock::Default()) return now;
  return std::min(c.head_rx_us, now);
}

void Loop::OnReadable(Conn& c) {
  char buf[16384];
  while (true) {
    int64_t rx_us = 0;
    ssize_t n = ReceiveWithTime(c.fd, buf, sizeof(buf), &rx_us);
    if (n > 0) {
      if (c.in.size() + n > kMaxPendingInput) return Close(c);
      // A request's first bytes (or the first that came with a time).
      if (c.in.empty() || c.head_rx_us == 0) c.head_rx_us = rx_us;
      c.in.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0 && errno == EINTR) continue;
    // EOF or error: the client is gone (or half-closed while we still write a response).
    if (c.state != State::kWriting) return Close(c);
    c.peer_closed = true;
    epoll_event ev{};
    ev.events = c.want_out ? uint32_t{EPOLLOUT} : 0u;
    ev.data.fd = c.fd;
    epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
    break;
  }
  if (c.state == State::kReading) TryParse(c);
}

void Loop::TryParse(Conn& c) {
  size_t end = c.in.find("\r\n\r\n");
  if (end == std::string::npos) {
    if (c.in.size() > kMaxHeadBytes) {
      c.pending = Response();
      c.pending.status = 431;
      c.pending.close = true;
      c.entry = LogEntry();
      c.entry.ip = c.ip;
      c.entry.start_us = RequestStart(c);
      c.last_send_us = 0;
      c.entry.conn = c.id;
      c.entry_open = true;
      c.in.clear();
      StartResponse(c);
    }
    return;
  }
  Request req;
  size_t content_length = 0;
  bool keep_alive = true;
  bool ok = ParseHead(std::string_view(c.in).substr(0, end), &req, &content_length, &keep_alive);
  size_t total = end + 4 + (ok ? std::min(content_length, kMaxBodyBytes + 1) : 0);
  if (ok && content_length <= kMaxBodyBytes && c.in.size() < total) return;  // body pending
  if (ok && content_length <= kMaxBodyBytes) req.body = c.in.substr(end + 4, content_length);
  c.in.erase(0, std::min(total, c.in.size()));
  c.entry = LogEntry();
  c.entry.ip = c.ip;
  // Bytes after this request (pipelined) keep the time of the read that began it: an early
  // start, the strict side for an audit of the gaps.
  c.entry.start_us = RequestStart(c);
  c.last_send_us = 0;
  c.entry.conn = c.id;
  c.entry.path = req.target;
  c.entry.host = req.host;
  c.entry_open = true;
  if (!ok || content_length > kMaxBodyBytes) {
    c.pending = Response();
    c.pending.status = ok ? 413 : 400;
    c.pending.close = true;
  } else {
    c.pending = Handle(server_->site(), req, server_);
    if (!keep_alive) c.pending.close = true;
    if (req.method == "HEAD") c.pending.trickle = false;
    const Route& r = c.pending.route;
    if (r.host >= 0) c.entry.host = server_->site().hosts()[r.host].name;
    c.entry.page = r.page;
    c.entry.kind = r.kind;
    c.entry.disallowed = r.disallowed;
    c.entry.retry_after_s = c.pending.retry_after_s;
    c.entry.cond = c.pending.conditional;
    c.entry.inm = req.if_none_match;
    c.entry.ims = req.if_modified_since;
    if (req.method == "HEAD") c.pending.head_only = true;
  }
  if (c.pending.delay_ms > 0) {
    c.state = State::kWaiting;
    timers_.emplace(MonoMicros() + int64_t{c.pending.delay_ms} * 1000, std::make_pair(c.fd, c.id));
    return;
  }
  StartResponse(c);
}

std::string Loop::DateHeader() {
  time_t now = time(nullptr);
  if (now != date_second_) {
    date_second_ = now;
    struct tm tm;
    gmtime_r(&now, &tm);
    char buf[64];
    strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    date_ = buf;
  }
  return date_;
}

void Loop::StartResponse(Conn& c) {
  Response& r = c.pending;
  const bool head_only = r.head_only;
  std::string& h = c.head;
  h.clear();
  h += "HTTP/1.1 " + std::to_string(r.status) + " " + Reason(r.status) + "\r\n";
  h += "Date: " + DateHeader() + "\r\nServer: harvest-testweb\r\n";
  for (const auto& [k, v] : r.headers) h += k + ": " + v + "\r\n";
  size_t body_size = r.body ? r.body->size() : 0;
  if (!r.trickle && r.status != 304) h += "Content-Length: " + std::to_string(body_size) + "\r\n";
  h += r.close ? "Connection: close\r\n\r\n" : "Connection: keep-alive\r\n\r\n";
  c.head_off = 0;
  c.body = head_only || r.status == 304 ? nullptr : r.body;
  c.body_off = 0;
  c.close_after = r.close;
  c.entry.status = r.status;
  c.entry.bytes = 0;
  c.state = State::kWriting;
  if (head_only) r.trickle = false;
  WriteMore(c);
}

void Loop::WriteMore(Conn& c) {
  if (c.state != State::kWriting) return SetOut(c, false);
  while (true) {
    iovec iov[2];
    int n = 0;
    if (c.head_off < c.head.size()) {
      iov[n++] = {c.head.data() + c.head_off, c.head.size() - c.head_off};
    }
    if (c.body && c.body_off < c.body->size()) {
      iov[n++] = {const_cast<char*>(c.body->data()) + c.body_off, c.body->size() - c.body_off};
    }
    if (n == 0) break;
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = n;
    // The response's end in the log is the last write that handed bytes to the kernel (as
    // for a trickle): a write that failed because the client had closed — it truncated a
    // large body — sent nothing, and a loaded machine may run it well after the close.
    const int64_t before_send = NowMicros();
    ssize_t w = sendmsg(c.fd, &msg, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return SetOut(c, true);
      return Close(c);
    }
    c.last_send_us = before_send;
    size_t left = static_cast<size_t>(w);
    size_t from_head = std::min(left, c.head.size() - c.head_off);
    c.head_off += from_head;
    left -= from_head;
    c.body_off += left;
    c.entry.bytes += left;
  }
  SetOut(c, false);
  if (c.pending.trickle) {
    c.state = State::kTrickling;
    timers_.emplace(MonoMicros() + kTrickleIntervalMs * 1000, std::make_pair(c.fd, c.id));
    return;
  }
  Finished(c);
}

void Loop::Finished(Conn& c) {
  c.entry.end_us = c.last_send_us > 0 ? c.last_send_us : NowMicros();
  server_->Log(c.entry);
  c.entry_open = false;
  c.body.reset();
  c.pending = Response();
  if (c.close_after || c.peer_closed) return Close(c);
  c.state = State::kReading;
  if (!c.in.empty()) TryParse(c);
}

// Whether the client has shut its side (its FIN has arrived), whatever it left unread.
bool PeerClosed(int fd) {
  pollfd p{.fd = fd, .events = POLLRDHUP, .revents = 0};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

void Loop::OnTimer(int fd, uint64_t id) {
  auto it = conns_.find(fd);
  if (it == conns_.end() || it->second.id != id) return;
  Conn& c = it->second;
  if (c.state == State::kWaiting) return StartResponse(c);
  if (c.state != State::kTrickling) return;
  char byte = '.';
  // Stamped before the check: a byte sent after the client closed (a loaded machine can run
  // this timer after the client's FIN, before the loop reads it) would still succeed, and
  // logging it would put the response's end after the client had ended the request. The
  // client closed before the stamp if its FIN is there now; then the last byte it got ends it.
  int64_t before_send = NowMicros();
  if (PeerClosed(c.fd)) return Close(c);
  ssize_t w = send(c.fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (w == 1) c.last_send_us = before_send;
  if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return Close(c);
  if (w == 1) c.entry.bytes += 1;
  timers_.emplace(MonoMicros() + kTrickleIntervalMs * 1000, std::make_pair(c.fd, c.id));
}

void Loop::Close(Conn& c) {
  if (c.entry_open) {
    c.entry.end_us = c.last_send_us > 0 ? c.last_send_us : NowMicros();
    if (c.entry.status == 0) c.entry.status = c.pending.status;  // closed before headers
    server_->Log(c.entry);
  }
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  close(c.fd);
  conns_.erase(c.fd);
}

void Server::CloseListeners() {
  for (int fd : listen_fds_) close(fd);
  listen_fds_.clear();
  addresses_.clear();
}

Status Server::Listen(uint32_t first, int count, uint16_t port, bool* retry) {
  *retry = false;
  for (int i = 0; i < count; ++i) {
    const uint32_t ip = first + static_cast<uint32_t>(i);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(ip);
    addr.sin_port = htons(port);
    const std::string where = AddressText(ip, port);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      const int err = errno;
      CloseListeners();
      return Status::IOError(std::string("socket: ") + std::strerror(err));
    }
    listen_fds_.push_back(fd);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    // Receive times for the connections' bytes (Loop::RequestStart): set on the listener, so
    // that an accepted socket has it for the bytes that came before accept(2) returned.
    EnableReceiveTime(fd);
    const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    if (!bound || listen(fd, 4096) != 0) {
      const int err = errno;
      CloseListeners();
      // The first address picked the port; a later one finding it taken may try another.
      *retry = i > 0 && err == EADDRINUSE;
      return Status::IOError((bound ? "listen " : "bind ") + where + ": " + std::strerror(err));
    }
    if (i == 0) {
      socklen_t len = sizeof(addr);
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
      port = ntohs(addr.sin_port);
    }
    addresses_.push_back(AddressText(ip, port));
  }
  port_ = port;
  return Status::Ok();
}

Status Server::Init() {
  sockaddr_in addr;
  std::string host;
  Status s = ParseListen(options_.listen, &addr, &host);
  if (!s.ok()) return s;
  const int count = options_.addresses;
  if (count < 1 || count > kMaxAddresses) {
    return Status::InvalidArgument("addresses: " + std::to_string(count) + " is not in 1.." +
                                   std::to_string(kMaxAddresses));
  }
  const uint32_t first = ntohl(addr.sin_addr.s_addr);
  // 127.0.0.0/8 is loopback; its last address (the broadcast one) is left out.
  if (count > 1 && ((first >> 24) != 127 || uint64_t{first} + count - 1 > 0x7FFFFFFEu)) {
    return Status::InvalidArgument("--listen " + options_.listen + " with " +
                                   std::to_string(count) +
                                   " addresses: they must all lie within 127.0.0.0/8 "
                                   "(127.0.0.0 ... 127.255.255.254)");
  }
  const uint16_t port = ntohs(addr.sin_port);
  bool retry = false;
  for (int attempt = 0; attempt < kBindAttempts; ++attempt) {
    s = Listen(first, count, port, &retry);
    if (s.ok() || port != 0 || !retry) break;
  }
  if (!s.ok()) return s;
  if (!options_.log_path.empty()) {
    auto log = RequestLog::Open(options_.log_path);
    if (!log.ok()) return log.status();
    log_ = std::move(log.value());
  }
  int threads = std::max(1, std::min(options_.threads, 64));
  for (int i = 0; i < threads; ++i) {
    loops_.push_back(std::make_unique<Loop>(this, listen_fds_));
    if (!loops_.back()->ok()) return Status::IOError("epoll/eventfd setup failed");
  }
  for (auto& loop : loops_) threads_.emplace_back([l = loop.get()] { l->Run(); });
  return Status::Ok();
}

void Server::Stop() {
  MutexLock lock(&stop_mu_);
  if (stopped_) return;
  stopped_ = true;
  for (auto& loop : loops_) loop->Wake();
  for (auto& t : threads_) t.join();
  loops_.clear();  // closes connections, logging unfinished responses
  if (log_) log_->Close();
}

}  // namespace

Result<std::unique_ptr<TestWeb>> TestWeb::Start(const TestWebOptions& options) {
  auto server = std::make_unique<Server>(options);
  Status s = server->Init();
  if (!s.ok()) return s;
  return std::unique_ptr<TestWeb>(std::move(server));
}

}  // namespace harvest::testweb
