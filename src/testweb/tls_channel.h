// TlsChannel: one server-side TLS connection driven by an event loop through memory BIOs.
// The loop reads the socket itself (so it keeps the kernel's receive time of every byte) and
// hands the raw bytes in; it sends the raw bytes out itself (so it knows when the last byte of
// a response reached the kernel). Between the two, OpenSSL only transforms bytes: the
// handshake never blocks and never touches the socket.
//
// Marks: every byte written has an offset in the raw output stream; Write() returns the offset
// its plaintext's records end at, and sent() counts the raw bytes handed to the kernel, so a
// response has reached the kernel when sent() >= its mark.
//
// Thread-safety: none; owned by one event loop.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "testweb/tls.h"

namespace harvest::testweb {

class TlsChannel {
 public:
  enum class State {
    kHandshaking,
    kOpen,
    kClosed,  // the client sent close_notify
    kFailed,  // not TLS, a broken handshake or record: close the connection
  };

  // `ssl` from TlsContext::NewSsl(); ok() is false when the BIOs cannot be made.
  explicit TlsChannel(OpenSslPtr<SSL> ssl);
  bool ok() const { return ssl_ != nullptr; }

  // Raw bytes read from the socket and their kernel receive time (0: unknown).
  void PutRaw(const char* data, size_t size, int64_t rx_us);
  // Advances the handshake and decrypts what it can, appending the plaintext to *plain;
  // *rx_us is the receive time of the earliest raw bytes not consumed before this call (an
  // early start, the strict side for the audit), 0 when unknown. Any output the handshake
  // needs is queued in raw_out().
  State Pump(std::string* plain, int64_t* rx_us);
  State state() const { return state_; }
  // ALPN chose HTTP/2 (valid once the handshake is done).
  bool h2() const;

  // Encrypts `plain` into raw_out(); returns the raw offset its end reaches.
  uint64_t Write(std::string_view plain);
  // Queues a close_notify (after an orderly last response).
  void Shutdown();

  // Raw bytes not yet sent, and how many of them the kernel took.
  std::string_view raw_out() const { return std::string_view(out_).substr(out_off_); }
  void Sent(size_t n);
  uint64_t sent() const { return sent_; }

 private:
  void DrainOutput();

  OpenSslPtr<SSL> ssl_;
  BIO* rbio_ = nullptr;  // owned by ssl_
  BIO* wbio_ = nullptr;  // owned by ssl_
  State state_ = State::kHandshaking;
  std::string out_;
  size_t out_off_ = 0;
  uint64_t produced_ = 0;  // raw bytes ever queued
  uint64_t sent_ = 0;      // raw bytes ever sent
  int64_t pending_rx_us_ = 0;
};

}  // namespace harvest::testweb
