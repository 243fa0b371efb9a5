// The audit's per-IP figures and violations (docs/audit.md): requests in flight at one server
// address and the gap between request starts there, against --per-ip-limit and
// --per-ip-gap-ms.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "audit/audit.h"
#include "audit/audit_test_util.h"

namespace harvest::audit {
namespace {

using namespace audit_test_util;  // NOLINT: the shared test helpers
using nlohmann::json;

json At(const std::string& ip) { return {{"ip", ip}}; }

AuditOptions PerIp(int64_t limit, int64_t gap_ms = 0, int64_t tolerance_ms = 10) {
  AuditOptions o;
  o.per_ip_limit = limit;
  o.per_ip_gap = std::chrono::milliseconds(gap_ms);
  o.per_ip_gap_tolerance = std::chrono::milliseconds(tolerance_ms);
  o.min_coverage = 0;
  return o;
}

// Three hosts, politely 1 s apart each, overlapping across hosts: at 127.0.0.1 a.test and
// b.test overlap (2 in flight from 1010 to 1030), c.test alone at 127.0.0.2.
std::vector<Req> TwoAddressCrawl() {
  return {{"a.test", "/", 0, 100, 200, At("127.0.0.1")},
          {"b.test", "/", 50, 80, 200, At("127.0.0.1")},
          {"c.test", "/", 60, 90, 200, At("127.0.0.2")},
          {"a.test", "/p/1", 1100, 1200, 200, At("127.0.0.1")},
          {"b.test", "/p/1", 1200, 1300, 200, At("127.0.0.1")},  // touching: not overlapping
          {"c.test", "/p/1", 1090, 1095, 200, At("127.0.0.2")}};
}

json ThreeHosts() {
  return ManifestJson({Host("a.test", {}), Host("b.test", {}), Host("c.test", {})});
}

TEST(AuditPerIpTest, ReportsFiguresWithoutJudgingByDefault) {
  AuditReport r = Audit(Log(TwoAddressCrawl()), ThreeHosts());
  EXPECT_TRUE(r.Passed()) << FormatText(r);
  const PerIpReport& p = r.per_ip;
  EXPECT_TRUE(p.available);
  ASSERT_EQ(p.addresses.size(), 2u);
  EXPECT_EQ(p.addresses[0].ip, "127.0.0.1");
  EXPECT_EQ(p.addresses[0].requests, 4);
  EXPECT_EQ(p.addresses[0].max_in_flight, 2);
  EXPECT_EQ(p.addresses[0].max_in_flight_at_us, kT0 + 50 * kMs);
  EXPECT_EQ(p.addresses[0].min_start_gap_us, 50 * kMs);
  EXPECT_EQ(p.addresses[1].ip, "127.0.0.2");
  EXPECT_EQ(p.addresses[1].max_in_flight, 1);
  EXPECT_EQ(p.addresses[1].min_start_gap_us, 1030 * kMs);
  EXPECT_EQ(p.max_in_flight, 2);
  EXPECT_EQ(p.max_in_flight_ip, "127.0.0.1");
  EXPECT_EQ(p.min_start_gap_us, 50 * kMs);
  EXPECT_EQ(p.min_start_gap_ip, "127.0.0.1");
  EXPECT_EQ(p.requests_without_ip, 0);
  std::string text = FormatText(r);
  EXPECT_NE(text.find("Per-IP: 2 address(es); max in flight 2 at 127.0.0.1 (limit not judged); "
                      "min start gap 50.000 ms at 127.0.0.1 (gap not judged)"),
            std::string::npos)
      << text;
  json j = ToJson(r);
  EXPECT_EQ(j["per_ip"]["available"], true);
  EXPECT_EQ(j["per_ip"]["address_count"], 2);
  EXPECT_EQ(j["per_ip"]["max_in_flight"], 2);
  EXPECT_EQ(j["per_ip"]["max_in_flight_ip"], "127.0.0.1");
  EXPECT_EQ(j["per_ip"]["min_start_gap_us"], 50 * kMs);
  EXPECT_EQ(j["per_ip"]["addresses"][1]["ip"], "127.0.0.2");
  EXPECT_EQ(j["violations"]["per_ip_concurrency"], 0);
  EXPECT_EQ(j["violations"]["per_ip_gap"], 0);
}

TEST(AuditPerIpTest, ConcurrencyAboveTheLimitIsAViolation) {
  // Within the limit: passes.
  EXPECT_TRUE(Audit(Log(TwoAddressCrawl()), ThreeHosts(), PerIp(2)).Passed());
  // Limit 1: b.test/ starts while a.test/ is in flight at 127.0.0.1.
  AuditReport r = Audit(Log(TwoAddressCrawl()), ThreeHosts(), PerIp(1));
  EXPECT_FALSE(r.Passed());
  EXPECT_EQ(r.totals.per_ip_concurrency, 1);
  EXPECT_EQ(r.totals.Total(), 1);
  EXPECT_EQ(r.per_ip.addresses[0].per_ip_concurrency, 1);
  EXPECT_EQ(r.per_ip.addresses[1].per_ip_concurrency, 0);
  EXPECT_EQ(HostOf(r, "b.test").violations.Total(), 0);  // an address is not a host
  ASSERT_EQ(r.examples.size(), 1u);
  const Violation& v = r.examples[0];
  EXPECT_EQ(v.kind, ViolationKind::kPerIpConcurrency);
  EXPECT_EQ(v.request.host, "b.test");
  EXPECT_EQ(v.request.ip, "127.0.0.1");
  EXPECT_EQ(v.in_flight, 2);
  ASSERT_TRUE(v.previous.has_value());
  EXPECT_EQ(v.previous->host, "a.test");
  EXPECT_EQ(v.gap_us, -50 * kMs);
  std::string text = FormatText(r);
  EXPECT_NE(text.find("per_ip_concurrency violations (first 1 of 1)"), std::string::npos) << text;
  json j = ToJson(r);
  EXPECT_EQ(j["violations"]["per_ip_concurrency"], 1);
  EXPECT_EQ(j["examples"][0]["kind"], "per_ip_concurrency");
  EXPECT_EQ(j["examples"][0]["in_flight"], 2);
  EXPECT_EQ(j["examples"][0]["request"]["ip"], "127.0.0.1");
}

TEST(AuditPerIpTest, CountsEveryRequestStartingOverTheLimit) {
  // Eleven requests to eleven hosts at one address, all in flight together: with the
  // limit 10 only the eleventh is over it; then two more start while 10 are still in flight.
  std::vector<Req> reqs;
  json hosts = json::array();
  for (int i = 0; i < 13; ++i) {
    const std::string host = "h" + std::to_string(i) + ".test";
    const int64_t start = i < 11 ? i : 20 + i;
    reqs.push_back({host, "/", start, i == 0 ? 30 : 100, 200, At("127.0.0.7")});
    hosts.push_back(Host(host, {}));
  }
  AuditReport r = Audit(Log(reqs), ManifestJson(hosts), PerIp(10));
  // At 31 and 32 h0 (ended at 30) is gone: 11 then 12 in flight, both over 10.
  EXPECT_EQ(r.per_ip.max_in_flight, 12);
  EXPECT_EQ(r.totals.per_ip_concurrency, 3);
  EXPECT_EQ(Audit(Log(reqs), ManifestJson(hosts), PerIp(12)).totals.per_ip_concurrency, 0);
}

TEST(AuditPerIpTest, StartsCloserThanTheGapAreViolations) {
  // Starts at 127.0.0.1: 0, 50, 1100, 1200 -> gaps 50, 1050, 100 ms.
  EXPECT_TRUE(Audit(Log(TwoAddressCrawl()), ThreeHosts(), PerIp(0, 50, 0)).Passed());
  AuditReport r = Audit(Log(TwoAddressCrawl()), ThreeHosts(), PerIp(0, 100, 0));
  EXPECT_EQ(r.totals.per_ip_gap, 1);
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.examples[0].kind, ViolationKind::kPerIpGap);
  EXPECT_EQ(r.examples[0].request.host, "b.test");
  EXPECT_EQ(r.examples[0].previous->host, "a.test");
  EXPECT_EQ(r.examples[0].gap_us, 50 * kMs);
  EXPECT_EQ(r.examples[0].required_us, 100 * kMs);
  EXPECT_EQ(ToJson(r)["examples"][0]["required_us"], 100 * kMs);
  // 101 ms: the 100 ms gap of 127.0.0.1 fails too.
  EXPECT_EQ(Audit(Log(TwoAddressCrawl()), ThreeHosts(), PerIp(0, 101, 0)).totals.per_ip_gap, 2);
  // The tolerance excuses a start a little early, at most half the gap.
  EXPECT_EQ(Audit(Log(TwoAddressCrawl()), ThreeHosts(), PerIp(0, 101, 10)).totals.per_ip_gap, 1);
  AuditReport capped = Audit(Log(TwoAddressCrawl()), ThreeHosts(), PerIp(0, 101, 1000));
  EXPECT_EQ(capped.per_ip.gap_tolerance_us, 50500);
  EXPECT_EQ(capped.totals.per_ip_gap, 1);  // 50 + 50.5 < 101
}

TEST(AuditPerIpTest, LogsWithoutIpAreNotJudged) {
  AuditReport r = Audit(Log(CleanCrawl()), CleanManifest(), PerIp(1, 5000));
  EXPECT_TRUE(r.Passed()) << FormatText(r);
  EXPECT_FALSE(r.per_ip.available);
  EXPECT_EQ(r.per_ip.requests_without_ip, 7);
  EXPECT_NE(FormatText(r).find("Per-IP: not available"), std::string::npos);
  EXPECT_EQ(FormatText(r).find("per_ip_concurrency"), std::string::npos);
  json j = ToJson(r);
  EXPECT_EQ(j["per_ip"]["available"], false);
  EXPECT_TRUE(j["per_ip"]["min_start_gap_us"].is_null());
  EXPECT_TRUE(j["per_ip"]["max_in_flight_ip"].is_null());
  // A mixed log: only the lines with an address count per IP.
  auto reqs = CleanCrawl();
  reqs.push_back({"c.test", "/", 0, 10, 200, At("127.0.0.1")});
  json m = CleanManifest();
  m["hosts"].push_back(Host("c.test", {}));
  AuditReport mixed = Audit(Log(reqs), m, PerIp(1));
  EXPECT_TRUE(mixed.per_ip.available);
  EXPECT_EQ(mixed.per_ip.requests_without_ip, 7);
  EXPECT_EQ(mixed.per_ip.addresses.size(), 1u);
  EXPECT_EQ(mixed.totals.per_ip_concurrency, 0);
}

TEST(AuditPerIpTest, AddressesSortNumericallyAndBadOptionsAreRejected) {
  std::vector<Req> reqs = {{"a.test", "/", 0, 1, 200, At("127.0.0.10")},
                           {"a.test", "/1", 2000, 2001, 200, At("127.0.0.9")},
                           {"a.test", "/2", 4000, 4001, 200, At("[::1]")}};
  AuditReport r = Audit(Log(reqs), ManifestJson({Host("a.test", {})}), PerIp(0));
  ASSERT_EQ(r.per_ip.addresses.size(), 3u);
  EXPECT_EQ(r.per_ip.addresses[0].ip, "127.0.0.9");
  EXPECT_EQ(r.per_ip.addresses[1].ip, "127.0.0.10");
  EXPECT_EQ(r.per_ip.addresses[2].ip, "[::1]");
  std::istringstream in("");
  EXPECT_FALSE(RunAudit(in, ManifestJson({}), PerIp(-1)).ok());
  EXPECT_FALSE(RunAudit(in, ManifestJson({}), PerIp(0, -1)).ok());
}

}  // namespace
}  // namespace harvest::audit
