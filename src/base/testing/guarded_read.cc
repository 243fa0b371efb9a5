// The compiler's lock check, shown on one member (src/base/CMakeLists.txt, test
// base_thread_safety_check): as written this file compiles; with HARVEST_READ_WITHOUT_LOCK
// defined it reads a GUARDED_BY member without its lock, and clang's -Wthread-safety -Werror
// must reject it. Not linked into anything.
#include "base/mutex.h"

namespace harvest {

class GuardedCounter {
 public:
  int Read() {
#ifdef HARVEST_READ_WITHOUT_LOCK
    return value_;
#else
    MutexLock lock(&mu_);
    return value_;
#endif
  }
  void Add(int n) {
    MutexLock lock(&mu_);
    value_ += n;
  }

 private:
  Mutex mu_;
  int value_ GUARDED_BY(mu_) = 0;
};

int UseGuardedCounter() {
  GuardedCounter c;
  c.Add(1);
  return c.Read();
}

}  // namespace harvest
