#include "crawl/page_pipeline.h"

namespace harvest::crawl {

PagePipeline::PagePipeline(size_t capacity) : work_(capacity) {}

PagePipeline::~PagePipeline() { Stop(); }

void PagePipeline::Start(PageProcessor processor, WarcSink* sink, fetch::Fetcher* fetcher,
                         int workers) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  processor_.emplace(std::move(processor));
  sink_ = sink;
  fetcher_ = fetcher;
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

void PagePipeline::Dispatch(PageTask task) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  ++dispatched_;
  work_.Push(std::move(task));
}

std::vector<PageLinks> PagePipeline::TakeLinks() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  std::vector<PageLinks> batch;
  {
    MutexLock lock(&inbox_mu_);
    batch.swap(inbox_);
  }
  taken_ += batch.size();
  return batch;
}

uint64_t PagePipeline::pending() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return dispatched_ - taken_;
}

void PagePipeline::Stop() {
  work_.Close();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
  workers_.clear();
}

void PagePipeline::WorkerLoop() {
  while (std::optional<PageTask> task = work_.Pop()) {
    PageLinks links;
    StoreTask store;
    processor_->Process(*task, &links, &store);
    // Links first: the page is marked done (after its records are durable) only once the
    // I/O thread has taken its links (TakeLinks).
    {
      MutexLock lock(&inbox_mu_);
      inbox_.push_back(std::move(links));
    }
    fetcher_->Wakeup();
    sink_->Prepare(&store);
    sink_->Submit(std::move(store));
  }
}

}  // namespace harvest::crawl
