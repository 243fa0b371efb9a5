// RedisCrawl: a worker's side of a crawl shared over a Redis Cluster (cluster.h,
// docs/distributed.md). The crawl's I/O thread exchanges batches with it under a mutex; its
// own thread does every round trip: admissions, done marks, taking URLs, leases, balance.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "cluster/cluster.h"
#include "cluster/internal.h"

namespace harvest::cluster {

using internal::LuaScripts;
using internal::PartitionTag;

namespace {

int64_t Ms(Clock::TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string RandomNonce() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  return internal::FpHex(gen()).substr(0, 8);
}

std::string ConfigString(const PartitionOptions& p) {
  std::string s = "partitions=" + std::to_string(p.partitions) +
                  ";by=" + (p.by_domain ? "domain" : "host") + ";hot=";
  for (size_t i = 0; i < p.hot_hosts.size(); ++i) {
    if (i > 0) s += ',';
    s += p.hot_hosts[i];
  }
  return s;
}

}  // namespace

class RedisCrawl::Impl {
 public:
  Impl(WorkerOptions o, std::unique_ptr<redis::Cluster> r)
      : o_(std::move(o)),
        clock_(o_.clock != nullptr ? o_.clock : SystemClock::Default()),
        redis_(std::move(r)),
        count_(PartitionCount(o_.partitions)),
        member_(o_.worker_id + "#" + RandomNonce()),
        parts_(static_cast<size_t>(count_)),
        valid_until_(new std::atomic<int64_t>[static_cast<size_t>(count_)]) {
    for (int i = 0; i < count_; ++i) valid_until_[i].store(0);
  }

  ~Impl() { (void)Stop(); }

  Status CheckConfig() {
    const std::string mine = ConfigString(o_.partitions);
    Result<redis::Reply> r = redis_->Run(
        redis_->Eval(LuaScripts().config, {internal::GlobalTag(o_.prefix) + "config"}, {mine}));
    if (!r.ok()) return r.status();
    if (r->is_error()) return Status::Unavailable("redis: " + r->str);
    if (r->str != mine) {
      return Status::InvalidArgument("the crawl '" + o_.prefix +
                                     "' in this cluster is partitioned as '" + r->str +
                                     "', this worker as '" + mine +
                                     "': give every worker the same --partitions, "
                                     "--partition-by and --hot-host options");
    }
    return Status::Ok();
  }

  Status Start(std::function<void()> wake) {
    wake_ = std::move(wake);
    Result<std::unique_ptr<redis::Cluster>> d = redis::Cluster::Connect(o_.redis);
    if (!d.ok()) return d.status();
    digest_redis_ = std::move(*d);
    started_ = true;
    thread_ = std::thread([this] { Loop(); });
    return Status::Ok();
  }

