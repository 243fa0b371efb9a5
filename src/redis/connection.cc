// A blocking hiredis connection (connection.h).
#include "redis/connection.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace harvest::redis {
namespace {

timeval ToTimeval(std::chrono::milliseconds ms) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

// Blocks SIGPIPE in this thread while hiredis writes (it uses write(2), not MSG_NOSIGNAL),
// then discards a SIGPIPE raised meanwhile and restores the mask. Leaves alone a SIGPIPE that
// was already pending before.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~SigpipeBlock() {
    if (!was_pending_) {
      sigset_t pending;
      sigemptyset(&pending);
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        timespec zero{0, 0};
        while (sigtimedwait(&set_, nullptr, &zero) == -1 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t set_;
  sigset_t old_;
  bool was_pending_ = false;
};

}  // namespace

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& host, int port,
                                                     std::chrono::milliseconds connect_timeout,
                                                     std::chrono::milliseconds command_timeout) {
  std::string where =
      (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  redisContext* ctx = redisConnectWithTimeout(host.c_str(), port, ToTimeval(connect_timeout));
  if (ctx == nullptr) return Status::IOError("redis " + where + ": cannot allocate a context");
  if (ctx->err != 0) {
    std::string why = ctx->errstr;
    redisFree(ctx);
    if (why.find("temporarily unavailable") != std::string::npos ||
        why.find("timed out") != std::string::npos) {
      why = "connect timed out after " + std::to_string(connect_timeout.count()) + " ms";
    }
    return Status::IOError("redis " + where + ": " + why);
  }
  if (redisSetTimeout(ctx, ToTimeval(command_timeout)) != REDIS_OK) {
    std::string why = ctx->errstr;
    redisFree(ctx);
    return Status::IOError("redis " + where + ": cannot set the timeout: " + why);
  }
  return std::unique_ptr<Connection>(new Connection(ctx, command_timeout));
}

Connection::~Connection() { redisFree(ctx_); }

std::string Connection::ErrorText() const {
  if (ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    return "timed out after " + std::to_string(command_timeout_.count()) + " ms";
  }
  if (ctx_->err == REDIS_ERR_EOF) return "the server closed the connection";
  if (ctx_->errstr[0] != '\0') return ctx_->errstr;
  return "connection error " + std::to_string(ctx_->err);
}

Status Connection::Pipeline(const std::vector<const Argv*>& commands, std::vector<Reply>* replies) {
  replies->clear();
  if (broken_) return Status::IOError("the connection is broken");
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const Argv* argv : commands) {
    args.clear();
    lens.clear();
    for (const std::string& a : *argv) {
      args.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(ctx_, static_cast<int>(args.size()), args.data(), lens.data()) !=
        REDIS_OK) {
      broken_ = true;
      return Status::IOError(ErrorText());
    }
  }
  SigpipeBlock block;
  replies->reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    errno = 0;
    if (redisGetReply(ctx_, &raw) != REDIS_OK || raw == nullptr) {
      broken_ = true;
      if (raw != nullptr) freeReplyObject(raw);
      return Status::IOError(ErrorText());
    }
    replies->push_back(ConvertReply(static_cast<redisReply*>(raw)));
    freeReplyObject(raw);
  }
  return Status::Ok();
}

}  // namespace harvest::redis
