// Loop: one epoll event loop of the test web's server. It owns its connections and timers (no
// locks on them); loops share only the listening sockets (one per address, each in every loop
// with EPOLLEXCLUSIVE) and LoopShared. A connection is plain HTTP/1.1 (the original path, kept
// as it was), or, with TLS on, HTTPS when its first byte is a TLS handshake record (0x16):
// then HTTP/1.1 or HTTP/2 (H2Session) by ALPN, through a TlsChannel (loop_tls.cc).
//
// Thread-safety: event-loop-only after Run() starts, but for Wake().
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "testweb/h2_session.h"
#include "testweb/internal.h"
#include "testweb/request_log.h"
#include "testweb/tls_channel.h"

namespace harvest::testweb {

// Input buffered while a response is in progress; beyond it the client is misbehaving.
inline constexpr size_t kMaxPendingInput = 1024 * 1024;

// What the loops share, owned by the server: immutable while they run, or internally locked.
struct LoopShared {
  const Site* site = nullptr;
  EpochControl* epoch = nullptr;
  const Clock* clock = nullptr;
  RequestLog* log = nullptr;  // null: no request log
  std::atomic<uint64_t>* next_conn_id = nullptr;
  const TlsContext* tls = nullptr;  // null: plain HTTP only
  bool http_redirect = false;       // plain-HTTP requests get 301 to https://
  bool hsts = false;                // HTTPS responses carry Strict-Transport-Security
  std::chrono::milliseconds handshake_timeout{10000};
};

class Loop final : public H2Session::Delegate {
 public:
  Loop(const LoopShared& shared, const std::vector<int>& listen_fds);
  ~Loop() override;
  bool ok() const { return epoll_fd_ >= 0 && wake_fd_ >= 0; }
  void Run();
  void Wake();

  // H2Session::Delegate.
  Response Respond(const Request& request, LogEntry* entry) override;
  int64_t RequestStart(int64_t rx_us) override;
  int64_t WallMicros() override { return NowMicros(); }
  std::string DateHeader() override;
  void Log(const LogEntry& entry) override {
    if (shared_.log != nullptr) shared_.log->Append(entry);
  }

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
    // ---- TLS (LoopShared::tls) ----
    bool sniff = false;               // the first byte is still to decide TLS or plain
    int64_t accepted_us = 0;          // steady time of accept (the handshake's deadline)
    std::unique_ptr<TlsChannel> tls;  // null: plain HTTP
    std::unique_ptr<H2Session> h2;    // ALPN chose h2
    uint64_t tls_body_pending = 0;    // body bytes encrypted but not all sent yet
    int64_t h2_timer_us = 0;          // steady time of the h2 timer scheduled last
  };
  // Marks a timer's connection id as the TLS handshake's deadline (ids never reach it).
  static constexpr uint64_t kHandshakeTimer = uint64_t{1} << 63;
  // How a write attempt ended.
  enum class Wrote { kAll, kBlocked, kClosed };

  void Accept(int listen_fd);
  void OnReadable(Conn& c);
  void TryParse(Conn& c);
  void StartResponse(Conn& c);
  void WriteMore(Conn& c);
  Wrote WritePlain(Conn& c);
  void Finished(Conn& c);
  void Close(Conn& c);
  void SetOut(Conn& c, bool want);
  void OnTimer(int fd, uint64_t id);
  void AddTimer(const Conn& c, int64_t steady_us) {
    timers_.emplace(steady_us, std::make_pair(c.fd, c.id));
  }
  int64_t NowMicros() const { return shared_.clock->WallMicros(); }
  // The logged start of the request now parsed: its bytes' kernel receive time, which is on
  // the real wall clock, so only when the server runs on that; never later than now.
  int64_t RequestStart(const Conn& c) { return RequestStart(c.head_rx_us); }
  // A new log entry for the request now read on `c` (its start, address, connection, scheme).
  void OpenEntry(Conn& c);

  // ---- TLS and HTTP/2 (loop_tls.cc) ----
  // Peeks at the first byte: a TLS record makes the connection TLS. False when it closed or
  // nothing has come yet.
  bool Sniff(Conn& c);
  void OnTlsReadable(Conn& c);
  // Encrypts and sends the HTTP/1.1 response in progress.
  Wrote WriteTls(Conn& c);
  // Sends the TLS channel's raw output; keeps last_send_us.
  // `before_send_us` (0: taken here) stamps the first send.
  Wrote SendRaw(Conn& c, int64_t before_send_us = 0);
  // Moves h2 frames through TLS to the socket, schedules the session's timer, closes a
  // finished session.
  // False when it closed the connection.
  bool FlushH2(Conn& c);
  void OnTlsTimer(Conn& c, bool handshake);
  void TrickleTls(Conn& c);

  LoopShared shared_;
  // listening_[fd] is true for the listening sockets (connection fds are never those).
  std::vector<bool> listening_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::unordered_map<int, Conn> conns_;
  std::multimap<int64_t, std::pair<int, uint64_t>> timers_;  // steady us -> (fd, conn id)
  int control_host_ = -1;  // index of control.test (never redirected)
  time_t date_second_ = 0;
  std::string date_;
};

}  // namespace harvest::testweb
