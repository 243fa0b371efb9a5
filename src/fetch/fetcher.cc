// Fetcher: the libcurl multi handle driven by curl_multi_socket_action on epoll.
//
// curl tells us which sockets to watch (OnSocket) and when its next timeout is due (OnTimer);
// Poll() waits on epoll for those sockets plus an eventfd (Wakeup), hands the ready sockets
// and expired timers back to curl, collects finished transfers and runs their callbacks
// outside any curl callback, so a callback may Start() the next transfer.
#include <curl/curl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <climits>
#include <cstring>
#include <list>
#include <mutex>  // std::call_once
#include <optional>
#include <thread>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "base/version.h"
#include "fetch/event_loop.h"
#include "fetch/fetch.h"
#include "fetch/transfer.h"

namespace harvest::fetch {
namespace {

// Socket events taken from epoll per wait; more stay queued in the kernel for the next wait.
constexpr int kMaxEventsPerWait = 256;
// Expired-timer rounds per Poll: curl may re-arm a zero timeout while handling one; a bound
// keeps Poll from spinning (the next Poll continues).
constexpr int kMaxTimerRounds = 8;

using SteadyClock = std::chrono::steady_clock;

// How long an idle per-host connection is kept for the host's next request. Longer than
// the default politeness delay and most Crawl-delays; shorter than common server keep-alive
// timeouts (nginx 75 s), so a kept connection is usually still open when it is used.
constexpr std::chrono::seconds kIdlePoolLifetime{30};

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

int64_t WallMicrosNow() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT", hosts possibly [IPv6] literals.
bool ValidConnectTo(const std::string& entry) {
  int colons = 0;
  bool in_brackets = false;
  for (char c : entry) {
    if (c == '[') in_brackets = true;
    if (c == ']') in_brackets = false;
    if (c == ':' && !in_brackets) ++colons;
    if (c == '\r' || c == '\n' || c == ' ') return false;
  }
  return colons == 3 && !in_brackets;
}

}  // namespace

class CurlFetcher::Impl {
 public:
  explicit Impl(FetchOptions options);
  ~Impl();
  void Start(FetchRequest request, FetchCallback done);
  int Poll(std::chrono::microseconds timeout);
  void Wakeup();
  size_t in_flight() const { return running_.size() + queued_.size() + ready_.size(); }
  Status status() const { return status_; }
  int wait_fd() const { return epoll_fd_; }
  int WaitMillis(std::chrono::milliseconds timeout) const;

 private:
  static int OnSocket(CURL* easy, curl_socket_t s, int what, void* self, void* socketp);
  static int OnTimer(CURLM* multi, long timeout_ms, void* self);
  void CheckThread();
  bool HasCapacity() const {
    return resolved_.options.max_concurrent == 0 ||
           running_.size() < resolved_.options.max_concurrent;
  }
  bool HostHasRoom(const std::string& key) const {
    const size_t limit = resolved_.options.max_host_connections;
    if (limit == 0) return true;
    auto it = per_host_.find(key);
    return it == per_host_.end() || it->second < limit;
  }
  // A host's own connection cache (see pools_).
  struct HostPool {
    CURLSH* share = nullptr;
    size_t running = 0;
    bool idle = false;  // listed in idle_: no transfer running, a connection may be kept
    std::list<std::string>::iterator idle_pos;
    SteadyClock::time_point idle_since;
  };
  CURLSH* AcquirePool(const std::string& key);
  void ReleasePool(const std::string& key, bool keep);
  void ClosePool(std::unordered_map<std::string, HostPool>::iterator it);
  void TrimIdlePools(SteadyClock::time_point now);
  void Launch(std::unique_ptr<Transfer> t);
  void RecycleEasy(CURL* easy);
  void LaunchQueued();
  void HandleEvents(int n, const epoll_event* events);
  void HandleTimers();
  void CollectFinished();

