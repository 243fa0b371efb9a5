// Trap hosts ("trap": true in the manifest): the audit counts their requests, in all and per
// UTC day, so that a test can hold them to the crawler's per-host budgets.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "audit/audit.h"
#include "audit/audit_test_util.h"

namespace harvest::audit {
namespace {

using namespace audit_test_util;  // NOLINT: the shared test helpers
using nlohmann::json;

json TrapHost(const std::string& name) {
  json h = Host(name, {});
  h["trap"] = true;
  return h;
}

// kT0 is 2023-11-14T22:13:20Z: the next UTC day starts 6,400 s later.
constexpr int64_t kNextDayMs = 6400 * 1000;

TEST(AuditTrapHostTest, CountsRequestsPerTrapHostInAllAndInTheBusiestUtcDay) {
  const json manifest = ManifestJson(
      json::array({Host("a.test", {"a.test/"}), TrapHost("sessions.test"), TrapHost("idle.test")}));
  const std::vector<Req> reqs = {
      {"a.test", "/", 0, 10},
      {"sessions.test", "/", 100, 110},
      {"SESSIONS.test:80", "/s/000000000001/page?sid=1", 1200, 1210},
      {"sessions.test", "/s/000000000002/item?sid=2", 2300, 2310},
      {"sessions.test", "/s/000000000003/list?sid=3", kNextDayMs + 100, kNextDayMs + 110},
      {"sessions.test", "/s/000000000004/cart?sid=4", kNextDayMs + 1200, kNextDayMs + 1210},
  };
  const AuditReport r = Audit(Log(reqs), manifest);
  EXPECT_TRUE(r.Passed()) << FormatText(r);  // figures, not violations
  ASSERT_EQ(r.trap_hosts.size(), 2u);
  EXPECT_EQ(r.trap_hosts[0].host, "idle.test");
  EXPECT_EQ(r.trap_hosts[0].requests, 0);
  EXPECT_EQ(r.trap_hosts[0].max_requests_per_utc_day, 0);
  EXPECT_EQ(r.trap_hosts[1].host, "sessions.test");
  EXPECT_EQ(r.trap_hosts[1].requests, 5);
  EXPECT_EQ(r.trap_hosts[1].max_requests_per_utc_day, 3);
  const std::string text = FormatText(r);
  EXPECT_NE(text.find("Trap hosts: idle.test 0 request(s) (at most 0 in one UTC day); "
                      "sessions.test 5 request(s) (at most 3 in one UTC day)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(ToJson(r)["trap_hosts"],
            json::parse(R"([{"host":"idle.test","requests":0,"max_requests_per_utc_day":0},
                            {"host":"sessions.test","requests":5,"max_requests_per_utc_day":3}])"));
}

TEST(AuditTrapHostTest, OldManifestsWithoutTrapStillParseAndReportNone) {
  const AuditReport r = Audit(Log(CleanCrawl()), CleanManifest());
  EXPECT_TRUE(r.trap_hosts.empty());
  EXPECT_EQ(FormatText(r).find("Trap hosts"), std::string::npos);
  EXPECT_EQ(ToJson(r)["trap_hosts"], json::array());
  json null_trap = Host("a.test", {});
  null_trap["trap"] = nullptr;
  Result<Manifest> m = ParseManifest(ManifestJson(json::array({null_trap})));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_FALSE(m->hosts[0].trap);
}

TEST(AuditTrapHostTest, ManifestTrapMustBeABooleanAndMergesWhenRepeated) {
  json bad = Host("a.test", {});
  bad["trap"] = "yes";
  Result<Manifest> m = ParseManifest(ManifestJson(json::array({bad})));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().ToString().find("hosts[0].trap is not a boolean"), std::string::npos)
      << m.status().ToString();
  Result<Manifest> merged =
      ParseManifest(ManifestJson(json::array({Host("t.test", {}), TrapHost("T.test")})));
  ASSERT_TRUE(merged.ok());
  ASSERT_EQ(merged->hosts.size(), 1u);
  EXPECT_TRUE(merged->hosts[0].trap);
}

}  // namespace
}  // namespace harvest::audit
