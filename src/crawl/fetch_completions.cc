#include "crawl/fetch_completions.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include <chrono>

#include "base/clock.h"
#include "base/host_key.h"
#include "crawl/admitter.h"
#include "crawl/page_pipeline.h"
#include "crawl/recrawler.h"
#include "crawl/schedule.h"

namespace harvest::crawl {
namespace {

bool IsRetryableStatus(int status) { return status >= 500 || status == 429 || status == 408; }

void CountStatus(int s, FetchCompletions::Counters* stats) {
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

FetchCompletions::FetchCompletions(Parts parts) : parts_(parts), opts_(*parts.opts) {}

void FetchCompletions::Counters::AddTo(CrawlStats* stats) const {
  stats->fetches += fetches;
  stats->robots_fetches += robots_fetches;
  stats->pages += pages;
  stats->http_2xx += http_2xx;
  stats->http_3xx += http_3xx;
  stats->http_4xx += http_4xx;
  stats->http_5xx += http_5xx;
  stats->fetch_errors += fetch_errors;
  stats->retries += retries;
  stats->gave_up += gave_up;
  stats->truncated += truncated;
  stats->bytes_downloaded += bytes_downloaded;
  for (const auto& [reason, given_up] : hosts_given_up) {
    HostsGivenUp& into = stats->hosts_given_up[reason];
    if (into.hosts == 0) into.example = given_up.example;
    into.hosts += given_up.hosts;
  }
}

void FetchCompletions::SetRunStart(Clock::TimePoint start) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  run_start_ = start;
}

int64_t FetchCompletions::Second() const {
  return std::chrono::duration_cast<std::chrono::seconds>(parts_.clock->Now() - run_start_).count();
}

void FetchCompletions::RecentTotals(uint64_t* pages, uint64_t* errors) const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  rate_.Totals(Second(), pages, errors);
}

const MetricsSnapshot& FetchCompletions::metrics() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return metrics_;
}

const FetchCompletions::Counters& FetchCompletions::counters() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return counters_;
}

void FetchCompletions::Record(std::string_view url, std::string_view outcome, int status,
                              std::string_view detail) {
  parts_.outcomes->Record(url, outcome, status, detail, parts_.clock->WallMicros());
}

void FetchCompletions::OnRobotsDone(InFlight flight, fetch::FetchResult&& r) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  const frontier::Lease& lease = flight.lease;
  if (!flight.no_request) {
    ++counters_.fetches;
    ++counters_.robots_fetches;
    // A request to the host like any: the daily quota counts requests (docs/admission.md).
    parts_.admitter->NoteFetched(NameOfHostKey(lease.item.host));
  }
  counters_.bytes_downloaded += r.body.size();
  const std::string& host = lease.item.host;
  parts_.hosts->NoteIp(host, r.ip);
  if (!flight.no_request) parts_.hosts->upgrades().OnResponse(r);
  RobotsGate::FetchStep step = parts_.robots->OnFetched(host, r);
  {
    static constexpr const char* kStepNames[] = {"redirect", "rules",       "retry",
                                                 "cached",   "unavailable", "unreachable"};
    ++metrics_.robots_outcomes[kStepNames[static_cast<int>(step.step)]];
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
      if (!step.also_host.empty()) {
        // The redirects ended at another origin's robots.txt: its rules too (RobotsGate).
        HostTable::Host& also = parts_.hosts->Ensure(step.also_host);
        if (step.crawl_delay) {
          parts_.frontier->SetCrawlDelay(step.also_host, *step.crawl_delay);
          also.crawl_delay_ms = step.crawl_delay->count();
        }
        if (step.also_saved && opts_.shared != nullptr) {
          parts_.hosts->PutShared(step.also_host, {.robots = std::move(*step.also_saved)});
        }
      }
      break;
  }
  parts_.frontier->Complete(lease, done);
  parts_.hosts->SavePoliteness(host, done.retry_after);
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
    SubmitAttempt(r.url.empty() ? parts_.robots->RobotsUrl(host) : r.url, r, outcome, step.detail);
  }
  if (shared) parts_.hosts->PutShared(shared->first, {.robots = std::move(shared->second)});
}

