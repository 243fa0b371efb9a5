#include "fetch/testing/fake_resolver.h"

#include <utility>

namespace harvest::fetch::testing {

FakeResolver::FakeResolver(Clock* clock, ResolverOptions options, std::function<void()> wakeup)
    : clock_(clock), wakeup_(std::move(wakeup)), cache_(options) {
  default_ = Script{.kind = Script::Kind::kAnswer, .value = "10.0.0.1"};
}

void FakeResolver::set_wakeup(std::function<void()> wakeup) {
  MutexLock lock(&mu_);
  wakeup_ = std::move(wakeup);
}

void FakeResolver::SetAnswer(const std::string& name, std::string address,
                             std::chrono::seconds ttl) {
  Set(name, Script{.kind = Script::Kind::kAnswer, .value = std::move(address), .ttl = ttl});
}

void FakeResolver::SetFailure(const std::string& name, std::string error) {
  Set(name, Script{.kind = Script::Kind::kFailure, .value = std::move(error)});
}

void FakeResolver::SetHang(const std::string& name) {
  Set(name, Script{.kind = Script::Kind::kHang});
}

void FakeResolver::SetDefaultAnswer(std::string address, std::chrono::seconds ttl) {
  MutexLock lock(&mu_);
  default_ = Script{.kind = Script::Kind::kAnswer, .value = std::move(address), .ttl = ttl};
}

void FakeResolver::SetDefaultFailure(std::string error) {
  MutexLock lock(&mu_);
  default_ = Script{.kind = Script::Kind::kFailure, .value = std::move(error)};
}

void FakeResolver::Set(const std::string& name, Script script) {
  std::function<void()> wakeup;
  {
    MutexLock lock(&mu_);
    const std::string key = NormalizeHostName(name);
    script_[key] = script;
    if (script.kind == Script::Kind::kHang || hung_.erase(key) == 0) return;
    Finish(key, script);  // a hung lookup ends now
    wakeup = wakeup_;
  }
  if (wakeup) wakeup();
}

void FakeResolver::Finish(const std::string& key, const Script& script) {
  Resolution r{.name = key};
  if (script.kind == Script::Kind::kAnswer) {
    r.ok = true;
    r.address = script.value;
  } else {
    r.error = script.value;
  }
  completed_.push_back(cache_.Put(std::move(r), script.ttl, clock_->Now()));
}

size_t FakeResolver::lookups(std::string_view name) const {
  MutexLock lock(&mu_);
  auto it = lookups_.find(NormalizeHostName(name));
  return it == lookups_.end() ? 0 : it->second;
}

size_t FakeResolver::total_lookups() const {
  MutexLock lock(&mu_);
  return total_lookups_;
}

std::optional<Resolution> FakeResolver::Cached(std::string_view name) {
  const std::string key = NormalizeHostName(name);
  if (auto numeric = NumericResolution(key)) return numeric;
  MutexLock lock(&mu_);
  return cache_.Get(key, clock_->Now());
}

void FakeResolver::Resolve(std::string_view name) {
  const std::string key = NormalizeHostName(name);
  std::function<void()> wakeup;
  {
    MutexLock lock(&mu_);
    std::optional<Resolution> known = NumericResolution(key);
    if (!known) known = cache_.Get(key, clock_->Now());
    if (known) {
      completed_.push_back(std::move(*known));
    } else {
      if (hung_.contains(key)) return;  // coalesced with the running lookup
      ++lookups_[key];
      ++total_lookups_;
      auto it = script_.find(key);
      const Script script = it != script_.end() ? it->second : default_;
      if (script.kind == Script::Kind::kHang) {
        hung_.insert(key);
        return;
      }
      Finish(key, script);
    }
    wakeup = wakeup_;
  }
  if (wakeup) wakeup();
}

std::vector<Resolution> FakeResolver::TakeCompleted() {
  std::vector<Resolution> out;
  MutexLock lock(&mu_);
  out.swap(completed_);
  return out;
}

size_t FakeResolver::pending() const {
  MutexLock lock(&mu_);
  return hung_.size();
}

size_t FakeResolver::cached() const {
  MutexLock lock(&mu_);
  return cache_.size();
}

}  // namespace harvest::fetch::testing
