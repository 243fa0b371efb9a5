// AresResolver: c-ares on a thread of its own.
//
// The caller's thread (Cached, Resolve, TakeCompleted) and the lookup thread share the cache,
// the set of running names, the request queue and the completed list under one mutex. The
// lookup thread owns the c-ares channel: it waits in poll() on c-ares' sockets (learnt through
// ARES_OPT_SOCK_STATE_CB) and an eventfd that Resolve() and the destructor write, starts the
// queued lookups, drives c-ares, and enforces the overall per-lookup timeout itself (c-ares'
// own timeouts are per try and double each round).
#include <ares.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>
#include <mutex>  // std::call_once
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "base/mutex.h"
#include "fetch/dns_cache.h"
#include "fetch/resolver.h"

namespace harvest::fetch {
namespace {

using SteadyClock = std::chrono::steady_clock;

void LibraryInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { ares_library_init(ARES_LIB_INIT_ALL); });
}

std::string AresError(int status, std::chrono::milliseconds timeout) {
  switch (status) {
    case ARES_ENOTFOUND:
      return "NXDOMAIN (domain name not found)";
    case ARES_ENODATA:
      return "no address (NODATA)";
    case ARES_ETIMEOUT:
      return "timeout after " + std::to_string(timeout.count()) + " ms";
    case ARES_ESERVFAIL:
      return "SERVFAIL (server failure)";
    case ARES_EREFUSED:
      return "REFUSED (query refused by the server)";
    case ARES_ECONNREFUSED:
      return "could not contact the DNS server (connection refused)";
    case ARES_EBADNAME:
      return "bad host name";
    default:
      return std::string("DNS error: ") + ares_strerror(status);
  }
}

class AresResolver final : public Resolver {
 public:
  AresResolver(ResolverOptions options, Clock* clock, std::function<void()> wakeup)
      : options_(std::move(options)),
        clock_(clock != nullptr ? clock : SystemClock::Default()),
        wakeup_(std::move(wakeup)),
        cache_(options_) {}
  ~AresResolver() override;

  Status Init();
  std::optional<Resolution> Cached(std::string_view name) override;
  void Resolve(std::string_view name) override;
  std::vector<Resolution> TakeCompleted() override;
  size_t pending() const override {
    MutexLock lock(&mu_);
    return running_.size();
  }
  size_t cached() const override {
    MutexLock lock(&mu_);
    return cache_.size();
  }

 private:
  // One ares_getaddrinfo call; owned by c-ares until its callback runs (exactly once, also
  // on ares_destroy).
  struct Lookup {
    AresResolver* self;
    uint64_t id;
    std::string name;
  };
  static void OnSocketState(void* self, ares_socket_t fd, int readable, int writable);
  static void OnDone(void* arg, int status, int timeouts, ares_addrinfo* info);
  void Loop();
  void StartLookups() EXCLUDES(mu_);
  void ExpireDeadlines() EXCLUDES(mu_);
  int PollTimeoutMs();
  void Deliver(Resolution r, std::chrono::seconds record_ttl) EXCLUDES(mu_);
  void Signal();

  const ResolverOptions options_;
  Clock* const clock_;
  const std::function<void()> wakeup_;

  mutable Mutex mu_;
  DnsCache cache_ GUARDED_BY(mu_);
  std::unordered_set<std::string> running_ GUARDED_BY(mu_);  // names being looked up
  std::vector<std::string> requests_ GUARDED_BY(mu_);        // to be started by the loop
  std::vector<Resolution> completed_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;

  // Lookup thread only.
  ares_channel channel_ = nullptr;
  int event_fd_ = -1;
  std::unordered_map<ares_socket_t, short> sockets_;  // fd -> poll events
  uint64_t next_id_ = 0;
  std::unordered_map<uint64_t, std::string> live_;  // id -> name, not yet delivered
  // Deadlines in start order (one timeout for all lookups, so also in deadline order).
  std::deque<std::pair<SteadyClock::time_point, uint64_t>> deadlines_;
  std::thread thread_;
};

