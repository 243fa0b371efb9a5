// The audit of crawls over HTTPS: one host name across schemes and ports, the identity of
// upgrade answers, the http_requests and after_hsts checks and the scheme figures.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "audit/audit.h"
#include "audit/audit_test_util.h"

namespace harvest::audit {
namespace {

using namespace audit_test_util;  // NOLINT: the shared test helpers
using nlohmann::json;

// Request log lines of the HTTPS test web: every line with "scheme" and "proto".
Req Http(const std::string& host, const std::string& path, int64_t start_ms, int64_t end_ms,
         int status = 200) {
  return {host, path, start_ms, end_ms, status, {{"scheme", "http"}, {"proto", "1.1"}}};
}

Req Https(const std::string& host, const std::string& path, int64_t start_ms, int64_t end_ms,
          int status = 200, const std::string& proto = "2") {
  return {host, path, start_ms, end_ms, status, {{"scheme", "https"}, {"proto", proto}}};
}

// The plain-HTTP 301 of --http-redirect: "page" null, the route's kind, status 301.
Req Upgrade(const std::string& host, const std::string& path, int64_t start_ms, int64_t end_ms,
            const std::string& kind = "page") {
  return {host,   path, start_ms,
          end_ms, 301,  {{"scheme", "http"}, {"proto", "1.1"}, {"upgrade", true}, {"kind", kind}}};
}

Req Robots(Req r) {
  r.extra["kind"] = "robots";
  return r;
}

// --- one host name across schemes and ports ---------------------------------------------------

TEST(AuditHttpsTest, PolitenessIsJudgedPerHostNameAcrossSchemesAndPorts) {
  // http://h.test, https://h.test and https://h.test:8443 are one host for politeness.
  AuditReport r = Audit(Log({Robots(Upgrade("h.test", "/robots.txt", 0, 10, "robots")),
                             Robots(Https("h.test", "/robots.txt", 1010, 1020)),
                             Robots(Https("h.test:8443", "/robots.txt", 2020, 2030)),
                             Upgrade("H.TEST:80", "/a", 2500, 2510),  // 470 ms after: delay
                             Https("h.test:8443", "/a", 2505, 2600),  // overlaps the 301
                             Https("h.test", "/b", 3600, 3610)}),     // fine
                        ManifestJson({Host("h.test", {})}));
  ASSERT_EQ(r.hosts.size(), 1u) << FormatText(r);
  EXPECT_EQ(r.hosts[0].host, "h.test");
  EXPECT_EQ(r.hosts[0].requests, 6);
  EXPECT_EQ(r.totals.concurrency, 1);
  EXPECT_EQ(r.totals.delay, 1);
  ASSERT_EQ(r.examples.size(), 3u) << FormatText(r);  // + the :8443 robots.txt duplicate
  EXPECT_EQ(r.examples[0].kind, ViolationKind::kConcurrency);
  EXPECT_EQ(r.examples[0].request.line, 5);
  EXPECT_EQ(r.examples[0].previous->line, 4);
  EXPECT_EQ(r.examples[0].previous->scheme, "http");
  EXPECT_TRUE(r.examples[0].previous->upgrade);
  EXPECT_EQ(r.examples[0].request.scheme, "https");
  EXPECT_EQ(r.examples[1].kind, ViolationKind::kDelay);
  EXPECT_EQ(r.examples[1].request.line, 4);
  EXPECT_EQ(r.examples[1].previous->line, 3);
  EXPECT_EQ(r.examples[1].gap_us, 470 * kMs);
  // Ports are removed from identities as from hosts, as before schemes existed.
  EXPECT_EQ(r.examples[2].kind, ViolationKind::kDuplicate);
  EXPECT_EQ(r.examples[2].request.line, 3);
}

TEST(AuditHttpsTest, AMixedSchemeCrawlWithTheDelayBetweenSchemesPasses) {
  AuditReport r = Audit(
      Log({Robots(Upgrade("h.test", "/robots.txt", 0, 10, "robots")),
           Robots(Https("h.test", "/robots.txt", 1010, 1020)), Upgrade("h.test", "/", 2020, 2030),
           Https("h.test", "/", 3030, 3040), Https("h.test:8443", "/p/1", 4040, 4050)}),
      ManifestJson({Host("h.test", {"h.test/", "h.test/p/1"})}));
  EXPECT_TRUE(r.Passed()) << FormatText(r);
}

// --- identities of upgrade answers ----------------------------------------------------------

TEST(AuditHttpsTest, TheHttpsFetchAfterAnUpgradeIsNotADuplicate) {
  AuditReport r = Audit(Log({Upgrade("h.test", "/p", 0, 10), Https("h.test", "/p", 1010, 1020)}),
                        ManifestJson({Host("h.test", {"h.test/p"})}));
  EXPECT_EQ(r.totals.duplicate, 0) << FormatText(r);
  EXPECT_TRUE(r.Passed()) << FormatText(r);
}

TEST(AuditHttpsTest, TwoUpgradeAnswersForOneHttpUrlAreADuplicate) {
  AuditReport r = Audit(Log({Upgrade("h.test", "/p", 0, 10), Https("h.test", "/p", 1010, 1020),
                             Upgrade("h.test:80", "/p", 2020, 2030)}),
                        ManifestJson({Host("h.test", {"h.test/p"})}));
  EXPECT_EQ(r.totals.duplicate, 1) << FormatText(r);
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.examples[0].request.line, 3);
  EXPECT_EQ(r.examples[0].previous->line, 1);  // the first 301, not the https fetch
  EXPECT_NE(FormatText(r).find("(line 3, status 301, http, upgrade) started"), std::string::npos)
      << FormatText(r);
}

TEST(AuditHttpsTest, AnUpgradeIsAnHttpUrlWhateverItsPage) {
  // A 301 logged with a page is still the http:// URL's answer, not the page's.
  Req with_page = Upgrade("h.test", "/p?x=1", 0, 10);
  with_page.extra["page"] = "h.test/p";
  AuditReport r = Audit(Log({with_page, Https("h.test", "/p", 1010, 1020)}),
                        ManifestJson({Host("h.test", {"h.test/p"})}));
  EXPECT_EQ(r.totals.duplicate, 0) << FormatText(r);
}

TEST(AuditHttpsTest, RobotsTxtDuplicatesPerScheme) {
  json m = ManifestJson({Host("h.test", {})});
  auto dup = [&](std::vector<Req> reqs) { return Audit(Log(reqs), m).totals.duplicate; };
  // https robots.txt twice: a duplicate, as before.
  EXPECT_EQ(dup({Robots(Https("h.test", "/robots.txt", 0, 10)),
                 Robots(Https("h.test", "/robots.txt", 1010, 1020))}),
            1);
  // http robots.txt answered by an upgrade twice: a duplicate.
  EXPECT_EQ(dup({Upgrade("h.test", "/robots.txt", 0, 10, "robots"),
                 Upgrade("h.test", "/robots.txt", 1010, 1020, "robots")}),
            1);
  // The upgrade, then the https robots.txt it points to: not a duplicate.
  EXPECT_EQ(dup({Upgrade("h.test", "/robots.txt", 0, 10, "robots"),
                 Robots(Https("h.test", "/robots.txt", 1010, 1020))}),
            0);
  // Plain http served (no upgrade) and https: one page, a duplicate as before.
  EXPECT_EQ(dup({Http("h.test", "/p", 0, 10), Https("h.test", "/p", 1010, 1020)}), 1);
}

TEST(AuditHttpsTest, AnUpgradeAnswerDoesNotCoverThePage) {
  AuditReport r =
      Audit(Log({Upgrade("h.test", "/p", 0, 10)}), ManifestJson({Host("h.test", {"h.test/p"})}));
  EXPECT_EQ(r.covered, 0);
  ASSERT_EQ(r.missing.size(), 1u);
  EXPECT_EQ(r.missing[0], "h.test/p");
}

TEST(AuditHttpsTest, MustNotFetchExemptsTheUpgradeOfAMustFetchPage) {
  json m = ManifestJson({Host("h.test", {"h.test/private/open"}, 0, {"/private/"})});
  AuditOptions o{.check_must_not_fetch = true};
  EXPECT_EQ(Audit(Log({Upgrade("h.test", "/private/open", 0, 10)}), m, o).totals.must_not_fetch, 0);
  EXPECT_EQ(Audit(Log({Upgrade("h.test", "/private/x", 0, 10)}), m, o).totals.must_not_fetch, 1);
}

// --- http_requests ----------------------------------------------------------------------------

// a.test: 3 http requests; b.test: 1 http, 2 https; c.test: 4 lines without a scheme (http).
std::string ThreeHostsLog() {
  return Log({Upgrade("a.test", "/robots.txt", 0, 10, "robots"), Upgrade("a.test", "/", 1010, 1020),
              Upgrade("a.test", "/x", 2020, 2030), Upgrade("b.test", "/", 0, 10),
              Https("b.test", "/", 1010, 1020, 200, "1.1"), Https("b.test", "/y", 2020, 2030),
              Req{"c.test", "/", 0, 10}, Req{"c.test", "/1", 1010, 1020},
              Req{"c.test", "/2", 2020, 2030}, Req{"c.test", "/3", 3030, 3040}});
}

TEST(AuditHttpsTest, HostsWithMoreHttpRequestsThanTheLimitCountOnceEach) {
  AuditReport r = Audit(ThreeHostsLog(), ManifestJson({}), {.max_http_per_host = 2});
  EXPECT_EQ(r.totals.http_requests, 2) << FormatText(r);
  EXPECT_EQ(r.totals.Total(), 2);
  EXPECT_FALSE(r.Passed());
  EXPECT_EQ(HostOf(r, "a.test").violations.http_requests, 1);
  EXPECT_EQ(HostOf(r, "b.test").violations.http_requests, 0);
  EXPECT_EQ(HostOf(r, "c.test").violations.http_requests, 1);
  EXPECT_EQ(HostOf(r, "a.test").http_requests, 3);
  EXPECT_EQ(HostOf(r, "b.test").http_requests, 1);
  EXPECT_EQ(HostOf(r, "c.test").http_requests, 4);
  // Examples: each host's first request over the limit, with the host's total.
  ASSERT_EQ(r.examples.size(), 2u);
  EXPECT_EQ(r.examples[0].kind, ViolationKind::kHttpRequests);
  EXPECT_EQ(r.examples[0].request.host, "a.test");
  EXPECT_EQ(r.examples[0].request.path, "/x");
  EXPECT_EQ(r.examples[0].http_requests, 3);
  EXPECT_EQ(r.examples[1].request.host, "c.test");
  EXPECT_EQ(r.examples[1].request.path, "/2");
  EXPECT_EQ(r.examples[1].http_requests, 4);
  EXPECT_EQ(r.schemes.max_http_per_host, 4);
  EXPECT_EQ(r.schemes.max_http_host, "c.test");
}

TEST(AuditHttpsTest, HttpRequestsAtTheLimitOrNotJudgedAreNoViolation) {
  EXPECT_EQ(Audit(ThreeHostsLog(), ManifestJson({}), {.max_http_per_host = 4}).totals.Total(), 0);
  EXPECT_EQ(Audit(ThreeHostsLog(), ManifestJson({}), {.max_http_per_host = 3}).totals.Total(), 1);
  AuditReport r = Audit(ThreeHostsLog(), ManifestJson({}));
  EXPECT_EQ(r.totals.Total(), 0);
  EXPECT_EQ(r.schemes.max_http_per_host, 4);  // reported anyway
  EXPECT_FALSE(r.schemes.http_limit.has_value());
  AuditReport zero = Audit(ThreeHostsLog(), ManifestJson({}), {.max_http_per_host = 0});
  EXPECT_EQ(zero.totals.http_requests, 3);
  EXPECT_EQ(zero.examples[0].request.path, "/robots.txt");
}

TEST(AuditHttpsTest, SchemeFigures) {
  AuditReport r = Audit(ThreeHostsLog(), ManifestJson({}));
  EXPECT_TRUE(r.schemes.available);
  EXPECT_EQ(r.schemes.http, 8);  // 4 upgrades + 4 lines without a scheme
  EXPECT_EQ(r.schemes.https, 2);
  EXPECT_EQ(r.schemes.http1_1, 9);  // 4 upgrades, 1 https over 1.1, 4 without a proto
  EXPECT_EQ(r.schemes.http2, 1);
  EXPECT_EQ(r.schemes.upgrades, 4);
  // Ties go to the first host by name.
  AuditReport tie =
      Audit(Log({Http("b.test", "/", 0, 10), Http("a.test", "/", 0, 10)}), ManifestJson({}));
  EXPECT_EQ(tie.schemes.max_http_host, "a.test");
  EXPECT_EQ(tie.schemes.max_http_per_host, 1);
  AuditReport old = Audit(Log(CleanCrawl()), CleanManifest());
  EXPECT_FALSE(old.schemes.available);
  EXPECT_EQ(old.schemes.http, 7);
}

TEST(AuditHttpsTest, RejectsANegativeHttpLimit) {
  std::istringstream in("");
  EXPECT_FALSE(RunAudit(in, ManifestJson({}), {.max_http_per_host = -1}).ok());
}

// --- after_hsts -------------------------------------------------------------------------------

TEST(AuditHttpsTest, HttpAfterAnHttpsResponseEndedIsAViolation) {
  std::string log =
      Log({Https("h.test", "/", 0, 10), Http("h.test", "/a", 5, 6),  // started before the end
           Upgrade("h.test", "/b", 10, 11),                          // at the end: not after it
           Upgrade("h.test", "/c", 11, 12),                          // after
           Https("h.test", "/d", 1012, 1013)});
  json m = ManifestJson({Host("h.test", {})});
  AuditReport r = Audit(log, m, {.tolerance = std::chrono::milliseconds(2000), .hsts = true});
  EXPECT_EQ(r.totals.after_hsts, 1) << FormatText(r);
  EXPECT_EQ(HostOf(r, "h.test").violations.after_hsts, 1);
  // Concurrency is still judged (the /a overlap); only after_hsts is asserted here.
  const Violation* v = nullptr;
  for (const auto& e : r.examples)
    if (e.kind == ViolationKind::kAfterHsts) v = &e;
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->request.path, "/c");
  EXPECT_EQ(v->previous->path, "/");
  EXPECT_EQ(v->gap_us, 1 * kMs);
  // Off by default.
  EXPECT_EQ(Audit(log, m).totals.after_hsts, 0);
}