// Rules in force: the Crawl-delay (a host asking for more than the maximum is given up)
// and the Sitemap lines (admitted like links of the robots.txt), or without one, with
// crawl.sitemap_probe, <origin>/sitemap.xml.
void FetchCompletions::ApplyRobots(const frontier::Lease& lease, const RobotsGate::FetchStep& step,
                                   frontier::Completion* done) {
  const std::string& host = lease.item.host;
  if (step.crawl_delay) {
    parts_.frontier->SetCrawlDelay(host, *step.crawl_delay);
    parts_.hosts->Ensure(host).crawl_delay_ms = step.crawl_delay->count();
    if (parts_.frontier->HostSkipped(host)) {
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
  for (const std::string& sitemap : step.sitemaps) AdmitSitemap(sitemap, lease.item);
  // No Sitemap line: the conventional place, when the operator asks for it. Admission's seen
  // set makes it once per origin (a robots.txt refetched later admits nothing new).
  if (step.sitemaps.empty() && opts_.sitemap_probe) AdmitSitemap(host + "/sitemap.xml", lease.item);
}

void FetchCompletions::AdmitSitemap(std::string_view sitemap, const frontier::UrlItem& via) {
  std::optional<url::Url> su = url::ParseCanonical(sitemap, nullptr, opts_.canon);
  if (!su || (su->scheme() != "http" && su->scheme() != "https")) return;
  FoundLink link = MakeFoundLink(*su);
  link.sitemap = true;
  parts_.admitter->Admit(link, via);
}

void FetchCompletions::OnPageDone(InFlight flight, fetch::FetchResult&& r) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  const frontier::Lease& lease = flight.lease;
  if (!flight.no_request) {
    ++counters_.fetches;
    counters_.bytes_downloaded += r.body.size();
    parts_.hosts->NoteIp(lease.item.host, r.ip);
    parts_.admitter->NoteFetched(NameOfHostKey(lease.item.host));
    parts_.hosts->upgrades().OnResponse(r);
  }
  const bool got_response = GotResponse(r);
  frontier::Completion c{.kind = frontier::CompletionKind::kDone,
                         .response_time = r.total_time,
                         .ended_ago = EndedAgo(r)};
  if (got_response) {
    ++counters_.pages;
    CountStatus(r.status, &counters_);
    if (!r.truncated.empty()) ++counters_.truncated;
    if (IsRetryableStatus(r.status)) {
      c.kind = frontier::CompletionKind::kRetry;
      c.error = r.status >= 500;
      if (auto ra = r.RetryAfter(parts_.clock->WallMicros())) {
        c.retry_after = std::chrono::duration_cast<std::chrono::milliseconds>(*ra);
      }
    }
  } else {
    ++counters_.fetch_errors;
    c.kind = frontier::CompletionKind::kRetry;
    c.error = true;
  }
  const frontier::GiveUp gave_up = parts_.frontier->Complete(lease, c);
  if (!flight.no_request) NoteCompletion(lease.item.host, r, got_response);
  parts_.hosts->SavePoliteness(lease.item.host, c.retry_after);
  if (c.kind != frontier::CompletionKind::kRetry) {
    // A 304 answers a conditional request only; to any other it is an ordinary response.
    const bool not_modified = got_response && r.status == 304 && flight.conditional;
    DispatchCapture(lease.item, std::move(r), /*robots=*/false, "fetched", "",
                    std::move(flight.previous), not_modified);
    return;
  }
  if (gave_up == frontier::GiveUp::kNo) {
    ++counters_.retries;
    frontier::UrlItem retry = lease.item;
    ++retry.attempts;  // as the frontier counted it: a restart keeps the count
    parts_.db->UpdateQueued(retry);
    // Not stored (the retry will produce the stored response): the request's attempt record.
    if (!flight.no_request) {
      SubmitAttempt(lease.item.url, r, "retried",
                    FetchFailureDetail(r) + " (attempt " + std::to_string(retry.attempts) + ")");
    }
    return;
  }
  ++counters_.gave_up;
  std::string detail =
      FetchFailureDetail(r) + " (" + std::to_string(lease.item.attempts + 1) + " attempts)";
  if (!got_response) {
    Record(lease.item.url, "gave-up", 0, detail);
    if (flight.no_request) {
      parts_.recrawler->MarkDone(lease.item, 0);
      return;
    }
    // The done mark waits for the attempt's record (WarcSink::SubmitAttempt), as a stored
    // page's waits for its WARC records.
    state::SeenRecord record = parts_.recrawler->DoneRecordNow(lease.item, 0);
    SubmitAttempt(lease.item.url, r, "gave-up", std::move(detail),
                  DurablePage{lease.item, std::move(record)});
    return;
  }
  DispatchCapture(lease.item, std::move(r), /*robots=*/false, "gave-up", std::move(detail),
                  std::move(flight.previous));
}

void FetchCompletions::SubmitAttempt(const std::string& url, const fetch::FetchResult& r,
                                     std::string outcome, std::string reason,
                                     std::optional<DurablePage> done) {
  parts_.sink->SubmitAttempt(
      {.url = url,
       .status = GotResponse(r) ? r.status : 0,
       .fetched_at_us = r.start_wall_us != 0 ? r.start_wall_us : parts_.clock->WallMicros(),
       .outcome = std::move(outcome),
       .reason = std::move(reason),
       .done = std::move(done)});
}

void FetchCompletions::DispatchCapture(const frontier::UrlItem& item, fetch::FetchResult&& r,
                                       bool robots, std::string outcome, std::string detail,
                                       std::optional<state::SeenRecord> previous, bool not_modified,
                                       std::optional<SharedRobots> shared_robots) {
  PageTask task;
  task.item = item;
  task.previous = std::move(previous);
  task.not_modified = not_modified;
  task.policy = PolicyFor(opts_.freshness, item.host);
  task.completed_us = parts_.clock->WallMicros();
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
  parts_.pipeline->Dispatch(std::move(task));
}

// The host is given up for `reason`: the leased URL and every queued one get that outcome,
// and later URLs of the host get it without a request.
void FetchCompletions::GiveUpHost(const std::string& host, const frontier::UrlItem& leased,
                                  std::string_view reason, std::string_view detail, int status) {
  KillHost(host, reason, detail);
  Record(leased.url, reason, status, detail);
  parts_.recrawler->MarkDone(leased, status);
}

void FetchCompletions::KillHost(const std::string& host_key, std::string_view reason,
                                std::string_view detail) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  HostTable::Host& host = parts_.hosts->Ensure(host_key);
  host.dead_reason = reason;
  host.dead_detail = detail;
  HostsGivenUp& given_up = counters_.hosts_given_up[std::string(reason)];
  if (given_up.hosts++ == 0) given_up.example = host_key + ": " + std::string(detail);
  spdlog::info("giving up host {}: {} ({})", host_key, reason, detail);
  for (const frontier::UrlItem& item : parts_.frontier->DrainHost(host_key)) {
    parts_.recrawler->LeftFrontier(item);
    Record(item.url, reason, 0, detail);
    parts_.recrawler->MarkDone(item, 0);
  }
  parts_.hosts->SavePoliteness(host_key, std::nullopt);
}

