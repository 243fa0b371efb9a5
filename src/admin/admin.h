// The admin HTTP API server (docs/admin-api.md; docs/architecture.md §3, §4).
//
// Serves the JSON API, GET /metrics and the dashboard's static files over HTTP/1.1
// (cpp-httplib) on its own threads, and calls an admin::Backend (backend.h) for everything
// that touches the crawl. Requests are parsed and validated here (requests.h): bad input is
// answered 400 without calling the Backend.
//
// Security: a non-loopback listen address requires a bearer token; with a token every
// request needs `Authorization: Bearer TOKEN`. Without a token the server accepts only
// requests whose Host header names a loopback address (DNS rebinding), and it refuses any
// request whose Origin header is not the server's own origin (cross-site requests from a
// browser). Request bodies are limited to `max_body_bytes` (413).
//
// Thread-safety: Start, address, Stop and the destructor are called from one owning thread.
// The Backend is called from the server's threads, several at once.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "admin/backend.h"
#include "base/status.h"

namespace harvest::admin {

// A dashboard file. `body` must outlive the Server (typically an embedded array).
struct StaticAsset {
  std::string content_type;
  std::string_view body;
};

struct ServerOptions {
  // host:port; IPv6 as [::1]:port. Port 0 picks a free port (see Server::address()).
  std::string listen = "127.0.0.1:0";
  std::string token;  // empty: none (allowed only on a loopback address)
  size_t max_body_bytes = 1 << 20;
  // GET / and any GET path not in the API: the dashboard file for that path ("/" for the
  // index), or nullopt (404). May be empty (no dashboard).
  std::function<std::optional<StaticAsset>(std::string_view path)> assets;
};

class Server {
 public:
  // Binds and starts serving. InvalidArgument for a malformed address, or a non-loopback
  // address without a token; IOError when the address cannot be bound. `backend` must
  // outlive the Server.
  static Result<std::unique_ptr<Server>> Start(ServerOptions options, Backend* backend);

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server();  // Stop()

  // The address actually bound, "127.0.0.1:PORT" (or "[::1]:PORT").
  std::string address() const;

  // Stops accepting, waits for requests in progress to finish. Idempotent.
  void Stop();

  class Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Parses "host:port" / "[v6]:port" into host (without brackets) and port (0..65535).
Status ParseListenAddress(std::string_view listen, std::string* host, int* port);
// 127.0.0.0/8, ::1, "localhost".
bool IsLoopbackHost(std::string_view host);

}  // namespace harvest::admin
