// What both fetchers' event loops share (CurlFetcher, fetcher.cc; HttpFetcher,
// http1_fetcher.cc): the eventfd that Wakeup() writes, and the completion callbacks that
// Poll() runs at its end. Private to src/fetch.
//
// Thread-safety: Waker::Wake() from any thread; everything else on the loop thread.
#pragma once

#include <atomic>
#include <vector>

#include "base/status.h"
#include "fetch/fetch.h"

namespace harvest::fetch::internal {

// A finished transfer whose callback has not run yet.
struct Completion {
  FetchCallback done;
  FetchResult result;
};

// Runs the callbacks of `*ready` in order and empties it (swapped out first: a callback may
// Start() another transfer, which may complete into `*ready` in a later Poll()). A callback
// that throws is logged; the others still run. Returns how many ran.
int RunCompletions(std::vector<Completion>* ready);

// An eventfd in the loop's epoll set that makes epoll_wait return: Wake() writes it once
// until the loop has drained it (Drain()), so thousands of Wake()s a second (pages finishing
// on worker threads) cost one write each time the loop sleeps, not one each.
class Waker {
 public:
  Waker() = default;
  Waker(const Waker&) = delete;
  Waker& operator=(const Waker&) = delete;
  ~Waker();

  // Creates the eventfd and adds it to `epoll_fd` for EPOLLIN, its epoll data being `tag`
  // (data.ptr), or its own descriptor (data.fd) when `tag` is nullptr.
  Status Open(int epoll_fd, void* tag);
  // Any thread; a no-op before Open() succeeded.
  void Wake();
  // Loop thread, when epoll reported the eventfd readable.
  void Drain();
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  // Set by the Wake() that wrote the eventfd, cleared once the loop has drained it.
  std::atomic<bool> pending_{false};
};

}  // namespace harvest::fetch::internal