Status AresResolver::Init() {
  LibraryInitOnce();
  event_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0) return Status::IOError(std::string("eventfd: ") + std::strerror(errno));
  const int tries = std::clamp(options_.tries, 1, 8);
  // c-ares doubles the per-try timeout each round; spread the overall budget over the rounds
  // (the loop enforces the overall timeout anyway).
  const long per_try =
      std::max<long>(1, static_cast<long>(options_.timeout.count()) / ((1L << tries) - 1));
  ares_options o{};
  o.flags = ARES_FLAG_NOSEARCH;
  o.timeout = static_cast<int>(std::min<long>(per_try, INT_MAX));
  o.tries = tries;
  o.sock_state_cb = &AresResolver::OnSocketState;
  o.sock_state_cb_data = this;
  const int mask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_SOCK_STATE_CB;
  if (int rc = ares_init_options(&channel_, &o, mask); rc != ARES_SUCCESS) {
    channel_ = nullptr;
    return Status::Internal(std::string("ares_init_options: ") + ares_strerror(rc));
  }
  if (!options_.servers.empty()) {
    if (int rc = ares_set_servers_ports_csv(channel_, options_.servers.c_str());
        rc != ARES_SUCCESS) {
      return Status::InvalidArgument("DNS servers '" + options_.servers +
                                     "': " + ares_strerror(rc));
    }
  }
  try {
    thread_ = std::thread([this] { Loop(); });
  } catch (const std::system_error& e) {
    return Status::ResourceExhausted(std::string("resolver thread: ") + e.what());
  }
  return Status::Ok();
}

AresResolver::~AresResolver() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) {
    Signal();
    thread_.join();
  }
  // Runs the callbacks of unfinished lookups (ARES_EDESTRUCTION), which free them.
  if (channel_ != nullptr) ares_destroy(channel_);
  if (event_fd_ >= 0) close(event_fd_);
}

void AresResolver::Signal() {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t w = write(event_fd_, &one, sizeof(one));
}

std::optional<Resolution> AresResolver::Cached(std::string_view name) {
  const std::string key = NormalizeHostName(name);
  if (auto numeric = NumericResolution(key)) return numeric;
  MutexLock lock(&mu_);
  return cache_.Get(key, clock_->Now());
}

void AresResolver::Resolve(std::string_view name) {
  std::string key = NormalizeHostName(name);
  std::optional<Resolution> known = NumericResolution(key);
  {
    MutexLock lock(&mu_);
    if (!known) known = cache_.Get(key, clock_->Now());
    if (known) {
      completed_.push_back(std::move(*known));
    } else {
      if (!running_.insert(key).second) return;  // coalesced with the running lookup
      requests_.push_back(std::move(key));
    }
  }
  if (known) {
    if (wakeup_) wakeup_();
  } else {
    Signal();
  }
}

std::vector<Resolution> AresResolver::TakeCompleted() {
  std::vector<Resolution> out;
  MutexLock lock(&mu_);
  out.swap(completed_);
  return out;
}

void AresResolver::Deliver(Resolution r, std::chrono::seconds record_ttl) {
  {
    MutexLock lock(&mu_);
    running_.erase(r.name);
    completed_.push_back(cache_.Put(std::move(r), record_ttl, clock_->Now()));
  }
  if (wakeup_) wakeup_();
}

void AresResolver::OnSocketState(void* self, ares_socket_t fd, int readable, int writable) {
  auto* r = static_cast<AresResolver*>(self);
  if (!readable && !writable) {
    r->sockets_.erase(fd);
    return;
  }
  r->sockets_[fd] = static_cast<short>((readable ? POLLIN : 0) | (writable ? POLLOUT : 0));
}

void AresResolver::OnDone(void* arg, int status, int /*timeouts*/, ares_addrinfo* info) {
  std::unique_ptr<Lookup> lookup(static_cast<Lookup*>(arg));
  AresResolver* self = lookup->self;
  // Already answered "timeout" by the loop, or the resolver is being destroyed.
  const bool live = self->live_.erase(lookup->id) > 0;
  if (!live || status == ARES_EDESTRUCTION || status == ARES_ECANCELLED) {
    if (info != nullptr) ares_freeaddrinfo(info);
    return;
  }
  Resolution r{.name = std::move(lookup->name)};
  int ttl = INT_MAX;
  if (status == ARES_SUCCESS && info != nullptr) {
    const ares_addrinfo_node* v4 = nullptr;
    const ares_addrinfo_node* v6 = nullptr;
    for (const ares_addrinfo_node* n = info->nodes; n != nullptr; n = n->ai_next) {
      if (n->ai_family == AF_INET && v4 == nullptr) v4 = n;
      if (n->ai_family == AF_INET6 && v6 == nullptr) v6 = n;
      ttl = std::min(ttl, n->ai_ttl);
    }
    for (const ares_addrinfo_cname* c = info->cnames; c != nullptr; c = c->next) {
      ttl = std::min(ttl, c->ttl);
    }
    char text[INET6_ADDRSTRLEN] = {0};
    if (v4 != nullptr) {
      const auto* sa = reinterpret_cast<const sockaddr_in*>(v4->ai_addr);
      r.ok = inet_ntop(AF_INET, &sa->sin_addr, text, sizeof(text)) != nullptr;
    } else if (v6 != nullptr) {
      const auto* sa = reinterpret_cast<const sockaddr_in6*>(v6->ai_addr);
      r.ok = inet_ntop(AF_INET6, &sa->sin6_addr, text, sizeof(text)) != nullptr;
    }
    if (r.ok) {
      r.address = text;
    } else {
      r.error = AresError(ARES_ENODATA, self->options_.timeout);
    }
  } else {
    r.error = AresError(status, self->options_.timeout);
  }
  if (info != nullptr) ares_freeaddrinfo(info);
  self->Deliver(std::move(r), std::chrono::seconds(std::max(0, ttl == INT_MAX ? 0 : ttl)));
}

