#include "audit/audit.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "audit/audit_test_util.h"

namespace harvest::audit {
namespace {

using namespace audit_test_util;  // NOLINT: the shared test helpers
using nlohmann::json;

TEST(AuditTest, CleanLogPasses) {
  AuditReport r = Audit(Log(CleanCrawl()), CleanManifest());
  EXPECT_TRUE(r.Passed()) << FormatText(r);
  EXPECT_EQ(r.requests, 7);
  EXPECT_EQ(r.totals.Total(), 0);
  EXPECT_EQ(r.must_fetch, 7);
  EXPECT_EQ(r.covered, 7);
  EXPECT_DOUBLE_EQ(r.Coverage(), 1.0);
  EXPECT_TRUE(r.missing.empty());
  EXPECT_EQ(r.UnknownHosts(), 0);
  ASSERT_EQ(r.hosts.size(), 2u);
  EXPECT_EQ(r.hosts[0].host, "a.test");
  EXPECT_EQ(r.hosts[0].requests, 4);
  EXPECT_NE(FormatText(r).find("AUDIT PASSED"), std::string::npos);
  EXPECT_TRUE(ToJson(r)["passed"].get<bool>());
}

TEST(AuditTest, OutOfOrderLogIsSortedByStart) {
  auto reqs = CleanCrawl();
  std::reverse(reqs.begin(), reqs.end());
  AuditReport r = Audit(Log(reqs), CleanManifest());
  EXPECT_TRUE(r.Passed()) << FormatText(r);
}

TEST(AuditTest, DetectsConcurrencyOnTheRightHost) {
  auto reqs = CleanCrawl();
  reqs.push_back({"b.test", "/p/2", 2140, 2300});  // starts before /p/1 (2100–2150) ends
  AuditReport r = Audit(Log(reqs), CleanManifest());
  EXPECT_FALSE(r.Passed());
  EXPECT_EQ(r.totals.concurrency, 1);
  EXPECT_EQ(r.totals.delay, 0);  // an overlap is counted once, as concurrency
  EXPECT_EQ(HostOf(r, "b.test").violations.concurrency, 1);
  EXPECT_EQ(HostOf(r, "a.test").violations.Total(), 0);
  ASSERT_EQ(r.examples.size(), 1u);
  const Violation& v = r.examples[0];
  EXPECT_EQ(v.kind, ViolationKind::kConcurrency);
  EXPECT_EQ(v.request.path, "/p/2");
  ASSERT_TRUE(v.previous.has_value());
  EXPECT_EQ(v.previous->path, "/p/1");
  EXPECT_EQ(v.gap_us, -10 * kMs);
  EXPECT_EQ(v.request.line, 8);
}

TEST(AuditTest, LongRequestOverlapsEveryLaterOneItSpans) {
  AuditReport r = Audit(Log({{"a.test", "/slow", 0, 5000},
                             {"a.test", "/x", 100, 200},
                             {"a.test", "/y", 300, 400},
                             {"a.test", "/z", 6000, 6010}}),
                        ManifestJson({Host("a.test", {})}));
  EXPECT_EQ(r.totals.concurrency, 2);
  EXPECT_EQ(r.totals.delay, 0);  // /z is 1000 ms after /slow's end
}

TEST(AuditTest, TouchingRequestsAreNotConcurrentButViolateDelay) {
  AuditReport r = Audit(Log({{"a.test", "/", 0, 10}, {"a.test", "/x", 10, 20}}),
                        ManifestJson({Host("a.test", {})}));
  EXPECT_EQ(r.totals.concurrency, 0);
  EXPECT_EQ(r.totals.delay, 1);
}

TEST(AuditTest, DetectsDefaultDelay) {
  auto reqs = CleanCrawl();
  reqs.push_back({"a.test", "/p/3", 3550, 3560});  // 500 ms after /p/2?x=1 ended
  AuditReport r = Audit(Log(reqs), CleanManifest());
  EXPECT_EQ(r.totals.delay, 1);
  EXPECT_EQ(r.totals.delay_default, 1);
  EXPECT_EQ(HostOf(r, "a.test").violations.delay, 1);
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.examples[0].gap_us, 500 * kMs);
  EXPECT_EQ(r.examples[0].required_us, 1000 * kMs);
  EXPECT_EQ(r.examples[0].delay_source, DelaySource::kDefault);
  EXPECT_EQ(r.examples[0].previous->path, "/p/2?x=1");
  EXPECT_NE(FormatText(r).find("required 1000.000 ms (default)"), std::string::npos)
      << FormatText(r);
}

TEST(AuditTest, DelayOptionAndTolerance) {
  std::string log = Log({{"a.test", "/", 0, 10}, {"a.test", "/x", 1000, 1010}});  // gap 990 ms
  json m = ManifestJson({Host("a.test", {})});
  EXPECT_EQ(Audit(log, m).totals.delay, 1);
  EXPECT_EQ(Audit(log, m, {.tolerance = std::chrono::milliseconds(10)}).totals.delay, 0);
  EXPECT_EQ(Audit(log, m, {.tolerance = std::chrono::milliseconds(9)}).totals.delay, 1);
  EXPECT_EQ(Audit(log, m, {.default_delay = std::chrono::milliseconds(990)}).totals.delay, 0);
  EXPECT_EQ(Audit(log, m, {.default_delay = std::chrono::milliseconds(991)}).totals.delay, 1);
}

TEST(AuditTest, DetectsCrawlDelayOnlyWhereTheManifestAsksForIt) {
  std::string log = Log({{"slow.test", "/", 0, 10},
                         {"slow.test", "/a", 3010, 3020},  // 3 s: too soon for crawl-delay 5 s
                         {"slow.test", "/b", 8020, 8030},  // 5 s: fine
                         {"fast.test", "/", 0, 10},
                         {"fast.test", "/a", 3010, 3020}});
  AuditReport r = Audit(log, ManifestJson({Host("slow.test", {}, 5000), Host("fast.test", {})}));
  EXPECT_EQ(r.totals.delay, 1);
  EXPECT_EQ(r.totals.delay_crawl_delay, 1);
  EXPECT_EQ(HostOf(r, "slow.test").violations.delay_crawl_delay, 1);
  EXPECT_EQ(HostOf(r, "fast.test").violations.delay, 0);
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.examples[0].required_us, 5000 * kMs);
  EXPECT_EQ(r.examples[0].delay_source, DelaySource::kCrawlDelay);
}

