// The crawl as one worker of a shared crawl (SharedCrawl, docs/distributed.md), in-process on
// the scripted fetcher and an in-memory stand-in for the shared store: what the worker
// admits goes to the store, it fetches only what the store hands it, reports each URL done
// once, pauses a host whose lease is not valid and stops on the store's failure.
#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <set>

#include "crawl/crawler_test_fixture.h"

namespace harvest::crawl {
namespace {

using namespace crawler_test_util;

// One worker's view of a shared crawl kept in memory. URLs of hosts in `elsewhere` belong
// to other workers: they are admitted and then finished "by them" (never handed out here).
class MemoryShared : public SharedCrawl {
 public:
  std::set<std::string> elsewhere;
  std::function<int64_t()> wall;  // set: recrawls come due by this clock
  std::function<void(const std::string&, const HostRecords&)> on_put_host;
  std::function<bool(std::string_view)> may_fetch = [](std::string_view) { return true; };
  Status failure;

  Status Start(std::function<void()> wake) override {
    wake_ = std::move(wake);
    return Status::Ok();
  }
  Status Stop() override {
    stopped = true;
    return Status::Ok();
  }
  void Admit(frontier::UrlItem item) override {
    std::lock_guard lock(mu_);
    ++admit_calls;
    if (!seen.insert(item.fp).second) return;
    admitted.push_back(item.url);
    if (elsewhere.contains(std::string(item.host))) {
      done_elsewhere.insert(item.url);
      return;
    }
    queue.push_back(std::move(item));
  }
  void TakeReady(Taken* out) override {
    if (wall) ReleaseDue(wall());
    std::lock_guard lock(mu_);
    for (HostHandover& h : handover) out->hosts.push_back(std::move(h));
    handover.clear();
    while (!queue.empty()) {
      const uint64_t fp = queue.front().fp;
      taken[fp] = queue.front().url;
      if (auto r = records.find(fp); queue.front().recrawl && r != records.end()) {
        out->previous.emplace_back(fp, r->second);
      }
      out->urls.push_back(std::move(queue.front()));
      queue.pop_front();
    }
  }
  void PutHost(const std::string& host, const HostRecords& parts) override {
    if (on_put_host) on_put_host(host, parts);
    std::lock_guard lock(mu_);
    HostRecords& r = saved_hosts[host];
    if (parts.politeness) r.politeness = parts.politeness;
    if (parts.breaker) r.breaker = parts.breaker;
    if (parts.robots) r.robots = parts.robots;
    if (parts.counters) r.counters = parts.counters;
    ++put_host_calls;
  }
  void Done(const frontier::UrlItem& item, std::chrono::milliseconds delay,
            const state::SeenRecord* record) override {
    std::lock_guard lock(mu_);
    EXPECT_EQ(taken.erase(item.fp), 1u) << item.url << " done but not taken (or done twice)";
    done.push_back(item.url);
    last_delay = delay;
    if (record != nullptr) {
      records[item.fp] = *record;
      if (record->next_due_us > 0) schedule[item.fp] = {record->next_due_us, item};
    }
  }
  // Recrawls due by `wall_us` back into the queue, as the shared crawl's take does.
  void ReleaseDue(int64_t wall_us) {
    std::lock_guard lock(mu_);
    for (auto it = schedule.begin(); it != schedule.end();) {
      if (it->second.first > wall_us) {
        ++it;
        continue;
      }
      frontier::UrlItem again = it->second.second;
      again.recrawl = true;
      queue.push_back(std::move(again));
      it = schedule.erase(it);
    }
  }
  bool MayFetch(std::string_view host) override { return may_fetch(host); }
  bool Complete() override {
    std::lock_guard lock(mu_);
    return queue.empty() && taken.empty();
  }
  Status status() override { return failure; }
  Share share() override { return {.worker = "mem"}; }
  std::optional<state::DigestRecord> FindDigest(const std::string& digest) override {
    std::lock_guard lock(mu_);
    auto it = digests.find(digest);
    if (it == digests.end()) return std::nullopt;
    return it->second;
  }
  void PutDigest(const std::string& digest, const state::DigestRecord& record) override {
    std::lock_guard lock(mu_);
    digests.emplace(digest, record);
  }

