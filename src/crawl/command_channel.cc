#include "crawl/command_channel.h"

namespace harvest::crawl {

void CommandChannel::Open(OperatorControl* control, std::function<void()> wake) {
  control_ = control;
  MutexLock lock(&mu_);
  wake_ = std::move(wake);
  io_thread_ = std::this_thread::get_id();
  open_ = true;
}

bool CommandChannel::Post(Command command) {
  MutexLock lock(&mu_);
  if (!open_) return false;
  commands_.push_back(std::move(command));
  if (wake_) wake_();  // the loop runs it at its next turn
  return true;
}

bool CommandChannel::OnIoThread() const { return io_thread_.load() == std::this_thread::get_id(); }

void CommandChannel::RunAll() {
  std::deque<Command> batch;
  {
    MutexLock lock(&mu_);
    batch.swap(commands_);
  }
  for (Command& c : batch) c(control_);
}

void CommandChannel::Close() {
  std::deque<Command> left;
  {
    MutexLock lock(&mu_);
    open_ = false;
    io_thread_ = std::thread::id();
    left.swap(commands_);
  }
  control_ = nullptr;
  for (Command& c : left) c(nullptr);
}

}  // namespace harvest::crawl