TEST(AuditTest, DetectsRetryAfterAndRetriesAreNotDuplicates) {
  std::string log = Log({{"a.test", "/", 0, 10, 503, {{"retry_after_s", 10}}},
                         {"a.test", "/", 3010, 3020, 503, {{"retry_after_s", 2}}},  // < 10 s
                         {"a.test", "/", 5020, 5030},     // 2 s after: honours the second one
                         {"a.test", "/x", 6030, 6040}});  // back to the default delay
  AuditReport r = Audit(log, ManifestJson({Host("a.test", {"a.test/"})}));
  EXPECT_EQ(r.totals.delay, 1);
  EXPECT_EQ(r.totals.delay_retry_after, 1);
  EXPECT_EQ(r.totals.duplicate, 0);
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.examples[0].required_us, 10000 * kMs);
  EXPECT_EQ(r.examples[0].delay_source, DelaySource::kRetryAfter);
  EXPECT_EQ(r.examples[0].request.line, 2);
}

TEST(AuditTest, DetectsRobotsViolations) {
  auto reqs = CleanCrawl();
  reqs.push_back({"b.test", "/private/1", 3200, 3210, 200, {{"disallowed", true}}});
  AuditReport r = Audit(Log(reqs), CleanManifest());
  EXPECT_EQ(r.totals.robots, 1);
  EXPECT_EQ(r.totals.Total(), 1);
  EXPECT_EQ(HostOf(r, "b.test").violations.robots, 1);
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.examples[0].kind, ViolationKind::kRobots);
  EXPECT_EQ(r.examples[0].request.path, "/private/1");
  EXPECT_FALSE(r.Passed());
}

TEST(AuditTest, MustNotFetchIsOptInAndCountedOnceBesideRobots) {
  json m = ManifestJson({Host("a.test", {"a.test/private/ok"}, 0, {"/private/"})});
  std::string log = Log({{"a.test", "/private/x", 0, 10},
                         {"a.test", "/private/y", 2000, 2010, 200, {{"disallowed", true}}},
                         {"a.test", "/privatex", 4000, 4010},
                         {"a.test", "/private/ok", 6000, 6010}});  // in must_fetch: exempt
  AuditReport r = Audit(log, m, {.check_must_not_fetch = true});
  EXPECT_EQ(r.totals.must_not_fetch, 1);
  EXPECT_EQ(r.totals.robots, 1);
  EXPECT_EQ(Audit(log, m).totals.must_not_fetch, 0);  // off by default
}

TEST(AuditTest, MustNotFetchExemptsRobotsTxtUnderSlash) {
  json m = ManifestJson({Host("a.test", {}, 0, {"/"})});  // robots.txt answered 5xx
  AuditReport r = Audit(Log({{"a.test", "/robots.txt", 0, 10, 503},
                             {"a.test", "/robots.txt", 2000, 2010, 503},
                             {"a.test", "/x", 4000, 4010}}),
                        m, {.check_must_not_fetch = true});
  EXPECT_EQ(r.totals.must_not_fetch, 1);
  EXPECT_EQ(r.totals.duplicate, 0);
}

TEST(MatchesNotFetchPatternTest, ManifestPatternSyntax) {
  EXPECT_TRUE(MatchesNotFetchPattern("/private/ (but /private/open/)", "/private/a"));
  EXPECT_FALSE(MatchesNotFetchPattern("/private/ (but /private/open/)", "/private/open/a"));
  EXPECT_FALSE(MatchesNotFetchPattern("/private/ (but /private/open/)", "/privat"));
  EXPECT_TRUE(MatchesNotFetchPattern("*.pdf", "/docs/a.pdf"));
  EXPECT_TRUE(MatchesNotFetchPattern("/p/*?print=", "/p/12?print=1"));
  EXPECT_FALSE(MatchesNotFetchPattern("/p/*?print=", "/p/12?x=1"));
  EXPECT_TRUE(MatchesNotFetchPattern("/search", "/search?q=1"));
  EXPECT_TRUE(MatchesNotFetchPattern("/a$", "/a"));
  EXPECT_FALSE(MatchesNotFetchPattern("/a$", "/ab"));
  EXPECT_TRUE(MatchesNotFetchPattern("/*.pdf$", "/x.pdf"));
  EXPECT_FALSE(MatchesNotFetchPattern("/*.pdf$", "/x.pdf?y"));
  EXPECT_FALSE(MatchesNotFetchPattern("", "/x"));
}

TEST(AuditTest, DetectsDuplicates) {
  std::string log = Log({{"a.test", "/p/1", 0, 10},
                         {"a.test", "/p/1", 2000, 2010},  // duplicate
                         {"a.test", "/gone", 4000, 4010, 404},
                         {"a.test", "/gone", 6000, 6010, 404},  // duplicate (404 final)
                         {"a.test", "/r", 8000, 8010, 301},
                         {"a.test", "/r", 10000, 10010, 301}});  // duplicate
  AuditReport r = Audit(log, ManifestJson({Host("a.test", {})}));
  EXPECT_EQ(r.totals.duplicate, 3);
  EXPECT_EQ(HostOf(r, "a.test").violations.duplicate, 3);
  ASSERT_EQ(r.examples.size(), 3u);
  EXPECT_EQ(r.examples[0].request.line, 2);
  EXPECT_EQ(r.examples[0].previous->line, 1);
}

