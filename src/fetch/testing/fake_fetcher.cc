#include "fetch/testing/fake_fetcher.h"

#include <algorithm>

namespace harvest::fetch::testing {
namespace {

// "http://a.example:8080/x?y" -> "a.example:8080".
std::string HostOf(std::string_view url) {
  size_t start = url.find("://");
  start = start == std::string_view::npos ? 0 : start + 3;
  size_t end = url.find_first_of("/?#", start);
  return std::string(url.substr(start, end == std::string_view::npos ? url.npos : end - start));
}

std::string TargetOf(std::string_view url) {
  size_t start = url.find("://");
  start = start == std::string_view::npos ? 0 : start + 3;
  size_t slash = url.find('/', start);
  return slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
}

}  // namespace

FakeResponse FakeResponse::Html(std::string body, int status) {
  FakeResponse r = Text(std::move(body), status);
  r.headers = {{"Content-Type", "text/html; charset=utf-8"}};
  return r;
}

FakeResponse FakeResponse::Text(std::string body, int status) {
  FakeResponse r = WithStatus(status);
  r.body = std::move(body);
  return r;
}

FakeResponse FakeResponse::WithStatus(int status) {
  FakeResponse r;
  r.status = status;
  r.headers = {{"Content-Type", "text/plain"}};
  return r;
}

FakeResponse FakeResponse::Redirect(int status, std::string location) {
  FakeResponse r;
  r.status = status;
  r.headers = {{"Location", std::move(location)}};
  return r;
}

FakeResponse FakeResponse::Error(FetchOutcome outcome, std::string message) {
  FakeResponse r;
  r.status = 0;
  r.outcome = outcome;
  r.error = std::move(message);
  return r;
}

FakeFetcher::FakeFetcher(FakeClock* clock) : clock_(clock) {
  default_ = FakeResponse::WithStatus(404);
}

FakeFetcher::~FakeFetcher() = default;

void FakeFetcher::Script(const std::string& url, std::vector<FakeResponse> answers) {
  script_[url] = std::move(answers);
  served_[url] = 0;
}

void FakeFetcher::Respond(const std::string& url, Responder responder) {
  responders_[url] = std::move(responder);
}

FakeResponse FakeFetcher::Answer(const FetchRequest& request) {
  const std::string& url = request.url;
  if (auto r = responders_.find(url); r != responders_.end()) return r->second(request);
  auto it = script_.find(url);
  if (it == script_.end() || it->second.empty()) return default_;
  size_t& n = served_[url];
  const FakeResponse& r = it->second[std::min(n, it->second.size() - 1)];
  ++n;
  return r;
}

FetchResult FakeFetcher::Build(const FetchRequest& request, const FakeResponse& a) const {
  FetchResult r;
  r.id = request.id;
  r.url = request.url;
  r.effective_url = request.url;
  r.outcome = a.outcome;
  r.error = a.error;
  r.status = a.status;
  r.truncated = a.truncated;
  r.ip = a.ip;
  r.start_wall_us = clock_->WallMicros();
  r.total_time = std::chrono::duration_cast<std::chrono::microseconds>(a.latency);
  r.ttfb = r.total_time / 2;
  r.request_head =
      "GET " + TargetOf(request.url) + " HTTP/1.1\r\nHost: " + HostOf(request.url) + "\r\n";
  for (const auto& [name, value] : request.headers) r.request_head += name + ": " + value + "\r\n";
  r.request_head += "\r\n";
  if (a.status > 0) {
    r.http_version = "1.1";
    r.response_head = "HTTP/1.1 " + std::to_string(a.status) + " Fake\r\n";
    for (const auto& [name, value] : a.headers) r.response_head += name + ": " + value + "\r\n";
    r.response_head += "Content-Length: " + std::to_string(a.body.size()) + "\r\n\r\n";
    r.headers = ParseResponseHeaders(r.response_head);
    r.body = a.body;
  }
  return r;
}

void FakeFetcher::Start(FetchRequest request, FetchCallback done) {
  quiet_ = false;
  const FakeResponse answer = Answer(request);
  FakeRequestLog entry;
  entry.url = request.url;
  entry.host = HostOf(request.url);
  entry.headers = request.headers;
  entry.connect_address = request.connect_address;
  entry.connect_port = request.connect_port;
  entry.max_body_bytes = request.max_body_bytes;
  entry.reuse_connection = request.reuse_connection;
  entry.start = clock_->Now();
  entry.end = entry.start + std::chrono::duration_cast<Clock::Duration>(answer.latency);
  entry.status = answer.status;
  log_.push_back(entry);
  pending_.push_back(Pending{.due = entry.end,
                             .seq = next_seq_++,
                             .log_index = log_.size() - 1,
                             .result = Build(request, answer),
                             .done = std::move(done)});
}

// Completes the due requests in (due, start order); callbacks may Start() new ones.
int FakeFetcher::CompleteDue() {
  int completed = 0;
  for (;;) {
    const Clock::TimePoint now = clock_->Now();
    auto next =
        std::min_element(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) {
          return a.due != b.due ? a.due < b.due : a.seq < b.seq;
        });
    if (next == pending_.end() || next->due > now) return completed;
    Pending p = std::move(*next);
    pending_.erase(next);
    ++completed;
    if (hook_) {
      const FakeRequestLog entry = log_[p.log_index];  // the hook may start requests
      hook_(entry);
    }
    p.done(std::move(p.result));
  }
}