  Status status_;
  ResolvedOptions resolved_;
  CURLM* multi_ = nullptr;
  int epoll_fd_ = -1;
  internal::Waker waker_;
  std::thread::id loop_thread_;
  std::optional<SteadyClock::time_point> timer_deadline_;
  std::unordered_map<CURL*, std::unique_ptr<Transfer>> running_;
  // Waiting for a global or per-host slot, oldest first. A list: blocked hosts are skipped
  // and launched entries are taken from the middle.
  std::list<std::unique_ptr<Transfer>> queued_;
  std::unordered_map<std::string, size_t> per_host_;  // running transfers per host_key()
  std::vector<internal::Completion> ready_;           // finished; callbacks not yet run
  std::vector<std::pair<CURL*, CURLcode>> done_;      // CollectFinished's batch (reused)
  // Easy handles of finished transfers, reset, for the next ones (RecycleEasy).
  static constexpr size_t kMaxSpareEasies = 64;
  std::vector<CURL*> spare_easies_;
  // One connection cache per host (a CURLSH sharing CURL_LOCK_DATA_CONNECT), instead of the
  // multi handle's cache. curl files a cached connection under its *connect* destination
  // and, for every new transfer, walks every connection filed there — checking each idle
  // one with poll(2) — and, once the cache holds more than CURLMOPT_MAXCONNECTS, walks all
  // of them to find the oldest idle one. Connections reach hosts through connect_to (the
  // resolver's or the pin table's address), so every host behind one address — shared
  // hosting, or a test web behind --connect-to — shared one list, and each request cost a
  // walk over every connection open to that address. With a cache per host a lookup sees
  // only that host's connection. A pool lives while a transfer of its host runs and, after
  // one that asked to keep its connection (FetchRequest::reuse_connection), while idle:
  // at most max_idle_connections idle pools (least recently used closed first), each for
  // at most kIdlePoolLifetime.
  std::unordered_map<std::string, HostPool> pools_;
  std::list<std::string> idle_;  // keys of idle pools, least recently used first
};

CurlFetcher::Impl::Impl(FetchOptions options) {
  GlobalInitOnce();
  resolved_.options = std::move(options);
  const FetchOptions& o = resolved_.options;
  resolved_.user_agent = o.user_agent.empty() ? DefaultUserAgent() : o.user_agent;
  {
    Result<std::unique_ptr<CaBundle>> bundle = CaBundle::Make(o.ca_file);
    if (!bundle.ok()) {
      status_ = bundle.status();
      return;
    }
    resolved_.ca_bundle = std::move(*bundle);
  }
  for (const std::string& entry : o.connect_to) {
    if (!ValidConnectTo(entry)) {
      status_ = Status::InvalidArgument("connect_to entry '" + entry +
                                        "' is not HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT");
      return;
    }
    curl_slist* next = curl_slist_append(resolved_.connect_to, entry.c_str());
    if (next == nullptr) {
      status_ = Status::ResourceExhausted("curl_slist_append failed");
      return;
    }
    resolved_.connect_to = next;
  }
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) {
    status_ = Status::IOError(std::string("epoll_create1: ") + std::strerror(errno));
    return;
  }
  status_ = waker_.Open(epoll_fd_, nullptr);
  if (!status_.ok()) return;
  multi_ = curl_multi_init();
  if (multi_ == nullptr) {
    status_ = Status::ResourceExhausted("curl_multi_init failed");
    return;
  }
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &Impl::OnSocket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, static_cast<void*>(this));
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &Impl::OnTimer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, static_cast<void*>(this));
  // max_host_connections is enforced here, per URL host: curl's own
  // CURLMOPT_MAX_HOST_CONNECTIONS counts per *connect* host, so with connect_to routing
  // every name to one address it would serialize all hosts.
  curl_multi_setopt(multi_, CURLMOPT_MAX_TOTAL_CONNECTIONS, static_cast<long>(o.max_concurrent));
  if (o.max_idle_connections > 0) {
    curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, static_cast<long>(o.max_idle_connections));
  }
  curl_multi_setopt(multi_, CURLMOPT_PIPELINING, static_cast<long>(CURLPIPE_MULTIPLEX));
}