TEST(AuditHttpsTest, HstsCountsOnlyAnsweredHttpsRequestsOfTheSameHostName) {
  json m = ManifestJson({Host("h.test", {}), Host("g.test", {})});
  AuditOptions o{.hsts = true};
  // No response (status 0): the crawler saw no Strict-Transport-Security.
  EXPECT_EQ(Audit(Log({Https("h.test", "/", 0, 10, 0), Http("h.test", "/a", 1010, 1020)}), m, o)
                .totals.after_hsts,
            0);
  // Another host name's https answer does not count; another port of the name does.
  EXPECT_EQ(Audit(Log({Https("g.test", "/", 0, 10), Http("h.test", "/a", 1010, 1020)}), m, o)
                .totals.after_hsts,
            0);
  EXPECT_EQ(Audit(Log({Https("h.test:8443", "/", 0, 10), Http("h.test", "/a", 1010, 1020)}), m, o)
                .totals.after_hsts,
            1);
  // Any answer counts, errors included; every later http request counts.
  EXPECT_EQ(Audit(Log({Https("h.test", "/", 0, 10, 503), Http("h.test", "/a", 1010, 1020),
                       Http("h.test", "/b", 2020, 2030)}),
                  m, o)
                .totals.after_hsts,
            2);
}

TEST(AuditHttpsTest, HstsIsMeasuredFromTheEarliestEndingHttpsAnswer) {
  // A long https request (0–5000) and a short one (100–200) in flight together; the http
  // request at 300 is after the short one's end, though it started after the long one.
  AuditReport r = Audit(Log({Https("h.test", "/long", 0, 5000), Https("h.test", "/short", 100, 200),
                             Http("h.test", "/a", 300, 310)}),
                        ManifestJson({Host("h.test", {})}), {.hsts = true});
  EXPECT_EQ(r.totals.after_hsts, 1) << FormatText(r);
  const Violation* v = nullptr;
  for (const auto& e : r.examples)
    if (e.kind == ViolationKind::kAfterHsts) v = &e;
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->previous->path, "/short");
  EXPECT_EQ(v->gap_us, 100 * kMs);
}

