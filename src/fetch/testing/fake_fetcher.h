// FakeFetcher: a scripted fetch::Fetcher for in-process tests of the crawl, driven by a
// FakeClock. No sockets, no sleeps of simulated time.
//
// Each URL answers from a script: a list of FakeResponse values served in order (the last
// one repeats), or, for unscripted URLs, the default response (404). A response takes its
// `latency` of simulated time: a request started at t completes at t + latency.
//
// Time: Poll(timeout) completes what is due now; when nothing is due and no Wakeup() is
// pending it waits briefly in real time for one (`grace` after each start, completion or
// wakeup, so the crawl's worker threads can hand their results back; kQuietStep every tenth
// step after that), then advances the FakeClock to the earlier of now + timeout and the next
// completion, and completes what became due. So simulated time only moves while the crawl
// is waiting on the fetcher, and never past a completion or the crawl's own next timer.
//
// Every request is logged (URL, request headers, connect address and port, simulated start
// and end) for politeness, schedule and DNS assertions.
//
// Thread-safety: as fetch::Fetcher (event-loop-only; Wakeup() from any thread). Script()
// and the accessors are for the test thread before or after a crawl, or for hooks running
// on the loop thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "fetch/fetch.h"

namespace harvest::fetch::testing {

struct FakeResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // "Content-Type" etc.
  std::string body;
  std::chrono::milliseconds latency{50};
  // Not kOk: a transport error (status 0 unless `status` is set, e.g. a body cut by a
  // timeout after its head arrived).
  FetchOutcome outcome = FetchOutcome::kOk;
  std::string error;      // the message for a transport error
  std::string truncated;  // WARC-Truncated reason ("length", "time", ...)
  std::string ip = "10.0.0.1";

  // Shorthands.
  static FakeResponse Html(std::string body, int status = 200);
  static FakeResponse Text(std::string body, int status = 200);
  static FakeResponse WithStatus(int status);
  static FakeResponse Redirect(int status, std::string location);
  static FakeResponse Error(FetchOutcome outcome, std::string message);
};

struct FakeRequestLog {
  std::string url;
  std::string host;  // host[:port] of the URL
  std::vector<std::pair<std::string, std::string>> headers;
  std::string connect_address;   // FetchRequest::connect_address ("" = none)
  int connect_port = 0;          // FetchRequest::connect_port
  bool reuse_connection = true;  // FetchRequest::reuse_connection
  size_t max_body_bytes = 0;     // FetchRequest::max_body_bytes
  Clock::TimePoint start{};
  Clock::TimePoint end{};
  int status = 0;
};

class FakeFetcher final : public Fetcher {
 public:
  // `clock` must outlive the fetcher.
  explicit FakeFetcher(FakeClock* clock);
  ~FakeFetcher() override;

  // Answers for `url` (exact string match on the requested URL), in order; the last repeats.
  void Script(const std::string& url, std::vector<FakeResponse> answers);
  void Script(const std::string& url, FakeResponse answer) {
    Script(url, std::vector<FakeResponse>{std::move(answer)});
  }
  // Answers for `url` computed per request (e.g. from the request's validators or the
  // simulated time); takes precedence over Script() for that URL.
  using Responder = std::function<FakeResponse(const FetchRequest& request)>;
  void Respond(const std::string& url, Responder responder);
  // The answer for unscripted URLs. Default: 404 with an empty body.
  void SetDefault(FakeResponse answer) { default_ = std::move(answer); }
  // Called on the loop thread after each completion (before the crawl's callback), with
  // the request's log entry (e.g. to stop or kill the crawl after the n-th request).
  void OnComplete(std::function<void(const FakeRequestLog&)> hook) { hook_ = std::move(hook); }
  // Real time Poll() waits for a Wakeup() before advancing simulated time after a start,
  // a completion or a wakeup. Default 20 ms.
  void set_grace(std::chrono::milliseconds g) { grace_ = g; }
  // Real time Poll() waits every tenth simulated step once a grace passed in silence.
  static constexpr std::chrono::milliseconds kQuietStep{1};

  const std::vector<FakeRequestLog>& log() const { return log_; }
  // Requests made for `url`.
  size_t RequestsFor(const std::string& url) const;
  // The largest number of requests in flight at once to one host over the whole log.
  size_t MaxInFlightPerHost() const;

  void Start(FetchRequest request, FetchCallback done) override;
  int Poll(std::chrono::microseconds timeout) override;
  void Wakeup() override;
  size_t in_flight() const override { return pending_.size(); }
  Status status() const override { return Status::Ok(); }

 private:
  struct Pending {
    Clock::TimePoint due;
    uint64_t seq;
    size_t log_index;
    FetchResult result;
    FetchCallback done;
  };
  FakeResponse Answer(const FetchRequest& request);
  FetchResult Build(const FetchRequest& request, const FakeResponse& answer) const;
  int CompleteDue();
  bool WaitForWakeup(std::chrono::milliseconds limit);

  FakeClock* clock_;
  std::map<std::string, std::vector<FakeResponse>> script_;
  std::map<std::string, size_t> served_;
  std::map<std::string, Responder> responders_;
  FakeResponse default_;
  std::function<void(const FakeRequestLog&)> hook_;
  std::chrono::milliseconds grace_{20};
  std::vector<Pending> pending_;
  std::vector<FakeRequestLog> log_;
  uint64_t next_seq_ = 0;
  bool quiet_ = false;  // a grace passed without a wakeup since the last event
  uint64_t quiet_steps_ = 0;

  Mutex wake_mu_;
  CondVar wake_cv_;
  bool wake_ GUARDED_BY(wake_mu_) = false;
};

}  // namespace harvest::fetch::testing