  std::mutex mu_;
  std::set<uint64_t> seen;
  std::deque<frontier::UrlItem> queue;
  std::map<uint64_t, std::string> taken;
  std::vector<std::string> admitted, done;
  std::set<std::string> done_elsewhere;
  std::map<std::string, state::DigestRecord> digests;
  std::map<uint64_t, state::SeenRecord> records;  // by fingerprint: a URL's last seen record
  std::map<uint64_t, std::pair<int64_t, frontier::UrlItem>> schedule;  // due wall µs, URL
  std::chrono::milliseconds last_delay{0};
  std::vector<HostHandover> handover;  // delivered with the first TakeReady
  std::map<std::string, HostRecords> saved_hosts;
  int put_host_calls = 0;
  int admit_calls = 0;
  bool stopped = false;

 private:
  std::function<void()> wake_;
};

class SharedCrawlTest : public CrawlerTestBase {};

TEST_F(SharedCrawlTest, AWorkerFetchesOnlyWhatTheSharedCrawlHandsItAndReportsEachDoneOnce) {
  fetcher_->Script("http://a.test/",
                   FakeResponse::Html(Links({"/p0", "/p1", "http://b.test/", "http://b.test/x"})));
  fetcher_->Script("http://a.test/p0", FakeResponse::Html(Links({"/p1", "/p2"})));
  fetcher_->SetDefault(FakeResponse::Html("page"));
  MemoryShared shared;
  shared.elsewhere = {"http://b.test"};
  CrawlOptions o = Options();
  o.shared = &shared;
  CrawlStats stats = Crawl(o, {"http://a.test/"});
  EXPECT_TRUE(stats.complete);
  EXPECT_TRUE(shared.stopped);
  // Everything found went to the shared crawl; b.test's URLs belong to another worker.
  EXPECT_EQ(std::set<std::string>(shared.admitted.begin(), shared.admitted.end()),
            (std::set<std::string>{"http://a.test/", "http://a.test/p0", "http://a.test/p1",
                                   "http://a.test/p2", "http://b.test/", "http://b.test/x"}));
  EXPECT_EQ(fetcher_->RequestsFor("http://b.test/"), 0u);
  EXPECT_EQ(fetcher_->RequestsFor("http://b.test/robots.txt"), 0u);
  for (const char* u :
       {"http://a.test/", "http://a.test/p0", "http://a.test/p1", "http://a.test/p2"}) {
    EXPECT_EQ(fetcher_->RequestsFor(u), 1u) << u;
  }
  // Each URL taken is reported done exactly once (MemoryShared::Done checks), with its
  // host's delay for a next owner to wait out.
  EXPECT_EQ(shared.done.size(), 4u);
  EXPECT_EQ(shared.last_delay, std::chrono::milliseconds(1000));
  // The payload digests went to the shared index.
  EXPECT_FALSE(shared.digests.empty());
  ExpectPolite(1s);
}

TEST_F(SharedCrawlTest, AHostsRobotsPolitenessAndBreakerGoToTheSharedCrawl) {
  fetcher_->Script("http://a.test/robots.txt",
                   FakeResponse::Text("User-agent: *\nDisallow: /private\nCrawl-delay: 2\n"));
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/p0", "/private/x"})));
  fetcher_->Script("http://a.test/p0", FakeResponse::WithStatus(503));
  fetcher_->SetDefault(FakeResponse::Html("page"));
  MemoryShared shared;
  // A robots.txt record reaches the shared crawl only after its capture was written (a
  // worker taking the host over fetches no robots.txt, so the capture must not be lost).
  std::atomic<int> robots_puts{0};
  shared.on_put_host = [&](const std::string&, const SharedCrawl::HostRecords& parts) {
    if (!parts.robots) return;
    ++robots_puts;
    std::ifstream f(dir_ / "crawl" / "outcomes.jsonl");
    std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NE(all.find("http://a.test/robots.txt"), std::string::npos)
        << "robots.txt record shared before its capture was written";
  };
  CrawlOptions o = Options();
  o.shared = &shared;
  CrawlStats stats = Crawl(o, {"http://a.test/"});
  EXPECT_TRUE(stats.complete);
  EXPECT_EQ(robots_puts.load(), 1);
  ASSERT_TRUE(shared.saved_hosts.contains("http://a.test"));
  const SharedCrawl::HostRecords& r = shared.saved_hosts["http://a.test"];
  ASSERT_TRUE(r.robots.has_value());
  EXPECT_EQ(r.robots->status, 200);
  EXPECT_NE(r.robots->body.find("Disallow: /private"), std::string::npos);
  ASSERT_TRUE(r.politeness.has_value());
  EXPECT_EQ(r.politeness->crawl_delay_ms, 2000);
  // Its last request's end plus the 2 s delay, on the wall clock.
  EXPECT_GE(r.politeness->next_allowed_us, clock_.WallMicros() - 60'000'000);
  ASSERT_TRUE(r.breaker.has_value());  // p0's 503s (retried) opened the breaker
  EXPECT_TRUE(r.breaker->open);
  EXPECT_GT(shared.put_host_calls, 2);
}

TEST_F(SharedCrawlTest, AHostTakenOverStartsFromItsSavedState) {
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/p0", "/private/x", "/p1"})));
  fetcher_->SetDefault(FakeResponse::Html("page"));
  MemoryShared shared;
  const Clock::TimePoint start = clock_.Now();
  const int64_t wall = clock_.WallMicros();
  // The previous owner fetched robots.txt (Crawl-delay 3) and its last request's delay runs
  // for 4 s more; it died holding a URL of the host, so the first request waits 7 s.
  SharedCrawl::HostHandover h{.host = "http://a.test"};
  h.records.robots =
      state::RobotsRecord{.status = 200,
                          .expiry_us = wall + 3'600'000'000LL,
                          .body = "User-agent: *\nDisallow: /private\nCrawl-delay: 3\n"};
  h.records.politeness =
      state::HostPoliteness{.next_allowed_us = wall + 4'000'000, .crawl_delay_ms = 3000};
  h.not_before_us = wall + 7'000'000;
  shared.handover.push_back(h);
  CrawlOptions o = Options();
  o.shared = &shared;
  CrawlStats stats = Crawl(o, {"http://a.test/"});
  EXPECT_TRUE(stats.complete);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/robots.txt"), 0u);  // its rules came along
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/private/x"), 0u);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/p1"), 1u);
  ASSERT_FALSE(fetcher_->log().empty());
  EXPECT_GE(fetcher_->log().front().start - start, 7s);
  ExpectPolite(3s);
}

