// Partition leases (worker.h, docs/distributed.md): heartbeats, sticky shares, acquiring,
// renewing and giving up leases, and handing a partition's hosts to the crawl.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster/worker.h"

namespace harvest::cluster {

using internal::LuaScripts;
using internal::PartitionTag;

bool RedisCrawl::Impl::Heartbeat(bool leave) {
  Result<redis::Reply> r =
      redis_->Run(redis_->Eval(LuaScripts().heartbeat, {internal::GlobalTag(o_.prefix) + "workers"},
                               {member_, std::to_string(o_.lease_ttl.count()), leave ? "1" : "0"}));
  if (!r.ok()) {
    Fail(r.status());
    return false;
  }
  if (r->is_error()) {
    Fail(Status::Unavailable("redis heartbeat: " + r->str));
    return false;
  }
  live_workers_ = std::max<size_t>(r->elements.size() / 2, 1);
  return true;
}

size_t RedisCrawl::Impl::Owned() const {
  size_t n = 0;
  for (const Part& p : parts_) n += p.owned && !p.draining;
  return n;
}

// Sticky shares: take free partitions up to ceil(partitions / live workers); give some up
// (after their work here is done) only above that.
void RedisCrawl::Impl::Balance() {
  const size_t share = (static_cast<size_t>(count_) + live_workers_ - 1) / live_workers_;
  size_t owned = Owned();
  if (owned > share) {
    std::vector<int> mine;
    for (int i = 0; i < count_; ++i) {
      const Part& p = parts_[static_cast<size_t>(i)];
      if (p.owned && !p.draining) mine.push_back(i);
    }
    std::sort(mine.begin(), mine.end(), [this](int a, int b) {
      return parts_[static_cast<size_t>(a)].taken < parts_[static_cast<size_t>(b)].taken;
    });
    for (size_t i = 0; i < owned - share; ++i) {
      parts_[static_cast<size_t>(mine[i])].draining = true;  // no more URLs taken
    }
    return;
  }
  if (owned >= share) return;
  // Which partitions are free: one EXISTS each, pipelined.
  std::vector<redis::Request> reqs;
  std::vector<int> candidates;
  const int start = static_cast<int>(std::hash<std::string>{}(o_.worker_id) % count_);
  for (int k = 0; k < count_; ++k) {
    const int i = (start + k) % count_;
    if (parts_[static_cast<size_t>(i)].owned) continue;
    candidates.push_back(i);
    reqs.push_back({{"EXISTS", PartitionTag(o_.prefix, i) + "lease"}});
  }
  Result<std::vector<redis::Reply>> r = RunAll(reqs);
  if (!r.ok()) return;
  std::vector<redis::Request> acquire;
  std::vector<int> acquiring;
  for (size_t k = 0; k < candidates.size() && owned + acquiring.size() < share; ++k) {
    if ((*r)[k].integer != 0) continue;
    const std::string tag = PartitionTag(o_.prefix, candidates[k]);
    acquire.push_back(redis_->Eval(LuaScripts().acquire,
                                   {tag + "lease", tag + "epoch", tag + "taken", tag + "ready",
                                    tag + "released", tag + "quiet", tag + "hosts"},
                                   {member_, std::to_string(o_.lease_ttl.count()), tag + "q:"}));
    acquiring.push_back(candidates[k]);
  }
  const int64_t sent = SteadyMs();
  Result<std::vector<redis::Reply>> a = RunAll(acquire);
  if (!a.ok()) return;
  for (size_t k = 0; k < acquiring.size(); ++k) {
    const redis::Reply& rep = (*a)[k];
    if (rep.is_error()) {
      Fail(Status::Unavailable("redis lease: " + rep.str));
      return;
    }
    if (rep.type != redis::Reply::Type::kArray || rep.elements.size() < 6) continue;  // taken
    Part& p = parts_[static_cast<size_t>(acquiring[k])];
    p.owned = true;
    p.draining = false;
    p.token = rep.elements[0].str;
    p.epoch = p.token.substr(p.token.rfind(' ') + 1);
    const bool graceful = rep.elements[1].integer == 1;
    const int64_t quiet = rep.elements[2].integer;
    // Given up on purpose: the previous owner's quiet time (its clock: plus the margin).
    // Expired: per host (HandOverHosts).
    p.hold_until_wall = graceful && quiet > 0 ? quiet + o_.lease_margin.count() : 0;
    HandOverHosts(acquiring[k], graceful, rep.elements[4], rep.elements[5]);
    p.taken = 0;
    p.next_take = 0;
    valid_until_[acquiring[k]].store(sent + o_.lease_ttl.count() - o_.lease_margin.count());
    MutexLock lock(&mu_);
    ++stats_.partitions_owned;
    if (!graceful) ++stats_.partitions_taken_over;
    stats_.requeued += static_cast<uint64_t>(rep.elements[3].integer);
    if (!graceful) {
      spdlog::info(
          "took over partition {} (its lease expired): {} URLs of {} hosts put back, whose "
          "first request waits {} ms and their Crawl-delay",
          acquiring[k], rep.elements[3].integer, rep.elements[4].elements.size(),
          o_.takeover_hold.count());
    }
  }
}

// The saved state of a partition's hosts, for the crawl (TakeReady), before any of its URLs.
// A host's first request waits for its last recorded request's end plus its delay (the
// previous owner's clock: plus the margin). When the lease expired, a host whose URL the
// dead owner had in hand may still have a request running: it waits the longest a request
// lasts plus its delay (takeover_hold covers the default delay; a longer Crawl-delay adds).
// A host with no URL in hand had its last request's end recorded with its done mark.
void RedisCrawl::Impl::HandOverHosts(int partition, bool graceful, const redis::Reply& in_hand,
                                     const redis::Reply& records) {
  std::map<std::string, crawl::SharedCrawl::HostHandover> hosts;
  for (size_t i = 0; i + 1 < records.elements.size(); i += 2) {
    const std::string& field = records.elements[i].str;
    const std::string& value = records.elements[i + 1].str;
    if (field.size() < 3 || field[1] != ':') continue;
    crawl::SharedCrawl::HostHandover& h = hosts[field.substr(2)];
    bool ok = false;
    if (field[0] == 'p') {
      state::HostPoliteness r;
      if ((ok = state::DecodePoliteness(value, &r))) h.records.politeness = std::move(r);
    } else if (field[0] == 'b') {
      state::BreakerRecord r;
      if ((ok = state::DecodeBreaker(value, &r))) h.records.breaker = r;
    } else if (field[0] == 'r') {
      state::RobotsRecord r;
      if ((ok = state::DecodeRobots(value, &r))) h.records.robots = std::move(r);
    }
    if (!ok) {
      spdlog::warn("shared crawl: a malformed host record '{}' in partition {} skipped", field,
                   partition);
    }
  }
  const int64_t margin_us = o_.lease_margin.count() * 1000;
  for (auto& [host, h] : hosts) {
    if (h.records.politeness) {
      h.not_before_us = h.records.politeness->next_allowed_us + margin_us;
    }
  }
  if (!graceful) {
    const int64_t hold_us = clock_->WallMicros() + o_.takeover_hold.count() * 1000;
    for (const redis::Reply& e : in_hand.elements) {
      crawl::SharedCrawl::HostHandover& h = hosts[e.str];
      int64_t extra_us = 0;
      if (h.records.politeness && h.records.politeness->crawl_delay_ms > 0) {
        extra_us = h.records.politeness->crawl_delay_ms * 1000;
      }
      h.not_before_us = std::max(h.not_before_us, hold_us + extra_us);
    }
  }
  MutexLock lock(&mu_);
  for (auto& [host, h] : hosts) {
    h.host = host;
    handover_.push_back(std::move(h));
  }
}

void RedisCrawl::Impl::Renew() {
  std::vector<redis::Request> reqs;
  std::vector<int> which;
  for (int i = 0; i < count_; ++i) {
    const Part& p = parts_[static_cast<size_t>(i)];
    if (!p.owned) continue;
    const std::string tag = PartitionTag(o_.prefix, i);
    reqs.push_back(redis_->Eval(LuaScripts().renew, {tag + "lease"},
                                {p.token, std::to_string(o_.lease_ttl.count())}));
    which.push_back(i);
  }
  const int64_t sent = SteadyMs();
  Result<std::vector<redis::Reply>> r = RunAll(reqs);
  if (!r.ok()) return;
  for (size_t k = 0; k < which.size(); ++k) {
    if ((*r)[k].is_error() || (*r)[k].integer != 1) {
      parts_[static_cast<size_t>(which[k])].owned = false;
      Fail(Status::Aborted("lost the lease of partition " + std::to_string(which[k]) +
                           " (expired before it was renewed): this worker stops"));
      return;
    }
    valid_until_[which[k]].store(sent + o_.lease_ttl.count() - o_.lease_margin.count());
  }
}

// A draining partition with nothing taken here any more is given up.
void RedisCrawl::Impl::FinishDrains() {
  for (int i = 0; i < count_; ++i) {
    Part& p = parts_[static_cast<size_t>(i)];
    if (p.owned && p.draining && p.taken == 0) GiveUp(i);
  }
}

void RedisCrawl::Impl::GiveUp(int i) {
  Part& p = parts_[static_cast<size_t>(i)];
  valid_until_[i].store(0);  // no request starts here from now on
  const std::string tag = PartitionTag(o_.prefix, i);
  if (!p.host_records.empty()) {  // written before the lease goes
    Result<redis::Reply> w = redis_->Run(DoneRequest(i, {}, {}));
    if (!w.ok() || w->is_error()) spdlog::warn("partition {}: host records not written", i);
  }
  // Every request of the partition has ended (nothing taken is left, or the crawl stopped
  // after its transfers finished): the next may start one host delay from now.
  const int64_t quiet = WallMs() + std::max<int64_t>(p.delay_ms, 1000);
  Result<redis::Reply> r = redis_->Run(
      redis_->Eval(LuaScripts().release, {tag + "lease", tag + "released", tag + "quiet"},
                   {p.token, p.epoch, std::to_string(quiet)}));
  if (!r.ok()) spdlog::warn("giving up partition {}: {}", i, r.status().ToString());
  p.owned = false;
  p.draining = false;
  MutexLock lock(&mu_);
  ++stats_.partitions_given_up;
}

void RedisCrawl::Impl::GiveUpAll() {
  for (int i = 0; i < count_; ++i) {
    if (parts_[static_cast<size_t>(i)].owned) GiveUp(i);
  }
}

std::string RedisCrawl::Impl::WakeKey(const std::string& member) const {
  return internal::GlobalTag(o_.prefix) + "wake:" + member;
}

}  // namespace harvest::cluster
