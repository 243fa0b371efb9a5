// RunAudit: streams the request log into compact records, replays them in start order and
// applies every check (rules in audit.h and docs/audit.md).
#include "audit/audit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <istream>
#include <optional>
#include <unordered_map>

#include "audit/interner.h"
#include "audit/log_line.h"

namespace harvest::audit {
namespace {

constexpr uint32_t kNone = UINT32_MAX;
// Records and identities are indexed by uint32_t to keep a record compact (a million-line log
// is the design point); a log beyond this is refused rather than silently wrapped.
constexpr size_t kMaxRequests = UINT32_MAX - 1;
constexpr size_t kKinds = 10;

// One well-formed request, compact: strings live in tables or the path arena.
struct Record {
  int64_t start_us = 0;
  int64_t end_us = 0;
  int64_t line = 0;
  int64_t retry_after_us = -1;  // -1: the response carried no Retry-After
  uint64_t path_offset = 0;
  uint32_t path_size = 0;
  uint32_t host = 0;
  uint32_t identity = 0;
  uint32_t ip = kNone;  // index into the address table; kNone: the line had no "ip"
  int16_t status = 0;
  bool disallowed = false;
  bool cond = false;
  bool robots = false;  // a robots.txt request (exempt from the refresh window)
  Scheme scheme = Scheme::kUnspecified;
  bool upgrade = false;
  bool Http() const { return scheme != Scheme::kHttps; }  // absent = http
};
// The design point's memory budget (docs/audit.md "Performance").
static_assert(sizeof(Record) <= 64, "a Record should stay within 64 bytes");

struct HostState {
  std::string name;
  const ManifestHost* manifest = nullptr;
  int64_t requests = 0;
  ViolationCounts counts;
  int64_t conditional = 0;
  int64_t not_modified = 0;
  uint32_t last = kNone;  // record with the latest end so far (in start order)
  int64_t http_requests = 0;
  // The https request with a response (status > 0) that ended first so far (in start order
  // every such request ending before a start has been seen by then).
  uint32_t first_https_end = kNone;
};

// Per-IP replay state of one address.
struct IpState {
  // (end_us, record) of the requests in flight at the latest start seen: a min-heap by end.
  std::vector<std::pair<int64_t, uint32_t>> in_flight;
  uint32_t last = kNone;  // the latest-starting record so far
  IpReport report;
};

// Orders addresses numerically when both are dotted-quad IPv4, else as strings (IPv4 first).
std::optional<uint32_t> ParseIpv4(std::string_view s) {
  uint32_t out = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (s.empty() || s[0] != '.') return std::nullopt;
      s.remove_prefix(1);
    }
    size_t n = 0;
    uint32_t v = 0;
    while (n < s.size() && n < 3 && s[n] >= '0' && s[n] <= '9') v = v * 10 + uint32_t(s[n++] - '0');
    if (n == 0 || v > 255) return std::nullopt;
    s.remove_prefix(n);
    out = out << 8 | v;
  }
  if (!s.empty()) return std::nullopt;
  return out;
}

bool AddressLess(const std::string& a, const std::string& b) {
  std::optional<uint32_t> x = ParseIpv4(a), y = ParseIpv4(b);
  if (x && y) return *x != *y ? *x < *y : a < b;
  if (x.has_value() != y.has_value()) return x.has_value();
  return a < b;
}

// True iff a request answered with `status` settled the page: a later request for it is a
// duplicate. 5xx, 408, 429 and connection failures (0) invite a retry.
bool IsFinal(int status) { return status >= 200 && status < 500 && status != 408 && status != 429; }

// Milliseconds to microseconds, saturating (options are not range-checked beyond >= 0).
int64_t MicrosOf(std::chrono::milliseconds d) {
  return d.count() > INT64_MAX / 1000 ? INT64_MAX : d.count() * 1000;
}

