// WarcSink::Prepare: which captures the process threads serialise and compress ahead of the
// writer thread, and which they leave to it (a payload this run has stored already, a 304, a
// capture without a response head).
#include "crawl/warc_sink.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace harvest::crawl {
namespace {

class WarcSinkPrepareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("warc_sink_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "warc");
    Result<std::unique_ptr<state::StateDb>> db = state::StateDb::Open({.dir = dir_ / "state"});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    ASSERT_TRUE(outcomes_.Open(dir_ / "outcomes.jsonl").ok());
    store::WarcOptions o;
    o.dir = dir_ / "warc";
    o.fsync_on_flush = false;
    Result<std::unique_ptr<store::WarcWriter>> writer = store::WarcWriter::Open(o);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    WarcSink::Options so;
    so.flush_interval = std::chrono::milliseconds(5);
    sink_ = std::make_unique<WarcSink>(std::move(*writer), &outcomes_, db_.get(), so, [] {});
    sink_->Start();
  }
  void TearDown() override {
    if (sink_) (void)sink_->Finish();
    sink_.reset();
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  static StoreTask Page(const std::string& path, const std::string& payload) {
    StoreTask t;
    store::Capture& c = t.capture;
    c.target_uri = "http://a.test/" + path;
    c.fetch_time_us = 1'800'000'000'000'000;
    c.request_header = "GET /" + path + " HTTP/1.1\r\nHost: a.test\r\n\r\n";
    c.response_header = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
    c.payload = payload;
    c.payload_digest = store::PayloadDigest(payload);
    c.status = 200;
    c.mime = "text/html";
    t.outcome = "fetched";
    t.mark_done = true;
    t.item.url = c.target_uri;
    t.item.host = "a.test";
    t.item.fp = std::hash<std::string>{}(c.target_uri) | 1;
    return t;
  }

  // Submits the task and waits (at most 10 s) until the writer reports it durable.
  void StoreAndWait(StoreTask t) {
    const std::string url = t.capture.target_uri;
    sink_->Submit(std::move(t));
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
      for (const DurablePage& p : sink_->TakeDurable()) {
        if (p.item.url == url) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    FAIL() << url << " was not made durable within 10 s";
  }

  std::filesystem::path dir_;
  std::unique_ptr<state::StateDb> db_;
  OutcomeLog outcomes_;
  std::unique_ptr<WarcSink> sink_;
};

TEST_F(WarcSinkPrepareTest, PreparesANewPayloadAndSkipsOneThisRunStored) {
  StoreTask first = Page("a", "<html>the same text</html>");
  sink_->Prepare(&first);
  ASSERT_TRUE(first.prepared.has_value()) << "a payload never stored is prepared";
  StoreAndWait(std::move(first));

  // The same payload at another URL: the writer stores it as a revisit, so serialising and
  // compressing its response record would be wasted.
  StoreTask again = Page("b", "<html>the same text</html>");
  sink_->Prepare(&again);
  EXPECT_FALSE(again.prepared.has_value());
  // A payload not stored yet is still prepared.
  StoreTask other = Page("c", "<html>other text</html>");
  sink_->Prepare(&other);
  EXPECT_TRUE(other.prepared.has_value());
  // The unprepared duplicate is still written (as a revisit of the first): its digest
  // names the first capture.
  StoreAndWait(std::move(again));
  std::optional<state::DigestRecord> d =
      db_->FindDigest(store::PayloadDigest("<html>the same text</html>"));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->uri, "http://a.test/a");
}

TEST_F(WarcSinkPrepareTest, LeavesA304AndACaptureWithoutAResponseHeadToTheWriter) {
  StoreTask not_modified = Page("a", "");
  not_modified.not_modified = true;
  not_modified.previous = state::SeenRecord{};
  sink_->Prepare(&not_modified);
  EXPECT_FALSE(not_modified.prepared.has_value());

  StoreTask no_head = Page("b", "<html>x</html>");
  no_head.capture.response_header.clear();
  sink_->Prepare(&no_head);
  EXPECT_FALSE(no_head.prepared.has_value());

  // A 304 without the stored version (no previous record) is an ordinary response.
  StoreTask plain = Page("c", "<html>y</html>");
  plain.not_modified = true;
  sink_->Prepare(&plain);
  EXPECT_TRUE(plain.prepared.has_value());
}

}  // namespace
}  // namespace harvest::crawl
