// The audit verdict and its text and JSON renderings.
#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "audit/audit.h"

namespace harvest::audit {

const char* ViolationKindName(ViolationKind kind) {
  switch (kind) {
    case ViolationKind::kConcurrency:
      return "concurrency";
    case ViolationKind::kDelay:
      return "delay";
    case ViolationKind::kRobots:
      return "robots";
    case ViolationKind::kMustNotFetch:
      return "must_not_fetch";
    case ViolationKind::kDuplicate:
      return "duplicate";
    case ViolationKind::kWithinWindow:
      return "within_window";
    case ViolationKind::kPerIpConcurrency:
      return "per_ip_concurrency";
    case ViolationKind::kPerIpGap:
      return "per_ip_gap";
    case ViolationKind::kHttpRequests:
      return "http_requests";
    case ViolationKind::kAfterHsts:
      return "after_hsts";
  }
  return "unknown";
}

const char* DelaySourceName(DelaySource source) {
  switch (source) {
    case DelaySource::kDefault:
      return "default";
    case DelaySource::kCrawlDelay:
      return "crawl_delay";
    case DelaySource::kRetryAfter:
      return "retry_after";
  }
  return "unknown";
}

int64_t AuditReport::UnknownHosts() const {
  return std::count_if(hosts.begin(), hosts.end(),
                       [](const HostReport& h) { return !h.in_manifest; });
}

std::vector<std::string> AuditReport::FailureReasons() const {
  std::vector<std::string> out;
  if (malformed_count > 0)
    out.push_back(std::to_string(malformed_count) + " malformed log line(s)");
  if (totals.Total() > 0) out.push_back(std::to_string(totals.Total()) + " violation(s)");
  if (!(Coverage() >= min_coverage)) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "coverage %.4f%% is below the minimum %.4f%%", Coverage() * 100,
                  min_coverage * 100);
    out.push_back(buf);
  }
  return out;
}

bool AuditReport::Passed() const { return FailureReasons().empty(); }

namespace {

std::string Seconds(int64_t us) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%06" PRId64 "s", us / 1000000, us % 1000000);
  return buf;
}

std::string Millis(int64_t us) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f ms", double(us) / 1000.0);
  return buf;
}

std::string Describe(const RequestRef& r) {
  return r.host + " " + r.path + " (line " + std::to_string(r.line) + ", status " +
         std::to_string(r.status) + (r.ip.empty() ? "" : ", ip " + r.ip) +
         (r.scheme.empty() ? "" : ", " + r.scheme) + (r.upgrade ? ", upgrade" : "") + ")";
}

std::string DescribeViolation(const Violation& v) {
  const RequestRef& r = v.request;
  std::string out = Describe(r) + " started at " + Seconds(r.start_us);
  switch (v.kind) {
    case ViolationKind::kConcurrency:
      return out + ", " + Millis(-v.gap_us) + " before " + Describe(*v.previous) + " ended";
    case ViolationKind::kDelay:
      return out + ", " + Millis(v.gap_us) + " after " + Describe(*v.previous) +
             " ended; required " + Millis(v.required_us) + " (" + DelaySourceName(v.delay_source) +
             ")";
    case ViolationKind::kRobots:
      return out + ", logged as disallowed by robots.txt";
    case ViolationKind::kMustNotFetch:
      return out + ", path under a must_not_fetch prefix";
    case ViolationKind::kDuplicate:
      return out + ", already answered to " + Describe(*v.previous) + " at " +
             Seconds(v.previous->start_us);
    case ViolationKind::kWithinWindow:
      return out + ", " + Millis(v.gap_us) + " after " + Describe(*v.previous) +
             " started; refresh window " + Millis(v.required_us);
    case ViolationKind::kPerIpConcurrency:
      return out + " with " + std::to_string(v.in_flight) + " requests in flight at " +
             v.request.ip + " (itself included), " + Millis(-v.gap_us) + " before " +
             Describe(*v.previous) + " ended";
    case ViolationKind::kPerIpGap:
      return out + ", " + Millis(v.gap_us) + " after " + Describe(*v.previous) +
             " started at the same address; required " + Millis(v.required_us);
    case ViolationKind::kHttpRequests:
      return out + ", the first http request to " + r.host + " over the limit; " +
             std::to_string(v.http_requests) + " in all";
    case ViolationKind::kAfterHsts:
      return out + " over http, " + Millis(v.gap_us) + " after " + Describe(*v.previous) + " ended";
  }
  return out;
}