// The lower median, minimum and maximum of `counts` (reordered).
FetchStats StatsOf(std::vector<int64_t>* counts) {
  FetchStats out;
  out.pages = int64_t(counts->size());
  if (counts->empty()) return out;
  auto mid = counts->begin() + (counts->size() - 1) / 2;
  std::nth_element(counts->begin(), mid, counts->end());
  out.median = *mid;
  auto [lo, hi] = std::minmax_element(counts->begin(), counts->end());
  out.min = *lo;
  out.max = *hi;
  return out;
}

class Auditor {
 public:
  Auditor(const Manifest& manifest, const AuditOptions& options)
      : options_(options), restarts_(options.restarts_us) {
    std::sort(restarts_.begin(), restarts_.end());
    restarts_.erase(std::unique(restarts_.begin(), restarts_.end()), restarts_.end());
    for (const auto& h : manifest.hosts) {
      hosts_[HostIndex(h.host)].manifest = &h;
      if (options.check_must_not_fetch) {
        for (const auto& id : h.must_fetch) must_fetch_.Intern(id);
      }
    }
  }

  Status Read(std::istream& log) {
    std::string line;
    LogLine parsed;
    std::string error;
    while (std::getline(log, line)) {
      ++report_.lines;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank
      if (!ParseLogLine(line, &parsed, &error)) {
        ++report_.malformed_count;
        if (report_.malformed.size() < options_.max_malformed)
          report_.malformed.push_back({report_.lines, error});
        continue;
      }
      if (records_.size() >= kMaxRequests)
        return Status::ResourceExhausted("request log has more than " +
                                         std::to_string(kMaxRequests) + " requests");
      Add(parsed);
    }
    if (log.bad())
      return Status::IOError("reading the request log failed at line " +
                             std::to_string(report_.lines + 1));
    return Status::Ok();
  }

  AuditReport Finish() {
    std::sort(records_.begin(), records_.end(), [](const Record& a, const Record& b) {
      return a.start_us != b.start_us ? a.start_us < b.start_us : a.line < b.line;
    });
    final_answer_.assign(identities_.size(), kNone);
    if (!restarts_.empty() || refresh_us_ > 0) latest_final_.assign(identities_.size(), kNone);
    requests_per_identity_.assign(identities_.size(), 0);
    robots_identity_.assign(identities_.size(), false);
    for (uint32_t i = 0; i < records_.size(); ++i) Check(i);
    report_.requests = int64_t(records_.size());
    report_.min_coverage = options_.min_coverage;
    report_.restarts = int64_t(restarts_.size());
    int64_t window_ms = options_.restart_window.count();
    report_.restart_window_us = window_ms > INT64_MAX / 1000 ? INT64_MAX : window_ms * 1000;
    report_.refresh_window_us = refresh_us_;
    std::stable_sort(report_.examples.begin(), report_.examples.end(),
                     [](const Violation& a, const Violation& b) { return a.kind < b.kind; });
    BuildHosts();
    BuildPerIp();
    FinishSchemes();
    return std::move(report_);
  }

 private:
  uint32_t HostIndex(const std::string& normalized) {
    auto [it, fresh] = host_index_.emplace(normalized, uint32_t(hosts_.size()));
    if (fresh) hosts_.push_back(HostState{.name = normalized});
    return it->second;
  }

  void Add(const LogLine& l) {
    Record r;
    r.start_us = l.start_us;
    r.end_us = l.end_us;
    r.line = report_.lines;
    if (l.has_retry_after) r.retry_after_us = std::llround(std::min(l.retry_after_s, 1e9) * 1e6);
    r.path_offset = paths_.size();
    r.path_size = uint32_t(std::min<size_t>(l.path.size(), UINT32_MAX));
    paths_.append(l.path, 0, r.path_size);
    std::string host = NormalizeHost(l.host);
    r.host = HostIndex(host);
    if (l.upgrade) {
      // The 301 to https:// answers the http:// URL, not the page it redirects to.
      key_ = "http://";
      key_ += host;
      key_ += l.path;
    } else if (l.has_page) {
      key_ = NormalizeIdentity(l.page);
    } else {
      key_ = std::move(host);
      key_ += l.path;
    }
    r.identity = identities_.Intern(key_);
    r.status = int16_t(l.status);
    r.disallowed = l.disallowed;
    r.cond = l.cond;
    if (!l.ip.empty()) {
      r.ip = ips_.Intern(l.ip);
      if (r.ip == ip_states_.size()) ip_states_.emplace_back();
    } else {
      ++report_.per_ip.requests_without_ip;
    }
    // Logs written by hand may leave the kind out; the path then tells.
    r.robots = l.kind == "robots" || (l.kind.empty() && l.path == "/robots.txt");
    r.scheme = l.scheme;
    r.upgrade = l.upgrade;
    CountScheme(l);
    records_.push_back(r);
  }