// --- reports ----------------------------------------------------------------------------------

TEST(AuditHttpsTest, TextReportShowsTheNewKindsAndFigures) {
  std::string log = ThreeHostsLog() + Log({Http("b.test", "/z", 3030, 3040)});
  AuditReport r =
      Audit(log, ManifestJson({Host("b.test", {})}), {.max_http_per_host = 2, .hsts = true});
  std::string text = FormatText(r);
  EXPECT_NE(text.find("\n  http_requests   2 host(s)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  after_hsts      1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nSchemes: http 9, https 2 (4 upgrade answer(s)); proto 1.1 10, 2 1; most "
                      "http requests to one host 4 at c.test (limit 2); HSTS judged\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nhttp_requests violations (first 2 of 2):\n  a.test /x (line 3, status "
                      "301, http, upgrade) started at 1700000002.020000s, the first http request "
                      "to a.test over the limit; 3 in all\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nafter_hsts violations (first 1 of 1):\n  b.test /z (line 11, status 200, "
                      "http) started at 1700000003.030000s over http, 2010.000 ms after b.test / "
                      "(line 5, status 200, https) ended\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    dup   http   hsts  coverage\n"), std::string::npos) << text;
}

TEST(AuditHttpsTest, ReportsWithoutSchemesReadAsBefore) {
  std::string text = FormatText(Audit(Log(CleanCrawl()), CleanManifest()));
  EXPECT_EQ(text.find("Schemes:"), std::string::npos) << text;
  EXPECT_EQ(text.find("http_requests"), std::string::npos) << text;
  EXPECT_EQ(text.find("after_hsts"), std::string::npos) << text;
  EXPECT_EQ(text.find(", http"), std::string::npos) << text;
  // A check on an old log: its lines are http, 1.1.
  std::string judged =
      FormatText(Audit(Log(CleanCrawl()), CleanManifest(), {.max_http_per_host = 100}));
  EXPECT_NE(judged.find("\nSchemes: http 7, https 0 (0 upgrade answer(s)); proto 1.1 7, 2 0; most "
                        "http requests to one host 4 at a.test (limit 100); HSTS not judged; the "
                        "log has no \"scheme\" or \"proto\": all http, 1.1\n"),
            std::string::npos)
      << judged;
  EXPECT_NE(judged.find("\n  http_requests   0 host(s)\n"), std::string::npos) << judged;
}