CurlFetcher::Impl::~Impl() {
  for (auto& [easy, transfer] : running_) curl_multi_remove_handle(multi_, easy);
  running_.clear();  // easy handles cleaned up after leaving the multi
  queued_.clear();
  ready_.clear();
  for (CURL* easy : spare_easies_) curl_easy_cleanup(easy);  // reset: in no pool
  spare_easies_.clear();
  for (auto& [key, pool] : pools_) {
    if (pool.share != nullptr) curl_share_cleanup(pool.share);
  }
  pools_.clear();
  idle_.clear();
  if (multi_ != nullptr) curl_multi_cleanup(multi_);
  curl_slist_free_all(resolved_.connect_to);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

void CurlFetcher::Impl::CheckThread() {
  if (loop_thread_ == std::thread::id()) loop_thread_ = std::this_thread::get_id();
  assert(loop_thread_ == std::this_thread::get_id() && "Fetcher used off its loop thread");
}

void CurlFetcher::Impl::Start(FetchRequest request, FetchCallback done) {
  CheckThread();
  auto t = std::make_unique<Transfer>(std::move(request), std::move(done));
  if (!status_.ok()) {
    FetchCallback cb = t->TakeCallback();
    ready_.push_back({std::move(cb), t->Fail(FetchOutcome::kOtherError, status_.ToString())});
    return;
  }
  queued_.push_back(std::move(t));
  LaunchQueued();
}

CURLSH* CurlFetcher::Impl::AcquirePool(const std::string& key) {
  HostPool& pool = pools_[key];
  if (pool.share == nullptr) {
    pool.share = curl_share_init();
    if (pool.share != nullptr &&
        curl_share_setopt(pool.share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT) != CURLSHE_OK) {
      curl_share_cleanup(pool.share);
      pool.share = nullptr;
    }
  }
  if (pool.idle) {
    idle_.erase(pool.idle_pos);
    pool.idle = false;
  }
  ++pool.running;
  return pool.share;  // nullptr (out of memory): the transfer uses the multi's cache
}

void CurlFetcher::Impl::ReleasePool(const std::string& key, bool keep) {
  auto it = pools_.find(key);
  if (it == pools_.end()) return;
  HostPool& pool = it->second;
  if (pool.running > 0) --pool.running;
  if (pool.running > 0) return;
  if (!keep || pool.share == nullptr || resolved_.options.max_idle_connections == 0) {
    ClosePool(it);
    return;
  }
  pool.idle = true;
  pool.idle_since = SteadyClock::now();
  pool.idle_pos = idle_.insert(idle_.end(), key);
  TrimIdlePools(pool.idle_since);
}

void CurlFetcher::Impl::ClosePool(std::unordered_map<std::string, HostPool>::iterator it) {
  HostPool& pool = it->second;
  if (pool.idle) idle_.erase(pool.idle_pos);
  // Closes the pool's connections. No easy handle refers to it any more: each transfer's
  // handle is cleaned up before its pool is released.
  if (pool.share != nullptr) curl_share_cleanup(pool.share);
  pools_.erase(it);
}

void CurlFetcher::Impl::TrimIdlePools(SteadyClock::time_point now) {
  const size_t max_idle = resolved_.options.max_idle_connections;
  while (!idle_.empty()) {
    auto it = pools_.find(idle_.front());
    if (it == pools_.end()) {  // cannot happen: listed pools exist
      idle_.pop_front();
      continue;
    }
    if (idle_.size() <= max_idle && now - it->second.idle_since < kIdlePoolLifetime) return;
    ClosePool(it);
  }
}

void CurlFetcher::Impl::Launch(std::unique_ptr<Transfer> t) {
  CURL* reuse = nullptr;
  if (!spare_easies_.empty()) {
    reuse = spare_easies_.back();
    spare_easies_.pop_back();
  }
  Status s = t->Configure(resolved_, WallMicrosNow(), reuse);
  if (s.ok()) {
    CURLSH* share = AcquirePool(t->host_key());
    if (share != nullptr) curl_easy_setopt(t->easy(), CURLOPT_SHARE, share);
    const CURLMcode mc = curl_multi_add_handle(multi_, t->easy());
    if (mc == CURLM_OK) {
      CURL* easy = t->easy();
      ++per_host_[t->host_key()];
      running_.emplace(easy, std::move(t));
      return;
    }
    curl_easy_setopt(t->easy(), CURLOPT_SHARE, nullptr);  // let the pool be closed
    ReleasePool(t->host_key(), /*keep=*/false);
    s = Status::Internal(std::string("curl_multi_add_handle: ") + curl_multi_strerror(mc));
  }
  FetchCallback cb = t->TakeCallback();
  ready_.push_back({std::move(cb), t->Fail(FetchOutcome::kOtherError, s.message())});
}

// A finished transfer's easy handle, out of the multi handle, is kept for the next
// transfer (up to kMaxSpareEasies): a new handle costs an allocation of its state and of
// its receive buffer (first-touch page faults) and its setup, ~1.5% of a crawl's CPU. It
// leaves its host's connection cache first (the cache can only be closed once no handle
// uses it), then curl_easy_reset() returns every option to its default; what it keeps is
// its allocations.
void CurlFetcher::Impl::RecycleEasy(CURL* easy) {
  if (easy == nullptr) return;
  curl_easy_setopt(easy, CURLOPT_SHARE, nullptr);
  if (spare_easies_.size() >= kMaxSpareEasies) {
    curl_easy_cleanup(easy);
    return;
  }
  curl_easy_reset(easy);
  spare_easies_.push_back(easy);
}

void CurlFetcher::Impl::LaunchQueued() {
  for (auto it = queued_.begin(); it != queued_.end() && HasCapacity();) {
    if (!HostHasRoom((*it)->host_key())) {
      ++it;
      continue;
    }
    std::unique_ptr<Transfer> t = std::move(*it);
    it = queued_.erase(it);
    Launch(std::move(t));
  }
}

int CurlFetcher::Impl::OnSocket(CURL*, curl_socket_t s, int what, void* self, void* socketp) {
  auto* impl = static_cast<Impl*>(self);
  if (what == CURL_POLL_REMOVE) {
    epoll_ctl(impl->epoll_fd_, EPOLL_CTL_DEL, s, nullptr);  // may already be closed: ignore
    return 0;
  }
  epoll_event ev{};
  ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
  ev.data.fd = s;
  // A socket curl has not seen before is ADDed; a closed-and-reused descriptor number may
  // still be registered, so each operation falls back to the other.
  const int first = socketp == nullptr ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  if (epoll_ctl(impl->epoll_fd_, first, s, &ev) != 0) {
    const int second = first == EPOLL_CTL_ADD ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(impl->epoll_fd_, second, s, &ev) != 0) {
      spdlog::error("fetch: epoll_ctl on socket {}: {}", s, std::strerror(errno));
      return -1;  // curl fails the transfers on this socket
    }
  }
  if (socketp == nullptr) curl_multi_assign(impl->multi_, s, impl);
  return 0;
}

