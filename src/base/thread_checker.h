// ThreadChecker: for event-loop-only classes (docs/architecture.md §4), which are used by one
// thread and so need no locks. Such a class keeps a ThreadChecker and starts its methods with
// HARVEST_ASSERT_ON_THREAD(checker_): the first checked call binds the checker to the calling
// thread, a later call from another thread aborts in builds with assertions (the sanitizer
// and debug builds; release builds compile the check away).
//
// Thread-safety: CalledOnValidThread and Detach from any thread.
#pragma once

#include <atomic>
#include <cassert>
#include <thread>

namespace harvest {

class ThreadChecker {
 public:
  // True on the thread the checker is bound to; binds it to the calling thread when unbound.
  bool CalledOnValidThread() const {
    std::thread::id self = std::this_thread::get_id();
    std::thread::id none{};
    return owner_.compare_exchange_strong(none, self) || none == self;
  }
  // Unbinds the checker: the next checked call binds it again (an object handed to another
  // thread before that thread starts using it, e.g. built on one thread and run on another).
  void Detach() { owner_.store(std::thread::id{}); }

 private:
  mutable std::atomic<std::thread::id> owner_{};
};

}  // namespace harvest

// Aborts (in builds with assertions) unless called on the checker's thread.
#define HARVEST_ASSERT_ON_THREAD(checker) assert((checker).CalledOnValidThread())