TEST(AuditHttpsTest, JsonReportCarriesTheNewKindsAndFigures) {
  std::string log = ThreeHostsLog() + Log({Http("b.test", "/z", 3030, 3040)});
  json j = ToJson(Audit(log, ManifestJson({}), {.max_http_per_host = 2, .hsts = true}));
  EXPECT_EQ(j["violations"]["http_requests"], 2);
  EXPECT_EQ(j["violations"]["after_hsts"], 1);
  EXPECT_EQ(j["violations"]["total"], 3);
  EXPECT_EQ(j["schemes"], json::parse(R"({"available":true,"http":9,"https":2,"proto_1_1":10,
      "proto_2":1,"upgrades":4,"max_http_per_host":4,"max_http_host":"c.test","http_limit":2,
      "hsts":true})"));
  ASSERT_EQ(j["examples"].size(), 3u);
  EXPECT_EQ(j["examples"][0]["kind"], "http_requests");
  EXPECT_EQ(j["examples"][0]["http_requests"], 3);
  EXPECT_EQ(j["examples"][0]["request"]["scheme"], "http");
  EXPECT_EQ(j["examples"][0]["request"]["upgrade"], true);
  EXPECT_EQ(j["examples"][2]["kind"], "after_hsts");
  EXPECT_EQ(j["examples"][2]["gap_us"], 2010 * kMs);
  EXPECT_EQ(j["examples"][2]["previous"]["scheme"], "https");
  EXPECT_FALSE(j["examples"][2]["previous"].contains("upgrade"));
  EXPECT_EQ(j["hosts"][2]["host"], "c.test");
  EXPECT_EQ(j["hosts"][2]["http_requests"], 4);
  EXPECT_EQ(j["hosts"][2]["violations"]["http_requests"], 1);
  json old = ToJson(Audit(Log(CleanCrawl()), CleanManifest()));
  EXPECT_EQ(old["schemes"]["available"], false);
  EXPECT_EQ(old["schemes"]["http_limit"], nullptr);
  EXPECT_EQ(old["schemes"]["max_http_host"], "a.test");
  EXPECT_FALSE(old["examples"].empty() ? false : old["examples"][0].contains("scheme"));
}

TEST(AuditHttpsTest, AnUnknownSchemeIsAMalformedLine) {
  Req bad = Https("h.test", "/", 0, 10);
  bad.extra["scheme"] = "gopher";
  AuditReport r = Audit(Log({Https("h.test", "/", 0, 10), bad}), ManifestJson({}));
  EXPECT_FALSE(r.Passed());
  ASSERT_EQ(r.malformed.size(), 1u);
  EXPECT_EQ(r.malformed[0].line, 2);
  EXPECT_EQ(r.malformed[0].reason, R"("scheme" is "gopher", not "http" or "https")");
}

}  // namespace
}  // namespace harvest::audit
