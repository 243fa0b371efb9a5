// HttpFetcher: one epoll loop for Harvest's own HTTP/1.1 client (Http1Client, http and https) and
// an embedded CurlFetcher for every other request (fetch.h).
//
// The loop's epoll set holds the client's sockets, an eventfd (Wakeup) and the CurlFetcher's
// own epoll descriptor, which is readable while curl has socket events; curl is polled when
// it is, or when its timers are due. Queueing, max_concurrent and max_host_connections are
// enforced here for both kinds of transfer, so a host never has one of each in flight.
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <list>
#include <optional>
#include <thread>
#include <unordered_map>

#include "base/version.h"
#include "fetch/event_loop.h"
#include "fetch/fetch.h"
#include "fetch/http1_client.h"
#include "fetch/tls_client.h"
#include "fetch/transfer.h"

namespace harvest::fetch {
namespace {

constexpr int kMaxEventsPerWait = 256;
// epoll data.ptr tags of the two descriptors that are not the client's sockets.
char wake_tag;
char curl_tag;

}  // namespace

class HttpFetcher::Impl {
 public:
  explicit Impl(FetchOptions options);
  ~Impl();
  void Start(FetchRequest request, FetchCallback done);
  int Poll(std::chrono::microseconds timeout);
  void Wakeup();
  size_t in_flight() const { return queued_.size() + running_ + ready_.size(); }
  Status status() const { return status_; }

 private:
  struct Pending {
    FetchRequest request;
    FetchCallback done;
    std::string host_key;
    std::optional<internal::Http1Target> target;
  };
  void CheckThread();
  bool HostHasRoom(const std::string& key) const {
    const size_t limit = options_.max_host_connections;
    if (limit == 0) return true;
    auto it = per_host_.find(key);
    return it == per_host_.end() || it->second < limit;
  }
  bool HasCapacity() const {
    return options_.max_concurrent == 0 || running_ < options_.max_concurrent;
  }
  void LaunchQueued();
  void Launch(Pending p);
  void Finished(const std::string& key);

  FetchOptions options_;
  Status status_;
  std::vector<internal::ConnectToRule> connect_to_;
  std::unique_ptr<CurlFetcher> curl_;
  std::unique_ptr<internal::Http1Client> http1_;
  int epoll_fd_ = -1;
  internal::Waker waker_;
  std::thread::id loop_thread_;
  std::list<Pending> queued_;
  size_t running_ = 0;
  std::unordered_map<std::string, size_t> per_host_;
  std::vector<internal::Completion> ready_;
};

HttpFetcher::Impl::Impl(FetchOptions options) : options_(std::move(options)) {
  FetchOptions inner = options_;
  inner.max_concurrent = 0;  // enforced here, for both kinds of transfer
  inner.max_host_connections = 0;
  curl_ = std::make_unique<CurlFetcher>(inner);
  status_ = curl_->status();
  if (!status_.ok()) return;
  connect_to_ = internal::ParseConnectTo(options_.connect_to);
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) {
    status_ = Status::IOError(std::string("epoll_create1: ") + std::strerror(errno));
    return;
  }
  status_ = waker_.Open(epoll_fd_, &wake_tag);
  if (!status_.ok()) return;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = &curl_tag;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, curl_->wait_fd(), &ev) != 0) {
    status_ = Status::IOError(std::string("epoll_ctl(curl): ") + std::strerror(errno));
    return;
  }
  std::unique_ptr<internal::TlsClientContext> tls;
  if (options_.native_https) {
    Result<std::unique_ptr<internal::TlsClientContext>> made =
        internal::TlsClientContext::Make(options_);
    if (!made.ok()) {
      status_ = made.status();
      return;
    }
    tls = std::move(*made);
  }
  const std::string user_agent =
      options_.user_agent.empty() ? DefaultUserAgent() : options_.user_agent;
  http1_ = std::make_unique<internal::Http1Client>(options_, user_agent, epoll_fd_, std::move(tls));
}

