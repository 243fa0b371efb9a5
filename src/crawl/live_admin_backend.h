// LiveAdminBackend: the admin API's side of a running crawl (admin_backend.h has the contract;
// docs/architecture.md §4 "command queue"). Calls that read or change crawl state are posted
// to the I/O thread through its CommandChannel and run there against the OperatorControl;
// page records are read from the crawl state directly while it is open; after the crawl,
// status and metrics come from the final figures it published.
//
// Thread-safety: the admin::Backend calls from any thread; OpenPages, ClosePages and
// PublishFinal from the I/O thread (their data are guarded by their own locks).
#pragma once

#include <filesystem>
#include <optional>

#include "admin/backend.h"
#include "base/mutex.h"
#include "crawl/command_channel.h"
#include "crawl/metrics.h"
#include "state/state.h"

namespace harvest::crawl {

class LiveAdminBackend final : public admin::Backend {
 public:
  explicit LiveAdminBackend(std::filesystem::path out_dir);

  // ---- admin::Backend ----
  Result<admin::SeedResult> InjectSeeds(const admin::SeedRequest& request) override;
  admin::StatusSnapshot GetStatus() override;
  Status SetPolicy(std::string_view host, const admin::HostPolicy& policy) override;
  Result<nlohmann::json> GetHost(std::string_view host) override;
  Status SetBlocked(std::string_view host, bool blocked) override;
  Result<admin::PageList> ListPages(const admin::PageQuery& query) override;
  Result<admin::PageRecord> GetPage(uint64_t id) override;
  Result<admin::PageContent> GetPageContent(uint64_t id) override;
  Status Pause() override;
  Status Resume() override;
  std::string MetricsText() override;
  bool read_only() const override { return false; }

  // ---- The crawl's side ----
  CommandChannel& channel() { return channel_; }
  // Page records are read from `db` from now on, until ClosePages (which waits for readers).
  void OpenPages(state::StateDb* db) EXCLUDES(pages_mu_);
  void ClosePages() EXCLUDES(pages_mu_);
  // Unavailable while the pages are not open.
  Result<state::PageEntry> GetPageRecord(uint64_t id) const EXCLUDES(pages_mu_);
  Result<state::PageScan> ScanPageRecords(const state::PageFilter& filter) const
      EXCLUDES(pages_mu_);
  // The figures GetStatus and MetricsText answer with once the crawl ended.
  void PublishFinal(admin::StatusSnapshot status, MetricsSnapshot metrics) EXCLUDES(final_mu_);

 private:
  // Runs fn on the I/O thread (at once when already there) and waits for its answer. fn
  // owns copies of its arguments: after a timeout it is skipped if it has not started.
  template <typename T, typename Fn>
  Result<T> Call(Fn fn);
  template <typename Fn>
  Status CallStatus(Fn fn);

  const std::filesystem::path out_dir_;
  CommandChannel channel_;
  mutable SharedMutex pages_mu_;
  state::StateDb* pages_db_ GUARDED_BY(pages_mu_) = nullptr;  // RocksDB reads are thread-safe
  mutable Mutex final_mu_;
  std::optional<admin::StatusSnapshot> final_status_ GUARDED_BY(final_mu_);
  std::optional<MetricsSnapshot> final_metrics_ GUARDED_BY(final_mu_);
};

}  // namespace harvest::crawl