TEST(AuditTest, RetriesAfterTransientFailuresAreNotDuplicates) {
  for (int status : {0, 408, 429, 500, 502, 503}) {
    std::string log = Log({{"a.test", "/p/1", 0, 10, status},
                           {"a.test", "/p/1", 2000, 2010, status},
                           {"a.test", "/p/1", 4000, 4010, 200}});
    AuditReport r = Audit(log, ManifestJson({Host("a.test", {"a.test/p/1"})}));
    EXPECT_EQ(r.totals.duplicate, 0) << status;
    EXPECT_TRUE(r.Passed()) << status << "\n" << FormatText(r);
  }
}

TEST(AuditTest, PageIdentityMakesQueryVariantsDuplicates) {
  std::string log = Log({{"a.test", "/p/12?b=2&a=1", 0, 10, 200, {{"page", "a.test/p/12"}}},
                         {"a.test", "/p/12?a=1&b=2", 2000, 2010, 200, {{"page", "A.TEST/p/12"}}},
                         {"a.test", "/p/13", 4000, 4010, 200, {{"page", "a.test/p/13"}}}});
  AuditReport r = Audit(log, ManifestJson({Host("a.test", {"a.test/p/12", "a.test/p/13"})}));
  EXPECT_EQ(r.totals.duplicate, 1);
  EXPECT_EQ(r.covered, 2);
}

TEST(AuditTest, ConditionalRequestAnswered304IsNotADuplicate) {
  std::string log = Log({{"a.test", "/p/1", 0, 10},
                         {"a.test", "/p/1", 2000, 2010, 304, {{"cond", true}}},
                         {"a.test", "/p/1", 4000, 4010, 200, {{"cond", true}}}});  // changed
  AuditReport r = Audit(log, ManifestJson({Host("a.test", {})}));
  EXPECT_EQ(r.totals.duplicate, 1);
  EXPECT_EQ(r.examples[0].request.line, 3);
}

TEST(AuditTest, DetectsMissingCoverage) {
  auto reqs = CleanCrawl();
  reqs.pop_back();  // a.test/p/2?x=1 never fetched
  AuditReport r = Audit(Log(reqs), CleanManifest());
  EXPECT_EQ(r.totals.Total(), 0);
  EXPECT_EQ(r.must_fetch, 7);
  EXPECT_EQ(r.covered, 6);
  EXPECT_FALSE(r.Passed());
  ASSERT_EQ(r.missing.size(), 1u);
  EXPECT_EQ(r.missing[0], "a.test/p/2?x=1");
  EXPECT_EQ(HostOf(r, "a.test").covered, 3);
  EXPECT_EQ(HostOf(r, "a.test").must_fetch, 4);
  EXPECT_DOUBLE_EQ(HostOf(r, "b.test").Coverage(), 1.0);
  EXPECT_TRUE(Audit(Log(reqs), CleanManifest(), {.min_coverage = 0.85}).Passed());
  EXPECT_FALSE(Audit(Log(reqs), CleanManifest(), {.min_coverage = 0.86}).Passed());
}

TEST(AuditTest, MissingListIsCappedButCountIsNot) {
  std::vector<std::string> must;
  for (int i = 0; i < 30; ++i) must.push_back("a.test/p/" + std::to_string(i));
  AuditReport r = Audit("", ManifestJson({Host("a.test", must)}));
  EXPECT_EQ(r.must_fetch, 30);
  EXPECT_EQ(r.covered, 0);
  EXPECT_EQ(r.missing.size(), 20u);
  EXPECT_EQ(r.missing[0], "a.test/p/0");
  EXPECT_EQ(r.hosts[0].requests, 0);
}

TEST(AuditTest, MalformedLinesFailWithLineNumbers) {
  std::string log = Log(CleanCrawl());
  log.insert(0, "\n");  // a blank line is ignored but counted as a line
  log += "{not json\n";
  log += R"({"host":"a.test","path":"/x","end_us":1,"status":200})"
         "\n";
  AuditReport r = Audit(log, CleanManifest());
  EXPECT_EQ(r.lines, 10);
  EXPECT_EQ(r.requests, 7);
  EXPECT_EQ(r.malformed_count, 2);
  ASSERT_EQ(r.malformed.size(), 2u);
  EXPECT_EQ(r.malformed[0].line, 9);
  EXPECT_EQ(r.malformed[1].line, 10);
  EXPECT_NE(r.malformed[1].reason.find("start_us"), std::string::npos);
  EXPECT_EQ(r.totals.Total(), 0);
  EXPECT_FALSE(r.Passed());
  EXPECT_NE(FormatText(r).find("line 10: missing \"start_us\""), std::string::npos);
}

TEST(AuditTest, HostsCompareCaseInsensitivelyWithoutPort) {
  std::string log = Log({{"A.Test:8080", "/", 0, 100}, {"a.test", "/x", 50, 60}});
  AuditReport r = Audit(log, ManifestJson({Host("a.TEST", {"a.test/", "A.test:8080/x"})}));
  EXPECT_EQ(r.totals.concurrency, 1);
  EXPECT_EQ(r.covered, 2);
  EXPECT_EQ(r.hosts.size(), 1u);
  EXPECT_EQ(NormalizeHost("[::1]:8080"), "[::1]");
  EXPECT_EQ(NormalizeHost("H.Test"), "h.test");
  EXPECT_EQ(NormalizeIdentity("H.Test:80/A/B"), "h.test/A/B");
}

TEST(AuditTest, UnknownHostsAreReportedNotViolations) {
  auto reqs = CleanCrawl();
  reqs.push_back({"stray.test", "/", 0, 10});
  AuditReport r = Audit(Log(reqs), CleanManifest());
  EXPECT_TRUE(r.Passed());
  EXPECT_EQ(r.UnknownHosts(), 1);
  EXPECT_FALSE(HostOf(r, "stray.test").in_manifest);
  EXPECT_NE(FormatText(r).find("stray.test (1 requests)"), std::string::npos);
  EXPECT_EQ(ToJson(r)["unknown_hosts"][0], "stray.test");
}

