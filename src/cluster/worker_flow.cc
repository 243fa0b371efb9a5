// The flow of URLs through the shared crawl (worker.h, docs/distributed.md): admissions,
// done marks with their host records and recrawl schedules, taking URLs, completion, and
// what the flow does when a lease comes or goes (handing hosts over, a partition given up).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/worker.h"

namespace harvest::cluster {

using internal::LuaScripts;
using internal::PartitionTag;

bool RedisCrawl::Impl::FlushAdmits(std::vector<frontier::UrlItem> items) {
  if (items.empty()) return true;
  std::map<int, std::vector<const frontier::UrlItem*>> by_part;
  for (const frontier::UrlItem& item : items) {
    by_part[PartitionOf(item.host, o_.partitions)].push_back(&item);
  }
  std::vector<redis::Request> reqs;
  std::vector<int> req_part;
  for (const auto& [p, list] : by_part) {
    const std::string tag = PartitionTag(o_.prefix, p);
    for (size_t start = 0; start < list.size(); start += 256) {
      std::vector<std::string> keys = {tag + "seen", tag + "pending", tag + "ready", tag + "lease"};
      std::vector<std::string> args;
      for (size_t i = start; i < std::min(list.size(), start + 256); ++i) {
        keys.push_back(tag + "q:" + list[i]->host);
        args.push_back(internal::FpHex(list[i]->fp));
        args.push_back(list[i]->host);
        args.push_back(internal::EncodeItem(*list[i]));
      }
      reqs.push_back(redis_->Eval(LuaScripts().admit, keys, args));
      req_part.push_back(p);
    }
  }
  Result<std::vector<redis::Reply>> r = RunAll(reqs);
  if (!r.ok()) return false;
  uint64_t added = 0;
  std::map<std::string, std::set<int>> wakes;  // owner → partitions with new URLs
  for (size_t i = 0; i < r->size(); ++i) {
    const redis::Reply& rep = (*r)[i];
    if (rep.is_error() || rep.elements.size() != 2) {
      Fail(Status::Unavailable("redis admission: " + rep.DebugString()));
      return false;
    }
    const int64_t n = rep.elements[0].integer;
    added += static_cast<uint64_t>(n);
    if (n == 0) continue;
    Part& part = parts_[static_cast<size_t>(req_part[i])];
    const std::string& lease = rep.elements[1].str;  // "" when no worker holds it
    const std::string owner = lease.substr(0, lease.find(' '));
    if (owner == member_) {
      part.next_take = 0;
      part.idle_ms = 0;
    } else if (!owner.empty()) {
      wakes[owner].insert(req_part[i]);
    }
  }
  // The owners of partitions that got new URLs look at them at once (their wake set),
  // rather than at their next poll of an idle partition.
  std::vector<redis::Request> wake;
  for (const auto& [owner, parts] : wakes) {
    redis::Argv argv = {"SADD", internal::WakeKey(o_.prefix, owner)};
    for (int p : parts) argv.push_back(std::to_string(p));
    wake.push_back({std::move(argv)});
  }
  if (!wake.empty() && !RunAll(wake).ok()) return false;
  MutexLock lock(&mu_);
  stats_.admitted_sent += items.size();
  stats_.admitted_new += added;
  return true;
}

// Done marks and host records, one script per partition. A host's record is written no
// later than the partition's next done marks (the crawl saves it before it marks the URL
// done), with them — one round trip for both — or, when no done mark comes, after 1 s or
// before the partition is given up.
bool RedisCrawl::Impl::FlushDones(const std::vector<DoneMark>& dones,
                                  std::vector<HostWrite> host_writes) {
  const int64_t now = SteadyMs();
  for (HostWrite& w : host_writes) {
    Part& part = parts_[static_cast<size_t>(w.partition)];
    // Not ours (any more): the new owner's records are the ones that count.
    if (!leases_.lease(w.partition).owned) continue;
    if (part.host_records.empty()) part.host_records_since = now;
    part.host_records.insert_or_assign(std::move(w.field), std::move(w.value));
    hosts_waiting_.insert(w.partition);
  }
  struct Batch {
    std::vector<std::string> fps;
    std::vector<const DoneMark*> schedules;
  };
  std::map<int, Batch> by_part;
  for (const DoneMark& d : dones) {
    Part& part = parts_[static_cast<size_t>(d.partition)];
    if (part.taken > 0) --part.taken;
    part.delay_ms = std::max(part.delay_ms, d.delay_ms);
    Batch& b = by_part[d.partition];
    b.fps.push_back(internal::FpHex(d.fp));
    if (d.schedule) b.schedules.push_back(&d);
  }
  for (int p : hosts_waiting_) {
    if (now - parts_[static_cast<size_t>(p)].host_records_since >= 1000) by_part[p];
  }
  if (by_part.empty()) return true;
  std::vector<redis::Request> reqs;
  for (auto& [p, batch] : by_part) {
    reqs.push_back(DoneRequest(p, std::move(batch.fps), batch.schedules));
  }
  Result<std::vector<redis::Reply>> r = RunAll(reqs);
  if (!r.ok()) return false;
  for (const redis::Reply& rep : *r) {
    if (rep.is_error()) {
      Fail(Status::Unavailable("redis done mark: " + rep.str));
      return false;
    }
  }
  MutexLock lock(&mu_);
  stats_.done += dones.size();
  return true;
}

redis::Request RedisCrawl::Impl::DoneRequest(int p, std::vector<std::string> fps,
                                             const std::vector<const DoneMark*>& schedules) {
  Part& part = parts_[static_cast<size_t>(p)];
  const std::string tag = PartitionTag(o_.prefix, p);
  std::vector<std::string> args = {leases_.lease(p).token, std::to_string(fps.size())};
  for (std::string& fp : fps) args.push_back(std::move(fp));
  args.push_back(std::to_string(schedules.size()));
  for (const DoneMark* d : schedules) {
    args.push_back(internal::FpHex(d->fp));
    args.push_back(std::to_string(d->due_ms));
    args.push_back(d->record);
    args.push_back(d->item);
  }
  for (auto& [field, value] : part.host_records) {
    args.push_back(field);
    args.push_back(std::move(value));
  }
  part.host_records.clear();
  hosts_waiting_.erase(p);
  return redis_->Eval(LuaScripts().done,
                      {tag + "taken", tag + "pending", tag + "done", tag + "lease", tag + "hosts",
                       tag + "due", tag + "recs"},
                      args);
}

// Partitions of ours another worker admitted URLs to since the last look.
void RedisCrawl::Impl::ReadWakes() {
  Result<redis::Reply> r = redis_->Run({{"SPOP", internal::WakeKey(o_.prefix, member_), "1024"}});
  if (!r.ok()) {
    Fail(r.status());
    return;
  }
  for (const redis::Reply& e : r->elements) {
    const int p = std::atoi(e.str.c_str());
    if (p >= 0 && p < count_) {
      parts_[static_cast<size_t>(p)].next_take = 0;
      parts_[static_cast<size_t>(p)].idle_ms = 0;
    }
  }
}

void RedisCrawl::Impl::Take() {
  ReadWakes();
  const int64_t now = SteadyMs();
  const int64_t wall = WallMs();
  std::vector<redis::Request> reqs;
  std::vector<int> which;
  for (int i = 0; i < count_; ++i) {
    Part& p = parts_[static_cast<size_t>(i)];
    const PartitionLeases::Lease& lease = leases_.lease(i);
    if (!lease.owned || lease.draining || wall < lease.hold_until_wall || now < p.next_take) {
      continue;
    }
    if (p.taken >= o_.max_taken_per_partition / 2) continue;
    if (!leases_.Valid(i, now)) continue;
    const std::string tag = PartitionTag(o_.prefix, i);
    reqs.push_back(redis_->Eval(
        LuaScripts().take,
        {tag + "lease", tag + "ready", tag + "taken", tag + "due", tag + "recs", tag + "pending"},
        {lease.token, std::to_string(o_.max_taken_per_partition - p.taken),
         std::to_string(o_.take_per_host), tag + "q:", std::to_string(wall)}));
    which.push_back(i);
  }
  Result<std::vector<redis::Reply>> r = RunAll(reqs);
  if (!r.ok()) return;
  std::vector<frontier::UrlItem> got;
  std::vector<std::pair<uint64_t, state::SeenRecord>> previous;
  for (size_t k = 0; k < which.size(); ++k) {
    Part& p = parts_[static_cast<size_t>(which[k])];
    const redis::Reply& rep = (*r)[k];
    if (rep.is_error()) {
      leases_.Drop(which[k]);
      Fail(Status::Aborted("partition " + std::to_string(which[k]) + ": " + rep.str));
      return;
    }
    if (rep.type != redis::Reply::Type::kArray || rep.elements.size() != 2 ||
        rep.elements[0].elements.size() != rep.elements[1].elements.size()) {
      Fail(Status::Unavailable("redis take: " + rep.DebugString()));
      return;
    }
    const std::vector<redis::Reply>& items = rep.elements[0].elements;
    const std::vector<redis::Reply>& recs = rep.elements[1].elements;
    if (items.empty()) {
      // Nothing queued: new URLs come with a wake-up; a slow poll (200 ms doubling to
      // 3 s) covers one lost with a change of owner.
      p.idle_ms = std::clamp<int64_t>(p.idle_ms * 2, 200, 3000);
      p.next_take = now + p.idle_ms;
      continue;
    }
    p.idle_ms = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      std::optional<frontier::UrlItem> item = internal::DecodeItem(items[i].str);
      if (!item) {
        spdlog::warn("shared crawl: a malformed queue entry in partition {} skipped", which[k]);
        continue;
      }
      if (item->recrawl && !recs[i].str.empty()) {
        state::SeenRecord r;
        if (state::DecodeSeen(recs[i].str, &r)) {
          previous.emplace_back(item->fp, std::move(r));
        } else {
          spdlog::warn("shared crawl: a malformed seen record of {} ignored", item->url);
        }
      }
      ++p.taken;
      got.push_back(std::move(*item));
    }
  }
  if (got.empty()) return;
  {
    MutexLock lock(&mu_);
    stats_.taken += got.size();
    for (auto& r : previous) previous_.push_back(std::move(r));
    for (frontier::UrlItem& item : got) ready_.push_back(std::move(item));
  }
  complete_.store(false);
  if (wake_) wake_();
}