bool FakeFetcher::WaitForWakeup(std::chrono::milliseconds limit) {
  MutexLock lock(&wake_mu_);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!wake_) {
    if (!wake_cv_.WaitUntil(&wake_mu_, deadline)) break;
  }
  const bool woken = wake_;
  wake_ = false;
  return woken;
}

int FakeFetcher::Poll(std::chrono::microseconds timeout) {
  if (int n = CompleteDue(); n > 0) {
    quiet_ = false;
    return n;
  }
  // After a start, a completion or a wakeup the crawl may have work on other threads: give
  // it `grace` to report back. Once a grace passed in silence, simulated time runs on with
  // a short real pause every tenth step (kQuietStep; steps are at most the crawl's poll
  // timeout), so a slow worker thread (sanitizers, a loaded machine) still reports back
  // before much simulated time has passed.
  const std::chrono::milliseconds pause =
      !quiet_ ? grace_ : (quiet_steps_++ % 10 == 0 ? kQuietStep : std::chrono::milliseconds(0));
  if (WaitForWakeup(std::chrono::ceil<std::chrono::milliseconds>(
          std::min<std::chrono::microseconds>(timeout, pause)))) {
    quiet_ = false;
    return CompleteDue();
  }
  if (!quiet_) quiet_steps_ = 0;
  quiet_ = true;
  Clock::TimePoint target = clock_->Now() + std::chrono::duration_cast<Clock::Duration>(timeout);
  for (const Pending& p : pending_) target = std::min(target, p.due);
  if (target > clock_->Now()) clock_->Advance(target - clock_->Now());
  const int n = CompleteDue();
  if (n > 0) quiet_ = false;
  return n;
}

void FakeFetcher::Wakeup() {
  {
    MutexLock lock(&wake_mu_);
    wake_ = true;
  }
  wake_cv_.Signal();
}

size_t FakeFetcher::RequestsFor(const std::string& url) const {
  return static_cast<size_t>(std::count_if(log_.begin(), log_.end(),
                                           [&](const FakeRequestLog& e) { return e.url == url; }));
}

size_t FakeFetcher::MaxInFlightPerHost() const {
  // Sweep each host's intervals; an end equal to a start does not overlap.
  std::map<std::string, std::vector<std::pair<Clock::TimePoint, int>>> events;
  for (const FakeRequestLog& e : log_) {
    events[e.host].push_back({e.start, +1});
    events[e.host].push_back({e.end, -1});
  }
  size_t worst = 0;
  for (auto& [host, ev] : events) {
    std::sort(ev.begin(), ev.end());  // at equal times -1 sorts first
    int open = 0;
    for (const auto& [t, d] : ev) {
      open += d;
      worst = std::max(worst, static_cast<size_t>(std::max(open, 0)));
    }
  }
  return worst;
}

}  // namespace harvest::fetch::testing
