// RawHttpServer: a tiny HTTP/1.1 server on 127.0.0.1 for the fetcher's tests and benchmark.
//
// It writes exactly the bytes a handler returns, so tests control every byte of the response
// head (chunked bodies, oversized heads, raw gzip, servers that never answer). One thread per
// connection; keep-alive unless the reply says close. Not for production use.
//
// Thread-safety: the handler runs concurrently on connection threads and must be thread-safe.
// The accessors may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace harvest::fetch::testing {

struct RawRequest {
  std::string head;    // request line .. CRLF CRLF, as received
  std::string method;  // "GET"
  std::string target;  // "/path?q"
  int connection = 0;  // 1-based index of the connection it arrived on
  // Value of header `name` (case-insensitive, first wins).
  std::optional<std::string> Header(std::string_view name) const;
};

struct RawReply {
  std::string bytes;                   // written as-is
  bool close = false;                  // close the connection after writing
  bool hang = false;                   // write `bytes`, then stall until the client leaves/Stop()
  std::chrono::milliseconds delay{0};  // wait before writing
  // Over TLS: bytes written on the socket unencrypted after `bytes` (a broken TLS stream).
  std::string raw_after;
};

// "HTTP/1.1 <status> <reason>\r\n" + headers + "Content-Length" (unless a header named
// Transfer-Encoding or Content-Length is given) + "\r\n" + body.
std::string MakeResponse(int status, std::string_view reason,
                         const std::vector<std::pair<std::string, std::string>>& headers,
                         std::string_view body);

class RawHttpServer {
 public:
  using Handler = std::function<RawReply(const RawRequest&)>;
  explicit RawHttpServer(Handler handler) : handler_(std::move(handler)) {}
  ~RawHttpServer() { Stop(); }
  RawHttpServer(const RawHttpServer&) = delete;
  RawHttpServer& operator=(const RawHttpServer&) = delete;

  // Serves https with `ctx` (before Start(); the caller keeps it alive until Stop()):
  // each connection does its TLS handshake first, then reads and writes over TLS. OpenSSL
  // writes with write(2): SIGPIPE is ignored from then on, for the whole (test) process.
  void UseTls(SSL_CTX* ctx);
  // Listens on 127.0.0.1 at an ephemeral port; false on failure.
  bool Start();
  void Stop();
  int port() const { return port_; }
  int connections() const { return connections_.load(); }
  // TLS: handshakes completed, and how many of them resumed a session.
  int handshakes() const { return handshakes_.load(); }
  int resumed() const { return resumed_.load(); }
  std::vector<RawRequest> requests() const;

 private:
  void AcceptLoop();
  void Serve(int fd, int index);
  bool WaitReadable(int fd) const;  // false when stopping

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> handshakes_{0};
  std::atomic<int> resumed_{0};
  SSL_CTX* tls_ctx_ = nullptr;
  std::thread acceptor_;
  mutable Mutex mu_;
  std::vector<std::thread> workers_ GUARDED_BY(mu_);
  std::vector<int> fds_ GUARDED_BY(mu_);  // open connection sockets
  std::vector<RawRequest> log_ GUARDED_BY(mu_);
};

}  // namespace harvest::fetch::testing
