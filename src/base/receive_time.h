// Reads from a socket together with the kernel's receive time of the bytes: what the
// politeness rule and its audit need to know about when a response ended or a request
// arrived, independent of when a busy thread got round to reading (docs/politeness.md "The
// delay", docs/testweb.md "request log").
//
// Thread-safety: stateless.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace harvest {

// Asks the kernel to stamp the bytes received on `fd` (SO_TIMESTAMPNS; a listening socket
// passes it on to the sockets it accepts). False when the kernel refused.
bool EnableReceiveTime(int fd);

// recv(2) of at most `size` bytes into `buf`, with *rx_wall_us the receive time (µs since the
// Unix epoch, the real wall clock) of the bytes read, or 0 when the kernel gave none (the
// socket was not stamped). Returns what recv(2) returns; errno as it sets it.
ssize_t ReceiveWithTime(int fd, char* buf, size_t size, int64_t* rx_wall_us);

}  // namespace harvest
