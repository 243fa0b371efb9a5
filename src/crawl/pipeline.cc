// The process pool: pages go to the worker threads, their links come back to the I/O thread
// through the inbox, and durable pages are marked done (docs/architecture.md §1.3, §4).
#include "crawl/crawler_impl.h"

namespace harvest::crawl {

void Crawler::Impl::Dispatch(PageTask task) {
  ++dispatched_;
  work_.Push(std::move(task));
}

void Crawler::Impl::WorkerLoop() {
  while (std::optional<PageTask> task = work_.Pop()) {
    PageLinks links;
    StoreTask store;
    processor_->Process(*task, &links, &store);
    // Links first: the page is marked done (after its records are durable) only once the
    // I/O thread has admitted its links (see ConsumeInbox).
    {
      MutexLock lock(&inbox_mu_);
      inbox_.push_back(std::move(links));
    }
    fetcher_->Wakeup();
    sink_->Prepare(&store);
    sink_->Submit(std::move(store));
  }
}

// Durable pages are taken before the links: a page's links entered the inbox before its
// capture reached the writer, so every page in `durable` has its links in `batch` (or in an
// earlier one), and its done mark lands in the state after their queue entries.
void Crawler::Impl::ConsumeInbox() {
  std::vector<DurablePage> durable = sink_->TakeDurable();
  std::vector<PageLinks> batch;
  {
    MutexLock lock(&inbox_mu_);
    batch.swap(inbox_);
  }
  CountInlinks(batch);
  for (PageLinks& page : batch) {
    ++consumed_;
    // Links are followed from the shortest path known to the page (Admit notes shorter
    // paths found while it waited).
    if (page.source.depth > 0 && !page.links.empty()) {
      if (std::optional<int> d = db_->NotedDepth(page.source.fp); d && *d < page.source.depth) {
        page.source.depth = *d;
        ++stats_.depth_lowered;
      }
    }
    for (const FoundLink& link : page.links) admission_->Prefetch(link.fp);
    for (const FoundLink& link : page.links) Admit(link, &page.source);
  }
  for (const DurablePage& page : durable) {
    RecordDone(page.item, page.record);
  }
}

}  // namespace harvest::crawl
