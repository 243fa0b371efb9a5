// TestWeb's server: binds the listening sockets, makes the TLS context, and runs the epoll
// event loops (loop.h) on their threads. Loops share only the listening sockets (one per
// address, each in every loop with EPOLLEXCLUSIVE), the Site (immutable), the epoch (atomic),
// the TLS context (its leaf cache locked) and the RequestLog (internally locked).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/receive_time.h"
#include "testweb/internal.h"
#include "testweb/loop.h"
#include "testweb/request_log.h"
#include "testweb/tls.h"

namespace harvest::testweb {

namespace {

// Ports tried when the port is picked (port 0) and a later address cannot bind the first
// address's port (another process holds it there).
constexpr int kBindAttempts = 8;

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
  std::unique_ptr<TlsContext> tls_;  // null without TestWebOptions::tls
  std::vector<std::unique_ptr<Loop>> loops_;
  std::vector<std::thread> threads_;
  Mutex stop_mu_;  // held through Stop(): a second caller waits for the first to finish
  bool stopped_ GUARDED_BY(stop_mu_) = false;
};

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
  if (options_.tls) {
    if (options_.tls_dir.empty()) return Status::InvalidArgument("tls: no certificate directory");
    auto tls = TlsContext::Create(options_.tls_dir);
    if (!tls.ok()) return tls.status();
    tls_ = std::move(tls.value());
  } else if (options_.http_redirect || options_.hsts) {
    return Status::InvalidArgument("http_redirect and hsts need tls");
  }
  LoopShared shared;
  shared.site = &site_;
  shared.epoch = this;
  shared.clock = clock_;
  shared.log = log_.get();
  shared.next_conn_id = &next_conn_id_;
  shared.tls = tls_.get();
  shared.http_redirect = options_.http_redirect;
  shared.hsts = options_.hsts;
  shared.handshake_timeout = options_.tls_handshake_timeout;
  int threads = std::max(1, std::min(options_.threads, 64));
  for (int i = 0; i < threads; ++i) {
    loops_.push_back(std::make_unique<Loop>(shared, listen_fds_));
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
