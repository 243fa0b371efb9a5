// H2Session: HTTP/2 (RFC 9113) on one TLS connection of the test web, over nghttp2's server
// session. The session only turns bytes into requests and responses into bytes
// (nghttp2_session_mem_recv / mem_send); the event loop moves the bytes through TLS and the
// socket and runs the timers, so h2 keeps the HTTP/1.1 path's timing: a stream's start is the
// receive time of the bytes that carried its HEADERS, its end the time its last bytes were
// handed to the kernel.
//
// Per stream, as HTTP/1.1 does per request: Handle() once the request is complete
// (END_STREAM), a delayed response after its delay, a trickled body one byte every
// kTrickleIntervalMs (the data provider defers in between), HEAD and 304 without a body, and a
// response that closes its connection ends the session with GOAWAY. Every stream with a
// request is logged once, by its end or by the connection's close.
//
// Thread-safety: none; owned by one event loop.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "testweb/internal.h"
#include "testweb/request_log.h"

namespace harvest::testweb {

class H2Session {
 public:
  // What a session needs from the event loop that owns its connection.
  class Delegate {
   public:
    virtual ~Delegate() = default;
    // The response to `request` (Handle() on the server's site and epoch), and the log
    // fields that follow from both filled in `entry`.
    virtual Response Respond(const Request& request, LogEntry* entry) = 0;
    // The logged start of a request whose bytes came at kernel time `rx_us` (0: unknown).
    virtual int64_t RequestStart(int64_t rx_us) = 0;
    virtual int64_t WallMicros() = 0;
    virtual std::string DateHeader() = 0;
    virtual void Log(const LogEntry& entry) = 0;
  };

  // `base` carries the connection's log fields (conn, ip, scheme, proto). With `hsts` every
  // response carries Strict-Transport-Security. Queues the server's SETTINGS.
  H2Session(Delegate* delegate, const LogEntry& base, bool hsts);
  ~H2Session();
  H2Session(const H2Session&) = delete;
  H2Session& operator=(const H2Session&) = delete;
  bool ok() const { return session_ != nullptr; }

  // Plaintext from the client, with the receive time of the raw bytes behind it. False on a
  // protocol error: send what Produce() still gives (a GOAWAY), then close.
  bool Receive(std::string_view plain, int64_t rx_us);
  // Frames to send, about `limit` bytes at most (a frame is never split); empty when none.
  std::string Produce(size_t limit);
  // The bytes Produce() last returned end at raw output offset `raw_mark`.
  void Produced(uint64_t raw_mark);
  // The raw output up to `raw_sent` is with the kernel; `before_send_us` was taken just
  // before the send that handed it over. Logs the streams whose last bytes that was.
  void Sent(uint64_t raw_sent, int64_t before_send_us);

  // Steady-clock µs (SteadyMicros) of the next delayed response or trickled byte; 0: none.
  int64_t NextDeadline() const;
  // Runs what is due at steady time `now_us`.
  void OnTimer(int64_t now_us);
  // Both sides are done (GOAWAY exchanged or sent after a closing response): close.
  bool Finished() const;
  // The connection closes: logs every stream that has a request and no log line yet.
  void Abort();

 private:
  struct Stream {
    Request request;
    LogEntry entry;
    bool body_too_large = false;
    bool requested = false;  // END_STREAM received, Handle() ran
    bool submitted = false;  // the response is queued in nghttp2
    Response response;
    int64_t ready_at_us = 0;  // steady time a delayed response is due
    size_t body_off = 0;
    int trickle_credit = 0;       // trickled bytes due but not yet produced
    int64_t next_trickle_us = 0;  // steady time of the next trickled byte
    bool deferred = false;        // the data provider returned NGHTTP2_ERR_DEFERRED
    bool ended = false;           // its last frame (END_STREAM) is produced
    uint64_t last_mark = 0;       // raw offset of its latest bytes
    uint64_t acked = 0;           // raw offset up to which its bytes are sent
    int64_t last_send_us = 0;
  };

  void OnRequest(int32_t id, Stream& s);
  void Submit(int32_t id, Stream& s);
  void Finish(int32_t id, Stream& s, int64_t end_us);
  void Touch(int32_t id) { touched_.push_back(id); }

  static int OnBeginHeaders(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                      size_t name_len, const uint8_t* value, size_t value_len, uint8_t flags,
                      void* self);
  static int OnDataChunk(nghttp2_session*, uint8_t flags, int32_t id, const uint8_t* data,
                         size_t len, void* self);
  static int OnFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int BeforeFrameSend(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int OnStreamClose(nghttp2_session*, int32_t id, uint32_t error_code, void* self);
  static ssize_t ReadBody(nghttp2_session*, int32_t id, uint8_t* buf, size_t length,
                          uint32_t* data_flags, nghttp2_data_source* source, void* self);

  Delegate* delegate_;
  LogEntry base_;
  bool hsts_;
  nghttp2_session* session_ = nullptr;
  int64_t rx_us_ = 0;  // receive time of the bytes being parsed
  std::map<int32_t, Stream> streams_;
  std::vector<int32_t> touched_;  // streams with bytes in the current Produce() output
  bool closing_ = false;          // a response asked for the connection's close
};

}  // namespace harvest::testweb