TEST(AuditTest, ExamplesAreCappedAndEarliestFirst) {
  std::vector<Req> reqs;
  for (int i = 0; i < 5; ++i)
    reqs.push_back({"a.test",
                    "/d" + std::to_string(i),
                    (4 - i) * 2000,
                    (4 - i) * 2000 + 10,
                    200,
                    {{"disallowed", true}}});
  AuditReport r = Audit(Log(reqs), ManifestJson({Host("a.test", {})}), {.max_examples = 2});
  EXPECT_EQ(r.totals.robots, 5);
  ASSERT_EQ(r.examples.size(), 2u);
  EXPECT_EQ(r.examples[0].request.path, "/d4");
  EXPECT_EQ(r.examples[1].request.path, "/d3");
}

TEST(AuditTest, JsonReportCarriesCountsAndExamples) {
  auto reqs = CleanCrawl();
  reqs.push_back({"a.test", "/p/1", 4100, 4110});  // duplicate
  json j = ToJson(Audit(Log(reqs), CleanManifest()));
  EXPECT_FALSE(j["passed"].get<bool>());
  EXPECT_EQ(j["violations"]["duplicate"], 1);
  EXPECT_EQ(j["violations"]["total"], 1);
  EXPECT_EQ(j["coverage"]["fraction"], 1.0);
  EXPECT_EQ(j["examples"][0]["kind"], "duplicate");
  EXPECT_EQ(j["examples"][0]["request"]["line"], 8);
  EXPECT_EQ(j["examples"][0]["previous"]["line"], 5);
  EXPECT_EQ(j["hosts"][0]["host"], "a.test");
  EXPECT_EQ(j["hosts"][0]["violations"]["duplicate"], 1);
}

TEST(AuditTest, RejectsBadManifests) {
  std::istringstream empty;
  EXPECT_FALSE(RunAudit(empty, json::array()).ok());
  EXPECT_FALSE(RunAudit(empty, json{{"hosts", 3}}).ok());
  EXPECT_FALSE(RunAudit(empty, json{{"hosts", {{{"crawl_delay_ms", 1}}}}}).ok());
  EXPECT_FALSE(RunAudit(empty, ManifestJson({{{"host", "a"}, {"must_fetch", {1}}}})).ok());
  EXPECT_FALSE(RunAudit(empty, ManifestJson({{{"host", "a"}, {"crawl_delay_ms", "x"}}})).ok());
  Result<AuditReport> bad_option =
      RunAudit(empty, ManifestJson(json::array()), {.min_coverage = 2});
  EXPECT_FALSE(bad_option.ok());
  Result<AuditReport> ok = RunAudit(empty, ManifestJson(json::array()));
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->Passed());  // nothing required, nothing fetched
}

TEST(AuditTest, RepeatedManifestHostsMerge) {
  Result<audit::Manifest> m = ParseManifest(ManifestJson(
      {Host("a.test", {"a.test/", "a.test/x"}, 100), Host("A.test", {"a.test/"}, 2000)}));
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->hosts.size(), 1u);
  EXPECT_EQ(m->hosts[0].crawl_delay_ms, 2000);
  EXPECT_EQ(m->hosts[0].must_fetch.size(), 2u);
}

// --- Refetches after a crawler restart (AuditOptions::restarts_us) -------------------------

// A restart time in the log's clock, `ms` after kT0.
int64_t At(int64_t ms) { return kT0 + ms * kMs; }

AuditOptions WithRestarts(std::vector<int64_t> restarts, int64_t window_ms = 10000) {
  AuditOptions o;
  o.restarts_us = std::move(restarts);
  o.restart_window = std::chrono::milliseconds(window_ms);
  return o;
}

