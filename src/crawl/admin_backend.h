// The crawl's admin::Backend implementations (docs/architecture.md §4 "command queue",
// docs/operating.md "Operating a running crawl").
//
// Live: Crawler::admin_backend() — owned by the Crawler, valid for its whole life (stop the
// admin server before destroying the Crawler). Every call that reads or changes crawl state
// is posted to the I/O thread as a command (CommandChannel::Post wakes the loop through
// the fetcher's Wakeup) and waited for, at most 10 s (then Unavailable). A call made on the
// I/O thread itself (a test's fetcher hook) runs at once. Before Run() starts and after it
// returns, mutating calls answer Unavailable("no crawl running"); GetStatus and MetricsText
// answer from the final figures once Run() returned (state "complete", or "stopped" when the
// crawl was interrupted or hit its page limit); before Run() GetStatus says "starting" with
// zero figures. Page records (ListPages, GetPage,
// GetPageContent) are read from the crawl state directly (RocksDB is thread-safe) and served
// as long as the Crawler exists.
//
// Read-only: OpenReadOnlyBackend, for `harvest serve --out DIR` when no crawl runs there.
#pragma once

#include <filesystem>
#include <memory>

#include "admin/backend.h"
#include "base/status.h"
#include "state/state.h"

namespace harvest::crawl {

// Opens <out_dir>/state read-only (RocksDB read-only mode: the view at open) and serves
// status (state "complete", final figures), hosts, pages, page content and metrics;
// read_only() is true and the mutating calls answer Unavailable("read-only: no crawl is
// running"). NotFound when out_dir holds no crawl state.
Result<std::unique_ptr<admin::Backend>> OpenReadOnlyBackend(const std::filesystem::path& out_dir);

namespace admin_internal {

// Shared by both backends: page records as the API returns them, a scan with the query's
// filters (cursor = the last id read, decimal), and a page's stored payload read back
// from its WARC record (a revisit follows WARC-Refers-To-Target-URI to the response with
// the same payload digest), Content-Encoding undone.
admin::PageRecord ToRecord(const state::PageEntry& p);
Result<state::PageFilter> ToFilter(const admin::PageQuery& query);
admin::PageList ToList(state::PageScan scan);
Result<admin::PageContent> ReadContent(const std::filesystem::path& out_dir,
                                       const state::PageEntry& page);

}  // namespace admin_internal
}  // namespace harvest::crawl