std::string DescribeRefetch(const Refetch& f) {
  return Describe(f.request) + " started at " + Seconds(f.request.start_us) + ", " +
         Millis(f.request.start_us - f.restart_us) + " after the restart at " +
         Seconds(f.restart_us) + "; " + Describe(f.previous) + " had ended " +
         Millis(f.restart_us - f.previous.end_us) + " before it";
}

std::string Percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", f * 100);
  return buf;
}

// Which optional count lines a report shows (so that a report without the options and the
// log fields behind them reads as before they existed).
struct Shown {
  bool refresh = false;
  bool per_ip = false;
  bool http_limit = false;
  bool hsts = false;
};

Shown ShownOf(const AuditReport& report) {
  return {.refresh = report.refresh_window_us > 0,
          .per_ip = report.per_ip.available,
          .http_limit = report.schemes.http_limit.has_value(),
          .hsts = report.schemes.hsts};
}

void AppendCounts(const ViolationCounts& c, const Shown& shown, std::string* out) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "  concurrency     %" PRId64
                "\n"
                "  delay           %" PRId64 " (default %" PRId64 ", crawl_delay %" PRId64
                ", retry_after %" PRId64
                ")\n"
                "  robots          %" PRId64
                "\n"
                "  must_not_fetch  %" PRId64
                "\n"
                "  duplicate       %" PRId64 "\n",
                c.concurrency, c.delay, c.delay_default, c.delay_crawl_delay, c.delay_retry_after,
                c.robots, c.must_not_fetch, c.duplicate);
  *out += buf;
  // Only in refresh mode, so that a report without it reads as before the option existed.
  if (shown.refresh) {
    std::snprintf(buf, sizeof buf, "  within_window   %" PRId64 "\n", c.within_window);
    *out += buf;
  }
  // Only when the log has addresses (or, defensively, something was counted).
  if (shown.per_ip || c.per_ip_concurrency > 0 || c.per_ip_gap > 0) {
    std::snprintf(buf, sizeof buf,
                  "  per_ip_concurrency %" PRId64 "\n  per_ip_gap      %" PRId64 "\n",
                  c.per_ip_concurrency, c.per_ip_gap);
    *out += buf;
  }
  // Only when judged (or, defensively, something was counted).
  if (shown.http_limit || c.http_requests > 0) {
    std::snprintf(buf, sizeof buf, "  http_requests   %" PRId64 " host(s)\n", c.http_requests);
    *out += buf;
  }
  if (shown.hsts || c.after_hsts > 0) {
    std::snprintf(buf, sizeof buf, "  after_hsts      %" PRId64 "\n", c.after_hsts);
    *out += buf;
  }
}

// The scheme figures: when the log has schemes or a scheme check is on.
void AppendSchemes(const SchemeReport& s, std::string* out) {
  if (!s.available && !s.http_limit && !s.hsts) return;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "Schemes: http %" PRId64 ", https %" PRId64 " (%" PRId64
                " upgrade answer(s)); proto 1.1 %" PRId64 ", 2 %" PRId64
                "; most http requests to one host %" PRId64,
                s.http, s.https, s.upgrades, s.http1_1, s.http2, s.max_http_per_host);
  *out += buf;
  if (!s.max_http_host.empty()) *out += " at " + s.max_http_host;
  *out += s.http_limit ? " (limit " + std::to_string(*s.http_limit) + ")"
                       : std::string(" (not judged)");
  *out += s.hsts ? "; HSTS judged" : "; HSTS not judged";
  if (!s.available) *out += "; the log has no \"scheme\" or \"proto\": all http, 1.1";
  *out += "\n";
}

// Requests to the manifest's trap hosts: one line when it has any.
void AppendTrapHosts(const AuditReport& report, std::string* out) {
  if (report.trap_hosts.empty()) return;
  *out += "Trap hosts:";
  const char* sep = " ";
  for (const TrapHostReport& t : report.trap_hosts) {
    *out += sep + t.host + " " + std::to_string(t.requests) + " request(s) (at most " +
            std::to_string(t.max_requests_per_utc_day) + " in one UTC day)";
    sep = "; ";
  }
  *out += "\n";
}