  Status Stop() {
    {
      std::lock_guard lock(mu_);
      if (!started_ || stopping_) return status_;
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    std::lock_guard lock(mu_);
    return status_;
  }

  // A kill -9: the thread ends at once; nothing buffered is written, no lease given up.
  void AbandonForTesting() {
    {
      std::lock_guard lock(mu_);
      if (!started_ || stopping_) return;
      abandon_ = true;
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  void Admit(frontier::UrlItem item) {
    bool full;
    {
      std::lock_guard lock(mu_);
      complete_.store(false);
      ++admit_gen_;
      admit_buf_.push_back(std::move(item));
      full = admit_buf_.size() >= 4096;
    }
    if (full) cv_.notify_all();
  }

  void TakeReady(crawl::SharedCrawl::Taken* out) {
    std::lock_guard lock(mu_);
    for (crawl::SharedCrawl::HostHandover& h : handover_) out->hosts.push_back(std::move(h));
    handover_.clear();
    for (auto& p : previous_) out->previous.push_back(std::move(p));
    previous_.clear();
    for (frontier::UrlItem& item : ready_) out->urls.push_back(std::move(item));
    ready_.clear();
  }

  void PutHost(const std::string& host, const crawl::SharedCrawl::HostRecords& parts) {
    const int p = PartitionOf(host, o_.partitions);
    std::lock_guard lock(mu_);
    if (parts.politeness)
      host_buf_.push_back({p, "p:" + host, state::EncodePoliteness(*parts.politeness)});
    if (parts.breaker) host_buf_.push_back({p, "b:" + host, state::EncodeBreaker(*parts.breaker)});
    if (parts.robots) host_buf_.push_back({p, "r:" + host, state::EncodeRobots(*parts.robots)});
  }

  void Done(const frontier::UrlItem& item, std::chrono::milliseconds delay,
            const state::SeenRecord* record) {
    DoneMark d{PartitionOf(item.host, o_.partitions), item.fp, delay.count()};
    if (record != nullptr) {
      // Its recrawl, due on the caller's clock (rounded up: never before the refresh window).
      d.schedule = true;
      d.due_ms = record->next_due_us > 0 ? (record->next_due_us + 999) / 1000 : 0;
      d.record = state::EncodeSeen(*record);
      frontier::UrlItem again = item;
      again.recrawl = true;
      again.attempts = 0;
      again.hops = 0;
      d.item = internal::EncodeItem(again);
    }
    std::lock_guard lock(mu_);
    done_buf_.push_back(std::move(d));
  }

  bool MayFetch(std::string_view host) {
    const int p = PartitionOf(host, o_.partitions);
    return Ms(clock_->Now()) < valid_until_[p].load(std::memory_order_relaxed);
  }

  bool Complete() { return complete_.load(); }

  Status status() {
    std::lock_guard lock(mu_);
    return status_;
  }

  std::optional<state::DigestRecord> FindDigest(const std::string& digest) {
    std::lock_guard lock(digest_mu_);
    if (!digest_redis_) return std::nullopt;
    Result<redis::Reply> r = digest_redis_->Run({{"GET", internal::DigestKey(o_.prefix, digest)}});
    if (!r.ok() || r->type != redis::Reply::Type::kString) return std::nullopt;
    // uri \t date_us \t record id
    const std::string& v = r->str;
    size_t a = v.find('\t');
    size_t b = a == std::string::npos ? a : v.find('\t', a + 1);
    if (b == std::string::npos) return std::nullopt;
    state::DigestRecord rec;
    rec.uri = v.substr(0, a);
    rec.date_us = std::strtoll(v.c_str() + a + 1, nullptr, 10);
    rec.record_id = v.substr(b + 1);
    return rec;
  }

  void PutDigest(const std::string& digest, const state::DigestRecord& rec) {
    std::lock_guard lock(digest_mu_);
    if (!digest_redis_) return;
    std::string v = rec.uri + "\t" + std::to_string(rec.date_us) + "\t" + rec.record_id;
    Result<redis::Reply> r =
        digest_redis_->Run({{"SET", internal::DigestKey(o_.prefix, digest), std::move(v), "NX"}});
    if (!r.ok()) spdlog::warn("shared digest index: {}", r.status().ToString());
  }

  crawl::SharedCrawl::Share share() const {
    crawl::SharedCrawl::Share s;
    s.worker = o_.worker_id;
    s.partitions = count_;
    const int64_t now = SteadyMs();
    for (int i = 0; i < count_; ++i) s.partitions_held += now < valid_until_[i].load();
    std::lock_guard lock(mu_);
    s.taken = stats_.taken;
    s.done = stats_.done;
    s.admitted_new = stats_.admitted_new;
    return s;
  }

  WorkerStats stats() const {
    std::lock_guard lock(mu_);
    WorkerStats s = stats_;
    s.redis = redis_stats_;
    std::lock_guard dlock(digest_mu_);
    if (digest_redis_) {  // the writer thread's connection (digest lookups and writes)
      const redis::Cluster::Stats d = digest_redis_->stats();
      s.redis.requests += d.requests;
      s.redis.round_trips += d.round_trips;
      s.redis.bytes_out += d.bytes_out;
      s.redis.bytes_in += d.bytes_in;
      s.redis.redirects += d.redirects;
      s.redis.reconnects += d.reconnects;
      s.redis.retries += d.retries;
    }
    return s;
  }

 private:
  struct Part {
    bool owned = false;
    bool draining = false;
    std::string token;
    std::string epoch;
    int64_t hold_until_wall = 0;  // no URL handed out before (ms)
    size_t taken = 0;             // handed out, not yet done
    int64_t next_take = 0;        // steady ms
    int64_t delay_ms = 0;         // the largest host delay Done reported
    int64_t idle_ms = 0;          // the current poll interval of an empty partition
  };
  struct DoneMark {
    int partition;
    uint64_t fp;
    int64_t delay_ms;
    bool schedule = false;  // a continuous crawl: the URL's seen record and recrawl
    int64_t due_ms = 0;     // wall; 0: not scheduled
    std::string record;     // state::EncodeSeen
    std::string item;       // the URL as it comes back due (recrawl flag set)
  };
  struct HostWrite {
    int partition;
    std::string field;  // "p:", "b:" or "r:" and the host key
    std::string value;  // the state's encoding of the record
  };

  int64_t WallMs() const { return clock_->WallMicros() / 1000; }
  int64_t SteadyMs() const { return Ms(clock_->Now()); }

  void Fail(Status s) {
    spdlog::error("shared crawl: {}", s.ToString());
    {
      std::lock_guard lock(mu_);
      if (status_.ok()) status_ = std::move(s);
    }
    for (int i = 0; i < count_; ++i) valid_until_[i].store(0);
    if (wake_) wake_();
  }

  bool failed() {
    std::lock_guard lock(mu_);
    return !status_.ok();
  }

  // The round trips, in an order that keeps the rules: a page's links are admitted before
  // its done mark is sent (both come in one swap), leases are renewed before URLs are taken.
  void Loop() {
    int64_t next_heartbeat = 0, next_renew = 0, next_check = 0;
    // Workers started together see each other before the first shares are taken.
    const int64_t first_balance = SteadyMs() + 1500;
    for (;;) {
      std::vector<frontier::UrlItem> admits;
      std::vector<DoneMark> dones;
      std::vector<HostWrite> host_writes;
      bool stopping;
      {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, std::chrono::milliseconds(20),
                     [this] { return stopping_ || admit_buf_.size() >= 4096; });
        admits.swap(admit_buf_);
        dones.swap(done_buf_);
        host_writes.swap(host_buf_);
        stopping = stopping_;
        if (abandon_) return;
      }
      if (failed()) {
        if (stopping) return;
        continue;
      }
      const int64_t now = SteadyMs();
      if (!FlushAdmits(std::move(admits)) || !FlushDones(dones, host_writes)) continue;
      if (stopping) {
        GiveUpAll();
        Heartbeat(/*leave=*/true);
        PublishStats();
        return;
      }
      if (now >= next_heartbeat) {
        next_heartbeat = now + 1000;
        if (!Heartbeat(false)) continue;
        if (now >= first_balance) Balance();
      }
      if (now >= next_renew) {
        next_renew = now + o_.lease_ttl.count() / 5;
        Renew();
      }
      FinishDrains();
      Take();
      if (now >= next_check) {
        // Every 250 ms while this worker's part is done, backing off to 1 s while the
        // rest of the crawl is not (a GET per partition each time).
        check_ms_ = CheckComplete() ? 250 : std::min<int64_t>(check_ms_ * 2, 1000);
        next_check = now + check_ms_;
      }
      PublishStats();
    }
  }

  void PublishStats() {
    std::lock_guard lock(mu_);
    redis_stats_ = redis_->stats();
  }

  Result<std::vector<redis::Reply>> RunAll(const std::vector<redis::Request>& reqs) {
    if (reqs.empty()) return std::vector<redis::Reply>{};
    Result<std::vector<redis::Reply>> r = redis_->RunAll(reqs);
    if (!r.ok()) Fail(r.status());
    return r;
  }

  bool FlushAdmits(std::vector<frontier::UrlItem> items) {
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
        std::vector<std::string> keys = {tag + "seen", tag + "pending", tag + "ready",
                                         tag + "lease"};
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
      redis::Argv argv = {"SADD", WakeKey(owner)};
      for (int p : parts) argv.push_back(std::to_string(p));
      wake.push_back({std::move(argv)});
    }
    if (!wake.empty() && !RunAll(wake).ok()) return false;
    std::lock_guard lock(mu_);
    stats_.admitted_sent += items.size();
    stats_.admitted_new += added;
    return true;
  }

  // Done marks and host records, one script per partition: a host's record is written no
  // later than the done marks that follow it (the crawl saves it before it marks the URL done).
  bool FlushDones(const std::vector<DoneMark>& dones, const std::vector<HostWrite>& host_writes) {
    if (dones.empty() && host_writes.empty()) return true;
    struct Batch {
      std::vector<std::string> fps;
      std::vector<const DoneMark*> schedules;
      std::map<std::string_view, std::string_view> hosts;  // field → value, the last wins
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
    for (const HostWrite& w : host_writes) {
      // Not ours (any more): the new owner's records are the ones that count.
      if (!parts_[static_cast<size_t>(w.partition)].owned) continue;
      by_part[w.partition].hosts.insert_or_assign(w.field, w.value);
    }
    std::vector<redis::Request> reqs;
    for (auto& [p, batch] : by_part) {
      if (batch.fps.empty() && batch.hosts.empty()) continue;
      const std::string tag = PartitionTag(o_.prefix, p);
      std::vector<std::string> args = {parts_[static_cast<size_t>(p)].token,
                                       std::to_string(batch.fps.size())};
      for (std::string& fp : batch.fps) args.push_back(std::move(fp));
      args.push_back(std::to_string(batch.schedules.size()));
      for (const DoneMark* d : batch.schedules) {
        args.push_back(internal::FpHex(d->fp));
        args.push_back(std::to_string(d->due_ms));
        args.push_back(d->record);
        args.push_back(d->item);
      }
      for (const auto& [field, value] : batch.hosts) {
        args.emplace_back(field);
        args.emplace_back(value);
      }
      reqs.push_back(redis_->Eval(LuaScripts().done,
                                  {tag + "taken", tag + "pending", tag + "done", tag + "lease",
                                   tag + "hosts", tag + "due", tag + "recs"},
                                  args));
    }
    Result<std::vector<redis::Reply>> r = RunAll(reqs);
    if (!r.ok()) return false;
    for (const redis::Reply& rep : *r) {
      if (rep.is_error()) {
        Fail(Status::Unavailable("redis done mark: " + rep.str));
        return false;
      }
    }
    std::lock_guard lock(mu_);
    stats_.done += dones.size();
    return true;
  }

  bool Heartbeat(bool leave) {
    Result<redis::Reply> r = redis_->Run(
        redis_->Eval(LuaScripts().heartbeat, {internal::GlobalTag(o_.prefix) + "workers"},
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

  size_t Owned() const {
    size_t n = 0;
    for (const Part& p : parts_) n += p.owned && !p.draining;
    return n;
  }

  // Sticky shares: take free partitions up to ceil(partitions / live workers); give some up
  // (after their work here is done) only above that.
  void Balance() {
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
      std::lock_guard lock(mu_);
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
  void HandOverHosts(int partition, bool graceful, const redis::Reply& in_hand,
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
    std::lock_guard lock(mu_);
    for (auto& [host, h] : hosts) {
      h.host = host;
      handover_.push_back(std::move(h));
    }
  }

  void Renew() {
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
  void FinishDrains() {
    for (int i = 0; i < count_; ++i) {
      Part& p = parts_[static_cast<size_t>(i)];
      if (p.owned && p.draining && p.taken == 0) GiveUp(i);
    }
  }

  void GiveUp(int i) {
    Part& p = parts_[static_cast<size_t>(i)];
    valid_until_[i].store(0);  // no request starts here from now on
    const std::string tag = PartitionTag(o_.prefix, i);
    // Every request of the partition has ended (nothing taken is left, or the crawl stopped
    // after its transfers finished): the next may start one host delay from now.
    const int64_t quiet = WallMs() + std::max<int64_t>(p.delay_ms, 1000);
    Result<redis::Reply> r = redis_->Run(
        redis_->Eval(LuaScripts().release, {tag + "lease", tag + "released", tag + "quiet"},
                     {p.token, p.epoch, std::to_string(quiet)}));
    if (!r.ok()) spdlog::warn("giving up partition {}: {}", i, r.status().ToString());
    p.owned = false;
    p.draining = false;
    std::lock_guard lock(mu_);
    ++stats_.partitions_given_up;
  }

  void GiveUpAll() {
    for (int i = 0; i < count_; ++i) {
      if (parts_[static_cast<size_t>(i)].owned) GiveUp(i);
    }
  }

  std::string WakeKey(const std::string& member) const {
    return internal::GlobalTag(o_.prefix) + "wake:" + member;
  }

  // Partitions of ours another worker admitted URLs to since the last look.
  void ReadWakes() {
    Result<redis::Reply> r = redis_->Run({{"SPOP", WakeKey(member_), "1024"}});
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

  void Take() {
    ReadWakes();
    const int64_t now = SteadyMs();
    const int64_t wall = WallMs();
    std::vector<redis::Request> reqs;
    std::vector<int> which;
    for (int i = 0; i < count_; ++i) {
      Part& p = parts_[static_cast<size_t>(i)];
      if (!p.owned || p.draining || wall < p.hold_until_wall || now < p.next_take) continue;
      if (p.taken >= o_.max_taken_per_partition / 2) continue;
      if (now >= valid_until_[i].load()) continue;
      const std::string tag = PartitionTag(o_.prefix, i);
      reqs.push_back(redis_->Eval(
          LuaScripts().take,
          {tag + "lease", tag + "ready", tag + "taken", tag + "due", tag + "recs", tag + "pending"},
          {p.token, std::to_string(o_.max_taken_per_partition - p.taken),
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
        p.owned = false;
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
      std::lock_guard lock(mu_);
      stats_.taken += got.size();
      for (auto& r : previous) previous_.push_back(std::move(r));
      for (frontier::UrlItem& item : got) ready_.push_back(std::move(item));
    }
    complete_.store(false);
    if (wake_) wake_();
  }

  // Complete: nothing of ours outstanding and every partition's pending count 0. Returns
  // false when it asked the cluster and the crawl was not complete.
  bool CheckComplete() {
    uint64_t gen;
    {
      std::lock_guard lock(mu_);
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
      std::lock_guard lock(mu_);
      if (admit_gen_ != gen) return true;  // an Admit since the check began
      if (complete_.exchange(true)) return true;
    }
    if (wake_) wake_();
    return true;
  }

  WorkerOptions o_;
  Clock* clock_;
  std::unique_ptr<redis::Cluster> redis_;  // the worker's thread only
  const int count_;
  const std::string member_;
  std::vector<Part> parts_;                              // the worker's thread only
  std::unique_ptr<std::atomic<int64_t>[]> valid_until_;  // steady ms; 0: not ours
  size_t live_workers_ = 1;
  int64_t check_ms_ = 250;

  mutable std::mutex digest_mu_;
  std::unique_ptr<redis::Cluster> digest_redis_;  // the writer thread's

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<frontier::UrlItem> admit_buf_;
  uint64_t admit_gen_ = 0;  // Admit calls so far
  std::vector<DoneMark> done_buf_;
  std::vector<HostWrite> host_buf_;
  std::vector<frontier::UrlItem> ready_;
  std::vector<crawl::SharedCrawl::HostHandover> handover_;        // before ready_ (TakeReady)
  std::vector<std::pair<uint64_t, state::SeenRecord>> previous_;  // of recrawls in ready_
  bool started_ = false;
  bool stopping_ = false;
  bool abandon_ = false;
  Status status_;
  WorkerStats stats_;
  redis::Cluster::Stats redis_stats_;
  std::atomic<bool> complete_{false};
  std::function<void()> wake_;
  std::thread thread_;
};

Result<std::unique_ptr<RedisCrawl>> RedisCrawl::Create(WorkerOptions options) {
  if (options.worker_id.empty()) {
    return Status::InvalidArgument("a worker of a shared crawl needs --worker-id");
  }
  for (char c : options.worker_id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return Status::InvalidArgument("--worker-id '" + options.worker_id +
                                     "': use letters, digits, '-', '_' and '.' only");
    }
  }
  if (options.partitions.partitions < 1 || options.partitions.partitions > 65536) {
    return Status::InvalidArgument("--partitions must be between 1 and 65536");
  }
  if (options.lease_margin * 2 >= options.lease_ttl) {
    return Status::InvalidArgument("the lease margin must be less than half the lease TTL");
  }
  for (std::string& h : options.partitions.hot_hosts) h = internal::HostName(h);
  Result<std::unique_ptr<redis::Cluster>> r = redis::Cluster::Connect(options.redis);
  if (!r.ok()) return r.status();
  auto impl = std::make_unique<Impl>(std::move(options), std::move(*r));
  if (Status s = impl->CheckConfig(); !s.ok()) return s;
  return std::unique_ptr<RedisCrawl>(new RedisCrawl(std::move(impl)));
}

RedisCrawl::RedisCrawl(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RedisCrawl::~RedisCrawl() = default;
Status RedisCrawl::Start(std::function<void()> wake) { return impl_->Start(std::move(wake)); }
Status RedisCrawl::Stop() { return impl_->Stop(); }
void RedisCrawl::Admit(frontier::UrlItem item) { impl_->Admit(std::move(item)); }
void RedisCrawl::TakeReady(Taken* out) { impl_->TakeReady(out); }
void RedisCrawl::PutHost(const std::string& host, const HostRecords& parts) {
  impl_->PutHost(host, parts);
}
void RedisCrawl::Done(const frontier::UrlItem& item, std::chrono::milliseconds delay,
                      const state::SeenRecord* record) {
  impl_->Done(item, delay, record);
}
bool RedisCrawl::MayFetch(std::string_view host) { return impl_->MayFetch(host); }
bool RedisCrawl::Complete() { return impl_->Complete(); }
Status RedisCrawl::status() { return impl_->status(); }
std::optional<state::DigestRecord> RedisCrawl::FindDigest(const std::string& digest) {
  return impl_->FindDigest(digest);
}
void RedisCrawl::PutDigest(const std::string& digest, const state::DigestRecord& record) {
  impl_->PutDigest(digest, record);
}
WorkerStats RedisCrawl::stats() const { return impl_->stats(); }
crawl::SharedCrawl::Share RedisCrawl::share() { return impl_->share(); }
void RedisCrawl::AbandonForTesting() { impl_->AbandonForTesting(); }

}  // namespace harvest::cluster
