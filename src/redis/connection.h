// One blocking hiredis connection to one Redis node (private to src/redis).
//
// Thread-safety: one thread at a time.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "redis/redis.h"

struct redisContext;
struct redisReply;

namespace harvest::redis {

class Connection {
 public:
  // Connects within connect_timeout; reads and writes then time out after command_timeout.
  // IOError naming host:port and the cause.
  static Result<std::unique_ptr<Connection>> Open(const std::string& host, int port,
                                                  std::chrono::milliseconds connect_timeout,
                                                  std::chrono::milliseconds command_timeout);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Appends every command, writes them in one go and reads one reply per command into
  // `replies` (cleared first). On a connection error or timeout returns IOError with the
  // replies read so far in `replies`; the connection is then broken() and must be dropped.
  Status Pipeline(const std::vector<const Argv*>& commands, std::vector<Reply>* replies);

  bool broken() const { return broken_; }

 private:
  Connection(redisContext* ctx, std::chrono::milliseconds command_timeout)
      : ctx_(ctx), command_timeout_(command_timeout) {}
  std::string ErrorText() const;

  redisContext* ctx_;
  std::chrono::milliseconds command_timeout_;
  bool broken_ = false;
};

// Splits "host:port" or "[v6]:port" (port 1..65535). False if malformed.
bool SplitHostPort(std::string_view host_port, std::string* host, int* port);

// A deep copy of a hiredis reply (reply.cc).
Reply ConvertReply(const redisReply* r);

// The RESP2 encoding's size of a command and of a reply (for Cluster::Stats).
size_t CommandSize(const Argv& argv);
size_t ReplySize(const Reply& reply);

}  // namespace harvest::redis