int CurlFetcher::Impl::OnTimer(CURLM*, long timeout_ms, void* self) {
  auto* impl = static_cast<Impl*>(self);
  if (timeout_ms < 0) {
    impl->timer_deadline_.reset();
  } else {
    impl->timer_deadline_ = SteadyClock::now() + std::chrono::milliseconds(timeout_ms);
  }
  return 0;
}

int CurlFetcher::Impl::WaitMillis(std::chrono::milliseconds timeout) const {
  if (!ready_.empty() || timeout.count() <= 0) return 0;
  int64_t wait = std::min<int64_t>(timeout.count(), INT_MAX);
  if (timer_deadline_) {
    const auto left = *timer_deadline_ - SteadyClock::now();
    // Round up: waking a little before curl's deadline would only spin.
    const int64_t left_ms =
        (std::chrono::duration_cast<std::chrono::microseconds>(left).count() + 999) / 1000;
    wait = std::clamp<int64_t>(left_ms, 0, wait);
  }
  return static_cast<int>(wait);
}

void CurlFetcher::Impl::HandleEvents(int n, const epoll_event* events) {
  int running = 0;
  for (int i = 0; i < n; ++i) {
    const int fd = events[i].data.fd;
    if (fd == waker_.fd()) {
      waker_.Drain();
      continue;
    }
    int flags = 0;
    if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) flags |= CURL_CSELECT_IN;
    if (events[i].events & EPOLLOUT) flags |= CURL_CSELECT_OUT;
    if (events[i].events & EPOLLERR) flags |= CURL_CSELECT_ERR;
    curl_multi_socket_action(multi_, fd, flags, &running);
  }
}

