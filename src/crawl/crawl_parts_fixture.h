// Test support for the crawl's parts without a Crawler (admitter_test, recrawler_test,
// request_issuer_test, fetch_completions_test, page_pipeline_test, operator_control_test,
// live_admin_backend_test):
// a crawl directory per test, a FakeClock, a scripted FakeFetcher, and the parts made over
// one crawl state as Crawler::Impl makes them — each test makes the ones it needs, in
// order (OpenState, then OpenOutput). Test-only; not part of the crawl library.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "crawl/admitter.h"
#include "crawl/crawl.h"
#include "crawl/fetch_completions.h"
#include "crawl/host_table.h"
#include "crawl/operator_control.h"
#include "crawl/outcome_log.h"
#include "crawl/page_pipeline.h"
#include "crawl/recrawler.h"
#include "crawl/request_issuer.h"
#include "crawl/robots_gate.h"
#include "crawl/shared_crawl.h"
#include "crawl/warc_sink.h"
#include "fetch/testing/fake_fetcher.h"

namespace harvest::crawl::parts_test_util {

using fetch::testing::FakeFetcher;
using fetch::testing::FakeResponse;
using namespace std::chrono_literals;

// A shared crawl that records what it is given and hands nothing out.
class RecordingSharedCrawl : public SharedCrawl {
 public:
  Status Start(std::function<void()>) override { return Status::Ok(); }
  Status Stop() override { return Status::Ok(); }
  void Admit(frontier::UrlItem item) override { admitted.push_back(item.url); }
  void TakeReady(Taken*) override {}
  void PutHost(const std::string&, const HostRecords&) override {}
  void Done(const frontier::UrlItem& item, std::chrono::milliseconds,
            const state::SeenRecord*) override {
    done.push_back(item.url);
  }
  bool MayFetch(std::string_view) override { return may_fetch; }
  bool Complete() override { return false; }
  Status status() override { return Status::Ok(); }
  Share share() override { return {}; }
  std::optional<state::DigestRecord> FindDigest(const std::string&) override {
    return std::nullopt;
  }
  void PutDigest(const std::string&, const state::DigestRecord&) override {}