// The per-IP figures: always a line, "not available" for logs without "ip".
void AppendPerIp(const PerIpReport& p, std::string* out) {
  if (!p.available) {
    *out += "Per-IP: not available (the log has no \"ip\" field)\n";
    return;
  }
  *out += "Per-IP: " + std::to_string(p.addresses.size()) + " address(es); max in flight " +
          std::to_string(p.max_in_flight) + " at " + p.max_in_flight_ip + " (limit " +
          (p.limit > 0 ? std::to_string(p.limit) : std::string("not judged")) + "); min start gap ";
  *out += p.min_start_gap_us < 0 ? std::string("none (no address had two requests)")
                                 : Millis(p.min_start_gap_us) + " at " + p.min_start_gap_ip;
  *out += p.gap_us > 0
              ? " (required " + Millis(p.gap_us) + ", tolerance " + Millis(p.gap_tolerance_us) + ")"
              : std::string(" (gap not judged)");
  if (p.requests_without_ip > 0)
    *out += "; " + std::to_string(p.requests_without_ip) + " request(s) without ip";
  *out += "\n";
}

// Revalidation and refetch counts: what a continuous crawl is judged on.
void AppendRevisits(const AuditReport& report, std::string* out) {
  const FetchStats& f = report.fetches;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "Revisits: %" PRId64 " conditional request(s), %" PRId64
                " answered 304; fetches per must_fetch page (robots.txt excluded): min %" PRId64
                ", median %" PRId64 ", max %" PRId64 " over %" PRId64 " page(s)\n",
                report.conditional, report.not_modified, f.min, f.median, f.max, f.pages);
  *out += buf;
  if (report.refresh_window_us > 0) {
    *out += "Refresh window: " + Millis(report.refresh_window_us) +
            " (re-requests within it are within_window violations; after it, recrawls)\n";
  }
}

bool HasProblem(const HostReport& h) {
  return h.violations.Total() > 0 || h.covered < h.must_fetch;
}

void AppendWorstHosts(const AuditReport& report, size_t max_hosts, std::string* out) {
  const Shown shown = ShownOf(report);
  std::vector<const HostReport*> bad;
  for (const auto& h : report.hosts) {
    if (HasProblem(h)) bad.push_back(&h);
  }
  if (bad.empty()) return;
  std::stable_sort(bad.begin(), bad.end(), [](const HostReport* a, const HostReport* b) {
    if (a->violations.Total() != b->violations.Total())
      return a->violations.Total() > b->violations.Total();
    return a->Coverage() < b->Coverage();
  });
  *out += "\nWorst hosts (" + std::to_string(std::min(bad.size(), max_hosts)) + " of " +
          std::to_string(bad.size()) + " with problems):\n";
  char buf[512];
  std::snprintf(buf, sizeof buf, "  %-28s %9s %6s %6s %6s %6s %6s%s%s%s  %s\n", "host", "requests",
                "conc", "delay", "robots", "mnf", "dup", shown.refresh ? "    win" : "",
                shown.http_limit ? "   http" : "", shown.hsts ? "   hsts" : "", "coverage");
  *out += buf;
  for (size_t i = 0; i < bad.size() && i < max_hosts; ++i) {
    const HostReport& h = *bad[i];
    const ViolationCounts& c = h.violations;
    // Optional columns: the window's violations, the host's http requests (not its 0/1
    // violation: the number is what tells how far over the limit it went), after_hsts.
    char win[32] = "", http[32] = "", hsts[32] = "";
    if (shown.refresh) std::snprintf(win, sizeof win, " %6" PRId64, c.within_window);
    if (shown.http_limit) std::snprintf(http, sizeof http, " %6" PRId64, h.http_requests);
    if (shown.hsts) std::snprintf(hsts, sizeof hsts, " %6" PRId64, c.after_hsts);
    std::snprintf(buf, sizeof buf,
                  "  %-28s %9" PRId64 " %6" PRId64 " %6" PRId64 " %6" PRId64 " %6" PRId64
                  " %6" PRId64 "%s%s%s  %s (%" PRId64 "/%" PRId64 ")\n",
                  h.host.c_str(), h.requests, c.concurrency, c.delay, c.robots, c.must_not_fetch,
                  c.duplicate, win, http, hsts, Percent(h.Coverage()).c_str(), h.covered,
                  h.must_fetch);
    *out += buf;
  }
}