void AresResolver::StartLookups() {
  std::vector<std::string> names;
  {
    MutexLock lock(&mu_);
    names.swap(requests_);
  }
  ares_addrinfo_hints hints{};
  hints.ai_family = options_.ipv6 ? AF_UNSPEC : AF_INET;
  hints.ai_flags = ARES_AI_NOSORT;
  for (std::string& name : names) {
    const uint64_t id = next_id_++;
    live_.emplace(id, name);
    deadlines_.emplace_back(SteadyClock::now() + options_.timeout, id);
    auto* lookup = new Lookup{this, id, std::move(name)};
    // May call OnDone before returning (e.g. an /etc/hosts answer); the mutex is not held.
    ares_getaddrinfo(channel_, lookup->name.c_str(), nullptr, &hints, &AresResolver::OnDone,
                     lookup);
  }
}

void AresResolver::ExpireDeadlines() {
  const auto now = SteadyClock::now();
  while (!deadlines_.empty() && deadlines_.front().first <= now) {
    const uint64_t id = deadlines_.front().second;
    deadlines_.pop_front();
    auto it = live_.find(id);
    if (it == live_.end()) continue;  // answered in time
    Resolution r{.name = std::move(it->second)};
    live_.erase(it);  // c-ares' eventual callback finds it gone and only frees the lookup
    r.error = AresError(ARES_ETIMEOUT, options_.timeout);
    Deliver(std::move(r), std::chrono::seconds(0));
  }
  // Bound the queue by the live lookups: drop entries already answered at the front.
  while (!deadlines_.empty() && !live_.contains(deadlines_.front().second)) deadlines_.pop_front();
}

int AresResolver::PollTimeoutMs() {
  int64_t ms = 1000;  // re-check now and then even when idle
  timeval max{.tv_sec = 1, .tv_usec = 0};
  timeval tv{};
  if (const timeval* t = ares_timeout(channel_, &max, &tv)) {
    ms = std::min<int64_t>(ms, static_cast<int64_t>(t->tv_sec) * 1000 + (t->tv_usec + 999) / 1000);
  }
  if (!deadlines_.empty()) {
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(
                          deadlines_.front().first - SteadyClock::now())
                          .count();
    ms = std::min<int64_t>(ms, (left + 999) / 1000);
  }
  return static_cast<int>(std::max<int64_t>(ms, 0));
}

void AresResolver::Loop() {
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    fds.push_back({.fd = event_fd_, .events = POLLIN, .revents = 0});
    for (const auto& [fd, events] : sockets_)
      fds.push_back({.fd = fd, .events = events, .revents = 0});
    const int n = poll(fds.data(), fds.size(), PollTimeoutMs());
    if (n > 0 && (fds[0].revents & POLLIN)) {
      uint64_t drained = 0;
      while (read(event_fd_, &drained, sizeof(drained)) > 0) {
      }
    }
    {
      MutexLock lock(&mu_);
      if (stop_) return;
    }
    StartLookups();
    for (size_t i = 1; n > 0 && i < fds.size(); ++i) {
      const short ev = fds[i].revents;
      if (ev == 0) continue;
      const bool in = (ev & (POLLIN | POLLHUP | POLLERR)) != 0;
      const bool out = (ev & POLLOUT) != 0;
      ares_process_fd(channel_, in ? fds[i].fd : ARES_SOCKET_BAD,
                      out ? fds[i].fd : ARES_SOCKET_BAD);
    }
    ares_process_fd(channel_, ARES_SOCKET_BAD, ARES_SOCKET_BAD);  // c-ares' own timeouts
    ExpireDeadlines();
  }
}

}  // namespace

Result<std::unique_ptr<Resolver>> NewAresResolver(ResolverOptions options, Clock* clock,
                                                  std::function<void()> wakeup) {
  auto resolver = std::make_unique<AresResolver>(std::move(options), clock, std::move(wakeup));
  if (Status s = resolver->Init(); !s.ok()) return s;
  return std::unique_ptr<Resolver>(std::move(resolver));
}

}  // namespace harvest::fetch