  void CountScheme(const LogLine& l) {
    SchemeReport& s = report_.schemes;
    if (l.scheme != Scheme::kUnspecified || l.proto != Proto::kUnspecified) s.available = true;
    ++(l.scheme == Scheme::kHttps ? s.https : s.http);
    ++(l.proto == Proto::kHttp2 ? s.http2 : s.http1_1);
    if (l.upgrade) ++s.upgrades;
  }

  RequestRef Ref(uint32_t i) const {
    const Record& r = records_[i];
    return RequestRef{.line = r.line,
                      .host = hosts_[r.host].name,
                      .path = paths_.substr(r.path_offset, r.path_size),
                      .start_us = r.start_us,
                      .end_us = r.end_us,
                      .status = r.status,
                      .ip = r.ip == kNone ? std::string() : std::string(ips_.Get(r.ip)),
                      .scheme = r.scheme == Scheme::kUnspecified ? ""
                                : r.scheme == Scheme::kHttp      ? "http"
                                                                 : "https",
                      .upgrade = r.upgrade};
  }

  void Keep(Violation v) {
    auto& n = kept_[size_t(v.kind)];
    if (n >= options_.max_examples) return;
    ++n;
    report_.examples.push_back(std::move(v));
  }

  void Check(uint32_t i) {
    const Record& r = records_[i];
    HostState& h = hosts_[r.host];
    ++h.requests;
    if (r.cond) ++h.conditional;
    if (r.status == 304) ++h.not_modified;
    ++requests_per_identity_[r.identity];
    if (r.robots) robots_identity_[r.identity] = true;
    CheckPoliteness(i, h);
    if (r.ip != kNone) CheckPerIp(i);
    CheckScheme(i, h);
    if (r.disallowed) {
      ++h.counts.robots;
      Keep({.kind = ViolationKind::kRobots, .request = Ref(i)});
    } else if (MatchesMustNotFetch(r, h)) {
      ++h.counts.must_not_fetch;
      Keep({.kind = ViolationKind::kMustNotFetch, .request = Ref(i)});
    }
    if (refresh_us_ > 0) {
      CheckWindow(i, h);
    } else {
      CheckDuplicate(i, h);
    }
  }

  void CheckPoliteness(uint32_t i, HostState& h) {
    const Record& r = records_[i];
    if (h.last == kNone) {
      h.last = i;
      return;
    }
    const Record& prev = records_[h.last];
    int64_t gap = r.start_us - prev.end_us;
    if (gap < 0) {
      ++h.counts.concurrency;
      Keep({.kind = ViolationKind::kConcurrency,
            .request = Ref(i),
            .previous = Ref(h.last),
            .gap_us = gap});
    } else {
      int64_t required = options_.default_delay.count() * 1000;
      DelaySource source = DelaySource::kDefault;
      if (h.manifest && h.manifest->crawl_delay_ms * 1000 > required) {
        required = h.manifest->crawl_delay_ms * 1000;
        source = DelaySource::kCrawlDelay;
      }
      if (prev.retry_after_us > required) {
        required = prev.retry_after_us;
        source = DelaySource::kRetryAfter;
      }
      if (gap + options_.tolerance.count() * 1000 < required) {
        ++h.counts.delay;
        if (source == DelaySource::kDefault) ++h.counts.delay_default;
        if (source == DelaySource::kCrawlDelay) ++h.counts.delay_crawl_delay;
        if (source == DelaySource::kRetryAfter) ++h.counts.delay_retry_after;
        Keep({.kind = ViolationKind::kDelay,
              .request = Ref(i),
              .previous = Ref(h.last),
              .gap_us = gap,
              .required_us = required,
              .delay_source = source});
      }
    }
    if (r.end_us >= prev.end_us) h.last = i;
  }

