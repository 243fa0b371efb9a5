// Test support for the crawler as a unit (crawler_test, crawler_robots_test,
// crawler_freshness_test): a crawl directory per test, a FakeClock, a scripted FakeFetcher,
// options for fast in-process crawls, and the checks they share (outcomes, requests,
// politeness). Test-only; not part of the crawl library.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "crawl/crawl.h"
#include "crawl/outcome_log.h"
#include "fetch/testing/fake_fetcher.h"

namespace harvest::crawl::crawler_test_util {

using fetch::testing::FakeFetcher;
using fetch::testing::FakeRequestLog;
using fetch::testing::FakeResponse;
using namespace std::chrono_literals;

struct OutcomeLine {
  std::string url, outcome, detail;
  int status = 0;
};

inline std::string Links(const std::vector<std::string>& hrefs) {
  std::string html = "<html><body>";
  for (const std::string& h : hrefs) html += "<a href=\"" + h + "\">" + h + "</a> ";
  return html + "</body></html>";
}

class CrawlerTestBase : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("harvest_" + std::string(info->test_suite_name()) + "_" + std::to_string(::getpid()) +
            "_" + info->name());
    std::filesystem::remove_all(dir_);
    fetcher_ = std::make_unique<FakeFetcher>(&clock_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  CrawlOptions Options() {
    CrawlOptions o;
    o.out_dir = dir_ / "crawl";
    o.fetcher = fetcher_.get();
    o.workers = 2;
    o.progress = false;
    o.flush_interval = 5ms;  // real time: pages become durable quickly
    o.frontier.default_delay = 1s;
    o.frontier.backoff = {30s, 120s, 300s};
    o.frontier.max_attempts = 3;
    o.seen.expected_urls = 100'000;
    o.state.sync = false;
    o.state.block_cache_bytes = 1u << 20;
    o.state.write_buffer_bytes = 1u << 20;
    o.state.queue_ram_items = 10'000;
    o.state.ingest_every = 1000;
    o.state.queue_epoch_bits = 4;
    return o;
  }

  // Runs a crawl to its end; the status must be ok.
  CrawlStats Crawl(const CrawlOptions& o, const std::vector<std::string>& seeds) {
    Crawler crawler(o, &clock_);
    Status s = crawler.Run(seeds);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return crawler.stats();
  }

  std::vector<OutcomeLine> Outcomes() const {
    std::vector<OutcomeLine> out;
    std::ifstream f(dir_ / "crawl" / "outcomes.jsonl");
    std::string line;
    while (std::getline(f, line)) {
      nlohmann::json j = nlohmann::json::parse(line);
      out.push_back({j["url"], j["outcome"], j.value("detail", ""), j["status"]});
    }
    return out;
  }
  // The outcomes recorded for `url`, in order.
  std::vector<std::string> OutcomesOf(const std::string& url) const {
    std::vector<std::string> out;
    for (const OutcomeLine& o : Outcomes()) {
      if (o.url == url) out.push_back(o.outcome);
    }
    return out;
  }
  // The first outcome recorded for `url`, or nullptr (valid until the next call).
  const OutcomeLine* FirstOutcome(const std::string& url) {
    outcomes_cache_ = Outcomes();
    for (const OutcomeLine& o : outcomes_cache_) {
      if (o.url == url) return &o;
    }
    return nullptr;
  }
  // Requests to `url`, in order.
  std::vector<FakeRequestLog> RequestsOf(const std::string& url) const {
    std::vector<FakeRequestLog> out;
    for (const FakeRequestLog& r : fetcher_->log()) {
      if (r.url == url) out.push_back(r);
    }
    return out;
  }
  // Every outcome is a documented name; every one but fetched/revisit says why.
  void ExpectOutcomesExplained() const {
    for (const OutcomeLine& o : Outcomes()) {
      EXPECT_TRUE(IsOutcomeName(o.outcome)) << o.outcome;
      if (o.outcome != "fetched" && o.outcome != "revisit") {
        EXPECT_FALSE(o.detail.empty()) << o.url << " " << o.outcome << " has no reason";
      }
    }
  }
  // Each host: one request at a time, and at least `delay` from one's end to the next start.
  void ExpectPolite(std::chrono::milliseconds delay) const {
    EXPECT_EQ(fetcher_->MaxInFlightPerHost(), 1u);
    std::map<std::string, Clock::TimePoint> last_end;
    for (const FakeRequestLog& r : fetcher_->log()) {
      auto it = last_end.find(r.host);
      if (it != last_end.end()) {
        EXPECT_GE(r.start - it->second, delay) << r.url << " started too soon";
      }
      last_end[r.host] = r.end;
    }
  }

  FakeClock clock_;
  std::unique_ptr<FakeFetcher> fetcher_;
  std::filesystem::path dir_;
  std::vector<OutcomeLine> outcomes_cache_;
};

}  // namespace harvest::crawl::crawler_test_util