void RedisCrawl::Impl::Balance() {
  std::vector<PartitionLeases::Acquired> acquired;
  Status s = leases_.Balance(&acquired);
  for (PartitionLeases::Acquired& a : acquired) {
    Part& p = parts_[static_cast<size_t>(a.partition)];
    p.taken = 0;
    p.next_take = 0;
    MutexLock lock(&mu_);
    for (crawl::SharedCrawl::HostHandover& h : a.hosts) handover_.push_back(std::move(h));
    ++stats_.partitions_owned;
    if (!a.graceful) ++stats_.partitions_taken_over;
    stats_.requeued += static_cast<uint64_t>(a.requeued);
    if (!a.graceful) {
      spdlog::info(
          "took over partition {} (its lease expired): {} URLs of {} hosts put back, whose "
          "first request waits {} ms and their Crawl-delay",
          a.partition, a.requeued, a.hosts_in_hand, o_.takeover_hold.count());
    }
  }
  if (!s.ok()) Fail(std::move(s));
}

void RedisCrawl::Impl::GiveUp(int p) {
  Part& part = parts_[static_cast<size_t>(p)];
  std::optional<redis::Request> host_records;
  if (!part.host_records.empty()) host_records = DoneRequest(p, {}, {});
  leases_.GiveUp(p, part.delay_ms, std::move(host_records));
  MutexLock lock(&mu_);
  ++stats_.partitions_given_up;
}