  // http requests: their number per host name (max_http_per_host) and whether an https
  // answer to that name had ended before (hsts).
  void CheckScheme(uint32_t i, HostState& h) {
    const Record& r = records_[i];
    if (!r.Http()) {
      if (r.status > 0 &&
          (h.first_https_end == kNone || r.end_us < records_[h.first_https_end].end_us))
        h.first_https_end = i;
      return;
    }
    ++h.http_requests;
    // Counted once, when the host goes over the limit; the total is filled in at the end.
    if (options_.max_http_per_host && h.http_requests == int64_t(*options_.max_http_per_host) + 1) {
      h.counts.http_requests = 1;
      Keep({.kind = ViolationKind::kHttpRequests, .request = Ref(i)});
    }
    if (options_.hsts && h.first_https_end != kNone &&
        records_[h.first_https_end].end_us < r.start_us) {
      ++h.counts.after_hsts;
      Keep({.kind = ViolationKind::kAfterHsts,
            .request = Ref(i),
            .previous = Ref(h.first_https_end),
            .gap_us = r.start_us - records_[h.first_https_end].end_us});
    }
  }

  void FinishSchemes() {
    SchemeReport& s = report_.schemes;
    s.http_limit = options_.max_http_per_host;
    s.hsts = options_.hsts;
    for (const HostReport& h : report_.hosts) {  // sorted by name: the first wins ties
      if (h.http_requests > s.max_http_per_host) {
        s.max_http_per_host = h.http_requests;
        s.max_http_host = h.host;
      }
    }
    for (Violation& v : report_.examples) {
      if (v.kind == ViolationKind::kHttpRequests)
        v.http_requests = hosts_[host_index_.at(v.request.host)].http_requests;
    }
  }

  // In flight at the request's address and the gap since the previous start there.
  void CheckPerIp(uint32_t i) {
    const Record& r = records_[i];
    IpState& s = ip_states_[r.ip];
    IpReport& out = s.report;
    ++out.requests;
    // A min-heap by end: requests that ended at or before this start are no longer in flight
    // (touching is not overlapping, as for per-host concurrency).
    auto later_end = [](const std::pair<int64_t, uint32_t>& a,
                        const std::pair<int64_t, uint32_t>& b) { return a.first > b.first; };
    while (!s.in_flight.empty() && s.in_flight.front().first <= r.start_us) {
      std::pop_heap(s.in_flight.begin(), s.in_flight.end(), later_end);
      s.in_flight.pop_back();
    }
    const uint32_t first_ending = s.in_flight.empty() ? kNone : s.in_flight.front().second;
    s.in_flight.emplace_back(r.end_us, i);
    std::push_heap(s.in_flight.begin(), s.in_flight.end(), later_end);
    const int64_t n = int64_t(s.in_flight.size());
    if (n > out.max_in_flight) {
      out.max_in_flight = n;
      out.max_in_flight_at_us = r.start_us;
    }
    if (options_.per_ip_limit > 0 && n > options_.per_ip_limit) {
      ++out.per_ip_concurrency;
      Keep({.kind = ViolationKind::kPerIpConcurrency,
            .request = Ref(i),
            .previous = Ref(first_ending),
            .gap_us = r.start_us - records_[first_ending].end_us,
            .in_flight = n});
    }
    if (s.last != kNone) {
      const int64_t gap = r.start_us - records_[s.last].start_us;  // >= 0: start order
      if (out.min_start_gap_us < 0 || gap < out.min_start_gap_us) {
        out.min_start_gap_us = gap;
        out.min_start_gap_at_us = r.start_us;
      }
      if (ip_gap_us_ > 0 && gap + ip_gap_tolerance_us_ < ip_gap_us_) {
        ++out.per_ip_gap;
        Keep({.kind = ViolationKind::kPerIpGap,
              .request = Ref(i),
              .previous = Ref(s.last),
              .gap_us = gap,
              .required_us = ip_gap_us_});
      }
    }
    s.last = i;
  }

