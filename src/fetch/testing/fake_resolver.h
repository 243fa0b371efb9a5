// FakeResolver: a scripted fetch::Resolver for in-process tests of the crawl on a FakeClock.
// No sockets, no threads.
//
// Each name answers from a script: SetAnswer (an address and a record TTL), SetFailure (an
// error), SetHang (the lookup never ends, until the name is given an answer or a failure).
// Unscripted names get the default: an answer 10.0.0.1 with a TTL of 300 s (SetDefaultAnswer,
// SetDefaultFailure change it). A lookup ends at once: Resolve() caches its Resolution and
// queues it for the next TakeCompleted(), and calls `wakeup`.
//
// Caching follows ResolverOptions exactly like the c-ares resolver (same cache code): TTLs
// clamped to [min_ttl, max_ttl], failures kept negative_ttl, expiry by the clock, at most
// max_entries (least recently used evicted). Numeric addresses answer without a lookup.
// Every lookup (not cache hits, not coalesced calls) is counted per name.
//
// Thread-safety: the Resolver methods are for the crawl's I/O thread; scripting and the
// counters may be used from any thread (a mutex guards the state).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "fetch/dns_cache.h"
#include "fetch/resolver.h"

namespace harvest::fetch::testing {

class FakeResolver final : public Resolver {
 public:
  // `clock` must outlive the resolver.
  explicit FakeResolver(Clock* clock, ResolverOptions options = {},
                        std::function<void()> wakeup = nullptr);

  // Called after each Resolve() that queued a result, and when a hung lookup is answered.
  void set_wakeup(std::function<void()> wakeup);
  // `name` (case-insensitive) resolves to `address` with record TTL `ttl`.
  void SetAnswer(const std::string& name, std::string address,
                 std::chrono::seconds ttl = std::chrono::seconds(300));
  // `name` fails with `error`.
  void SetFailure(const std::string& name, std::string error = "NXDOMAIN (domain name not found)");
  // Lookups of `name` never end (pending() counts them) until SetAnswer/SetFailure for it.
  void SetHang(const std::string& name);
  // The answer for unscripted names.
  void SetDefaultAnswer(std::string address, std::chrono::seconds ttl = std::chrono::seconds(300));
  void SetDefaultFailure(std::string error);

  // Lookups made for `name` (case-insensitive), and for all names.
  size_t lookups(std::string_view name) const;
  size_t total_lookups() const;

  std::optional<Resolution> Cached(std::string_view name) override;
  void Resolve(std::string_view name) override;
  std::vector<Resolution> TakeCompleted() override;
  size_t pending() const override;
  size_t cached() const override;

 private:
  struct Script {
    enum class Kind { kAnswer, kFailure, kHang } kind = Kind::kAnswer;
    std::string value;  // the address or the error
    std::chrono::seconds ttl{300};
  };
  void Set(const std::string& name, Script script) EXCLUDES(mu_);
  // Ends the lookup of `key` per `script`. REQUIRES: kind != kHang.
  void Finish(const std::string& key, const Script& script) REQUIRES(mu_);

  Clock* const clock_;
  mutable Mutex mu_;
  std::function<void()> wakeup_ GUARDED_BY(mu_);
  DnsCache cache_ GUARDED_BY(mu_);
  std::map<std::string, Script> script_ GUARDED_BY(mu_);
  Script default_ GUARDED_BY(mu_);
  std::set<std::string> hung_ GUARDED_BY(mu_);
  std::map<std::string, size_t, std::less<>> lookups_ GUARDED_BY(mu_);
  size_t total_lookups_ GUARDED_BY(mu_) = 0;
  std::vector<Resolution> completed_ GUARDED_BY(mu_);
};

}  // namespace harvest::fetch::testing
