// The TLS and HTTP/2 side of the event loop (loop.h): telling TLS from plain HTTP by the first
// byte, the non-blocking handshake, HTTP/1.1 through TLS and the h2 sessions' I/O and timers.
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>

#include "base/receive_time.h"
#include "testweb/loop.h"

namespace harvest::testweb {

namespace {

// The first byte of a TLS connection: a handshake record (RFC 8446 §5.1, ContentType 22).
constexpr unsigned char kTlsHandshakeRecord = 0x16;
// Plaintext encrypted per step: bounds what waits in memory for a slow client (a 12 MiB body
// is not encrypted ahead of the socket) while keeping records full.
constexpr size_t kTlsChunkBytes = 64 * 1024;

}  // namespace

bool Loop::Sniff(Conn& c) {
  unsigned char first = 0;
  const ssize_t n = recv(c.fd, &first, 1, MSG_PEEK);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  if (n <= 0) {
    Close(c);
    return false;
  }
  c.sniff = false;
  if (first != kTlsHandshakeRecord) return true;  // plain HTTP, as without TLS
  c.tls = std::make_unique<TlsChannel>(shared_.tls->NewSsl());
  if (!c.tls->ok()) {
    Close(c);
    return false;
  }
  const int64_t timeout_us =
      std::chrono::duration_cast<std::chrono::microseconds>(shared_.handshake_timeout).count();
  timers_.emplace(c.accepted_us + timeout_us, std::make_pair(c.fd, c.id | kHandshakeTimer));
  return true;
}

void Loop::OnTlsReadable(Conn& c) {
  char buf[16384];
  bool eof = false;
  while (!eof) {
    int64_t rx_us = 0;
    const ssize_t n = ReceiveWithTime(c.fd, buf, sizeof(buf), &rx_us);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      eof = true;
      break;
    }
    c.tls->PutRaw(buf, static_cast<size_t>(n), rx_us);
    std::string plain;
    int64_t plain_rx_us = 0;
    const TlsChannel::State state = c.tls->Pump(&plain, &plain_rx_us);
    // Garbage, a broken handshake or record: nothing was requested, nothing is logged
    // (unless a response was under way).
    if (state == TlsChannel::State::kFailed) return Close(c);
    eof = state == TlsChannel::State::kClosed;
    if (state == TlsChannel::State::kHandshaking) {
      const Wrote wrote = SendRaw(c);
      if (wrote == Wrote::kClosed) return;
      if (wrote == Wrote::kBlocked) SetOut(c, true);
      continue;
    }
    if (!c.h2 && c.tls->h2()) {
      LogEntry base;
      base.conn = c.id;
      base.ip = c.ip;
      base.https = true;
      base.h2 = true;
      c.h2 = std::make_unique<H2Session>(this, base, shared_.hsts);
      if (!c.h2->ok()) return Close(c);
    }
    if (c.h2) {
      const bool ok = plain.empty() || c.h2->Receive(plain, plain_rx_us);
      if (!FlushH2(c)) return;
      if (!ok) return Close(c);  // after the GOAWAY nghttp2 queued
      continue;
    }
    if (c.in.size() + plain.size() > kMaxPendingInput) return Close(c);
    if (!plain.empty() && (c.in.empty() || c.head_rx_us == 0)) c.head_rx_us = plain_rx_us;
    c.in += plain;
    // Bytes the TLS layer owes the client (session tickets) go out now.
    const Wrote wrote = SendRaw(c);
    if (wrote == Wrote::kClosed) return;
    if (wrote == Wrote::kBlocked) SetOut(c, true);
  }
  if (eof) {
    // As on the plain path: a client that half-closes still gets the response in progress.
    if (c.h2 || c.state != State::kWriting) return Close(c);
    c.peer_closed = true;
    epoll_event ev{};
    ev.events = c.want_out ? uint32_t{EPOLLOUT} : 0u;
    ev.data.fd = c.fd;
    epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  }
  if (!c.h2 && c.state == State::kReading) TryParse(c);
}