void CurlFetcher::Impl::HandleTimers() {
  int running = 0;
  for (int round = 0; round < kMaxTimerRounds; ++round) {
    if (!timer_deadline_ || *timer_deadline_ > SteadyClock::now()) return;
    timer_deadline_.reset();
    curl_multi_socket_action(multi_, CURL_SOCKET_TIMEOUT, 0, &running);
  }
}

void CurlFetcher::Impl::CollectFinished() {
  // Every message is read before any handle is removed: curl_multi_remove_handle walks the
  // messages still unread, looking for its handle's, so removing while reading one message
  // at a time cost a walk per finished transfer over the rest of the batch.
  done_.clear();
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
    if (msg->msg == CURLMSG_DONE) done_.emplace_back(msg->easy_handle, msg->data.result);
  }
  for (const auto& [easy, code] : done_) {
    auto it = running_.find(easy);
    if (it == running_.end()) continue;
    std::unique_ptr<Transfer> t = std::move(it->second);
    running_.erase(it);
    curl_multi_remove_handle(multi_, easy);
    auto host = per_host_.find(t->host_key());
    if (host != per_host_.end() && --host->second == 0) per_host_.erase(host);
    FetchCallback cb = t->TakeCallback();
    ready_.push_back({std::move(cb), t->Finish(code)});
    const std::string key = t->host_key();
    const bool keep = t->reuse_connection();
    RecycleEasy(t->ReleaseEasy());  // it no longer holds its pool
    t.reset();
    ReleasePool(key, keep);
  }
}

int CurlFetcher::Impl::Poll(std::chrono::microseconds timeout) {
  CheckThread();
  epoll_event events[kMaxEventsPerWait];
  int n = epoll_fd_ >= 0
              ? epoll_wait(epoll_fd_, events, kMaxEventsPerWait,
                           WaitMillis(std::chrono::ceil<std::chrono::milliseconds>(timeout)))
              : 0;
  if (n < 0) n = 0;  // EINTR: treat as a timeout
  if (multi_ != nullptr) {
    HandleEvents(n, events);
    HandleTimers();
    CollectFinished();
    TrimIdlePools(SteadyClock::now());
    LaunchQueued();
  }
  return internal::RunCompletions(&ready_);
}

void CurlFetcher::Impl::Wakeup() { waker_.Wake(); }

CurlFetcher::CurlFetcher(FetchOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
CurlFetcher::~CurlFetcher() = default;
void CurlFetcher::Start(FetchRequest request, FetchCallback done) {
  impl_->Start(std::move(request), std::move(done));
}
int CurlFetcher::Poll(std::chrono::microseconds timeout) { return impl_->Poll(timeout); }
void CurlFetcher::Wakeup() { impl_->Wakeup(); }
size_t CurlFetcher::in_flight() const { return impl_->in_flight(); }
Status CurlFetcher::status() const { return impl_->status(); }
int CurlFetcher::wait_fd() const { return impl_->wait_fd(); }
std::chrono::milliseconds CurlFetcher::TimeUntilDue(std::chrono::milliseconds cap) const {
  return std::chrono::milliseconds(impl_->WaitMillis(cap));
}

}  // namespace harvest::fetch