  std::vector<std::string> admitted;
  std::vector<std::string> done;
  bool may_fetch = true;
};

class CrawlPartsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("harvest_" + std::string(info->test_suite_name()) + "_" + std::to_string(::getpid()) +
            "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    clock_.SetMicros(1'700'000'000'000'000);  // a wall time in 2023
    fetcher_ = std::make_unique<FakeFetcher>(&clock_);
    opts_.out_dir = dir_;
    opts_.fetcher = fetcher_.get();
    opts_.fetch.user_agent = "harvest-test/1.0";
    opts_.progress = false;
    opts_.flush_interval = 5ms;
    opts_.frontier.default_delay = 1s;
    opts_.seen.expected_urls = 10'000;
    opts_.state.dir = dir_ / "state";
    opts_.state.sync = false;
    opts_.state.block_cache_bytes = 1u << 20;
    opts_.state.write_buffer_bytes = 1u << 20;
  }
  void TearDown() override {
    control_.reset();
    issuer_.reset();
    completions_.reset();
    pipeline_.reset();
    sink_.reset();
    recrawler_.reset();
    admitter_.reset();
    hosts_.reset();
    robots_.reset();
    frontier_.reset();
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  // The crawl state and the parts over it: frontier, robots gate, host table, admitter,
  // recrawler, outcome log.
  void OpenState() {
    Result<std::unique_ptr<state::StateDb>> db = state::StateDb::Open(opts_.state);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    frontier_ = std::make_unique<frontier::Frontier>(
        opts_.frontier, &clock_, db_->NewQueueStore(opts_.frontier.priority_classes));
    robots_ = std::make_unique<RobotsGate>(
        RobotsGate::Options{.product_token = "harvest-test", .retry = opts_.frontier}, &clock_,
        db_.get());
    hosts_ = std::make_unique<HostTable>(HostTable::Options{.resumed = !db_->created()}, &clock_,
                                         db_.get(), frontier_.get(), robots_.get(), opts_.shared);
    admitter_ = std::make_unique<Admitter>(opts_, &clock_, db_.get(), frontier_.get(), hosts_.get(),
                                           &outcomes_);
    recrawler_ =
        std::make_unique<Recrawler>(opts_, &clock_, db_.get(), frontier_.get(), admitter_.get());
    ASSERT_TRUE(outcomes_.Open(dir_ / "outcomes.jsonl").ok());
  }
  // The output side: WARC sink (not started unless `start_sink`), page pipeline (no workers
  // unless `workers`), completions and the request issuer over the FakeFetcher.
  void OpenOutput(bool start_sink = false, int workers = 0) {
    opts_.warc.dir = dir_;
    Result<std::unique_ptr<store::WarcWriter>> writer = store::WarcWriter::Open(opts_.warc);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    sink_ = std::make_unique<WarcSink>(std::move(*writer), &outcomes_, db_.get(),
                                       WarcSink::Options{.flush_interval = opts_.flush_interval},
                                       [f = fetcher_.get()] { f->Wakeup(); });
    pipeline_ = std::make_unique<PagePipeline>(64);
    completions_ =
        std::make_unique<FetchCompletions>(FetchCompletions::Parts{.opts = &opts_,
                                                                   .clock = &clock_,
                                                                   .db = db_.get(),
                                                                   .frontier = frontier_.get(),
                                                                   .hosts = hosts_.get(),
                                                                   .robots = robots_.get(),
                                                                   .admitter = admitter_.get(),
                                                                   .recrawler = recrawler_.get(),
                                                                   .pipeline = pipeline_.get(),
                                                                   .sink = sink_.get(),
                                                                   .outcomes = &outcomes_});
    issuer_ =
        std::make_unique<RequestIssuer>(RequestIssuer::Parts{.opts = &opts_,
                                                             .clock = &clock_,
                                                             .frontier = frontier_.get(),
                                                             .hosts = hosts_.get(),
                                                             .robots = robots_.get(),
                                                             .recrawler = recrawler_.get(),
                                                             .completions = completions_.get(),
                                                             .admitter = admitter_.get(),
                                                             .outcomes = &outcomes_});
    ASSERT_TRUE(issuer_->Setup().ok());
    if (start_sink) sink_->Start();
    if (workers > 0) {
      pipeline_->Start(PageProcessor(opts_), sink_.get(), fetcher_.get(), workers);
    }
  }

  // The admin commands over the parts (after OpenOutput); their figures are the parts'
  // counters, with a fixed uptime of 10 s.
  void OpenControl() {
    control_ = std::make_unique<OperatorControl>(
        OperatorControl::Parts{.opts = &opts_,
                               .clock = &clock_,
                               .db = db_.get(),
                               .frontier = frontier_.get(),
                               .hosts = hosts_.get(),
                               .admitter = admitter_.get(),
                               .issuer = issuer_.get(),
                               .completions = completions_.get(),
                               .sink = sink_.get(),
                               .stopping = &stopping_,
                               .stats = [this] {
                                 CrawlStats s;
                                 admitter_->counters().AddTo(&s);
                                 completions_->counters().AddTo(&s);
                                 s.elapsed_s = 10;
                                 return s;
                               }});
  }

  // Admits `url` as a seed.
  frontier::AdmitVerdict Seed(const std::string& url) {
    std::optional<url::Url> u = url::ParseCanonical(url, nullptr, opts_.canon);
    EXPECT_TRUE(u.has_value()) << url;
    return admitter_->AdmitSeed(MakeFoundLink(*u), std::nullopt);
  }
  FoundLink Link(const std::string& url) {
    std::optional<url::Url> u = url::ParseCanonical(url, nullptr, opts_.canon);
    EXPECT_TRUE(u.has_value()) << url;
    return MakeFoundLink(*u);
  }
  // The outcome log's lines (url, outcome), once flushed.
  std::vector<std::pair<std::string, std::string>> Outcomes() {
    EXPECT_TRUE(outcomes_.Flush().ok());
    std::vector<std::pair<std::string, std::string>> out;
    std::ifstream f(dir_ / "outcomes.jsonl");
    std::string line;
    while (std::getline(f, line)) {
      nlohmann::json j = nlohmann::json::parse(line);
      out.emplace_back(j["url"], j["outcome"]);
    }
    return out;
  }

  FakeClock clock_;
  std::unique_ptr<FakeFetcher> fetcher_;
  std::filesystem::path dir_;
  CrawlOptions opts_;
  std::unique_ptr<state::StateDb> db_;
  std::unique_ptr<frontier::Frontier> frontier_;
  std::unique_ptr<RobotsGate> robots_;
  std::unique_ptr<HostTable> hosts_;
  OutcomeLog outcomes_;
  std::unique_ptr<Admitter> admitter_;
  std::unique_ptr<Recrawler> recrawler_;
  std::unique_ptr<WarcSink> sink_;
  std::unique_ptr<PagePipeline> pipeline_;
  std::unique_ptr<FetchCompletions> completions_;
  std::unique_ptr<RequestIssuer> issuer_;
  std::atomic<bool> stopping_{false};
  std::unique_ptr<OperatorControl> control_;
};

}  // namespace harvest::crawl::parts_test_util
