// PartitionLeases (partition_leases.h, docs/distributed.md): heartbeats, sticky shares,
// acquiring, renewing and giving up leases, and reading a partition's hosts for the crawl.
#include "cluster/partition_leases.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cluster/internal.h"

namespace harvest::cluster {

using internal::LuaScripts;
using internal::PartitionTag;

PartitionLeases::PartitionLeases(WorkerOptions o, Clock* clock, redis::Cluster* redis,
                                 std::string member, std::function<size_t(int)> taken)
    : o_(std::move(o)),
      clock_(clock),
      redis_(redis),
      member_(std::move(member)),
      taken_(std::move(taken)),
      count_(PartitionCount(o_.partitions)),
      leases_(static_cast<size_t>(count_)),
      valid_until_(new std::atomic<int64_t>[static_cast<size_t>(count_)]) {
  for (int i = 0; i < count_; ++i) valid_until_[i].store(0);
}

int PartitionLeases::ValidCount(int64_t now) const {
  int n = 0;
  for (int i = 0; i < count_; ++i) n += now < valid_until_[i].load();
  return n;
}

void PartitionLeases::RevokeAll() {
  for (int i = 0; i < count_; ++i) valid_until_[i].store(0);
}

const PartitionLeases::Lease& PartitionLeases::lease(int p) const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return leases_[static_cast<size_t>(p)];
}

void PartitionLeases::Drop(int p) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  leases_[static_cast<size_t>(p)].owned = false;
}

Status PartitionLeases::Heartbeat(bool leave) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  Result<redis::Reply> r =
      redis_->Run(redis_->Eval(LuaScripts().heartbeat, {internal::GlobalTag(o_.prefix) + "workers"},
                               {member_, std::to_string(o_.lease_ttl.count()), leave ? "1" : "0"}));
  if (!r.ok()) return r.status();
  if (r->is_error()) return Status::Unavailable("redis heartbeat: " + r->str);
  live_workers_ = std::max<size_t>(r->elements.size() / 2, 1);
  return Status::Ok();
}

size_t PartitionLeases::Owned() const {
  size_t n = 0;
  for (const Lease& p : leases_) n += p.owned && !p.draining;
  return n;
}

Status PartitionLeases::Balance(std::vector<Acquired>* acquired) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  const size_t share = (static_cast<size_t>(count_) + live_workers_ - 1) / live_workers_;
  size_t owned = Owned();
  if (owned > share) {
    std::vector<int> mine;
    for (int i = 0; i < count_; ++i) {
      const Lease& p = leases_[static_cast<size_t>(i)];
      if (p.owned && !p.draining) mine.push_back(i);
    }
    std::sort(mine.begin(), mine.end(), [this](int a, int b) { return taken_(a) < taken_(b); });
    for (size_t i = 0; i < owned - share; ++i) {
      leases_[static_cast<size_t>(mine[i])].draining = true;  // no more URLs taken
    }
    return Status::Ok();
  }
  if (owned >= share) return Status::Ok();
  // Which partitions are free: one EXISTS each, pipelined.
  std::vector<redis::Request> reqs;
  std::vector<int> candidates;
  const int start = static_cast<int>(std::hash<std::string>{}(o_.worker_id) % count_);
  for (int k = 0; k < count_; ++k) {
    const int i = (start + k) % count_;
    if (leases_[static_cast<size_t>(i)].owned) continue;
    candidates.push_back(i);
    reqs.push_back({{"EXISTS", PartitionTag(o_.prefix, i) + "lease"}});
  }
  Result<std::vector<redis::Reply>> r = RunAll(reqs);
  if (!r.ok()) return r.status();
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
  if (!a.ok()) return a.status();
  for (size_t k = 0; k < acquiring.size(); ++k) {
    const redis::Reply& rep = (*a)[k];
    if (rep.is_error()) return Status::Unavailable("redis lease: " + rep.str);
    if (rep.type != redis::Reply::Type::kArray || rep.elements.size() < 6) continue;  // taken
    Lease& p = leases_[static_cast<size_t>(acquiring[k])];
    p.owned = true;
    p.draining = false;
    p.token = rep.elements[0].str;
    p.epoch = p.token.substr(p.token.rfind(' ') + 1);
    Acquired& got = acquired->emplace_back();
    got.partition = acquiring[k];
    got.graceful = rep.elements[1].integer == 1;
    const int64_t quiet = rep.elements[2].integer;
    // Given up on purpose: the previous owner's quiet time (its clock: plus the margin).
    // Expired: per host (HandOverHosts).
    p.hold_until_wall = got.graceful && quiet > 0 ? quiet + o_.lease_margin.count() : 0;
    got.requeued = rep.elements[3].integer;
    got.hosts_in_hand = rep.elements[4].elements.size();
    got.hosts = HandOverHosts(acquiring[k], got.graceful, rep.elements[4], rep.elements[5]);
    valid_until_[acquiring[k]].store(ValidUntil(sent));
  }
  return Status::Ok();
}

