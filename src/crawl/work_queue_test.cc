#include "crawl/work_queue.h"

#include <gtest/gtest.h>

#include <thread>

namespace harvest::crawl {
namespace {

TEST(WorkQueueTest, FifoAndCloseDrains) {
  WorkQueue<int> q(4);
  EXPECT_TRUE(q.Push(1));
  EXPECT_TRUE(q.Push(2));
  q.Close();
  EXPECT_FALSE(q.Push(3));
  EXPECT_EQ(q.Pop(), 1);
  EXPECT_EQ(q.Pop(), 2);
  EXPECT_EQ(q.Pop(), std::nullopt);
  EXPECT_TRUE(q.ClosedAndEmpty());
}

// The I/O thread's attempts (WarcSink::SubmitAttempt) never wait, even on a full queue.
TEST(WorkQueueTest, PushNoWaitIgnoresTheCapacityButNotClose) {
  WorkQueue<int> q(1);
  ASSERT_TRUE(q.Push(1));
  EXPECT_TRUE(q.PushNoWait(2));
  EXPECT_EQ(q.size(), 2u);
  q.Close();
  EXPECT_FALSE(q.PushNoWait(3));
  EXPECT_EQ(q.Pop(), 1);
  EXPECT_EQ(q.Pop(), 2);
  EXPECT_EQ(q.Pop(), std::nullopt);
}

TEST(WorkQueueTest, FullQueueBlocksProducerUntilConsumed) {
  WorkQueue<int> q(1);
  ASSERT_TRUE(q.Push(1));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    q.Push(2);
    pushed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(pushed.load());
  EXPECT_EQ(q.Pop(), 1);
  producer.join();
  EXPECT_TRUE(pushed.load());
  EXPECT_EQ(q.Pop(), 2);
}

// A blocked producer waits until the queue is down to half its capacity (not woken per pop).
TEST(WorkQueueTest, BlockedProducerResumesAtHalfCapacity) {
  WorkQueue<int> q(4);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(q.Push(i));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    q.Push(4);
    pushed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // it waits in Push
  EXPECT_EQ(q.Pop(), 0);                                       // 3 left: room, but above half
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_FALSE(pushed.load());
  EXPECT_EQ(q.Pop(), 1);  // 2 left: half
  producer.join();
  EXPECT_TRUE(pushed.load());
  for (int want = 2; want <= 4; ++want) EXPECT_EQ(q.Pop(), want);
}

TEST(WorkQueueTest, ManyProducersNothingLost) {
  WorkQueue<int> q(8);
  std::vector<std::thread> producers;
  for (int p = 0; p < 4; ++p) {
    producers.emplace_back([&q, p] {
      for (int i = 0; i < 1000; ++i) q.Push(p * 1000 + i);
    });
  }
  long sum = 0;
  for (int i = 0; i < 4000; ++i) sum += *q.Pop();
  for (auto& t : producers) t.join();
  EXPECT_EQ(sum, 4000L * 3999 / 2);
}

}  // namespace
}  // namespace harvest::crawl