void FetchCompletions::NoteCompletion(const std::string& host, const fetch::FetchResult& r,
                                      bool got_response) {
  const bool error = !got_response || r.status >= 500 || r.status == 429;
  rate_.Add(Second(), 1, error ? 1 : 0);
  HostTable::Host& h = parts_.hosts->Ensure(host);
  if (!h.activity) h.activity = std::make_unique<HostActivity>();
  HostActivity& a = *h.activity;
  ++a.pages;
  if (got_response && r.status >= 100 && r.status < 600) ++a.by_class[r.status / 100 - 1];
  if (!got_response) {
    const std::string kind(fetch::OutcomeName(r.outcome));
    ++metrics_.errors_by_kind[kind];
    a.NoteError(r.url + ": " + (r.error.empty() ? kind : r.error));
  } else if (error) {
    ++metrics_.errors_by_kind[r.status == 429 ? "http_429" : "http_5xx"];
    a.NoteError(r.url + ": HTTP " + std::to_string(r.status));
  }
  // Latency histogram and the delay the host is charged next (politeness wait).
  if (metrics_.latency_counts.empty()) {
    metrics_.latency_bounds = LatencyBounds();
    metrics_.latency_counts.assign(metrics_.latency_bounds.size() + 1, 0);
  }
  const double latency = std::chrono::duration<double>(r.total_time).count();
  const auto& bounds = metrics_.latency_bounds;
  const size_t bucket =
      static_cast<size_t>(std::lower_bound(bounds.begin(), bounds.end(), latency) - bounds.begin());
  ++metrics_.latency_counts[bucket];
  metrics_.latency_sum_s += latency;
  metrics_.politeness_wait_s +=
      std::chrono::duration<double>(parts_.frontier->HostDelay(host)).count();
}

}  // namespace harvest::crawl
