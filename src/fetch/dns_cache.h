// DnsCache: the bounded, TTL-honouring answer cache shared by the c-ares resolver and the
// scripted FakeResolver (so both apply the same ResolverOptions semantics). Private to
// src/fetch.
//
// Entries expire by the injected Clock; the least recently used entry is evicted beyond
// max_entries. Memory: one list node per entry (the Resolution) plus one index slot keyed by
// a view of the entry's own name.
//
// Thread-safety: none; the owner locks.
#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/clock.h"
#include "fetch/resolver.h"

namespace harvest::fetch {

// Lower-cases `name`, drops surrounding brackets of an IPv6 literal and one trailing dot.
std::string NormalizeHostName(std::string_view name);

// The answer for a numeric address (ok, address = the name, ttl 0), or nullopt.
std::optional<Resolution> NumericResolution(const std::string& normalized);

class DnsCache {
 public:
  explicit DnsCache(const ResolverOptions& options) : options_(options) {}

  // The fresh entry for `name` (marked most recently used), or nullopt; an expired entry
  // is dropped.
  std::optional<Resolution> Get(std::string_view name, Clock::TimePoint now);
  // Sets r.ttl (record_ttl clamped to [min_ttl, max_ttl] for an answer, negative_ttl for a
  // failure), stores r (replacing an entry of the same name; evicting the least recently
  // used beyond max_entries) and returns it.
  Resolution Put(Resolution r, std::chrono::seconds record_ttl, Clock::TimePoint now);
  size_t size() const { return index_.size(); }

 private:
  struct Entry {
    Resolution r;
    Clock::TimePoint expires;
  };
  ResolverOptions options_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;  // views of r.name
};

}  // namespace harvest::fetch
