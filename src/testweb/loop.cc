// The event loop of the test web's server (loop.h): accept, read, parse, respond, timers.
#include "testweb/loop.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/receive_time.h"

namespace harvest::testweb {

namespace {

// A request head larger than this gets 431 and the connection is closed.
constexpr size_t kMaxHeadBytes = 16 * 1024;

}  // namespace

Loop::Loop(const LoopShared& shared, const std::vector<int>& listen_fds) : shared_(shared) {
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
  control_host_ = shared_.site->FindHost(kControlHost);
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

void Loop::Run() {
  epoll_event events[256];
  while (!stop_) {
    int timeout = -1;
    if (!timers_.empty()) {
      int64_t wait = timers_.begin()->first - SteadyMicros();
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
    int64_t now = SteadyMicros();
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
    c.id = ++*shared_.next_conn_id;
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
    if (shared_.tls != nullptr) {
      c.sniff = true;
      c.accepted_us = SteadyMicros();
    }
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

int64_t Loop::RequestStart(int64_t rx_us) {
  const int64_t now = NowMicros();
  if (rx_us <= 0 || shared_.clock != SystemClock::Default()) return now;
  return std::min(rx_us, now);
}

void Loop::OnReadable(Conn& c) {
  if (c.sniff && !Sniff(c)) return;
  if (c.tls) return OnTlsReadable(c);
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

void Loop::OpenEntry(Conn& c) {
  c.entry = LogEntry();
  c.entry.ip = c.ip;
  c.entry.start_us = RequestStart(c);
  c.entry.conn = c.id;
  c.entry.https = c.tls != nullptr;
  c.entry_open = true;
  c.last_send_us = 0;
}

void Loop::TryParse(Conn& c) {
  size_t end = c.in.find("\r\n\r\n");
  if (end == std::string::npos) {
    if (c.in.size() > kMaxHeadBytes) {
      c.pending = Response();
      c.pending.status = 431;
      c.pending.close = true;
      OpenEntry(c);
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
  // Bytes after this request (pipelined) keep the time of the read that began it: an early
  // start, the strict side for an audit of the gaps.
  OpenEntry(c);
  c.entry.path = req.target;
  c.entry.host = req.host;
  if (!ok || content_length > kMaxBodyBytes) {
    c.pending = Response();
    c.pending.status = ok ? 413 : 400;
    c.pending.close = true;
  } else if (shared_.http_redirect && !c.tls && !req.host.empty() &&
             shared_.site->FindHost(req.host) != control_host_) {
    // --http-redirect upgrades every plain request but the control host's (tests drive the
    // epoch over plain HTTP) and those without a host to redirect to. Not a fetch of the page:
    // no page identity in the log.
    c.pending = HttpsRedirect(req);
    c.pending.close = !keep_alive;
    const Route route = shared_.site->Resolve(req.host, req.target);
    if (route.host >= 0) c.entry.host = shared_.site->hosts()[route.host].name;
    c.entry.kind = route.kind;
    c.entry.disallowed = route.disallowed;
    c.entry.upgrade = true;
  } else {
    c.pending = Respond(req, &c.entry);
    if (!keep_alive) c.pending.close = true;
    if (req.method == "HEAD") {
      c.pending.trickle = false;
      c.pending.head_only = true;
    }
  }
  if (c.pending.delay_ms > 0) {
    c.state = State::kWaiting;
    AddTimer(c, SteadyMicros() + int64_t{c.pending.delay_ms} * 1000);
    return;
  }
  StartResponse(c);
}

Response Loop::Respond(const Request& req, LogEntry* entry) {
  Response r = Handle(*shared_.site, req, shared_.epoch);
  const Route& route = r.route;
  if (route.host >= 0) entry->host = shared_.site->hosts()[route.host].name;
  entry->page = route.page;
  entry->kind = route.kind;
  entry->disallowed = route.disallowed;
  entry->retry_after_s = r.retry_after_s;
  entry->cond = r.conditional;
  entry->inm = req.if_none_match;
  entry->ims = req.if_modified_since;
  return r;
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
  if (c.tls && shared_.hsts) h += "Strict-Transport-Security: max-age=31536000\r\n";
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
  if (c.h2) {
    FlushH2(c);
    return;
  }
  if (c.state != State::kWriting) {
    // A TLS connection may have handshake or trickle bytes left to send.
    const Wrote rest = c.tls ? SendRaw(c) : Wrote::kAll;
    if (rest != Wrote::kClosed) SetOut(c, rest == Wrote::kBlocked);
    return;
  }
  const Wrote wrote = c.tls ? WriteTls(c) : WritePlain(c);
  if (wrote == Wrote::kClosed) return;
  if (wrote == Wrote::kBlocked) return SetOut(c, true);
  SetOut(c, false);
  if (c.pending.trickle) {
    c.state = State::kTrickling;
    AddTimer(c, SteadyMicros() + kTrickleIntervalMs * 1000);
    return;
  }
  Finished(c);
}

Loop::Wrote Loop::WritePlain(Conn& c) {
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
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Wrote::kBlocked;
      Close(c);
      return Wrote::kClosed;
    }
    c.last_send_us = before_send;
    size_t left = static_cast<size_t>(w);
    size_t from_head = std::min(left, c.head.size() - c.head_off);
    c.head_off += from_head;
    left -= from_head;
    c.body_off += left;
    c.entry.bytes += left;
  }
  return Wrote::kAll;
}

void Loop::Finished(Conn& c) {
  c.entry.end_us = c.last_send_us > 0 ? c.last_send_us : NowMicros();
  Log(c.entry);
  c.entry_open = false;
  c.body.reset();
  c.pending = Response();
  if (c.close_after || c.peer_closed) return Close(c);
  c.state = State::kReading;
  if (!c.in.empty()) TryParse(c);
}

bool PeerClosed(int fd) {
  pollfd p{.fd = fd, .events = POLLRDHUP, .revents = 0};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

void Loop::OnTimer(int fd, uint64_t id) {
  const bool handshake = (id & kHandshakeTimer) != 0;
  id &= ~kHandshakeTimer;
  auto it = conns_.find(fd);
  if (it == conns_.end() || it->second.id != id) return;
  Conn& c = it->second;
  if (c.tls && (handshake || c.h2)) return OnTlsTimer(c, handshake);
  if (c.state == State::kWaiting) return StartResponse(c);
  if (c.state != State::kTrickling) return;
  if (c.tls) return TrickleTls(c);
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
  AddTimer(c, SteadyMicros() + kTrickleIntervalMs * 1000);
}

void Loop::Close(Conn& c) {
  if (c.h2) c.h2->Abort();
  if (c.tls && c.tls->state() == TlsChannel::State::kOpen) {
    // A close_notify, best effort: the client learns the end was meant (RFC 8446 §6.1).
    c.tls->Shutdown();
    const std::string_view out = c.tls->raw_out();
    send(c.fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  if (c.entry_open) {
    c.entry.end_us = c.last_send_us > 0 ? c.last_send_us : NowMicros();
    if (c.entry.status == 0) c.entry.status = c.pending.status;  // closed before headers
    Log(c.entry);
  }
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  close(c.fd);
  conns_.erase(c.fd);
}

}  // namespace harvest::testweb