int64_t CountOf(const ViolationCounts& c, ViolationKind kind) {
  switch (kind) {
    case ViolationKind::kConcurrency:
      return c.concurrency;
    case ViolationKind::kDelay:
      return c.delay;
    case ViolationKind::kRobots:
      return c.robots;
    case ViolationKind::kMustNotFetch:
      return c.must_not_fetch;
    case ViolationKind::kDuplicate:
      return c.duplicate;
    case ViolationKind::kWithinWindow:
      return c.within_window;
    case ViolationKind::kPerIpConcurrency:
      return c.per_ip_concurrency;
    case ViolationKind::kPerIpGap:
      return c.per_ip_gap;
    case ViolationKind::kHttpRequests:
      return c.http_requests;
    case ViolationKind::kAfterHsts:
      return c.after_hsts;
  }
  return 0;
}

// Shown only when restarts were given (or, defensively, counted), so that a report without
// restarts reads exactly as it did before restarts existed.
void AppendRestarts(const AuditReport& report, std::string* out) {
  if (report.restarts == 0 && report.totals.refetched_after_restart == 0) return;
  *out += "Refetched after restart: " + std::to_string(report.totals.refetched_after_restart) +
          " (not violations; " + std::to_string(report.restarts) + " restart(s), window " +
          Millis(report.restart_window_us) + ")\n";
}

void AppendRefetches(const AuditReport& report, std::string* out) {
  if (report.refetches.empty()) return;
  *out += "\nRefetched after restart (first " + std::to_string(report.refetches.size()) + " of " +
          std::to_string(report.totals.refetched_after_restart) + "; not violations):\n";
  for (const auto& f : report.refetches) *out += "  " + DescribeRefetch(f) + "\n";
}

void AppendExamples(const AuditReport& report, std::string* out) {
  for (ViolationKind kind :
       {ViolationKind::kConcurrency, ViolationKind::kDelay, ViolationKind::kRobots,
        ViolationKind::kMustNotFetch, ViolationKind::kDuplicate, ViolationKind::kWithinWindow,
        ViolationKind::kPerIpConcurrency, ViolationKind::kPerIpGap, ViolationKind::kHttpRequests,
        ViolationKind::kAfterHsts}) {
    size_t shown = 0;
    std::string lines;
    for (const auto& v : report.examples) {
      if (v.kind != kind) continue;
      ++shown;
      lines += "  " + DescribeViolation(v) + "\n";
    }
    if (shown == 0) continue;
    *out += std::string("\n") + ViolationKindName(kind) + " violations (first " +
            std::to_string(shown) + " of " + std::to_string(CountOf(report.totals, kind)) + "):\n" +
            lines;
  }
}

nlohmann::json CountsJson(const ViolationCounts& c) {
  return {{"concurrency", c.concurrency},
          {"delay", c.delay},
          {"delay_default", c.delay_default},
          {"delay_crawl_delay", c.delay_crawl_delay},
          {"delay_retry_after", c.delay_retry_after},
          {"robots", c.robots},
          {"must_not_fetch", c.must_not_fetch},
          {"duplicate", c.duplicate},
          {"within_window", c.within_window},
          {"per_ip_concurrency", c.per_ip_concurrency},
          {"per_ip_gap", c.per_ip_gap},
          {"http_requests", c.http_requests},
          {"after_hsts", c.after_hsts},
          {"refetched_after_restart", c.refetched_after_restart},
          {"total", c.Total()}};
}

nlohmann::json RefJson(const RequestRef& r) {
  nlohmann::json j = {{"line", r.line},         {"host", r.host},     {"path", r.path},
                      {"start_us", r.start_us}, {"end_us", r.end_us}, {"status", r.status}};
  if (!r.ip.empty()) j["ip"] = r.ip;
  if (!r.scheme.empty()) j["scheme"] = r.scheme;
  if (r.upgrade) j["upgrade"] = true;
  return j;
}

