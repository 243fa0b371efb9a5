// LiveAdminBackend without a Crawler: its channel opened on the test thread (the I/O thread)
// over an OperatorControl of the crawl's parts; admin calls come from other threads.
#include "crawl/live_admin_backend.h"

#include <future>
#include <thread>

#include "crawl/crawl_parts_fixture.h"

namespace harvest::crawl {
namespace {

using namespace std::chrono_literals;
using parts_test_util::CrawlPartsTest;

class LiveAdminBackendTest : public CrawlPartsTest {
 protected:
  void Open() {
    OpenState();
    OpenOutput();
    OpenControl();
  }
  // Runs `call` on another thread and the channel's commands here until it answered.
  template <typename T>
  T FromAdminThread(std::function<T()> call) {
    std::future<T> answer = std::async(std::launch::async, std::move(call));
    while (answer.wait_for(1ms) != std::future_status::ready) {
      backend_.channel().RunAll();
    }
    return answer.get();
  }

  LiveAdminBackend backend_{"/nonexistent"};
};

TEST_F(LiveAdminBackendTest, BeforeTheCrawlRunsItSaysSo) {
  EXPECT_EQ(backend_.GetStatus().state, "starting");
  EXPECT_EQ(backend_.InjectSeeds({.urls = {"http://a.test/"}}).status().code(),
            Status::Code::kUnavailable);
  EXPECT_EQ(backend_.Pause().code(), Status::Code::kUnavailable);
  EXPECT_EQ(backend_.GetPage(1).status().code(), Status::Code::kUnavailable);
  EXPECT_FALSE(backend_.read_only());
}

TEST_F(LiveAdminBackendTest, CallsFromOtherThreadsRunOnTheIoThread) {
  Open();
  backend_.channel().Open(control_.get(), [] {});
  Result<admin::SeedResult> seeded = FromAdminThread<Result<admin::SeedResult>>(
      [this] { return backend_.InjectSeeds({.urls = {"http://a.test/"}}); });
  ASSERT_TRUE(seeded.ok()) << seeded.status().ToString();
  EXPECT_EQ(seeded->queued, 1u);
  EXPECT_EQ(frontier_->queued(), 1u);
  EXPECT_EQ(FromAdminThread<Status>([this] { return backend_.Pause(); }).code(), Status::Code::kOk);
  EXPECT_TRUE(control_->paused());
  EXPECT_EQ(FromAdminThread<admin::StatusSnapshot>([this] { return backend_.GetStatus(); }).state,
            "paused");
  // On the I/O thread itself a call runs at once.
  EXPECT_TRUE(backend_.Resume().ok());
  EXPECT_FALSE(control_->paused());
  const std::string metrics =
      FromAdminThread<std::string>([this] { return backend_.MetricsText(); });
  EXPECT_NE(metrics.find("harvest_"), std::string::npos);
}

TEST_F(LiveAdminBackendTest, ServesPageRecordsWhileOpenAndTheFinalFiguresAfterTheCrawl) {
  Open();
  backend_.OpenPages(db_.get());
  EXPECT_EQ(backend_.GetPage(12345).status().code(), Status::Code::kNotFound);
  Result<admin::PageList> pages = backend_.ListPages({});
  ASSERT_TRUE(pages.ok()) << pages.status().ToString();
  EXPECT_TRUE(pages->pages.empty());
  backend_.channel().Open(control_.get(), [] {});
  backend_.channel().Close();
  admin::StatusSnapshot final_status;
  final_status.state = "complete";
  final_status.pages_stored = 42;
  backend_.PublishFinal(final_status, MetricsSnapshot{});
  EXPECT_EQ(backend_.GetStatus().state, "complete");
  EXPECT_EQ(backend_.GetStatus().pages_stored, 42u);
  EXPECT_EQ(backend_.SetBlocked("a.test", true).code(), Status::Code::kUnavailable);
  backend_.ClosePages();
  EXPECT_EQ(backend_.GetPage(1).status().code(), Status::Code::kUnavailable);
}

}  // namespace
}  // namespace harvest::crawl