// Complete: nothing of ours outstanding and every partition's pending count 0. Returns
// false when it asked the cluster and the crawl was not complete.
bool RedisCrawl::Impl::CheckComplete() {
  uint64_t gen;
  {
    MutexLock lock(&mu_);
    if (!admit_buf_.empty() || !done_buf_.empty() || !ready_.empty() || !host_buf_.empty()) {
      return true;
    }
    gen = admit_gen_;
  }
  for (const Part& p : parts_) {
    if (p.taken > 0) return true;
  }
  std::vector<redis::Request> reqs;
  for (int i = 0; i < count_; ++i) {
    reqs.push_back({{"GET", PartitionTag(o_.prefix, i) + "pending"}});
  }
  Result<std::vector<redis::Reply>> r = RunAll(reqs);
  if (!r.ok()) return true;
  for (const redis::Reply& rep : *r) {
    if (rep.type == redis::Reply::Type::kString &&
        std::strtoll(rep.str.c_str(), nullptr, 10) != 0) {
      complete_.store(false);
      return false;
    }
  }
  {
    MutexLock lock(&mu_);
    if (admit_gen_ != gen) return true;  // an Admit since the check began
    if (complete_.exchange(true)) return true;
  }
  if (wake_) wake_();
  return true;
}

}  // namespace harvest::cluster
