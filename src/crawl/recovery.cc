// Crawl state: opening, resuming after a stop or a kill -9, and what the I/O thread persists
// (docs/architecture.md §1.3; docs/recovery.md).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "crawl/crawler_impl.h"

namespace harvest::crawl {
namespace {

bool IsWarcFile(const std::filesystem::path& p) {
  const std::string name = p.filename().string();
  return name.ends_with(".warc.gz") || name.ends_with(".warc");
}

// WARC files that a crash may have left torn or unindexed: the writer appends to one file
// at a time, so only the newest (and the one it may have been rotating away from) qualify.
constexpr size_t kWarcsToRecover = 2;

}  // namespace

Status CheckOutDir(const CrawlOptions& opts) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path& out = opts.out_dir;
  if (!fs::exists(out, ec)) return Status::Ok();
  if (!fs::is_directory(out, ec)) {
    return Status::InvalidArgument(out.string() + " exists and is not a directory");
  }
  const bool has_state = fs::exists(out / "state" / "CURRENT", ec);
  if (opts.fresh) {
    return Status::InvalidArgument(
        out.string() + " already exists" +
        (has_state ? " and holds a crawl; run without --fresh to resume it" : "") +
        " (--fresh refuses an existing directory: choose a new --out)");
  }
  if (!has_state && !fs::is_empty(out, ec)) {
    return Status::InvalidArgument(out.string() +
                                   " is not empty and holds no crawl state (state/): choose a "
                                   "new or empty --out directory");
  }
  return Status::Ok();
}

Status Crawler::Impl::OpenState() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  opts_.state.dir = opts_.out_dir / "state";
  Result<std::unique_ptr<state::StateDb>> db = state::StateDb::Open(opts_.state);
  if (!db.ok()) return db.status();
  db_ = std::move(*db);
  frontier_ = std::make_unique<frontier::Frontier>(
      opts_.frontier, clock_, db_->NewQueueStore(opts_.frontier.priority_classes));
  robots_ = std::make_unique<RobotsGate>(
      RobotsGate::Options{
          .product_token = robots::ProductToken(opts_.fetch.user_agent),
          .ttl = opts_.robots_ttl,
          .patience = opts_.freshness.recrawl ? std::chrono::seconds(0) : opts_.robots_patience,
          .retry = opts_.frontier},
      clock_, db_.get());
  hosts_ = std::make_unique<HostTable>(
      HostTable::Options{.resumed = !db_->created(),
                         .upgrades = {.trust_hsts = opts_.fetch.verify_tls}},
      clock_, db_.get(), frontier_.get(), robots_.get(), opts_.shared);
  admitter_ = std::make_unique<Admitter>(opts_, clock_, db_.get(), frontier_.get(), hosts_.get(),
                                         &outcomes_);
  recrawler_ =
      std::make_unique<Recrawler>(opts_, clock_, db_.get(), frontier_.get(), admitter_.get());
  // Before any host is restored: the host table applies them on arrival.
  hosts_->LoadOverrides([this](const std::string& host, double weight) {
    admitter_->weights().SetOverride(host, weight);
  });
  return db_->status();
}

void RecoverWarcs(const std::filesystem::path& out_dir, state::StateDb* db, CrawlStats* stats) {
  std::vector<std::filesystem::path> warcs;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(out_dir, ec)) {
    if (e.is_regular_file() && IsWarcFile(e.path())) warcs.push_back(e.path());
  }
  std::sort(warcs.begin(), warcs.end());  // names carry a timestamp and serial
  const size_t first = warcs.size() > kWarcsToRecover ? warcs.size() - kWarcsToRecover : 0;
  for (size_t i = first; i < warcs.size(); ++i) {
    Result<store::RecoveryReport> r = store::RecoverWarc(warcs[i]);
    if (!r.ok()) {
      spdlog::error("recovery: {}: {} (left as is)", warcs[i].string(), r.status().ToString());
      continue;
    }
    stats->recovered_bytes_cut += r->bytes_cut;
    stats->recovered_cdxj_lines += r->cdxj_lines_added;
    uint64_t digests = 0;
    static const std::string empty_sha256 = store::PayloadDigest("");
    static const std::string empty_sha1 = store::PayloadDigest("", store::DigestAlgorithm::kSha1);
    // Responses written but not yet flushed when the process died: their payloads count as
    // stored, so a re-fetch becomes a revisit.
    for (const store::RecoveredRecord& rec : r->unindexed) {
      if (rec.type != "response" || rec.payload_digest.empty()) continue;
      // An empty payload is indexed by its URL (EmptyPayloadKey).
      const bool empty = rec.payload_digest == empty_sha256 || rec.payload_digest == empty_sha1;
      const std::string key = empty ? EmptyPayloadKey(rec.target_uri) : rec.payload_digest;
      if (db->FindDigest(key)) continue;
      (void)db->PutDigest(key, {rec.target_uri, rec.date_us, rec.record_id});
      ++digests;
    }
    if (r->bytes_cut > 0 || r->cdxj_lines_added > 0 || digests > 0) {
      spdlog::warn(
          "recovery: {}: cut a torn tail of {} bytes, indexed {} records, restored {} "
          "payload digests",
          warcs[i].filename().string(), r->bytes_cut, r->cdxj_lines_added, digests);
    }
  }
}

void Crawler::Impl::RestoreState() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  stats_.resumed = true;
  auto t0 = std::chrono::steady_clock::now();
  Status s = db_->ForEachSeen([this](uint64_t fp) {
    admitter_->PreloadSeen(fp);
    ++stats_.resumed_seen;
  });
  if (!s.ok()) spdlog::error("recovery: {}", s.ToString());
  stats_.bloom_restore_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  db_->ForEachLoadedHost([this](const std::string& host, size_t n) {
    frontier_->AdoptStoredHost(host);
    hosts_->Ensure(host);
    stats_.resumed_queued += n;
  });
  stats_.resumed_hosts = hosts_->size();
  spdlog::info(
      "resuming the crawl in {}: {} URLs queued or in flight over {} hosts, {} URLs "
      "seen (Bloom filter restored in {:.2f} s)",
      opts_.out_dir.string(), stats_.resumed_queued, hosts_->size(), stats_.resumed_seen,
      stats_.bloom_restore_s);
}

// A worker of a shared crawl keeps its working state for one run: what it must not lose is in
// the shared store.
Status CheckShared(const CrawlOptions& opts) {
  if (opts.shared == nullptr) return Status::Ok();
  std::error_code ec;
  if (std::filesystem::exists(opts.out_dir / "state" / "CURRENT", ec)) {
    return Status::InvalidArgument(opts.out_dir.string() +
                                   " holds a crawl state: a worker of a shared crawl (--redis) "
                                   "starts in a new or empty --out directory (its work is kept "
                                   "in the shared store)");
  }
  return Status::Ok();
}

}  // namespace harvest::crawl
