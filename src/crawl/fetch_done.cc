// Completed fetches on the I/O thread: the robots.txt step, the page's completion in the
// frontier (retry, give up, done), and the hand-off of responses to the process pool.
#include <spdlog/spdlog.h>

#include <chrono>

#include "base/clock.h"
#include "base/host_key.h"
#include "crawl/crawler_impl.h"

namespace harvest::crawl {
namespace {

bool IsRetryableStatus(int status) { return status >= 500 || status == 429 || status == 408; }

void CountStatus(int s, CrawlStats* stats) {
  if (s >= 200 && s < 300) {
    ++stats->http_2xx;
  } else if (s >= 300 && s < 400) {
    ++stats->http_3xx;
  } else if (s >= 400 && s < 500) {
    ++stats->http_4xx;
  } else if (s >= 500) {
    ++stats->http_5xx;
  }
}

// How long ago the request ended: its response's last byte arrived (the kernel's receive
// time, on the real wall clock like the stamp itself) before the loop got round to it.
std::chrono::microseconds EndedAgo(const fetch::FetchResult& r) {
  return r.SinceLastByte(SystemClock::Default()->WallMicros());
}

}  // namespace

// The IP the host is reached at, for the frontier's per-IP limits: from the address gate
// before the first request, then from each response (a new DNS answer may change it).
void Crawler::Impl::NoteIp(const std::string& host_key, const std::string& ip) {
  if (ip.empty()) return;
  hosts_->Ensure(host_key).ip_known = true;
  frontier_->SetHostIp(host_key, ip);
}

void Crawler::Impl::OnRobotsDone(InFlight flight, fetch::FetchResult&& r) {
  if (!flight.no_request) {
    ++stats_.fetches;
    ++stats_.robots_fetches;
  }
  stats_.bytes_downloaded += r.body.size();
  const frontier::Lease& lease = flight.lease;
  const std::string& host = lease.item.host;
  NoteIp(host, r.ip);
  RobotsGate::FetchStep step = robots_->OnFetched(host, r);
  {
    static constexpr const char* kStepNames[] = {"redirect", "rules",       "retry",
                                                 "cached",   "unavailable", "unreachable"};
    ++counters_.robots_outcomes[kStepNames[static_cast<int>(step.step)]];
  }
  frontier::Completion done{.kind = frontier::CompletionKind::kRequeue,
                            .response_time = r.total_time,
                            .ended_ago = EndedAgo(r)};
  switch (step.step) {
    case RobotsGate::Step::kRedirect:
      break;  // the next request in this host's slot follows the Location
    case RobotsGate::Step::kRetry:
      // No rules: the host waits for the next attempt.
      done.retry_after = std::chrono::duration_cast<std::chrono::milliseconds>(step.retry_after);
      done.error = true;
      break;
    case RobotsGate::Step::kCached:
      // The cached rules stay in force: the host's pages go on with the usual delay.
      done.error = true;
      break;
    case RobotsGate::Step::kUnavailable:
      done.kind = frontier::CompletionKind::kDone;
      done.error = true;
      GiveUpHost(host, lease.item, "robots-unavailable", step.detail, step.status);
      break;
    case RobotsGate::Step::kUnreachable:
      done.kind = frontier::CompletionKind::kDone;
      done.error = true;
      GiveUpHost(host, lease.item, "gave-up", step.detail, step.status);
      break;
    case RobotsGate::Step::kRules:
      ApplyRobots(lease, step, &done);
      break;
  }
  frontier_->Complete(lease, done);
  hosts_->SavePoliteness(host, done.retry_after);
  // A shared crawl gets the saved record with the robots.txt capture, once that is durable
  // (WarcSink), so no worker trusts rules whose robots.txt no WARC file holds; without a
  // capture, at once.
  std::optional<SharedRobots> shared;
  if (step.saved && opts_.shared != nullptr) shared.emplace(host, std::move(*step.saved));
  if (GotResponse(r)) {
    DispatchCapture(lease.item, std::move(r), /*robots=*/true, "fetched", "", std::nullopt, false,
                    std::exchange(shared, std::nullopt));
  } else if (!flight.no_request) {
    // A robots.txt request without an answer leaves no WARC record: its attempt record.
    const char* outcome = step.step == RobotsGate::Step::kUnavailable   ? "robots-unavailable"
                          : step.step == RobotsGate::Step::kUnreachable ? "gave-up"
                                                                        : "retried";
    SubmitAttempt(r.url.empty() ? robots_->RobotsUrl(host) : r.url, r, outcome, step.detail);
  }
  if (shared) hosts_->PutShared(shared->first, {.robots = std::move(shared->second)});
}

// Rules in force: the Crawl-delay (a host asking for more than the maximum is given up)
// and the Sitemap lines (admitted like links of the robots.txt).
void Crawler::Impl::ApplyRobots(const frontier::Lease& lease, const RobotsGate::FetchStep& step,
                                frontier::Completion* done) {
  const std::string& host = lease.item.host;
  if (step.crawl_delay) {
    frontier_->SetCrawlDelay(host, *step.crawl_delay);
    hosts_->Ensure(host).crawl_delay_ms = step.crawl_delay->count();
    if (frontier_->HostSkipped(host)) {
      done->kind = frontier::CompletionKind::kDone;
      const auto max_s = std::chrono::duration<double>(opts_.frontier.max_crawl_delay).count();
      GiveUpHost(host, lease.item, "crawl-delay-too-long",
                 "robots.txt Crawl-delay " +
                     std::to_string(std::chrono::duration<double>(*step.crawl_delay).count()) +
                     " s above the maximum of " + std::to_string(max_s) + " s",
                 0);
      return;
    }
  }
  for (const std::string& sitemap : step.sitemaps) {
    std::optional<url::Url> su = url::ParseCanonical(sitemap, nullptr, opts_.canon);
    if (!su || (su->scheme() != "http" && su->scheme() != "https")) continue;
    FoundLink link = MakeFoundLink(*su);
    link.sitemap = true;
    Admit(link, &lease.item);
  }
}

void Crawler::Impl::OnPageDone(InFlight flight, fetch::FetchResult&& r) {
  const frontier::Lease& lease = flight.lease;
  if (!flight.no_request) {
    ++stats_.fetches;
    stats_.bytes_downloaded += r.body.size();
    NoteIp(lease.item.host, r.ip);
    admission_->NoteFetched(NameOfHostKey(lease.item.host));
  }
  const bool got_response = GotResponse(r);
  frontier::Completion c{.kind = frontier::CompletionKind::kDone,
                         .response_time = r.total_time,
                         .ended_ago = EndedAgo(r)};
  if (got_response) {
    ++stats_.pages;
    CountStatus(r.status, &stats_);
    if (!r.truncated.empty()) ++stats_.truncated;
    if (IsRetryableStatus(r.status)) {
      c.kind = frontier::CompletionKind::kRetry;
      c.error = r.status >= 500;
      if (auto ra = r.RetryAfter(WallNow())) {
        c.retry_after = std::chrono::duration_cast<std::chrono::milliseconds>(*ra);
      }
    }
  } else {
    ++stats_.fetch_errors;
    c.kind = frontier::CompletionKind::kRetry;
    c.error = true;
  }
  const frontier::GiveUp gave_up = frontier_->Complete(lease, c);
  if (!flight.no_request) NoteCompletion(lease.item.host, r, got_response);
  hosts_->SavePoliteness(lease.item.host, c.retry_after);
  if (c.kind != frontier::CompletionKind::kRetry) {
    // A 304 answers a conditional request only; to any other it is an ordinary response.
    const bool not_modified = got_response && r.status == 304 && flight.conditional;
    DispatchCapture(lease.item, std::move(r), /*robots=*/false, "fetched", "",
                    std::move(flight.previous), not_modified);
    return;
  }
  if (gave_up == frontier::GiveUp::kNo) {
    ++stats_.retries;
    frontier::UrlItem retry = lease.item;
    ++retry.attempts;  // as the frontier counted it: a restart keeps the count
    db_->UpdateQueued(retry);
    // Not stored (the retry will produce the stored response): the request's attempt record.
    if (!flight.no_request) {
      SubmitAttempt(lease.item.url, r, "retried",
                    FetchFailureDetail(r) + " (attempt " + std::to_string(retry.attempts) + ")");
    }
    return;
  }
  ++stats_.gave_up;
  std::string detail =
      FetchFailureDetail(r) + " (" + std::to_string(lease.item.attempts + 1) + " attempts)";
  if (!got_response) {
    Record(lease.item.url, "gave-up", 0, detail);
    if (flight.no_request) {
      MarkDone(lease.item, 0);
      return;
    }
    // The done mark waits for the attempt's record (WarcSink::SubmitAttempt), as a stored
    // page's waits for its WARC records.
    state::SeenRecord record = DoneRecordNow(lease.item, 0);
    SubmitAttempt(lease.item.url, r, "gave-up", std::move(detail),
                  DurablePage{lease.item, std::move(record)});
    return;
  }
  DispatchCapture(lease.item, std::move(r), /*robots=*/false, "gave-up", std::move(detail),
                  std::move(flight.previous));
}

void Crawler::Impl::SubmitAttempt(const std::string& url, const fetch::FetchResult& r,
                                  std::string outcome, std::string reason,
                                  std::optional<DurablePage> done) {
  sink_->SubmitAttempt({.url = url,
                        .status = GotResponse(r) ? r.status : 0,
                        .fetched_at_us = r.start_wall_us != 0 ? r.start_wall_us : WallNow(),
                        .outcome = std::move(outcome),
                        .reason = std::move(reason),
                        .done = std::move(done)});
}

void Crawler::Impl::DispatchCapture(const frontier::UrlItem& item, fetch::FetchResult&& r,
                                    bool robots, std::string outcome, std::string detail,
                                    std::optional<state::SeenRecord> previous, bool not_modified,
                                    std::optional<SharedRobots> shared_robots) {
  PageTask task;
  task.item = item;
  task.previous = std::move(previous);
  task.not_modified = not_modified;
  task.policy = PolicyFor(opts_.freshness, item.host);
  task.completed_us = WallNow();
  if (robots) {
    task.item.url = r.url;  // robots.txt (or a redirect hop of it), stored like a page
    task.item.via = item.url;
  }
  task.shared_robots = std::move(shared_robots);
  task.sitemap_hint = !robots && item.sitemap;
  task.is_robots = robots;
  task.outcome = std::move(outcome);
  task.detail = std::move(detail);
  task.result = std::move(r);
  Dispatch(std::move(task));
}

// The host is given up for `reason`: the leased URL and every queued one get that outcome,
// and later URLs of the host get it without a request.
void Crawler::Impl::GiveUpHost(const std::string& host, const frontier::UrlItem& leased,
                               std::string_view reason, std::string_view detail, int status) {
  KillHost(host, reason, detail);
  Record(leased.url, reason, status, detail);
  MarkDone(leased, status);
}

void Crawler::Impl::KillHost(const std::string& host_key, std::string_view reason,
                             std::string_view detail) {
  HostTable::Host& host = hosts_->Ensure(host_key);
  host.dead_reason = reason;
  host.dead_detail = detail;
  HostsGivenUp& given_up = stats_.hosts_given_up[std::string(reason)];
  if (given_up.hosts++ == 0) given_up.example = host_key + ": " + std::string(detail);
  spdlog::info("giving up host {}: {} ({})", host_key, reason, detail);
  for (const frontier::UrlItem& item : frontier_->DrainHost(host_key)) {
    LeftFrontier(item);
    Record(item.url, reason, 0, detail);
    MarkDone(item, 0);
  }
  hosts_->SavePoliteness(host_key, std::nullopt);
}

// A crawl stopped early (page limit, signal): what is still queued stays queued in the crawl
// state — it is not final, the next run of the same command crawls it — so it is counted
// for the summary, not drained (a large crawl may hold millions of queued URLs on disk).
void Crawler::Impl::RecordUnreached() {
  stats_.still_queued = frontier_->queued() + frontier_->retries_pending() + db_->parked();
  if (stats_.still_queued > 0) {
    spdlog::info("{} URLs still queued in {}; run the same command again to resume",
                 stats_.still_queued, opts_.out_dir.string());
  }
}

}  // namespace harvest::crawl