nlohmann::json ViolationJson(const Violation& v) {
  nlohmann::json j = {{"kind", ViolationKindName(v.kind)}, {"request", RefJson(v.request)}};
  if (v.previous) j["previous"] = RefJson(*v.previous);
  if (v.kind == ViolationKind::kConcurrency || v.kind == ViolationKind::kDelay ||
      v.kind == ViolationKind::kWithinWindow || v.kind == ViolationKind::kPerIpConcurrency ||
      v.kind == ViolationKind::kPerIpGap || v.kind == ViolationKind::kAfterHsts)
    j["gap_us"] = v.gap_us;
  if (v.kind == ViolationKind::kDelay || v.kind == ViolationKind::kWithinWindow ||
      v.kind == ViolationKind::kPerIpGap)
    j["required_us"] = v.required_us;
  if (v.kind == ViolationKind::kDelay) j["delay_source"] = DelaySourceName(v.delay_source);
  if (v.kind == ViolationKind::kPerIpConcurrency) j["in_flight"] = v.in_flight;
  if (v.kind == ViolationKind::kHttpRequests) j["http_requests"] = v.http_requests;
  return j;
}

// -1 ("none") as null.
nlohmann::json MaybeMicros(int64_t us) {
  return us < 0 ? nlohmann::json(nullptr) : nlohmann::json(us);
}

nlohmann::json PerIpJson(const PerIpReport& p) {
  nlohmann::json addresses = nlohmann::json::array();
  for (const IpReport& a : p.addresses) {
    addresses.push_back({{"ip", a.ip},
                         {"requests", a.requests},
                         {"max_in_flight", a.max_in_flight},
                         {"max_in_flight_at_us", a.max_in_flight_at_us},
                         {"min_start_gap_us", MaybeMicros(a.min_start_gap_us)},
                         {"min_start_gap_at_us", a.min_start_gap_at_us},
                         {"per_ip_concurrency", a.per_ip_concurrency},
                         {"per_ip_gap", a.per_ip_gap}});
  }
  return {{"available", p.available},
          {"address_count", p.addresses.size()},
          {"requests_without_ip", p.requests_without_ip},
          {"limit", p.limit},
          {"gap_us", p.gap_us},
          {"gap_tolerance_us", p.gap_tolerance_us},
          {"max_in_flight", p.max_in_flight},
          {"max_in_flight_ip", p.available ? nlohmann::json(p.max_in_flight_ip) : nullptr},
          {"min_start_gap_us", MaybeMicros(p.min_start_gap_us)},
          {"min_start_gap_ip",
           p.min_start_gap_us < 0 ? nlohmann::json(nullptr) : nlohmann::json(p.min_start_gap_ip)},
          {"addresses", addresses}};
}

nlohmann::json SchemesJson(const SchemeReport& s) {
  return {{"available", s.available},
          {"http", s.http},
          {"https", s.https},
          {"proto_1_1", s.http1_1},
          {"proto_2", s.http2},
          {"upgrades", s.upgrades},
          {"max_http_per_host", s.max_http_per_host},
          {"max_http_host",
           s.max_http_host.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.max_http_host)},
          {"http_limit", s.http_limit ? nlohmann::json(*s.http_limit) : nlohmann::json(nullptr)},
          {"hsts", s.hsts}};
}

nlohmann::json FetchesJson(const FetchStats& f) {
  return {{"pages", f.pages}, {"min", f.min}, {"median", f.median}, {"max", f.max}};
}

}  // namespace

