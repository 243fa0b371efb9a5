#include "fetch/testing/raw_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>

#include "base/ascii.h"

namespace harvest::fetch::testing {
namespace {

// How often blocked threads look at the stop flag.
constexpr int kStopCheckMillis = 20;
// A request head larger than this closes the connection (tests never send one).
constexpr size_t kMaxRequestHead = 1 << 20;

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t w = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (w <= 0) return false;
    data.remove_prefix(static_cast<size_t>(w));
  }
  return true;
}

RawRequest ParseRequest(std::string head, int connection) {
  RawRequest r;
  r.connection = connection;
  const size_t sp1 = head.find(' ');
  const size_t sp2 = head.find(' ', sp1 == std::string::npos ? 0 : sp1 + 1);
  if (sp1 != std::string::npos && sp2 != std::string::npos) {
    r.method = head.substr(0, sp1);
    r.target = head.substr(sp1 + 1, sp2 - sp1 - 1);
  }
  r.head = std::move(head);
  return r;
}

}  // namespace

std::optional<std::string> RawRequest::Header(std::string_view name) const {
  size_t pos = head.find("\r\n");
  while (pos != std::string::npos && pos + 2 < head.size()) {
    const size_t start = pos + 2;
    const size_t end = head.find("\r\n", start);
    if (end == std::string::npos || end == start) break;
    const std::string_view line(head.data() + start, end - start);
    const size_t colon = line.find(':');
    if (colon != std::string_view::npos && EqualsIgnoreAsciiCase(line.substr(0, colon), name)) {
      std::string_view v = line.substr(colon + 1);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      return std::string(v);
    }
    pos = end;
  }
  return std::nullopt;
}

std::string MakeResponse(int status, std::string_view reason,
                         const std::vector<std::pair<std::string, std::string>>& headers,
                         std::string_view body) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
  bool framed = false;
  for (const auto& [name, value] : headers) {
    if (EqualsIgnoreAsciiCase(name, "Transfer-Encoding") ||
        EqualsIgnoreAsciiCase(name, "Content-Length")) {
      framed = true;
    }
    out += name + ": " + value + "\r\n";
  }
  if (!framed) out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  out += "\r\n";
  out.append(body);
  return out;
}

void RawHttpServer::UseTls(SSL_CTX* ctx) {
  signal(SIGPIPE, SIG_IGN);
  tls_ctx_ = ctx;
}

bool RawHttpServer::Start() {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return false;
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listen_fd_, 4096) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(listen_fd_);
    listen_fd_ = -1;
    return false;
  }
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return true;
}

void RawHttpServer::Stop() {
  if (stopping_.exchange(true)) return;
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> workers;
  {
    MutexLock lock(&mu_);
    for (int fd : fds_) shutdown(fd, SHUT_RDWR);
    workers.swap(workers_);
  }
  for (std::thread& t : workers) t.join();
  if (listen_fd_ >= 0) close(listen_fd_);
  listen_fd_ = -1;
}

std::vector<RawRequest> RawHttpServer::requests() const {
  MutexLock lock(&mu_);
  return log_;
}

bool RawHttpServer::WaitReadable(int fd) const {
  pollfd p{fd, POLLIN, 0};
  while (!stopping_.load()) {
    const int n = poll(&p, 1, kStopCheckMillis);
    if (n > 0) return true;
  }
  return false;
}

void RawHttpServer::AcceptLoop() {
  while (WaitReadable(listen_fd_)) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const int index = ++connections_;
    MutexLock lock(&mu_);
    fds_.push_back(fd);
    workers_.emplace_back([this, fd, index] { Serve(fd, index); });
  }
}

void RawHttpServer::Serve(int fd, int index) {
  std::string buffer;
  char chunk[16384];
  bool open = true;
  SSL* ssl = nullptr;
  if (tls_ctx_ != nullptr) {
    ssl = SSL_new(tls_ctx_);
    if (ssl != nullptr && SSL_set_fd(ssl, fd) == 1 && WaitReadable(fd) && SSL_accept(ssl) == 1) {
      ++handshakes_;
      if (SSL_session_reused(ssl) == 1) ++resumed_;
    } else {
      open = false;
      ERR_clear_error();
    }
  }
  auto read_some = [&]() -> ssize_t {
    if (ssl == nullptr) return recv(fd, chunk, sizeof(chunk), 0);
    const int n = SSL_read(ssl, chunk, sizeof(chunk));
    if (n <= 0) ERR_clear_error();
    return n;
  };
  auto write_all = [&](std::string_view data) {
    if (ssl == nullptr) return WriteAll(fd, data);
    while (!data.empty()) {
      const int w = SSL_write(ssl, data.data(), static_cast<int>(data.size()));
      if (w <= 0) {
        ERR_clear_error();
        return false;
      }
      data.remove_prefix(static_cast<size_t>(w));
    }
    return true;
  };
  while (open && ((ssl != nullptr && SSL_pending(ssl) > 0) || WaitReadable(fd))) {
    const ssize_t n = read_some();
    if (n <= 0) break;
    buffer.append(chunk, static_cast<size_t>(n));
    if (buffer.size() > kMaxRequestHead) break;
    size_t end;
    while (open && (end = buffer.find("\r\n\r\n")) != std::string::npos) {
      RawRequest request = ParseRequest(buffer.substr(0, end + 4), index);
      buffer.erase(0, end + 4);
      {
        MutexLock lock(&mu_);
        log_.push_back(request);
      }
      const RawReply reply = handler_(request);
      if (reply.hang) {  // write what there is, then wait for the client to leave (or Stop)
        write_all(reply.bytes);
        while (WaitReadable(fd) && read_some() > 0) {
        }
        open = false;
        break;
      }
      const auto until = std::chrono::steady_clock::now() + reply.delay;
      while (!stopping_.load() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (!write_all(reply.bytes) || reply.close) open = false;
      if (!reply.raw_after.empty()) {
        WriteAll(fd, reply.raw_after);
        open = false;
      }
    }
  }
  if (ssl != nullptr) {
    if (SSL_is_init_finished(ssl) && SSL_shutdown(ssl) < 0) ERR_clear_error();
    SSL_free(ssl);
  }
  MutexLock lock(&mu_);
  fds_.erase(std::find(fds_.begin(), fds_.end(), fd));
  shutdown(fd, SHUT_RDWR);
  close(fd);
}

}  // namespace harvest::fetch::testing