HttpFetcher::Impl::~Impl() {
  http1_.reset();  // closes its sockets; no callback is called
  curl_.reset();
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

void HttpFetcher::Impl::CheckThread() {
  if (loop_thread_ == std::thread::id()) loop_thread_ = std::this_thread::get_id();
  assert(loop_thread_ == std::this_thread::get_id() && "Fetcher used off its loop thread");
}

void HttpFetcher::Impl::Start(FetchRequest request, FetchCallback done) {
  CheckThread();
  if (!status_.ok()) {
    FetchResult r;
    r.id = request.id;
    r.url = request.url;
    r.outcome = FetchOutcome::kOtherError;
    r.error = status_.ToString();
    ready_.push_back({std::move(done), std::move(r)});
    return;
  }
  Pending p{.request = std::move(request), .done = std::move(done)};
  p.host_key = HostKey(p.request.url);
  if ((options_.native_http || options_.native_https) && options_.proxy.empty()) {
    p.target = internal::OwnClientTarget(p.request, connect_to_, options_.native_http,
                                         options_.native_https);
  }
  queued_.push_back(std::move(p));
  LaunchQueued();
}

void HttpFetcher::Impl::LaunchQueued() {
  for (auto it = queued_.begin(); it != queued_.end() && HasCapacity();) {
    if (!HostHasRoom(it->host_key)) {
      ++it;
      continue;
    }
    Pending p = std::move(*it);
    it = queued_.erase(it);
    Launch(std::move(p));
  }
}

void HttpFetcher::Impl::Launch(Pending p) {
  ++running_;
  ++per_host_[p.host_key];
  if (p.target) {
    http1_->Start(std::move(p.request), std::move(*p.target), std::move(p.done));
    return;
  }
  curl_->Start(std::move(p.request),
               [this, key = std::move(p.host_key), done = std::move(p.done)](FetchResult&& r) {
                 Finished(key);
                 if (done) done(std::move(r));
               });
}

void HttpFetcher::Impl::Finished(const std::string& key) {
  if (running_ > 0) --running_;
  auto it = per_host_.find(key);
  if (it != per_host_.end() && --it->second == 0) per_host_.erase(it);
}

int HttpFetcher::Impl::Poll(std::chrono::microseconds timeout) {
  CheckThread();
  if (epoll_fd_ < 0 || !http1_) return internal::RunCompletions(&ready_);
  std::chrono::microseconds wait = timeout;
  if (!ready_.empty() || !http1_->finished().empty() || wait.count() < 0) wait = {};
  // The clients' timeout checks and curl's timers need no better than milliseconds.
  const auto coarse = std::chrono::ceil<std::chrono::milliseconds>(wait);
  wait = std::min<std::chrono::microseconds>(wait, http1_->WaitBudget(coarse));
  if (curl_->in_flight() > 0) {
    wait = std::min<std::chrono::microseconds>(wait, curl_->TimeUntilDue(coarse));
  }
  epoll_event events[kMaxEventsPerWait];
  // epoll_pwait2: a timeout in nanoseconds (epoll_wait's are milliseconds, which would
  // round a host's wake-up up by half a millisecond on average).
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(wait);
  const timespec ts{.tv_sec = static_cast<time_t>(secs.count()),
                    .tv_nsec = static_cast<long>((wait - secs).count() * 1000)};
  int n = epoll_pwait2(epoll_fd_, events, kMaxEventsPerWait, &ts, nullptr);
  if (n < 0) n = 0;  // EINTR: treat as a timeout
  bool curl_ready = false;
  for (int i = 0; i < n; ++i) {
    void* ptr = events[i].data.ptr;
    if (ptr == &wake_tag) {
      waker_.Drain();
    } else if (ptr == &curl_tag) {
      curl_ready = true;
    } else {
      http1_->HandleEvent(ptr, events[i].events);
    }
  }
  http1_->CheckTimers();
  http1_->EndOfBatch();
  for (internal::Http1Client::Finished& f : http1_->finished()) {
    Finished(f.host_key);
    ready_.push_back({std::move(f.done), std::move(f.result)});
  }
  http1_->finished().clear();
  int completed = 0;
  if (curl_ready ||
      (curl_->in_flight() > 0 && curl_->TimeUntilDue(std::chrono::hours(1)).count() == 0)) {
    completed += curl_->Poll(std::chrono::milliseconds(0));  // runs curl's callbacks
  }
  LaunchQueued();
  return completed + internal::RunCompletions(&ready_);
}

void HttpFetcher::Impl::Wakeup() { waker_.Wake(); }

HttpFetcher::HttpFetcher(FetchOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
HttpFetcher::~HttpFetcher() = default;
void HttpFetcher::Start(FetchRequest request, FetchCallback done) {
  impl_->Start(std::move(request), std::move(done));
}
int HttpFetcher::Poll(std::chrono::microseconds timeout) { return impl_->Poll(timeout); }
void HttpFetcher::Wakeup() { impl_->Wakeup(); }
size_t HttpFetcher::in_flight() const { return impl_->in_flight(); }
Status HttpFetcher::status() const { return impl_->status(); }

}  // namespace harvest::fetch