std::vector<crawl::SharedCrawl::HostHandover> PartitionLeases::HandOverHosts(
    int partition, bool graceful, const redis::Reply& in_hand, const redis::Reply& records) const {
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
    } else if (field[0] == 'u') {
      state::UpgradeRecord r;
      if ((ok = state::DecodeUpgrade(value, &r))) h.records.upgrade = r;
    } else if (field[0] == 'c') {
      frontier::HostCounters c;
      if ((ok = state::DecodeCounters(value, &c))) h.records.counters = c;
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
  std::vector<crawl::SharedCrawl::HostHandover> out;
  out.reserve(hosts.size());
  for (auto& [host, h] : hosts) {
    h.host = host;
    out.push_back(std::move(h));
  }
  return out;
}

Status PartitionLeases::Renew() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  std::vector<redis::Request> reqs;
  std::vector<int> which;
  for (int i = 0; i < count_; ++i) {
    const Lease& p = leases_[static_cast<size_t>(i)];
    if (!p.owned) continue;
    const std::string tag = PartitionTag(o_.prefix, i);
    reqs.push_back(redis_->Eval(LuaScripts().renew, {tag + "lease"},
                                {p.token, std::to_string(o_.lease_ttl.count())}));
    which.push_back(i);
  }
  const int64_t sent = SteadyMs();
  Result<std::vector<redis::Reply>> r = RunAll(reqs);
  if (!r.ok()) return r.status();
  for (size_t k = 0; k < which.size(); ++k) {
    if ((*r)[k].is_error() || (*r)[k].integer != 1) {
      leases_[static_cast<size_t>(which[k])].owned = false;
      return Status::Aborted("lost the lease of partition " + std::to_string(which[k]) +
                             " (expired before it was renewed): this worker stops");
    }
    valid_until_[which[k]].store(ValidUntil(sent));
  }
  return Status::Ok();
}

std::vector<int> PartitionLeases::Drained() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  std::vector<int> out;
  for (int i = 0; i < count_; ++i) {
    const Lease& p = leases_[static_cast<size_t>(i)];
    if (p.owned && p.draining && taken_(i) == 0) out.push_back(i);
  }
  return out;
}

std::vector<int> PartitionLeases::Held() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  std::vector<int> out;
  for (int i = 0; i < count_; ++i) {
    if (leases_[static_cast<size_t>(i)].owned) out.push_back(i);
  }
  return out;
}

void PartitionLeases::GiveUp(int i, int64_t delay_ms, std::optional<redis::Request> host_records) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  Lease& p = leases_[static_cast<size_t>(i)];
  valid_until_[i].store(0);  // no request starts here from now on
  const std::string tag = PartitionTag(o_.prefix, i);
  if (host_records) {  // written before the lease goes
    Result<redis::Reply> w = redis_->Run(*host_records);
    if (!w.ok() || w->is_error()) spdlog::warn("partition {}: host records not written", i);
  }
  // Every request of the partition has ended (nothing taken is left, or the crawl stopped
  // after its transfers finished): the next may start one host delay from now.
  const int64_t quiet = clock_->WallMicros() / 1000 + std::max<int64_t>(delay_ms, 1000);
  Result<redis::Reply> r = redis_->Run(
      redis_->Eval(LuaScripts().release, {tag + "lease", tag + "released", tag + "quiet"},
                   {p.token, p.epoch, std::to_string(quiet)}));
  if (!r.ok()) spdlog::warn("giving up partition {}: {}", i, r.status().ToString());
  p.owned = false;
  p.draining = false;
}

Result<std::vector<redis::Reply>> PartitionLeases::RunAll(const std::vector<redis::Request>& reqs) {
  if (reqs.empty()) return std::vector<redis::Reply>{};
  return redis_->RunAll(reqs);
}

int64_t PartitionLeases::ValidUntil(int64_t sent) const {
  return sent + o_.lease_ttl.count() - o_.lease_margin.count();
}

int64_t PartitionLeases::SteadyMs() const { return internal::Ms(clock_->Now()); }

}  // namespace harvest::cluster
