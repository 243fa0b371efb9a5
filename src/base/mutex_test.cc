#include "base/mutex.h"

#include <gtest/gtest.h>

#include <thread>

#include "base/thread_checker.h"

namespace harvest {
namespace {

TEST(Mutex, LockHeldBySecondThreadExcludesTheFirst) {
  Mutex mu;
  mu.Lock();
  bool taken = true;
  std::thread t([&] { taken = mu.TryLock(); });
  t.join();
  EXPECT_FALSE(taken);
  mu.Unlock();
  if (mu.TryLock()) {
    mu.Unlock();
  } else {
    ADD_FAILURE() << "the mutex is still held after Unlock";
  }
}

TEST(CondVar, SignalWakesAWaiter) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  std::thread t([&] {
    MutexLock lock(&mu);
    ready = true;
    cv.Signal();
  });
  {
    MutexLock lock(&mu);
    while (!ready) cv.Wait(&mu);
    EXPECT_TRUE(ready);
  }
  t.join();
}

TEST(CondVar, WaitForTimesOut) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  EXPECT_FALSE(cv.WaitFor(&mu, std::chrono::milliseconds(5)));
  EXPECT_FALSE(cv.WaitUntil(&mu, std::chrono::steady_clock::now() + std::chrono::milliseconds(5)));
}

TEST(SharedMutex, ReadersShareWritersExclude) {
  SharedMutex mu;
  int value = 0;
  {
    ReaderLock a(&mu);
    std::thread reader([&] {
      ReaderLock b(&mu);  // a second reader gets in while the first holds it
      (void)value;
    });
    reader.join();
  }
  WriterLock w(&mu);
  value = 1;
  EXPECT_EQ(value, 1);
}

TEST(ThreadChecker, BindsToTheFirstThreadThatChecks) {
  ThreadChecker checker;
  EXPECT_TRUE(checker.CalledOnValidThread());
  bool other = true;
  std::thread t([&] { other = checker.CalledOnValidThread(); });
  t.join();
  EXPECT_FALSE(other);
  EXPECT_TRUE(checker.CalledOnValidThread());
}

TEST(ThreadChecker, DetachLetsAnotherThreadBindIt) {
  ThreadChecker checker;
  EXPECT_TRUE(checker.CalledOnValidThread());
  checker.Detach();
  bool other = false;
  std::thread t([&] { other = checker.CalledOnValidThread(); });
  t.join();
  EXPECT_TRUE(other);
  EXPECT_FALSE(checker.CalledOnValidThread());
}

}  // namespace
}  // namespace harvest
