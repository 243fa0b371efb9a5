// TlsClientContext: the OpenSSL client side of Http1Client's https connections. Private to
// src/fetch.
//
// One SSL_CTX per fetcher: TLS 1.2 and 1.3, ALPN offering only "http/1.1" (the own client
// speaks HTTP/1.1; HTTP/2 stays with libcurl), the CA store built ONCE from the same bundle
// CurlFetcher verifies against (CaBundle: the system bundle plus FetchOptions::ca_file), peer
// and host name verified unless FetchOptions::verify_tls is false.
//
// A connection's SSL reads and writes the socket itself through a BIO of ours: reads take the
// kernel's receive time with them (ReceiveWithTime, base/receive_time.h), so a host's delay
// still counts from the response's last byte; writes use send(2) with MSG_NOSIGNAL. Read-ahead
// is on with a 64 KiB record buffer, so a typical page arrives in one recv(2) as over plain
// http; the buffers are kept while a transfer runs and freed when the connection goes idle.
//
// Sessions: the last session per key (the connection's pool key: URL host, address, port) is
// kept, at most kMaxSessions (least recently used dropped), and offered on the key's next
// connection (TLS 1.3 tickets arrive after the handshake: SSL_CTX_sess_set_new_cb, the
// internal cache off).
//
// Thread-safety: the fetcher's loop thread only.
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "base/status.h"
#include "fetch/fetch.h"

namespace harvest::fetch::internal {

class TlsClientContext;

// One connection's TLS state. The socket stays the caller's (it closes it after this).
class TlsConnection {
 public:
  ~TlsConnection();  // frees the SSL; Close() first for an orderly end
  TlsConnection(const TlsConnection&) = delete;
  TlsConnection& operator=(const TlsConnection&) = delete;

  SSL* ssl() const { return ssl_; }
  // Kernel receive time (µs since the epoch) of the latest bytes read from the socket.
  int64_t rx_wall_us() const { return rx_wall_us_; }
  // The socket had no more bytes at the last read (it returned fewer than asked for, or
  // none): with nothing buffered in the SSL (SSL_has_pending) a further read would block.
  bool drained() const { return drained_; }
  // Frees the record buffers (an idle connection holds none; the next read or write
  // allocates them again).
  void ReleaseBuffers();
  // Marks the connection broken (a fatal TLS error): Close() then sends nothing.
  void set_failed() { failed_ = true; }
  // Sends close_notify if the connection is in order (never blocks: a full socket buffer
  // drops it) and marks it shut down, so its session stays resumable.
  void Close();
  // Why a handshake step failed (SSL_connect returned `ret`), as curl words it where it
  // can: "SSL certificate problem: <X509 verify error>" for a rejected certificate or host
  // name, else OpenSSL's error or the socket's. Clears the thread's OpenSSL error queue.
  std::string HandshakeError(int ret);
  // Why a read or write failed after the handshake (SSL_get_error `ssl_error`). Clears the
  // thread's OpenSSL error queue.
  std::string IoError(int ssl_error);
  // The handshake resumed an earlier session.
  bool resumed() const { return SSL_session_reused(ssl_) == 1; }

 private:
  friend class TlsClientContext;
  TlsConnection() = default;
  static int BioRead(BIO* bio, char* data, size_t size, size_t* read);
  static int BioWrite(BIO* bio, const char* data, size_t size, size_t* written);
  static long BioCtrl(BIO* bio, int cmd, long num, void* ptr);

  TlsClientContext* owner_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  std::string session_key_;
  std::string peer_;  // "host:port" for error texts
  int64_t rx_wall_us_ = 0;
  int sys_errno_ = 0;  // errno of the last failed socket call
  bool eof_ = false;
  bool drained_ = false;
  bool failed_ = false;
  bool verify_ = true;
};

class TlsClientContext {
 public:
  // At most this many sessions are kept (one per key). A client session holds the peer's
  // certificate: a few KiB each.
  static constexpr size_t kMaxSessions = 4096;

  // The context for `options` (verify_tls, ca_file). An unreadable ca_file, or one without a
  // certificate, is an error naming it (as CurlFetcher's setup reports it).
  static Result<std::unique_ptr<TlsClientContext>> Make(const FetchOptions& options);
  ~TlsClientContext();
  TlsClientContext(const TlsClientContext&) = delete;
  TlsClientContext& operator=(const TlsClientContext&) = delete;

  // A client connection on the connected socket `fd` to `host` (the URL's host: a name, sent
  // as SNI and checked against the certificate, or an IP literal without brackets, checked
  // only), offering the session kept under `session_key`. `peer` names the server in error
  // texts. nullptr when OpenSSL cannot allocate one.
  std::unique_ptr<TlsConnection> Open(int fd, std::string_view host, std::string session_key,
                                      std::string peer);

  size_t sessions() const { return sessions_.size(); }

 private:
  TlsClientContext() = default;
  static int OnNewSession(SSL* ssl, SSL_SESSION* session);
  void KeepSession(const std::string& key, SSL_SESSION* session);

  SSL_CTX* ctx_ = nullptr;
  BIO_METHOD* bio_method_ = nullptr;
  bool verify_ = true;
  // Sessions, least recently used first, and by key.
  std::list<std::pair<std::string, SSL_SESSION*>> sessions_;
  std::unordered_map<std::string, std::list<std::pair<std::string, SSL_SESSION*>>::iterator>
      session_by_key_;
};

}  // namespace harvest::fetch::internal
