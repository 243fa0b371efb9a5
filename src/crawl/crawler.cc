#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "base/version.h"
#include "crawl/crawler_impl.h"
#include "extract/extract.h"

namespace harvest::crawl {
namespace {

int DefaultWorkers() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 2 : static_cast<int>(n);
}

// Fills the defaults that depend on other settings.
CrawlOptions WithDefaults(CrawlOptions o) {
  if (o.fetch.user_agent.empty()) {
    o.fetch.user_agent = std::string("Harvest/") + kVersion + " (+" + kProjectUrl + ")";
  }
  return o;
}

// True when an HTTP response arrived: complete, cut at the size cap, or cut mid-body by a
// timeout or disconnect after its head arrived. A cut body is stored with WARC-Truncated and
// is final: retrying a body that never ends would only load the server again.
bool GotResponse(const fetch::FetchResult& r) {
  if (r.status <= 0) return false;
  return r.outcome == fetch::FetchOutcome::kOk || r.outcome == fetch::FetchOutcome::kTruncated ||
         !r.truncated.empty();
}

// RFC 9309 §2.3.1.2: follow at least five consecutive redirects for robots.txt.
constexpr int kMaxRobotsRedirects = 5;

bool IsRetryableStatus(int status) { return status >= 500 || status == 429 || status == 408; }

}  // namespace

Crawler::Impl::Impl(CrawlOptions options, Clock* clock)
    : opts_(WithDefaults(std::move(options))),
      clock_(clock != nullptr ? clock : SystemClock::Default()),
      product_token_(robots::ProductToken(opts_.fetch.user_agent)),
      processor_(opts_),
      work_(opts_.max_pending_pages + opts_.fetch.max_concurrent + 64) {}

Crawler::Impl::~Impl() {
  work_.Close();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
}

void Crawler::Impl::RequestStop() {
  stop_.store(true);
  if (sink_) sink_->Abandon();
  if (fetcher_) fetcher_->Wakeup();
}

CrawlStats Crawler::Impl::stats() const {
  std::lock_guard lock(stats_mu_);
  return published_;
}