// The daily quota is counted per host across workers: a host taken over whose last owner
// fetched its quota today gets no request before the next UTC day, and this worker saves its
// own requests to the shared crawl for the next owner.
TEST_F(SharedCrawlTest, AHostTakenOverKeepsItsDailyQuotaCount) {
  constexpr int64_t kDay = int64_t{86'400} * 1'000'000;
  const int64_t midnight = 20'000 * kDay;
  clock_.SetMicros(midnight - 20'000'000);  // 23:59:40 UTC
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/p0", "/p1"})));
  fetcher_->SetDefault(FakeResponse::Html("page"));
  MemoryShared shared;
  SharedCrawl::HostHandover h{.host = "a.test"};
  h.records.counters =
      frontier::HostCounters{.day = 19'999, .fetched_today = 5, .admitted = 5, .fetched = 5};
  shared.handover.push_back(h);
  CrawlOptions o = Options();
  o.shared = &shared;
  o.traps.host_daily_quota = 5;
  CrawlStats stats = Crawl(o, {"http://a.test/"});
  EXPECT_TRUE(stats.complete);
  ASSERT_FALSE(fetcher_->log().empty());
  EXPECT_GE(fetcher_->log().front().start, Clock::TimePoint(std::chrono::microseconds(midnight)))
      << "the last owner's requests today count";
  EXPECT_GT(stats.quota_waits, 0u);
  ASSERT_TRUE(shared.saved_hosts.contains("a.test"));
  ASSERT_TRUE(shared.saved_hosts["a.test"].counters.has_value());
  EXPECT_EQ(shared.saved_hosts["a.test"].counters->fetched, 5u + fetcher_->log().size());
}

TEST_F(SharedCrawlTest, AHostKnownHereTakesTheSavedStateWhenTakenOverAgain) {
  fetcher_->SetDefault(FakeResponse::Html("page"));
  MemoryShared shared;
  CrawlOptions o = Options();
  o.shared = &shared;
  // This process knows a.test (fetched its robots.txt: no rules, and is done with it); when
  // b.test's last page comes, a.test's partition is handed back to it with a new robots.txt
  // another worker found, which disallows /late.
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/p0"})));
  fetcher_->Script("http://b.test/", FakeResponse::Html(Links({"/p0", "/p1", "/p2"})));
  fetcher_->OnComplete([&](const FakeRequestLog& r) {
    if (r.url != "http://b.test/p2") return;
    SharedCrawl::HostHandover h{.host = "http://a.test"};
    h.records.robots = state::RobotsRecord{.status = 200,
                                           .expiry_us = clock_.WallMicros() + 3'600'000'000LL,
                                           .body = "User-agent: *\nDisallow: /late\n"};
    std::lock_guard lock(shared.mu_);
    shared.handover.push_back(h);
    frontier::UrlItem late{.url = "http://a.test/late", .host = "http://a.test", .fp = 77};
    shared.seen.insert(late.fp);
    shared.queue.push_back(late);
  });
  CrawlStats stats = Crawl(o, {"http://a.test/", "http://b.test/"});
  EXPECT_TRUE(stats.complete);
  EXPECT_EQ(fetcher_->RequestsFor("http://b.test/p2"), 1u);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/late"), 0u);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/robots.txt"), 1u);
}