  void BuildPerIp() {
    PerIpReport& p = report_.per_ip;
    p.available = ips_.size() > 0;
    p.limit = options_.per_ip_limit;
    p.gap_us = ip_gap_us_;
    p.gap_tolerance_us = ip_gap_tolerance_us_;
    for (uint32_t i = 0; i < ip_states_.size(); ++i) {
      ip_states_[i].report.ip = std::string(ips_.Get(i));
      p.addresses.push_back(std::move(ip_states_[i].report));
    }
    ip_states_.clear();
    std::sort(p.addresses.begin(), p.addresses.end(),
              [](const IpReport& a, const IpReport& b) { return AddressLess(a.ip, b.ip); });
    for (const IpReport& a : p.addresses) {
      report_.totals.per_ip_concurrency += a.per_ip_concurrency;
      report_.totals.per_ip_gap += a.per_ip_gap;
      if (a.max_in_flight > p.max_in_flight) {
        p.max_in_flight = a.max_in_flight;
        p.max_in_flight_ip = a.ip;
      }
      if (a.min_start_gap_us >= 0 &&
          (p.min_start_gap_us < 0 || a.min_start_gap_us < p.min_start_gap_us)) {
        p.min_start_gap_us = a.min_start_gap_us;
        p.min_start_gap_ip = a.ip;
      }
    }
  }

  // The robots.txt fetch and must_fetch pages are exempt: a pattern like "/" (robots.txt
  // answered 5xx) would otherwise forbid what the manifest requires.
  bool MatchesMustNotFetch(const Record& r, const HostState& h) {
    if (!options_.check_must_not_fetch || !h.manifest) return false;
    std::string_view path(paths_.data() + r.path_offset, r.path_size);
    std::string_view identity = identities_.Get(r.identity);
    if (r.upgrade) identity.remove_prefix(7);  // "http://": the page the 301 redirects to
    if (path == "/robots.txt" || must_fetch_.Find(identity) != Interner::kAbsent) return false;
    for (const auto& pattern : h.manifest->must_not_fetch_prefixes) {
      if (MatchesNotFetchPattern(pattern, path)) return true;
    }
    return false;
  }

  void CheckDuplicate(uint32_t i, HostState& h) {
    const Record& r = records_[i];
    uint32_t& first_final = final_answer_[r.identity];
    bool revalidated = r.cond && r.status == 304;
    if (first_final != kNone && !revalidated) {
      uint32_t latest = restarts_.empty() ? kNone : latest_final_[r.identity];
      if (std::optional<int64_t> restart = ExcusingRestart(latest, i)) {
        ++h.counts.refetched_after_restart;
        if (report_.refetches.size() < options_.max_examples)
          report_.refetches.push_back(
              {.request = Ref(i), .previous = Ref(latest), .restart_us = *restart});
      } else {
        ++h.counts.duplicate;
        Keep({.kind = ViolationKind::kDuplicate, .request = Ref(i), .previous = Ref(first_final)});
      }
    }
    if (first_final == kNone && IsFinal(r.status)) first_final = i;
    if (!restarts_.empty() && IsFinal(r.status)) latest_final_[r.identity] = i;
  }

  // Continuous crawling (options.refresh_window): replaces CheckDuplicate. A re-request of a
  // page within the window of its latest final answer is a violation, after it a recrawl.
  void CheckWindow(uint32_t i, HostState& h) {
    const Record& r = records_[i];
    uint32_t& latest = latest_final_[r.identity];
    if (latest != kNone && !r.robots) {
      const Record& e = records_[latest];
      const int64_t gap = r.start_us - e.start_us;  // >= 0: records are in start order
      if (gap < refresh_us_) {
        if (std::optional<int64_t> restart = ExcusingRestart(latest, i)) {
          ++h.counts.refetched_after_restart;
          if (report_.refetches.size() < options_.max_examples)
            report_.refetches.push_back(
                {.request = Ref(i), .previous = Ref(latest), .restart_us = *restart});
        } else {
          ++h.counts.within_window;
          Keep({.kind = ViolationKind::kWithinWindow,
                .request = Ref(i),
                .previous = Ref(latest),
                .gap_us = gap,
                .required_us = refresh_us_});
        }
      }
    }
    // A 304 is a final answer too (200-499): the page was settled again at that moment.
    if (IsFinal(r.status)) latest = i;
  }

