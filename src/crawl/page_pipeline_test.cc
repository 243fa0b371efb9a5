// PagePipeline without a Crawler: real worker threads, a PageProcessor and a WARC sink over a
// crawl state in a temporary directory.
#include "crawl/page_pipeline.h"

#include <thread>

#include "crawl/crawl_parts_fixture.h"

namespace harvest::crawl {
namespace {

using namespace std::chrono_literals;
using parts_test_util::CrawlPartsTest;

class PagePipelineTest : public CrawlPartsTest {
 protected:
  PageTask Page(const std::string& url, const std::vector<std::string>& hrefs) {
    std::string html = "<html><body><p>" + url + "</p>";
    for (const std::string& h : hrefs) html += "<a href=\"" + h + "\">x</a>";
    html += "</body></html>";
    PageTask task;
    const FoundLink link = Link(url);
    task.item.url = link.url;
    task.item.host = link.origin();
    task.item.fp = link.fp;
    task.result.url = task.result.effective_url = link.url;
    task.result.outcome = fetch::FetchOutcome::kOk;
    task.result.status = 200;
    task.result.http_version = "1.1";
    task.result.response_head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
    task.result.headers = {{"Content-Type", "text/html"}};
    task.result.body = html;
    task.result.start_wall_us = clock_.WallMicros();
    task.outcome = "fetched";
    task.completed_us = clock_.WallMicros();
    return task;
  }
  // Takes links until `pages` pages came back (real time, at most 10 s).
  std::vector<PageLinks> TakeLinks(size_t pages) {
    std::vector<PageLinks> all;
    for (int i = 0; i < 1000 && all.size() < pages; ++i) {
      for (PageLinks& p : pipeline_->TakeLinks()) all.push_back(std::move(p));
      if (all.size() < pages) std::this_thread::sleep_for(10ms);
    }
    return all;
  }
};

TEST_F(PagePipelineTest, WorkersHandBackEachPagesLinksAndStoreItsRecords) {
  OpenState();
  OpenOutput(/*start_sink=*/true, /*workers=*/2);
  pipeline_->Dispatch(Page("http://a.test/", {"/one", "http://b.test/two"}));
  pipeline_->Dispatch(Page("http://a.test/x", {"/three"}));
  EXPECT_EQ(pipeline_->pending(), 2u);
  std::vector<PageLinks> links = TakeLinks(2);
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(pipeline_->pending(), 0u);
  std::sort(links.begin(), links.end(),
            [](const PageLinks& a, const PageLinks& b) { return a.source.url < b.source.url; });
  ASSERT_EQ(links[0].links.size(), 2u);
  EXPECT_EQ(links[0].links[0].url, "http://a.test/one");
  EXPECT_EQ(links[0].links[1].url, "http://b.test/two");
  ASSERT_EQ(links[1].links.size(), 1u);
  EXPECT_EQ(links[1].links[0].url, "http://a.test/three");
  pipeline_->Stop();
  ASSERT_TRUE(sink_->Finish().ok());
  EXPECT_EQ(sink_->responses(), 2u);  // the records reached the WARC file
}

TEST_F(PagePipelineTest, AHrefRepeatedOnAPageIsHandedOnOnce) {
  OpenState();
  OpenOutput(/*start_sink=*/true, /*workers=*/1);
  // 40 links naming 3 targets, two of them also spelled differently (same URL once resolved).
  std::vector<std::string> hrefs;
  for (int i = 0; i < 40; ++i)
    hrefs.push_back(i % 3 == 0 ? "/one" : (i % 3 == 1 ? "/two" : "/three"));
  hrefs.push_back("http://a.test/one");
  hrefs.push_back("./two");
  pipeline_->Dispatch(Page("http://a.test/", hrefs));
  std::vector<PageLinks> links = TakeLinks(1);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].links_seen, 42u);  // every link counts as seen
  std::vector<std::string> urls;
  std::vector<uint32_t> times;
  for (const FoundLink& l : links[0].links) {
    urls.push_back(l.url);
    times.push_back(l.times);
  }
  EXPECT_EQ(times, (std::vector<uint32_t>{14, 13, 13, 1, 1}));  // in-links still count each
  // Each distinct href once, in page order; different spellings of one URL are each handed
  // on (admission's seen set drops the repeats, as before).
  EXPECT_EQ(urls, (std::vector<std::string>{"http://a.test/one", "http://a.test/two",
                                            "http://a.test/three", "http://a.test/one",
                                            "http://a.test/two"}));
  pipeline_->Stop();
  ASSERT_TRUE(sink_->Finish().ok());
}

TEST_F(PagePipelineTest, StopFinishesTheQueueFirst) {
  OpenState();
  OpenOutput(/*start_sink=*/true, /*workers=*/1);
  for (int i = 0; i < 20; ++i) pipeline_->Dispatch(Page("http://a.test/" + std::to_string(i), {}));
  pipeline_->Stop();
  EXPECT_EQ(pipeline_->TakeLinks().size(), 20u);
  EXPECT_EQ(pipeline_->pending(), 0u);
  ASSERT_TRUE(sink_->Finish().ok());
  EXPECT_EQ(sink_->responses(), 20u);
}

}  // namespace
}  // namespace harvest::crawl
