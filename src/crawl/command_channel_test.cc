// CommandChannel on its own: commands posted from other threads run on the opener's thread.
#include "crawl/command_channel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace harvest::crawl {
namespace {

OperatorControl* FakeControl() {
  // Never dereferenced: the channel only hands the pointer to the commands.
  static int storage;
  return reinterpret_cast<OperatorControl*>(&storage);
}

TEST(CommandChannelTest, RefusesCommandsUntilOpen) {
  CommandChannel channel;
  EXPECT_FALSE(channel.Post([](OperatorControl*) {}));
  EXPECT_FALSE(channel.OnIoThread());
  EXPECT_EQ(channel.control(), nullptr);
}

TEST(CommandChannelTest, RunsPostedCommandsOnTheIoThreadAgainstTheControl) {
  CommandChannel channel;
  std::atomic<int> wakes{0};
  channel.Open(FakeControl(), [&] { ++wakes; });
  EXPECT_TRUE(channel.OnIoThread());
  EXPECT_EQ(channel.control(), FakeControl());
  std::vector<int> ran;
  std::thread::id ran_on;
  bool other_thread_is_io = true;
  std::thread poster([&] {
    other_thread_is_io = channel.OnIoThread();
    for (int i = 0; i < 3; ++i) {
      EXPECT_TRUE(channel.Post([&, i](OperatorControl* c) {
        EXPECT_EQ(c, FakeControl());
        ran.push_back(i);
        ran_on = std::this_thread::get_id();
      }));
    }
  });
  poster.join();
  EXPECT_FALSE(other_thread_is_io);
  EXPECT_EQ(wakes.load(), 3);
  EXPECT_TRUE(ran.empty());  // nothing runs before the loop's turn
  channel.RunAll();
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  channel.RunAll();
  EXPECT_EQ(ran.size(), 3u);  // each once
}

TEST(CommandChannelTest, CommandsLeftWhenItClosesRunWithoutAControl) {
  CommandChannel channel;
  channel.Open(FakeControl(), nullptr);
  int answered_not_running = 0;
  ASSERT_TRUE(channel.Post([&](OperatorControl* c) { answered_not_running += c == nullptr; }));
  ASSERT_TRUE(channel.Post([&](OperatorControl* c) { answered_not_running += c == nullptr; }));
  channel.Close();
  EXPECT_EQ(answered_not_running, 2);
  EXPECT_FALSE(channel.Post([](OperatorControl*) {}));
  EXPECT_FALSE(channel.OnIoThread());
}

}  // namespace
}  // namespace harvest::crawl