Loop::Wrote Loop::SendRaw(Conn& c, int64_t before_send_us) {
  for (;;) {
    const std::string_view out = c.tls->raw_out();
    if (out.empty()) return Wrote::kAll;
    const int64_t before_send = before_send_us > 0 ? before_send_us : NowMicros();
    before_send_us = 0;
    const ssize_t w = send(c.fd, out.data(), out.size(), MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Wrote::kBlocked;
      Close(c);
      return Wrote::kClosed;
    }
    c.last_send_us = before_send;
    c.tls->Sent(static_cast<size_t>(w));
    if (c.h2) c.h2->Sent(c.tls->sent(), before_send);
  }
}

Loop::Wrote Loop::WriteTls(Conn& c) {
  for (;;) {
    const Wrote wrote = SendRaw(c);
    if (wrote != Wrote::kAll) return wrote;
    // Every body byte encrypted so far is with the kernel.
    c.entry.bytes += c.tls_body_pending;
    c.tls_body_pending = 0;
    std::string chunk;
    if (c.head_off < c.head.size()) {
      chunk = c.head.substr(c.head_off);
      c.head_off = c.head.size();
    }
    const size_t body_left = c.body ? c.body->size() - c.body_off : 0;
    const size_t take = std::min(body_left, kTlsChunkBytes);
    if (chunk.empty() && take == 0) return Wrote::kAll;
    if (take > 0) chunk.append(c.body->data() + c.body_off, take);
    c.body_off += take;
    c.tls_body_pending = take;
    c.tls->Write(chunk);
    if (c.tls->state() == TlsChannel::State::kFailed) {
      Close(c);
      return Wrote::kClosed;
    }
  }
}

void Loop::TrickleTls(Conn& c) {
  // As on the plain path: stamped before the check for the client's FIN.
  const int64_t before_send = NowMicros();
  if (PeerClosed(c.fd)) return Close(c);
  // A byte still waiting for the socket goes first; no new one is added behind it.
  if (c.tls->raw_out().empty()) {
    c.tls->Write(".");
    c.tls_body_pending = 1;
  }
  const Wrote wrote = SendRaw(c, before_send);
  if (wrote == Wrote::kClosed) return;
  if (wrote == Wrote::kAll) {
    c.entry.bytes += c.tls_body_pending;
    c.tls_body_pending = 0;
  }
  AddTimer(c, SteadyMicros() + kTrickleIntervalMs * 1000);
}

void Loop::OnTlsTimer(Conn& c, bool handshake) {
  if (handshake) {
    // A client that never finishes its handshake does not keep its connection.
    if (c.tls->state() == TlsChannel::State::kHandshaking) Close(c);
    return;
  }
  const int64_t now = SteadyMicros();
  if (c.h2_timer_us <= now) c.h2_timer_us = 0;
  // A trickle stops when the client has gone, as on the plain path.
  if (PeerClosed(c.fd)) return Close(c);
  c.h2->OnTimer(now);
  FlushH2(c);
}

bool Loop::FlushH2(Conn& c) {
  for (;;) {
    const Wrote wrote = SendRaw(c);
    if (wrote == Wrote::kClosed) return false;
    if (wrote == Wrote::kBlocked) {
      SetOut(c, true);
      break;
    }
    std::string frames = c.h2->Produce(kTlsChunkBytes);
    if (frames.empty()) {
      SetOut(c, false);
      if (c.h2->Finished()) {
        Close(c);
        return false;
      }
      break;
    }
    c.h2->Produced(c.tls->Write(frames));
    if (c.tls->state() == TlsChannel::State::kFailed) {
      Close(c);
      return false;
    }
  }
  const int64_t next = c.h2->NextDeadline();
  if (next > 0 && (c.h2_timer_us == 0 || next < c.h2_timer_us)) {
    AddTimer(c, next);
    c.h2_timer_us = next;
  }
  return true;
}

}  // namespace harvest::testweb
