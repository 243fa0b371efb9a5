#include "base/receive_time.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <cstring>
#include <ctime>

namespace harvest {

bool EnableReceiveTime(int fd) {
  int one = 1;
  return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) == 0;
}

ssize_t ReceiveWithTime(int fd, char* buf, size_t size, int64_t* rx_wall_us) {
  iovec iov{buf, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  *rx_wall_us = 0;
  const ssize_t n = recvmsg(fd, &msg, 0);
  if (n <= 0) return n;
  for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm != nullptr; cm = CMSG_NXTHDR(&msg, cm)) {
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
      timespec ts{};
      std::memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
      *rx_wall_us = static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
    }
  }
  return n;
}

}  // namespace harvest