TEST(AuditRestartTest, RefetchJustAfterRestartWithinWindowIsCountedNotAViolation) {
  std::string log = Log(
      {{"a.test", "/p/1", 0, 10}, {"a.test", "/p/1", 2000, 2010}});  // killed at 500 ms, restarted
  json m = ManifestJson({Host("a.test", {"a.test/p/1"})});
  ASSERT_EQ(Audit(log, m).totals.duplicate, 1);  // without the restart: a duplicate
  AuditReport r = Audit(log, m, WithRestarts({At(500)}));
  EXPECT_TRUE(r.Passed()) << FormatText(r);
  EXPECT_EQ(r.totals.duplicate, 0);
  EXPECT_EQ(r.totals.refetched_after_restart, 1);
  EXPECT_EQ(r.totals.Total(), 0);
  EXPECT_EQ(HostOf(r, "a.test").violations.refetched_after_restart, 1);
  EXPECT_EQ(r.restarts, 1);
  EXPECT_EQ(r.restart_window_us, 10000 * kMs);
  ASSERT_EQ(r.refetches.size(), 1u);
  EXPECT_EQ(r.refetches[0].request.line, 2);
  EXPECT_EQ(r.refetches[0].previous.line, 1);
  EXPECT_EQ(r.refetches[0].restart_us, At(500));
  EXPECT_TRUE(r.examples.empty());
  std::string text = FormatText(r);
  EXPECT_NE(text.find("Refetched after restart: 1 (not violations; 1 restart(s), window "
                      "10000.000 ms)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("1500.000 ms after the restart"), std::string::npos) << text;
  EXPECT_NE(text.find("had ended 490.000 ms before it"), std::string::npos) << text;
  json j = ToJson(r);
  EXPECT_TRUE(j["passed"].get<bool>());
  EXPECT_EQ(j["violations"]["refetched_after_restart"], 1);
  EXPECT_EQ(j["violations"]["total"], 0);
  EXPECT_EQ(j["hosts"][0]["violations"]["refetched_after_restart"], 1);
  EXPECT_EQ(j["restarts"]["count"], 1);
  EXPECT_EQ(j["restarts"]["refetched"], 1);
  EXPECT_EQ(j["restarts"]["window_us"], 10000 * kMs);
  EXPECT_EQ(j["restarts"]["refetches"][0]["request"]["line"], 2);
  EXPECT_EQ(j["restarts"]["refetches"][0]["previous"]["line"], 1);
  EXPECT_EQ(j["restarts"]["refetches"][0]["restart_us"], At(500));
}

TEST(AuditRestartTest, AnswerOlderThanTheWindowBeforeTheRestartIsADuplicate) {
  // The first answer ended at 10 ms; a kill 20 s later had long since committed it.
  std::string log = Log({{"a.test", "/p/1", 0, 10}, {"a.test", "/p/1", 21000, 21010}});
  json m = ManifestJson({Host("a.test", {})});
  AuditReport r = Audit(log, m, WithRestarts({At(20010)}));
  EXPECT_EQ(r.totals.duplicate, 1);
  EXPECT_EQ(r.totals.refetched_after_restart, 0);
  EXPECT_FALSE(r.Passed());
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.examples[0].kind, ViolationKind::kDuplicate);
  // The window's bound is inclusive: restart − end == window is excused, one µs more is not.
  EXPECT_EQ(Audit(log, m, WithRestarts({At(20010)}, 20000)).totals.refetched_after_restart, 1);
  EXPECT_EQ(Audit(log, m, WithRestarts({At(20010) + 1}, 20000)).totals.duplicate, 1);
  EXPECT_EQ(Audit(log, m, WithRestarts({At(20010)}, 19999)).totals.duplicate, 1);
}

TEST(AuditRestartTest, RefetchWithNoRestartInBetweenIsADuplicate) {
  std::string log = Log({{"a.test", "/p/1", 1000, 1010}, {"a.test", "/p/1", 3000, 3010}});
  json m = ManifestJson({Host("a.test", {})});
  // Restarts before the first request or after the re-fetch excuse nothing.
  AuditReport r = Audit(log, m, WithRestarts({At(0), At(500), At(3001), At(5000)}));
  EXPECT_EQ(r.totals.duplicate, 1);
  EXPECT_EQ(r.totals.refetched_after_restart, 0);
  // The interval is (earlier start, re-fetch start]: open below, closed above.
  EXPECT_EQ(Audit(log, m, WithRestarts({At(1000)})).totals.duplicate, 1);
  EXPECT_EQ(Audit(log, m, WithRestarts({At(1000) + 1})).totals.refetched_after_restart, 1);
  EXPECT_EQ(Audit(log, m, WithRestarts({At(3000)})).totals.refetched_after_restart, 1);
}

TEST(AuditRestartTest, OneRestartExcusesOneRefetchPerPage) {
  // After the restart the page is fetched again, then once more: the second re-fetch
  // happened with no restart after the answer it repeats.
  std::string log = Log({{"a.test", "/p/1", 0, 10},
                         {"a.test", "/p/1", 2000, 2010},
                         {"a.test", "/p/1", 4000, 4010},
                         {"a.test", "/p/2", 6000, 6010}});
  AuditReport r = Audit(log, ManifestJson({Host("a.test", {})}), WithRestarts({At(500)}));
  EXPECT_EQ(r.totals.refetched_after_restart, 1);
  EXPECT_EQ(r.totals.duplicate, 1);
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.examples[0].request.line, 3);
}

TEST(AuditRestartTest, TwoRestarts) {
  std::string log = Log({{"a.test", "/p/1", 0, 10},
                         {"b.test", "/p/1", 0, 10},
                         {"a.test", "/p/1", 2000, 2010},  // after restart 1
                         {"b.test", "/p/1", 2000, 2010},  // after restart 1
                         {"a.test", "/p/1", 4000, 4010},  // after restart 2: lost again
                         {"b.test", "/p/3", 10000, 10010},
                         {"b.test", "/p/3", 40000, 40010}});  // restart 3 came 20 s later
  json m = ManifestJson({Host("a.test", {}), Host("b.test", {})});
  // Unsorted and repeated on purpose.
  AuditReport r = Audit(log, m, WithRestarts({At(30000), At(2500), At(500), At(2500)}));
  EXPECT_EQ(r.restarts, 3);
  EXPECT_EQ(r.totals.refetched_after_restart, 3);
  EXPECT_EQ(HostOf(r, "a.test").violations.refetched_after_restart, 2);
  EXPECT_EQ(HostOf(r, "b.test").violations.refetched_after_restart, 1);
  EXPECT_EQ(r.totals.duplicate, 1);
  EXPECT_EQ(HostOf(r, "b.test").violations.duplicate, 1);
  ASSERT_EQ(r.refetches.size(), 3u);
  EXPECT_EQ(r.refetches[2].request.line, 5);
  EXPECT_EQ(r.refetches[2].previous.line, 3);
  EXPECT_EQ(r.refetches[2].restart_us, At(2500));
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.examples[0].request.line, 7);
}

TEST(AuditRestartTest, RetriesAfterARestartRefetchAreRefetchesToo) {
  // The re-fetch after the restart got a 503; the retry repeats no later final answer.
  std::string log = Log({{"a.test", "/p/1", 0, 10},
                         {"a.test", "/p/1", 2000, 2010, 503},
                         {"a.test", "/p/1", 4000, 4010}});
  AuditReport r = Audit(log, ManifestJson({Host("a.test", {})}), WithRestarts({At(500)}));
  EXPECT_EQ(r.totals.refetched_after_restart, 2);
  EXPECT_EQ(r.totals.duplicate, 0);
}