std::string FormatText(const AuditReport& report, size_t max_hosts) {
  std::string out = report.Passed() ? "AUDIT PASSED\n" : "AUDIT FAILED\n";
  for (const auto& reason : report.FailureReasons()) out += "  failed: " + reason + "\n";
  out += "Requests: " + std::to_string(report.requests) + " (" + std::to_string(report.lines) +
         " lines, " + std::to_string(report.malformed_count) +
         " malformed); hosts: " + std::to_string(report.hosts.size()) + " (" +
         std::to_string(report.UnknownHosts()) + " not in manifest)\n";
  out += "Coverage: " + Percent(report.Coverage()) + " (" + std::to_string(report.covered) +
         " of " + std::to_string(report.must_fetch) + " must_fetch; minimum " +
         Percent(report.min_coverage) + ")\n";
  out += "Violations: " + std::to_string(report.totals.Total()) + "\n";
  AppendCounts(report.totals, ShownOf(report), &out);
  AppendPerIp(report.per_ip, &out);
  AppendSchemes(report.schemes, &out);
  AppendTrapHosts(report, &out);
  AppendRestarts(report, &out);
  AppendRevisits(report, &out);
  AppendWorstHosts(report, max_hosts, &out);
  if (report.malformed_count > 0) {
    out += "\nMalformed lines (first " + std::to_string(report.malformed.size()) + " of " +
           std::to_string(report.malformed_count) + "):\n";
    for (const auto& m : report.malformed)
      out += "  line " + std::to_string(m.line) + ": " + m.reason + "\n";
  }
  AppendExamples(report, &out);
  AppendRefetches(report, &out);
  if (!report.missing.empty()) {
    out += "\nMissing must_fetch (first " + std::to_string(report.missing.size()) + " of " +
           std::to_string(report.must_fetch - report.covered) + "):\n";
    for (const auto& id : report.missing) out += "  " + id + "\n";
  }
  if (report.UnknownHosts() > 0) {
    out += "\nHosts not in the manifest (" + std::to_string(report.UnknownHosts()) + "):\n";
    for (const auto& h : report.hosts) {
      if (!h.in_manifest) out += "  " + h.host + " (" + std::to_string(h.requests) + " requests)\n";
    }
  }
  return out;
}

nlohmann::json ToJson(const AuditReport& report) {
  nlohmann::json malformed = nlohmann::json::array();
  for (const auto& m : report.malformed)
    malformed.push_back({{"line", m.line}, {"reason", m.reason}});
  nlohmann::json examples = nlohmann::json::array();
  for (const auto& v : report.examples) examples.push_back(ViolationJson(v));
  nlohmann::json refetches = nlohmann::json::array();
  for (const auto& f : report.refetches) {
    refetches.push_back({{"request", RefJson(f.request)},
                         {"previous", RefJson(f.previous)},
                         {"restart_us", f.restart_us}});
  }
  nlohmann::json trap_hosts = nlohmann::json::array();
  for (const TrapHostReport& t : report.trap_hosts) {
    trap_hosts.push_back({{"host", t.host},
                          {"requests", t.requests},
                          {"max_requests_per_utc_day", t.max_requests_per_utc_day}});
  }
  nlohmann::json hosts = nlohmann::json::array();
  nlohmann::json unknown = nlohmann::json::array();
  for (const auto& h : report.hosts) {
    hosts.push_back({{"host", h.host},
                     {"in_manifest", h.in_manifest},
                     {"requests", h.requests},
                     {"violations", CountsJson(h.violations)},
                     {"must_fetch", h.must_fetch},
                     {"covered", h.covered},
                     {"coverage", h.Coverage()},
                     {"missing", h.missing},
                     {"conditional", h.conditional},
                     {"not_modified", h.not_modified},
                     {"http_requests", h.http_requests},
                     {"fetches_per_page", FetchesJson(h.fetches)}});
    if (!h.in_manifest) unknown.push_back(h.host);
  }
  return {{"passed", report.Passed()},
          {"failures", report.FailureReasons()},
          {"lines", report.lines},
          {"requests", report.requests},
          {"malformed", {{"count", report.malformed_count}, {"lines", malformed}}},
          {"violations", CountsJson(report.totals)},
          {"coverage",
           {{"must_fetch", report.must_fetch},
            {"covered", report.covered},
            {"fraction", report.Coverage()},
            {"min", report.min_coverage},
            {"missing", report.missing}}},
          {"unknown_hosts", unknown},
          {"examples", examples},
          {"restarts",
           {{"count", report.restarts},
            {"window_us", report.restart_window_us},
            {"refetched", report.totals.refetched_after_restart},
            {"refetches", refetches}}},
          {"refresh_window_us", report.refresh_window_us},
          {"conditional", report.conditional},
          {"not_modified", report.not_modified},
          {"fetches_per_page", FetchesJson(report.fetches)},
          {"per_ip", PerIpJson(report.per_ip)},
          {"schemes", SchemesJson(report.schemes)},
          {"trap_hosts", trap_hosts},
          {"hosts", hosts}};
}

}  // namespace harvest::audit
