#include "base/receive_time.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "base/clock.h"

namespace harvest {
namespace {

// A TCP connection on loopback (the kernel stamps TCP segments, not Unix-socket bytes):
// fds_[0] writes, fds_[1] (accepted from a listener that may have receive times on) reads.
class SocketPair : public ::testing::Test {
 protected:
  void Connect(bool stamped_listener) {
    const int listener = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(listener, 0);
    if (stamped_listener) {
      ASSERT_TRUE(EnableReceiveTime(listener));
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ASSERT_EQ(listen(listener, 1), 0);
    ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    fds_[0] = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_EQ(connect(fds_[0], reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    fds_[1] = accept4(listener, nullptr, nullptr, SOCK_NONBLOCK);
    ASSERT_GE(fds_[1], 0);
    listener_ = listener;
  }
  // The kernel turns receive times on for the whole machine when the first socket asks for
  // them, in a work item that runs a little later: bytes that arrive before it have none.
  // Sends and reads bytes until they come with a time (at most ~1 s).
  void WaitUntilStamped() {
    char buf[4];
    for (int i = 0; i < 100; ++i) {
      int64_t rx = 0;
      ASSERT_EQ(write(fds_[0], "w", 1), 1);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      ASSERT_EQ(ReceiveWithTime(fds_[1], buf, sizeof(buf), &rx), 1);
      if (rx != 0) return;
    }
    FAIL() << "the kernel gave no receive time within a second";
  }
  void TearDown() override {
    for (int fd : {fds_[0], fds_[1], listener_}) {
      if (fd >= 0) close(fd);
    }
  }
  int fds_[2] = {-1, -1};
  int listener_ = -1;
};

// The time is when the bytes arrived, not when they were read.
TEST_F(SocketPair, TheTimeIsWhenTheBytesArrived) {
  Connect(false);
  ASSERT_TRUE(EnableReceiveTime(fds_[1]));
  WaitUntilStamped();
  const int64_t before = SystemClock::Default()->WallMicros();
  ASSERT_EQ(write(fds_[0], "abc", 3), 3);
  const int64_t sent = SystemClock::Default()->WallMicros();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  char buf[16];
  int64_t rx = -1;
  ASSERT_EQ(ReceiveWithTime(fds_[1], buf, sizeof(buf), &rx), 3);
  EXPECT_EQ(std::string(buf, 3), "abc");
  EXPECT_GE(rx, before);
  EXPECT_LE(rx, sent);
  // Nothing left: what recv(2) says, and no time.
  rx = -1;
  EXPECT_EQ(ReceiveWithTime(fds_[1], buf, sizeof(buf), &rx), -1);
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_EQ(rx, 0);
}

TEST_F(SocketPair, NoTimeUnlessEnabled) {
  Connect(false);
  ASSERT_EQ(write(fds_[0], "x", 1), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  char buf[4];
  int64_t rx = -1;
  ASSERT_EQ(ReceiveWithTime(fds_[1], buf, sizeof(buf), &rx), 1);
  EXPECT_EQ(rx, 0);
}

// A listener passes it on to the sockets it accepts.
TEST_F(SocketPair, AnAcceptedSocketHasItFromItsListener) {
  Connect(true);
  WaitUntilStamped();
  const int64_t before = SystemClock::Default()->WallMicros();
  ASSERT_EQ(write(fds_[0], "x", 1), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  char buf[4];
  int64_t rx = 0;
  ASSERT_EQ(ReceiveWithTime(fds_[1], buf, sizeof(buf), &rx), 1);
  EXPECT_GE(rx, before);
  EXPECT_LE(rx, SystemClock::Default()->WallMicros());
}

}  // namespace
}  // namespace harvest
