// CommandChannel: how the admin API's threads reach the crawl's I/O thread (docs/architecture.md
// §4 "command queue"). A command is posted by any thread while the channel is open, and runs
// on the I/O thread at its next loop turn (Post wakes the loop) against the crawl's
// OperatorControl; one still queued when the crawl ends runs with nullptr (it must still
// answer its caller: "no crawl running").
//
// Thread-safety: Post and OnIoThread from any thread; Open, RunAll and Close on the I/O thread.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <thread>

#include "base/mutex.h"

namespace harvest::crawl {

class OperatorControl;

class CommandChannel {
 public:
  // Runs on the I/O thread; `control` is nullptr when the crawl ended before it ran.
  using Command = std::function<void(OperatorControl* control)>;

  CommandChannel() = default;
  CommandChannel(const CommandChannel&) = delete;
  CommandChannel& operator=(const CommandChannel&) = delete;

  // From now on (the calling thread is the I/O thread) commands are accepted; RunAll runs
  // them against `control`. `wake` wakes the loop (any thread).
  void Open(OperatorControl* control, std::function<void()> wake) EXCLUDES(mu_);
  // False (the command is dropped) when the channel is not open.
  bool Post(Command command) EXCLUDES(mu_);
  // The caller is the I/O thread of an open channel.
  bool OnIoThread() const;
  // I/O thread: what commands run against (nullptr when not open).
  OperatorControl* control() const { return control_; }
  // Runs the commands posted so far.
  void RunAll() EXCLUDES(mu_);
  // No more commands: queued ones run with nullptr.
  void Close() EXCLUDES(mu_);

 private:
  Mutex mu_;
  std::deque<Command> commands_ GUARDED_BY(mu_);
  bool open_ GUARDED_BY(mu_) = false;
  std::function<void()> wake_ GUARDED_BY(mu_);
  OperatorControl* control_ = nullptr;  // I/O thread
  std::atomic<std::thread::id> io_thread_{};
};

}  // namespace harvest::crawl