TEST_F(SharedCrawlTest, NoRequestStartsWhileTheLeaseIsNotKnownValid) {
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/p0", "/p1"})));
  fetcher_->SetDefault(FakeResponse::Html("page"));
  MemoryShared shared;
  const Clock::TimePoint start = clock_.Now();
  // The lease is late for the first 10 s (a failover), then renewed.
  shared.may_fetch = [&](std::string_view) { return clock_.Now() - start >= 10s; };
  CrawlOptions o = Options();
  o.shared = &shared;
  CrawlStats stats = Crawl(o, {"http://a.test/"});
  EXPECT_TRUE(stats.complete);
  EXPECT_GT(stats.lease_waits, 0u);
  ASSERT_FALSE(fetcher_->log().empty());
  for (const FakeRequestLog& r : fetcher_->log()) {
    EXPECT_GE(r.start - start, 10s) << r.url << " requested while the lease was not valid";
  }
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/p1"), 1u);
}

TEST_F(SharedCrawlTest, AFailedSharedCrawlStopsTheWorkerWithItsError) {
  std::vector<std::string> hrefs;
  for (int i = 0; i < 20; ++i) hrefs.push_back("/p" + std::to_string(i));
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links(hrefs)));
  fetcher_->SetDefault(FakeResponse::Html("page"));
  MemoryShared shared;
  fetcher_->OnComplete([&](const FakeRequestLog& r) {
    if (r.url == "http://a.test/p1") shared.failure = Status::Aborted("lost the lease of p7");
  });
  CrawlOptions o = Options();
  o.shared = &shared;
  Crawler crawler(o, &clock_);
  Status s = crawler.Run({"http://a.test/"});
  EXPECT_EQ(s.code(), Status::Code::kAborted) << s.ToString();
  EXPECT_NE(s.message().find("lost the lease"), std::string::npos);
  EXPECT_FALSE(crawler.stats().complete);
  EXPECT_LT(fetcher_->log().size(), 12u);  // stopped well before the 20 pages
  EXPECT_TRUE(shared.stopped);
}