Status Crawler::Impl::Setup() {
  if (Status s = CheckOutDir(); !s.ok()) return s;
  std::error_code ec;
  std::filesystem::create_directories(opts_.out_dir, ec);
  if (ec) {
    return Status::IOError("cannot create output directory " + opts_.out_dir.string() + ": " +
                           ec.message());
  }
  if (Status s = OpenState(); !s.ok()) return s;
  if (resumed_) {
    RecoverWarcs();
    RestoreState();
  }
  if (Status s = outcomes_.Open(opts_.out_dir / "outcomes.jsonl"); !s.ok()) return s;
  opts_.warc.dir = opts_.out_dir;
  Result<std::unique_ptr<store::WarcWriter>> writer = store::WarcWriter::Open(opts_.warc);
  if (!writer.ok()) return writer.status();
  sink_ = std::make_unique<WarcSink>(
      std::move(*writer), &outcomes_, db_.get(),
      WarcSink::Options{.flush_interval = opts_.flush_interval,
                        .retry_interval = opts_.output_retry_interval,
                        .queue_capacity = opts_.max_pending_pages},
      [this] {
        if (fetcher_) fetcher_->Wakeup();
      });
  fetcher_ = std::make_unique<fetch::Fetcher>(opts_.fetch);
  if (Status s = fetcher_->status(); !s.ok()) return s;
  sink_->Start();
  int n = opts_.workers > 0 ? opts_.workers : DefaultWorkers();
  for (int i = 0; i < n; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  return Status::Ok();
}

void Crawler::Impl::Record(std::string_view url, std::string_view outcome, int status,
                           std::string_view detail) {
  outcomes_.Record(url, outcome, status, detail, WallNow());
}

Status Crawler::Impl::Run(const std::vector<std::string>& seeds) {
  if (Status s = Setup(); !s.ok()) return s;
  stats_.started = true;
  started_ = last_progress_ = clock_->Now();
  AdmitSeeds(seeds);
  while (!Finished()) {
    ConsumeInbox();
    // Paused while the output cannot be written (disk full, I/O error): nothing new starts.
    if (!stop_.load() && !page_limit_reached_ && !sink_->paused() && db_->status().ok()) {
      FillLeases();
    }
    (void)db_->Commit();  // errors are sticky in db_->status() and logged
    if (Finished()) break;
    fetcher_->Poll(PollTimeout());
    Progress(false);
  }
  stats_.complete = !stop_.load() && !page_limit_reached_;
  stats_.interrupted = stop_.load();
  stats_.page_limit_reached = page_limit_reached_;
  work_.Close();
  for (auto& t : workers_) t.join();
  workers_.clear();
  ConsumeInbox();
  if (!stats_.complete) RecordUnreached();
  Status s = sink_->Finish();
  if (!s.ok() && stop_.load()) {
    // Stopped while paused on an output error: not fatal — what could not be written is
    // recorded not-stored and stays queued in the crawl state for the next run.
    spdlog::warn("stopped while the output was failing ({}); unwritten pages stay queued",
                 s.ToString());
    s = Status::Ok();
  }
  ConsumeInbox();  // pages made durable by the last flush
  Status c = db_->Commit();
  if (c.ok()) c = db_->Sync();
  if (s.ok() && !c.ok()) s = c;
  Progress(true);
  return s;
}

bool Crawler::Impl::Finished() const {
  if (fetcher_->in_flight() != 0 || dispatched_ != consumed_) return false;
  if (stop_.load() || page_limit_reached_) return true;
  return frontier_->Idle();
}

std::chrono::milliseconds Crawler::Impl::PollTimeout() const {
  constexpr std::chrono::milliseconds kMax(100);
  if (stop_.load() || page_limit_reached_) return kMax;
  if (dispatched_ - consumed_ >= opts_.max_pending_pages) return kMax;  // a worker wakes us
  std::optional<Clock::TimePoint> wake = frontier_->NextWakeup();
  if (!wake) return kMax;
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(*wake - clock_->Now());
  // Round up so we do not spin for the sub-millisecond rest.
  if (*wake > clock_->Now() && wait < std::chrono::milliseconds(1)) wait = std::chrono::milliseconds(1);
  return std::clamp(wait, std::chrono::milliseconds(0), kMax);
}

void Crawler::Impl::FillLeases() {
  while (dispatched_ - consumed_ < opts_.max_pending_pages &&
         fetcher_->in_flight() < opts_.fetch.max_concurrent) {
    std::optional<frontier::Lease> lease = frontier_->Next();
    if (!lease) break;
    HandleLease(std::move(*lease));
    if (page_limit_reached_ || stop_.load()) break;
  }
}

void Crawler::Impl::HandleLease(frontier::Lease lease) {
  HostState& host = EnsureHost(lease.item.host);
  if (!host.dead_reason.empty()) {
    Record(lease.item.url, host.dead_reason, 0, "");
    MarkDone(lease.item, 0);
    frontier_->Complete(lease, {.kind = frontier::CompletionKind::kNoRequest});
    return;
  }
  if (!host.rules || clock_->Now() >= host.robots_expiry) {
    StartRobotsFetch(std::move(lease));
    return;
  }
  std::optional<url::Url> u = url::Parse(lease.item.url);
  robots::MatchResult m = host.rules->Check(product_token_, u ? u->path_and_query() : "/");
  if (!m.allowed) {
    ++stats_.disallowed;
    Record(lease.item.url, "disallowed", 0,
           m.line > 0 ? m.rule + " (robots.txt line " + std::to_string(m.line) + ")"
                      : std::string("robots.txt unavailable"));
    MarkDone(lease.item, 0);
    frontier_->Complete(lease, {.kind = frontier::CompletionKind::kNoRequest});
    return;
  }
  StartPageFetch(std::move(lease));
}

void Crawler::Impl::StartRobotsFetch(frontier::Lease lease) {
  std::optional<url::Url> u = url::Parse(lease.item.url);
  fetch::FetchRequest req;
  req.id = next_fetch_id_++;
  // Redirects are followed one request per slot (each hop counts as a request to the host,
  // DESIGN §1.1), not inside one transfer.
  const HostState& host = hosts_[lease.item.host];
  req.url = !host.robots_url.empty()
                ? host.robots_url
                : std::string(u ? u->origin_key() : std::string_view("http://" + lease.item.host)) +
                      "/robots.txt";
  uint64_t id = req.id;
  in_flight_.emplace(id, InFlight{std::move(lease), true});
  fetcher_->Start(std::move(req), [this, id](fetch::FetchResult&& r) {
    auto it = in_flight_.find(id);
    InFlight flight = std::move(it->second);
    in_flight_.erase(it);
    OnRobotsDone(std::move(flight), std::move(r));
  });
}

void Crawler::Impl::StartPageFetch(frontier::Lease lease) {
  fetch::FetchRequest req;
  req.id = next_fetch_id_++;
  req.url = lease.item.url;
  uint64_t id = req.id;
  in_flight_.emplace(id, InFlight{std::move(lease), false});
  ++pages_started_;
  if (opts_.max_pages > 0 && pages_started_ >= opts_.max_pages) page_limit_reached_ = true;
  fetcher_->Start(std::move(req), [this, id](fetch::FetchResult&& r) {
    auto it = in_flight_.find(id);
    InFlight flight = std::move(it->second);
    in_flight_.erase(it);
    OnPageDone(std::move(flight), std::move(r));
  });
}

void Crawler::Impl::OnRobotsDone(InFlight flight, fetch::FetchResult&& r) {
  ++stats_.fetches;
  ++stats_.robots_fetches;
  stats_.bytes_downloaded += r.body.size();
  const std::string host_key = flight.lease.item.host;
  HostState& host = hosts_[host_key];
  bool got_response = GotResponse(r);
  int status = got_response ? r.status : 0;
  int redirects = host.robots_hops;
  if (status >= 300 && status < 400) {
    std::optional<url::Url> from = url::Parse(r.url);
    std::optional<url::Url> to;
    if (auto location = r.Header("location"); location && from) to = url::Parse(*location, &*from);
    if (to && host.robots_hops < kMaxRobotsRedirects) {
      // Follow the redirect with the next request in this host's slot.
      host.robots_url = to->href();
      ++host.robots_hops;
      frontier_->Complete(flight.lease, {.kind = frontier::CompletionKind::kRequeue,
                                         .response_time = r.total_time});
      SavePoliteness(host_key, std::nullopt);
      PageTask task;
      task.item = flight.lease.item;
      task.item.url = r.url;
      task.item.via = flight.lease.item.url;
      task.result = std::move(r);
      task.is_robots = true;
      Dispatch(std::move(task));
      return;
    }
    redirects = kMaxRobotsRedirects + 1;  // RFC 9309 §2.3.1.2: unavailable (allow all)
  }
  host.robots_url.clear();
  host.robots_hops = 0;
  // The body is stored as received; robots.txt is parsed after undoing Content-Encoding.
  // Only the first 500 KiB count (RFC 9309 §2.5), so decoding stops a little past that.
  extract::DecodeResult decoded =
      extract::DecodeContent(r.Header("content-encoding").value_or(""), r.body, 600u << 10);
  if (!decoded.ok && !decoded.too_large && status >= 200 && status < 300) {
    status = 0;  // an undecodable 2xx is no robots.txt: treat as unreachable, retry later
  }
  robots::RobotsRules rules = robots::FromFetch(status, decoded.body, redirects);
  frontier::Completion done{.kind = frontier::CompletionKind::kRequeue,
                            .response_time = r.total_time};
  if (rules.temporary()) {
    ++host.robots_failures;
    if (host.robots_failures >= opts_.politeness.max_attempts) {
      KillHost(host_key, "robots-unavailable");
      Record(flight.lease.item.url, "robots-unavailable", status,
             "robots.txt: " + (status == 0 ? r.error : "HTTP " + std::to_string(status)));
      MarkDone(flight.lease.item, status);
      done.kind = frontier::CompletionKind::kDone;
    } else {
      size_t i = std::min<size_t>(host.robots_failures - 1, opts_.politeness.backoff.size() - 1);
      auto wait = opts_.politeness.backoff.empty() ? std::chrono::seconds(30)
                                                   : opts_.politeness.backoff[i];
      done.retry_after = std::chrono::duration_cast<std::chrono::milliseconds>(wait);
      host.robots_expiry = clock_->Now() + wait;
    }
    done.error = true;
  } else {
    host.robots_failures = 0;
    host.robots_expiry = clock_->Now() + opts_.robots_ttl;
    if (auto delay = rules.CrawlDelay(product_token_)) {
      frontier_->SetCrawlDelay(host_key, *delay);
      host.crawl_delay_ms = delay->count();
      if (frontier_->HostSkipped(host_key)) {
        KillHost(host_key, "crawl-delay-too-long");
        Record(flight.lease.item.url, "crawl-delay-too-long", 0,
               "Crawl-delay " + std::to_string(delay->count()) + " ms");
        MarkDone(flight.lease.item, 0);
        done.kind = frontier::CompletionKind::kDone;
      }
    }
    for (const std::string& sitemap : rules.Sitemaps()) {
      std::optional<url::Url> su = url::ParseCanonical(sitemap, nullptr, opts_.canon);
      if (!su || (su->scheme() != "http" && su->scheme() != "https")) continue;
      FoundLink link{.url = su->href(), .host = std::string(su->host()),
                     .path = std::string(su->path()), .query = std::string(su->query()),
                     .registrable_domain = url::RegistrableDomain(su->host()),
                     .fp = url::Fingerprint64(su->href()), .redirect = false, .sitemap = true};
      Admit(link, &flight.lease.item);
    }
  }
  if (!r.ip.empty() && !host.ip_known) {
    frontier_->SetHostIp(host_key, r.ip);
    host.ip_known = true;
  }
  db_->PutRobots(host_key,
                 {.status = status, .redirects = redirects, .failures = host.robots_failures,
                  .expiry_us = WallNow() + std::chrono::duration_cast<std::chrono::microseconds>(
                                               host.robots_expiry - clock_->Now())
                                               .count(),
                  .body = decoded.body.size() > (600u << 10) ? decoded.body.substr(0, 600u << 10)
                                                             : decoded.body});
  host.rules = std::move(rules);
  frontier_->Complete(flight.lease, done);
  SavePoliteness(host_key, done.retry_after);
  if (got_response) {
    PageTask task;
    task.item = flight.lease.item;
    task.item.url = r.url;
    task.item.via = flight.lease.item.url;
    task.result = std::move(r);
    task.is_robots = true;
    Dispatch(std::move(task));
  }
}

void Crawler::Impl::OnPageDone(InFlight flight, fetch::FetchResult&& r) {
  ++stats_.fetches;
  stats_.bytes_downloaded += r.body.size();
  const frontier::Lease& lease = flight.lease;
  HostState& host = hosts_[lease.item.host];
  if (!r.ip.empty() && !host.ip_known) {
    frontier_->SetHostIp(lease.item.host, r.ip);
    host.ip_known = true;
  }
  admission_->NoteFetched(lease.item.host);
  bool got_response = GotResponse(r);
  frontier::Completion c{.kind = frontier::CompletionKind::kDone, .response_time = r.total_time};
  std::string outcome = "fetched";
  if (got_response) {
    ++stats_.pages;
    int s = r.status;
    if (s >= 200 && s < 300) ++stats_.http_2xx;
    else if (s >= 300 && s < 400) ++stats_.http_3xx;
    else if (s >= 400 && s < 500) ++stats_.http_4xx;
    else if (s >= 500) ++stats_.http_5xx;
    if (!r.truncated.empty()) ++stats_.truncated;
    if (IsRetryableStatus(s)) {
      c.kind = frontier::CompletionKind::kRetry;
      c.error = s >= 500;
      if (auto ra = r.RetryAfter(WallNow())) {
        c.retry_after = std::chrono::duration_cast<std::chrono::milliseconds>(*ra);
      }
    }
  } else {
    ++stats_.fetch_errors;
    c.kind = frontier::CompletionKind::kRetry;
    c.error = true;
  }
  frontier::GiveUp gave_up = frontier_->Complete(lease, c);
  SavePoliteness(lease.item.host, c.retry_after);
  if (c.kind == frontier::CompletionKind::kRetry) {
    if (gave_up == frontier::GiveUp::kNo) {
      ++stats_.retries;
      frontier::UrlItem retry = lease.item;
      ++retry.attempts;  // as the frontier counted it: a restart keeps the count
      db_->UpdateQueued(retry);
      return;  // not stored: the retry will produce the stored response
    }
    ++stats_.gave_up;
    outcome = "gave-up";
    if (!got_response) {
      Record(lease.item.url, "gave-up", 0, r.error.empty() ? "fetch failed" : r.error);
      MarkDone(lease.item, 0);
      return;
    }
  }
  PageTask task;
  task.item = lease.item;
  task.sitemap_hint = lease.item.sitemap;
  task.result = std::move(r);
  task.outcome = std::move(outcome);
  Dispatch(std::move(task));
}

// A crawl stopped early (page limit, signal): what is still queued stays queued in the crawl
// state — it is not final, the next run of the same command crawls it — so it is counted
// for the summary, not drained (a large crawl may hold millions of queued URLs on disk).
void Crawler::Impl::RecordUnreached() {
  stats_.still_queued = frontier_->queued() + frontier_->retries_pending();
  if (stats_.still_queued > 0) {
    spdlog::info("{} URLs still queued in {}; run the same command again to resume",
                 stats_.still_queued, opts_.out_dir.string());
  }
}

void Crawler::Impl::KillHost(const std::string& host_key, const std::string& reason) {
  hosts_[host_key].dead_reason = reason;
  for (const frontier::UrlItem& item : frontier_->DrainHost(host_key)) {
    Record(item.url, reason, 0, "");
    MarkDone(item, 0);
  }
  SavePoliteness(host_key, std::nullopt);
}

void Crawler::Impl::Dispatch(PageTask task) {
  ++dispatched_;
  work_.Push(std::move(task));
}

void Crawler::Impl::WorkerLoop() {
  while (std::optional<PageTask> task = work_.Pop()) {
    PageLinks links;
    StoreTask store;
    processor_.Process(*task, &links, &store);
    // Links first: the page is marked done (after its records are durable) only once the
    // I/O thread has admitted its links (see ConsumeInbox).
    {
      std::lock_guard lock(inbox_mu_);
      inbox_.push_back(std::move(links));
    }
    fetcher_->Wakeup();
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
    std::lock_guard lock(inbox_mu_);
    batch.swap(inbox_);
  }
  for (PageLinks& page : batch) {
    ++consumed_;
    for (const FoundLink& link : page.links) Admit(link, &page.source);
  }
  for (const DurablePage& page : durable) db_->MarkDone(page.item, page.record);
}

}  // namespace harvest::crawl
