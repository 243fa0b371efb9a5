#include "fetch/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>

#include <spdlog/spdlog.h>

namespace harvest::fetch::internal {

int RunCompletions(std::vector<Completion>* ready) {
  std::vector<Completion> batch;
  batch.swap(*ready);
  for (Completion& c : batch) {
    try {
      if (c.done) c.done(std::move(c.result));
    } catch (const std::exception& e) {
      spdlog::error("fetch: completion callback threw: {}", e.what());
    } catch (...) {
      spdlog::error("fetch: completion callback threw");
    }
  }
  return static_cast<int>(batch.size());
}

Waker::~Waker() {
  if (fd_ >= 0) close(fd_);
}

Status Waker::Open(int epoll_fd, void* tag) {
  fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd_ < 0) return Status::IOError(std::string("eventfd: ") + std::strerror(errno));
  epoll_event ev{};
  ev.events = EPOLLIN;
  if (tag != nullptr) {
    ev.data.ptr = tag;
  } else {
    ev.data.fd = fd_;
  }
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd_, &ev) != 0) {
    return Status::IOError(std::string("epoll_ctl(eventfd): ") + std::strerror(errno));
  }
  return Status::Ok();
}

void Waker::Wake() {
  if (fd_ < 0) return;
  if (pending_.exchange(true)) return;
  const uint64_t one = 1;
  // EAGAIN (counter saturated) still leaves the eventfd readable: the wakeup is not lost.
  [[maybe_unused]] ssize_t w = write(fd_, &one, sizeof(one));
}

void Waker::Drain() {
  uint64_t drained = 0;
  while (read(fd_, &drained, sizeof(drained)) > 0) {
  }
  // After the read: a Wake() between the read and this store wrote nothing, but what its
  // caller did before it is seen by the caller of Poll(), which runs after this.
  pending_.store(false);
}

}  // namespace harvest::fetch::internal
