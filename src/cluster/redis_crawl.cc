// RedisCrawl: a worker's side of a crawl shared over a Redis Cluster (cluster.h, worker.h,
// docs/distributed.md): the exchange with the crawl's threads and the round-trip loop.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <random>
#include <set>
#include <thread>

#include "cluster/worker.h"

namespace harvest::cluster {

using internal::LuaScripts;
using internal::Ms;

namespace {

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

RedisCrawl::Impl::Impl(WorkerOptions o, std::unique_ptr<redis::Cluster> r)
    : o_(std::move(o)),
      clock_(o_.clock != nullptr ? o_.clock : SystemClock::Default()),
      redis_(std::move(r)),
      count_(PartitionCount(o_.partitions)),
      member_(o_.worker_id + "#" + RandomNonce()),
      parts_(static_cast<size_t>(count_)),
      leases_(o_, clock_, redis_.get(), member_,
              [this](int p) { return parts_[static_cast<size_t>(p)].taken; }) {}

Status RedisCrawl::Impl::CheckConfig() {
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

Status RedisCrawl::Impl::Start(std::function<void()> wake) {
  wake_ = std::move(wake);
  Result<std::unique_ptr<redis::Cluster>> d = redis::Cluster::Connect(o_.redis);
  if (!d.ok()) return d.status();
  {
    MutexLock dlock(&digest_mu_);
    digest_redis_ = std::move(*d);
  }
  {
    MutexLock lock(&mu_);
    started_ = true;
  }
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

Status RedisCrawl::Impl::Stop() {
  {
    MutexLock lock(&mu_);
    if (!started_ || stopping_) return status_;
    stopping_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
  MutexLock lock(&mu_);
  return status_;
}

// A kill -9: the thread ends at once; nothing buffered is written, no lease given up.
void RedisCrawl::Impl::AbandonForTesting() {
  {
    MutexLock lock(&mu_);
    if (!started_ || stopping_) return;
    abandon_ = true;
    stopping_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

void RedisCrawl::Impl::Admit(frontier::UrlItem item) {
  bool full;
  {
    MutexLock lock(&mu_);
    complete_.store(false);
    ++admit_gen_;
    admit_buf_.push_back(std::move(item));
    full = admit_buf_.size() >= 4096;
  }
  if (full) cv_.SignalAll();
}

void RedisCrawl::Impl::TakeReady(crawl::SharedCrawl::Taken* out) {
  MutexLock lock(&mu_);
  for (crawl::SharedCrawl::HostHandover& h : handover_) out->hosts.push_back(std::move(h));
  handover_.clear();
  for (auto& p : previous_) out->previous.push_back(std::move(p));
  previous_.clear();
  for (frontier::UrlItem& item : ready_) out->urls.push_back(std::move(item));
  ready_.clear();
}

void RedisCrawl::Impl::PutHost(const std::string& host,
                               const crawl::SharedCrawl::HostRecords& parts) {
  const int p = PartitionOf(host, o_.partitions);
  MutexLock lock(&mu_);
  if (parts.politeness)
    host_buf_.push_back({p, "p:" + host, state::EncodePoliteness(*parts.politeness)});
  if (parts.breaker) host_buf_.push_back({p, "b:" + host, state::EncodeBreaker(*parts.breaker)});
  if (parts.robots) host_buf_.push_back({p, "r:" + host, state::EncodeRobots(*parts.robots)});
  if (parts.upgrade) host_buf_.push_back({p, "u:" + host, state::EncodeUpgrade(*parts.upgrade)});
  if (parts.counters) {
    host_buf_.push_back({p, "c:" + host, state::EncodeCounters(*parts.counters)});
  }
}

void RedisCrawl::Impl::Done(const frontier::UrlItem& item, std::chrono::milliseconds delay,
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
  MutexLock lock(&mu_);
  done_buf_.push_back(std::move(d));
}

bool RedisCrawl::Impl::MayFetch(std::string_view host) {
  return leases_.Valid(PartitionOf(host, o_.partitions), Ms(clock_->Now()));
}

Status RedisCrawl::Impl::status() {
  MutexLock lock(&mu_);
  return status_;
}

std::optional<state::DigestRecord> RedisCrawl::Impl::FindDigest(const std::string& digest) {
  MutexLock lock(&digest_mu_);
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

void RedisCrawl::Impl::PutDigest(const std::string& digest, const state::DigestRecord& rec) {
  MutexLock lock(&digest_mu_);
  if (!digest_redis_) return;
  std::string v = rec.uri + "\t" + std::to_string(rec.date_us) + "\t" + rec.record_id;
  Result<redis::Reply> r =
      digest_redis_->Run({{"SET", internal::DigestKey(o_.prefix, digest), std::move(v), "NX"}});
  if (!r.ok()) spdlog::warn("shared digest index: {}", r.status().ToString());
}

crawl::SharedCrawl::Share RedisCrawl::Impl::share() const {
  crawl::SharedCrawl::Share s;
  s.worker = o_.worker_id;
  s.partitions = count_;
  s.partitions_held = leases_.ValidCount(SteadyMs());
  MutexLock lock(&mu_);
  s.taken = stats_.taken;
  s.done = stats_.done;
  s.admitted_new = stats_.admitted_new;
  return s;
}

WorkerStats RedisCrawl::Impl::stats() const {
  MutexLock lock(&mu_);
  WorkerStats s = stats_;
  s.redis = redis_stats_;
  MutexLock dlock(&digest_mu_);
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

void RedisCrawl::Impl::Fail(Status s) {
  spdlog::error("shared crawl: {}", s.ToString());
  {
    MutexLock lock(&mu_);
    if (status_.ok()) status_ = std::move(s);
  }
  leases_.RevokeAll();
  if (wake_) wake_();
}

bool RedisCrawl::Impl::failed() {
  MutexLock lock(&mu_);
  return !status_.ok();
}

// The round trips, in an order that keeps the rules: a page's links are admitted before
// its done mark is sent (both come in one swap), leases are renewed before URLs are taken.
void RedisCrawl::Impl::Loop() {
  int64_t next_heartbeat = 0, next_renew = 0, next_check = 0;
  // Workers started together see each other before the first shares are taken.
  const int64_t first_balance = SteadyMs() + 1500;
  for (;;) {
    std::vector<frontier::UrlItem> admits;
    std::vector<DoneMark> dones;
    std::vector<HostWrite> host_writes;
    bool stopping;
    {
      MutexLock lock(&mu_);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
      while (!stopping_ && admit_buf_.size() < 4096) {
        if (!cv_.WaitUntil(&mu_, deadline)) break;
      }
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
    if (!FlushAdmits(std::move(admits)) || !FlushDones(dones, std::move(host_writes))) continue;
    if (stopping) {
      for (int p : leases_.Held()) GiveUp(p);
      if (Status s = leases_.Heartbeat(/*leave=*/true); !s.ok()) Fail(std::move(s));
      PublishStats();
      return;
    }
    if (now >= next_heartbeat) {
      next_heartbeat = now + 1000;
      if (Status s = leases_.Heartbeat(/*leave=*/false); !s.ok()) {
        Fail(std::move(s));
        continue;
      }
      if (now >= first_balance) Balance();
    }
    if (now >= next_renew) {
      next_renew = now + o_.lease_ttl.count() / 5;
      if (Status s = leases_.Renew(); !s.ok()) Fail(std::move(s));
    }
    // A draining partition with nothing taken here any more is given up.
    for (int p : leases_.Drained()) GiveUp(p);
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

void RedisCrawl::Impl::PublishStats() {
  MutexLock lock(&mu_);
  redis_stats_ = redis_->stats();
}

Result<std::vector<redis::Reply>> RedisCrawl::Impl::RunAll(
    const std::vector<redis::Request>& reqs) {
  if (reqs.empty()) return std::vector<redis::Reply>{};
  Result<std::vector<redis::Reply>> r = redis_->RunAll(reqs);
  if (!r.ok()) Fail(r.status());
  return r;
}

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