  // The restart that excuses re-fetch `i` of the page last answered by `earlier`, if any:
  // the earliest restart after earlier's start suffices, since it is the one closest to
  // earlier's end (options.restart_window).
  std::optional<int64_t> ExcusingRestart(uint32_t earlier, uint32_t i) const {
    if (earlier == kNone) return std::nullopt;
    const Record& e = records_[earlier];
    auto it = std::upper_bound(restarts_.begin(), restarts_.end(), e.start_us);
    if (it == restarts_.end() || *it > records_[i].start_us) return std::nullopt;
    // No overflow: *it > e.start_us >= 0 and e.end_us >= 0 (ParseLogLine), and the window
    // saturates rather than wrapping.
    int64_t window_ms = options_.restart_window.count();
    bool unbounded = window_ms > INT64_MAX / 1000;
    if (!unbounded && *it - e.end_us > window_ms * 1000) return std::nullopt;
    return *it;
  }

  void BuildHosts() {
    std::vector<uint32_t> order(hosts_.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return hosts_[a].name < hosts_[b].name; });
    for (uint32_t i : order) {
      const HostState& h = hosts_[i];
      HostReport out;
      out.host = h.name;
      out.in_manifest = h.manifest != nullptr;
      out.requests = h.requests;
      out.violations = h.counts;
      out.conditional = h.conditional;
      out.not_modified = h.not_modified;
      out.http_requests = h.http_requests;
      report_.conditional += h.conditional;
      report_.not_modified += h.not_modified;
      if (h.manifest) Cover(*h.manifest, &out);
      report_.totals.Add(out.violations);
      report_.hosts.push_back(std::move(out));
    }
    report_.fetches = StatsOf(&all_fetches_);
    BuildTrapHosts(order);
  }

  // Requests per trap host, in all and in the busiest UTC day (records are in start order).
  void BuildTrapHosts(const std::vector<uint32_t>& order) {
    constexpr int64_t kMicrosPerDay = int64_t{86400} * 1000000;
    for (uint32_t i : order) {
      const HostState& h = hosts_[i];
      if (h.manifest == nullptr || !h.manifest->trap) continue;
      TrapHostReport out{.host = h.name, .requests = h.requests};
      int64_t day = INT64_MIN, in_day = 0;
      for (const Record& r : records_) {
        if (r.host != i) continue;
        const int64_t d = r.start_us / kMicrosPerDay;
        in_day = d == day ? in_day + 1 : 1;
        day = d;
        out.max_requests_per_utc_day = std::max(out.max_requests_per_utc_day, in_day);
      }
      report_.trap_hosts.push_back(std::move(out));
    }
  }

  void Cover(const ManifestHost& m, HostReport* out) {
    std::vector<int64_t> fetches;
    for (const auto& id : m.must_fetch) {
      ++out->must_fetch;
      ++report_.must_fetch;
      const uint32_t index = identities_.Find(id);
      // robots.txt files are left out of the fetch counts: their refetching follows their
      // own cache lifetime, not the pages' refresh.
      const bool robots =
          index != Interner::kAbsent
              ? bool(robots_identity_[index])
              : id.size() >= 11 && id.compare(id.size() - 11, 11, "/robots.txt") == 0;
      if (!robots) {
        fetches.push_back(index != Interner::kAbsent ? requests_per_identity_[index] : 0);
        all_fetches_.push_back(fetches.back());
      }
      if (index != Interner::kAbsent) {
        ++out->covered;
        ++report_.covered;
        continue;
      }
      if (out->missing.size() < options_.max_missing) out->missing.push_back(id);
    }
    out->fetches = StatsOf(&fetches);
  }

  const AuditOptions& options_;
  AuditReport report_;
  std::vector<Record> records_;
  std::string paths_;  // arena of every request's path
  std::vector<HostState> hosts_;
  std::unordered_map<std::string, uint32_t> host_index_;
  Interner identities_;                 // page identities
  Interner must_fetch_;                 // only with check_must_not_fetch
  std::vector<uint32_t> final_answer_;  // per identity: first record with a final answer
  std::vector<int64_t> restarts_;       // sorted, distinct
  // Per identity: latest final answer (with restarts or a refresh window only).
  std::vector<uint32_t> latest_final_;
  std::vector<int64_t> requests_per_identity_;
  std::vector<bool> robots_identity_;  // some request for it was a robots.txt fetch
  std::vector<int64_t> all_fetches_;   // fetches of every counted must_fetch identity
  const int64_t refresh_us_ = MicrosOf(options_.refresh_window);
  Interner ips_;                    // the log's "ip" values
  std::vector<IpState> ip_states_;  // per ips_ index
  const int64_t ip_gap_us_ = MicrosOf(options_.per_ip_gap);
  const int64_t ip_gap_tolerance_us_ =
      std::min(MicrosOf(options_.per_ip_gap_tolerance), ip_gap_us_ / 2);
  std::array<size_t, kKinds> kept_{};
  std::string key_;
};

}  // namespace