TEST_F(SharedCrawlTest, ARecrawlIsScheduledInTheSharedCrawlAndIsConditional) {
  FakeResponse page = FakeResponse::Html(Links({"/p0"}));
  page.headers.push_back({"ETag", "\"v1\""});
  fetcher_->Script("http://a.test/", page);
  fetcher_->SetDefault(FakeResponse::Html("page"));
  MemoryShared shared;
  shared.wall = [this] { return clock_.WallMicros(); };
  CrawlOptions o = Options();
  o.shared = &shared;
  o.freshness.recrawl = true;
  o.freshness.refresh_window = 10min;
  o.freshness.stop_after = 25min;
  const Clock::TimePoint start = clock_.Now();
  Crawl(o, {"http://a.test/"});
  // The first fetch's record went to the shared crawl with its validators and a due time
  // one window later; the URL came back due from it, and its request was conditional.
  std::vector<FakeRequestLog> tries;
  for (const FakeRequestLog& r : fetcher_->log()) {
    if (r.url == "http://a.test/") tries.push_back(r);
  }
  ASSERT_GE(tries.size(), 2u);
  EXPECT_GE(tries[1].start - tries[0].start, 10min);
  EXPECT_LT(tries[0].start - start, 1min);
  bool conditional = false;
  for (const auto& [name, value] : tries[1].headers) {
    conditional |= name == "If-None-Match" && value == "\"v1\"";
  }
  EXPECT_TRUE(conditional) << "the recrawl did not send the last fetch's ETag";
  // The local state keeps no schedule of its own (only the shared crawl hands recrawls out):
  // each recrawl came from the shared crawl, so none was fetched more than once per window.
  ExpectPolite(1s);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/p0"), tries.size());
}

TEST_F(SharedCrawlTest, ARecrawlUsesTheRecordOfAFetchByAnotherWorker) {
  fetcher_->SetDefault(FakeResponse::Html("page"));
  MemoryShared shared;
  CrawlOptions o = Options();
  o.shared = &shared;
  o.freshness.recrawl = true;
  o.freshness.stop_after = 2min;
  // Fetched before by another worker: due now, with its record in the shared crawl.
  frontier::UrlItem due{.url = "http://a.test/x", .host = "http://a.test", .fp = 99};
  due.recrawl = true;
  shared.seen.insert(due.fp);
  shared.queue.push_back(due);
  shared.records[due.fp] = state::SeenRecord{.state = state::SeenRecord::State::kDone,
                                             .status = 200,
                                             .fetch_time_us = clock_.WallMicros() - 3'600'000'000,
                                             .etag = "\"e1\"",
                                             .last_modified = "Mon, 02 Nov 2026 10:00:00 GMT"};
  CrawlStats stats = Crawl(o, {});
  EXPECT_EQ(stats.conditional, 1u);
  ASSERT_EQ(fetcher_->RequestsFor("http://a.test/x"), 1u);
  std::map<std::string, std::string> headers;
  for (const FakeRequestLog& r : fetcher_->log()) {
    if (r.url == "http://a.test/x") headers.insert(r.headers.begin(), r.headers.end());
  }
  EXPECT_EQ(headers["If-None-Match"], "\"e1\"");
  EXPECT_EQ(headers["If-Modified-Since"], "Mon, 02 Nov 2026 10:00:00 GMT");
  // Its new record (a change: 200 with a body) is in the shared crawl, due again later.
  ASSERT_TRUE(shared.schedule.contains(due.fp));
  EXPECT_GT(shared.records[due.fp].fetch_time_us, clock_.WallMicros() - 600'000'000);
}

TEST_F(SharedCrawlTest, AWorkerNeedsANewDirectory) {
  MemoryShared shared;
  fetcher_->SetDefault(FakeResponse::Html("page"));
  CrawlOptions o = Options();
  o.shared = &shared;
  CrawlOptions single = Options();
  Crawl(single, {"http://a.test/"});  // a single-process crawl leaves its state
  {
    Crawler again(o, &clock_);
    Status s = again.Run({"http://a.test/"});
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(s.message().find("holds a crawl state"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace harvest::crawl