TEST(AuditRestartTest, PolitenessStaysStrictAcrossARestart) {
  // Restarted at 300 ms, the crawler re-fetches /p/1 only 490 ms after the previous end.
  std::string log = Log({{"a.test", "/p/1", 0, 10},
                         {"a.test", "/p/1", 500, 510},
                         // A request still being served when the crawler died (the server
                         // finished it at 5 s) and the restarted crawler's overlapping one.
                         {"b.test", "/slow", 0, 5000},
                         {"b.test", "/slow", 1500, 1510},
                         {"b.test", "/private", 3000, 3010, 200, {{"disallowed", true}}}});
  AuditReport r = Audit(log, ManifestJson({Host("a.test", {}), Host("b.test", {})}),
                        WithRestarts({At(300), At(1000)}));
  EXPECT_EQ(r.totals.delay, 1);
  EXPECT_EQ(HostOf(r, "a.test").violations.delay, 1);
  EXPECT_EQ(r.totals.concurrency, 2);  // /slow again and /private both overlap the first /slow
  EXPECT_EQ(r.totals.robots, 1);
  EXPECT_EQ(r.totals.refetched_after_restart, 2);  // in flight at the kill: excused
  EXPECT_EQ(r.totals.duplicate, 0);
  EXPECT_EQ(r.totals.Total(), 4);
  EXPECT_FALSE(r.Passed());
}

TEST(AuditRestartTest, WithoutRestartsTheReportIsUnchanged) {
  auto reqs = CleanCrawl();
  reqs.push_back({"a.test", "/p/1", 4100, 4110});  // duplicate
  AuditReport r = Audit(Log(reqs), CleanManifest());
  EXPECT_EQ(r.totals.duplicate, 1);
  EXPECT_EQ(r.restarts, 0);
  EXPECT_TRUE(r.refetches.empty());
  EXPECT_EQ(FormatText(r).find("Refetched"), std::string::npos);
  // Restarts given but nothing excused: the line appears with 0.
  AuditReport clean = Audit(Log(CleanCrawl()), CleanManifest(), WithRestarts({At(1500)}));
  EXPECT_TRUE(clean.Passed());
  EXPECT_NE(FormatText(clean).find("Refetched after restart: 0"), std::string::npos);
}

TEST(AuditRestartTest, RejectsANegativeWindow) {
  std::istringstream empty;
  Result<AuditReport> r = RunAudit(empty, ManifestJson(json::array()), WithRestarts({1}, -1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
}

TEST(AuditRestartTest, HugeWindowAndExtremeRestartTimesDoNotOverflow) {
  std::string log = Log({{"a.test", "/p/1", 0, 10}, {"a.test", "/p/1", 2000, 2010}});
  json m = ManifestJson({Host("a.test", {})});
  AuditOptions o = WithRestarts({INT64_MIN, INT64_MAX, At(500)});
  o.restart_window = std::chrono::milliseconds::max();
  AuditReport r = Audit(log, m, o);
  EXPECT_EQ(r.totals.refetched_after_restart, 1);
  EXPECT_EQ(r.restart_window_us, INT64_MAX);
  EXPECT_EQ(Audit(log, m, WithRestarts({INT64_MIN, INT64_MAX})).totals.duplicate, 1);
}

Result<std::vector<int64_t>> ParseRestarts(const std::string& text) {
  std::istringstream in(text);
  return ParseRestartTimes(in);
}

TEST(ParseRestartTimesTest, ReadsOneTimePerLineSkippingBlanksAndComments) {
  Result<std::vector<int64_t>> r = ParseRestarts(
      "# kill times\n1700000000500000\n\n   \t\n  1700000002500000  # second\r\n"
      "-5\n9223372036854775807");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (std::vector<int64_t>{1700000000500000, 1700000002500000, -5, INT64_MAX}));
  Result<std::vector<int64_t>> empty = ParseRestarts("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(ParseRestartTimesTest, BadLineIsAnErrorNamingTheLine) {
  for (const char* bad : {"12abc", "1.5", "+3", "0x10", "1 2", "abc", "--1"}) {
    Result<std::vector<int64_t>> r = ParseRestarts(std::string("# c\n10\n") + bad + "\n20\n");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find("line 3: '"), std::string::npos) << r.status().message();
  }
  Result<std::vector<int64_t>> big = ParseRestarts("99999999999999999999\n");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("line 1"), std::string::npos);
  EXPECT_NE(big.status().message().find("out of range"), std::string::npos);
  std::istringstream named("1\n\nx\n");
  Result<std::vector<int64_t>> with_source = ParseRestartTimes(named, "kills.txt");
  ASSERT_FALSE(with_source.ok());
  EXPECT_EQ(with_source.status().message(), "kills.txt:3: 'x' is not an integer microsecond time");
  Result<std::vector<int64_t>> long_line = ParseRestarts(std::string(1000, 'x'));
  ASSERT_FALSE(long_line.ok());
  EXPECT_LT(long_line.status().message().size(), 120u);
}

// ---- continuous crawling: AuditOptions::refresh_window ----

AuditOptions WithRefresh(int64_t window_ms) {
  AuditOptions o;
  o.refresh_window = std::chrono::milliseconds(window_ms);
  return o;
}