void ViolationCounts::Add(const ViolationCounts& o) {
  concurrency += o.concurrency;
  delay += o.delay;
  delay_default += o.delay_default;
  delay_crawl_delay += o.delay_crawl_delay;
  delay_retry_after += o.delay_retry_after;
  robots += o.robots;
  must_not_fetch += o.must_not_fetch;
  duplicate += o.duplicate;
  within_window += o.within_window;
  per_ip_concurrency += o.per_ip_concurrency;
  per_ip_gap += o.per_ip_gap;
  http_requests += o.http_requests;
  after_hsts += o.after_hsts;
  refetched_after_restart += o.refetched_after_restart;
}

Result<AuditReport> RunAudit(std::istream& log, const Manifest& manifest,
                             const AuditOptions& options) {
  if (!(options.min_coverage >= 0.0 && options.min_coverage <= 1.0))
    return Status::InvalidArgument("min_coverage must be within 0.0..1.0");
  if (options.restart_window.count() < 0)
    return Status::InvalidArgument("restart_window must be >= 0");
  if (options.refresh_window.count() < 0)
    return Status::InvalidArgument("refresh_window must be >= 0");
  if (options.per_ip_limit < 0) return Status::InvalidArgument("per_ip_limit must be >= 0");
  if (options.per_ip_gap.count() < 0 || options.per_ip_gap_tolerance.count() < 0)
    return Status::InvalidArgument("per_ip_gap and per_ip_gap_tolerance must be >= 0");
  if (options.max_http_per_host && *options.max_http_per_host < 0)
    return Status::InvalidArgument("max_http_per_host must be >= 0");
  Auditor auditor(manifest, options);
  if (Status s = auditor.Read(log); !s.ok()) return s;
  AuditReport report = auditor.Finish();
  // Missing identities in manifest order across hosts.
  std::unordered_map<std::string_view, const HostReport*> by_name;
  for (const auto& h : report.hosts) by_name.emplace(h.host, &h);
  for (const auto& mh : manifest.hosts) {
    for (const auto& id : by_name.at(mh.host)->missing) {
      if (report.missing.size() >= options.max_missing) return report;
      report.missing.push_back(id);
    }
  }
  return report;
}

Result<AuditReport> RunAudit(std::istream& log, const nlohmann::json& manifest,
                             const AuditOptions& options) {
  Result<Manifest> parsed = ParseManifest(manifest);
  if (!parsed.ok()) return parsed.status();
  return RunAudit(log, *parsed, options);
}

}  // namespace harvest::audit