TEST(AuditRefreshTest, RequestWithinTheWindowIsAViolationInsteadOfADuplicate) {
  // Fetched at 0, again at 5 s (within a 10 s window), again at 16 s (11 s after the latest
  // answer started: a recrawl).
  std::string log = Log({{"a.test", "/p/1", 0, 10},
                         {"a.test", "/p/1", 5000, 5010},
                         {"a.test", "/p/1", 16000, 16010}});
  json m = ManifestJson({Host("a.test", {"a.test/p/1"})});
  AuditReport off = Audit(log, m);
  EXPECT_EQ(off.totals.duplicate, 2);  // without the window: both re-fetches are duplicates
  EXPECT_EQ(off.totals.within_window, 0);

  AuditReport r = Audit(log, m, WithRefresh(10000));
  EXPECT_FALSE(r.Passed());
  EXPECT_EQ(r.totals.within_window, 1);
  EXPECT_EQ(r.totals.duplicate, 0);  // counted once, as within_window only
  EXPECT_EQ(r.totals.Total(), 1);
  EXPECT_EQ(HostOf(r, "a.test").violations.within_window, 1);
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.examples[0].kind, ViolationKind::kWithinWindow);
  EXPECT_EQ(r.examples[0].request.line, 2);
  EXPECT_EQ(r.examples[0].previous->line, 1);
  EXPECT_EQ(r.examples[0].gap_us, 5000 * kMs);
  EXPECT_EQ(r.examples[0].required_us, 10000 * kMs);
  std::string text = FormatText(r);
  EXPECT_NE(text.find("  within_window   1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("within_window violations (first 1 of 1)"), std::string::npos) << text;
  EXPECT_NE(text.find("5000.000 ms after a.test /p/1 (line 1, status 200) started; refresh "
                      "window 10000.000 ms"),
            std::string::npos)
      << text;
  json j = ToJson(r);
  EXPECT_EQ(j["violations"]["within_window"], 1);
  EXPECT_EQ(j["violations"]["duplicate"], 0);
  EXPECT_EQ(j["violations"]["total"], 1);
  EXPECT_EQ(j["hosts"][0]["violations"]["within_window"], 1);
  EXPECT_EQ(j["refresh_window_us"], 10000 * kMs);
  EXPECT_EQ(j["examples"][0]["kind"], "within_window");
  EXPECT_EQ(j["examples"][0]["gap_us"], 5000 * kMs);
  EXPECT_EQ(j["examples"][0]["required_us"], 10000 * kMs);
}

TEST(AuditRefreshTest, WindowIsMeasuredStartToStartFromTheLatestFinalAnswer) {
  // Starts exactly the window apart: a recrawl; one microsecond less: a violation.
  for (int64_t delta_us : {int64_t{0}, int64_t{-1}}) {
    Req second{"a.test", "/p/1", 10000, 10010};
    second.extra = {{"start_us", kT0 + 10000 * kMs + delta_us}};
    std::string log = Log({{"a.test", "/p/1", 0, 900}, second});
    AuditReport r = Audit(log, ManifestJson({Host("a.test", {"a.test/p/1"})}), WithRefresh(10000));
    EXPECT_EQ(r.totals.within_window, delta_us < 0 ? 1 : 0) << delta_us;
  }
  // The latest final answer counts, not the first: 0 and 12 s are fine, 20 s is 8 s after
  // the 12 s answer. Answers that are not final (503, 429, 0) do not move it.
  std::string log = Log({{"a.test", "/p/1", 0, 10},
                         {"a.test", "/p/1", 12000, 12010},
                         {"a.test", "/p/1", 13100, 13110, 503},  // within: a violation too
                         {"a.test", "/p/1", 20000, 20010}});
  AuditReport r = Audit(log, ManifestJson({Host("a.test", {"a.test/p/1"})}), WithRefresh(10000));
  EXPECT_EQ(r.totals.within_window, 2);
  EXPECT_EQ(r.examples[0].request.line, 3);
  EXPECT_EQ(r.examples[1].request.line, 4);
  EXPECT_EQ(r.examples[1].previous->line, 2);  // measured from the 12 s answer
  // Retries after a transient failure with no final answer before are not re-requests.
  std::string retries = Log({{"a.test", "/p/2", 0, 10, 503},
                             {"a.test", "/p/2", 2000, 2010, 429},
                             {"a.test", "/p/2", 4000, 4010, 0},
                             {"a.test", "/p/2", 6000, 6010, 200}});
  EXPECT_EQ(
      Audit(retries, ManifestJson({Host("a.test", {})}), WithRefresh(10000)).totals.within_window,
      0);
}

TEST(AuditRefreshTest, ConditionalRequestAnswered304WithinTheWindowCountsToo) {
  std::string log = Log({{"a.test", "/p/1", 0, 10},
                         {"a.test", "/p/1", 3000, 3010, 304, {{"cond", true}}},    // within
                         {"a.test", "/p/1", 14000, 14010, 304, {{"cond", true}}},  // after
                         {"a.test", "/p/1", 20000, 20010, 200, {{"cond", true}}}});
  json m = ManifestJson({Host("a.test", {"a.test/p/1"})});
  EXPECT_EQ(Audit(log, m).totals.duplicate, 1);  // without the window only line 4
  AuditReport r = Audit(log, m, WithRefresh(10000));
  // Line 2 re-asks within 10 s of line 1; line 4 within 10 s of the 304 at line 3 (a 304 is
  // a final answer: the page was settled again then).
  EXPECT_EQ(r.totals.within_window, 2);
  ASSERT_EQ(r.examples.size(), 2u);
  EXPECT_EQ(r.examples[0].request.line, 2);
  EXPECT_EQ(r.examples[1].request.line, 4);
  EXPECT_EQ(r.examples[1].previous->line, 3);
  EXPECT_EQ(r.totals.duplicate, 0);
}

TEST(AuditRefreshTest, RobotsTxtIsExempt) {
  std::string log = Log({{"a.test", "/robots.txt", 0, 10, 200, {{"kind", "robots"}}},
                         {"a.test", "/robots.txt", 2000, 2010, 200, {{"kind", "robots"}}},
                         {"a.test", "/robots.txt", 4000, 4010, 200, {{"kind", nullptr}}},
                         {"a.test", "/p/1", 6000, 6010},
                         {"a.test", "/p/1", 8000, 8010}});
  json m = ManifestJson({Host("a.test", {"a.test/robots.txt", "a.test/p/1"})});
  EXPECT_EQ(Audit(log, m).totals.duplicate, 3);
  AuditReport r = Audit(log, m, WithRefresh(10000));
  EXPECT_EQ(r.totals.within_window, 1);  // only /p/1
  EXPECT_EQ(r.examples[0].request.line, 5);
  EXPECT_EQ(r.totals.duplicate, 0);
}

TEST(AuditRefreshTest, RestartExcusesAWithinWindowRefetch) {
  std::string log = Log({{"a.test", "/p/1", 0, 10},
                         {"a.test", "/p/1", 2000, 2010},    // killed at 500 ms: excused
                         {"a.test", "/p/1", 4000, 4010}});  // no restart since line 2
  json m = ManifestJson({Host("a.test", {"a.test/p/1"})});
  AuditOptions o = WithRefresh(10000);
  o.restarts_us = {At(500)};
  AuditReport r = Audit(log, m, o);
  EXPECT_EQ(r.totals.refetched_after_restart, 1);
  EXPECT_EQ(r.totals.within_window, 1);
  ASSERT_EQ(r.refetches.size(), 1u);
  EXPECT_EQ(r.refetches[0].request.line, 2);
  EXPECT_EQ(r.examples[0].request.line, 3);
  // The restart window bounds the excuse as for duplicates.
  o.restart_window = std::chrono::milliseconds(100);
  EXPECT_EQ(Audit(log, m, o).totals.within_window, 2);
}

TEST(AuditRefreshTest, RejectsANegativeWindow) {
  std::istringstream in("");
  EXPECT_FALSE(RunAudit(in, ManifestJson({}), WithRefresh(-1)).ok());
}

TEST(AuditRefreshTest, WithoutTheWindowTheTextHasNoWindowLines) {
  AuditReport r = Audit(Log(CleanCrawl()), CleanManifest());
  EXPECT_EQ(FormatText(r).find("within_window"), std::string::npos);
  EXPECT_EQ(FormatText(r).find("Refresh window"), std::string::npos);
  EXPECT_EQ(ToJson(r)["violations"]["within_window"], 0);
  EXPECT_EQ(ToJson(r)["refresh_window_us"], 0);
}

TEST(AuditRefreshTest, CountsConditionalRequests304sAndFetchesPerPage) {
  std::string log = Log({{"a.test", "/robots.txt", 0, 10, 200, {{"kind", "robots"}}},
                         {"a.test", "/p/1", 1010, 1020},
                         {"a.test", "/p/2", 2020, 2030},
                         {"b.test", "/p/1", 2000, 2010},
                         {"a.test", "/p/1", 14000, 14010, 304, {{"cond", true}}},
                         {"a.test", "/p/2", 15010, 15020, 200, {{"cond", true}}},
                         {"a.test", "/p/1", 28000, 28010, 304, {{"cond", true}}},
                         {"a.test", "/stray", 29010, 29020}});
  json m =
      ManifestJson({Host("a.test", {"a.test/robots.txt", "a.test/p/1", "a.test/p/2", "a.test/p/3"}),
                    Host("b.test", {"b.test/robots.txt", "b.test/p/1"})});
  AuditReport r = Audit(log, m, WithRefresh(10000));
  EXPECT_TRUE(r.totals.Total() == 0) << FormatText(r);
  EXPECT_EQ(r.conditional, 3);
  EXPECT_EQ(r.not_modified, 2);
  const HostReport& a = HostOf(r, "a.test");
  EXPECT_EQ(a.conditional, 3);
  EXPECT_EQ(a.not_modified, 2);
  // a.test pages (robots.txt excluded): /p/1 3 times, /p/2 twice, /p/3 never.
  EXPECT_EQ(a.fetches.pages, 3);
  EXPECT_EQ(a.fetches.min, 0);
  EXPECT_EQ(a.fetches.median, 2);
  EXPECT_EQ(a.fetches.max, 3);
  const HostReport& b = HostOf(r, "b.test");
  EXPECT_EQ(b.conditional, 0);
  EXPECT_EQ(b.fetches.pages, 1);  // b.test/robots.txt is left out even though never fetched
  EXPECT_EQ(b.fetches.min, 1);
  // In total: counts {3, 2, 0, 1} -> min 0, lower median 1, max 3.
  EXPECT_EQ(r.fetches.pages, 4);
  EXPECT_EQ(r.fetches.min, 0);
  EXPECT_EQ(r.fetches.median, 1);
  EXPECT_EQ(r.fetches.max, 3);
  std::string text = FormatText(r);
  EXPECT_NE(text.find("Revisits: 3 conditional request(s), 2 answered 304; fetches per "
                      "must_fetch page (robots.txt excluded): min 0, median 1, max 3 over 4 "
                      "page(s)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Refresh window: 10000.000 ms"), std::string::npos) << text;
  json j = ToJson(r);
  EXPECT_EQ(j["conditional"], 3);
  EXPECT_EQ(j["not_modified"], 2);
  EXPECT_EQ(j["fetches_per_page"], json({{"pages", 4}, {"min", 0}, {"median", 1}, {"max", 3}}));
  EXPECT_EQ(j["hosts"][0]["host"], "a.test");
  EXPECT_EQ(j["hosts"][0]["conditional"], 3);
  EXPECT_EQ(j["hosts"][0]["not_modified"], 2);
  EXPECT_EQ(j["hosts"][0]["fetches_per_page"]["median"], 2);
}

TEST(AuditRefreshTest, ValidatorFieldsOfTheLogAreAccepted) {
  std::string log = Log({{"a.test", "/p/1", 0, 10},
                         {"a.test",
                          "/p/1",
                          12000,
                          12010,
                          304,
                          {{"cond", true},
                           {"inm", "\"0123456789abcdef\""},
                           {"ims", "Sun, 01 Nov 2026 00:00:00 GMT"}}}});
  AuditReport r = Audit(log, ManifestJson({Host("a.test", {"a.test/p/1"})}), WithRefresh(10000));
  EXPECT_EQ(r.malformed_count, 0);
  EXPECT_TRUE(r.Passed()) << FormatText(r);
}

}  // namespace
}  // namespace harvest::audit
