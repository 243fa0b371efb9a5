#include "admin/requests.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace harvest::admin {
namespace {

using ::testing::HasSubstr;

TEST(ParseSeedRequest, Accepts) {
  Result<SeedRequest> r =
      ParseSeedRequest(R"({"urls": ["http://a.test/", "HTTPS://B.test:8443/x?y"], "priority": 2})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->urls, (std::vector<std::string>{"http://a.test/", "HTTPS://B.test:8443/x?y"}));
  EXPECT_EQ(r->priority, 2);
  r = ParseSeedRequest(R"({"urls": ["http://user@[::1]:80/"]})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->priority.has_value());
}

TEST(ParseSeedRequest, RejectsNamingTheProblem) {
  struct Case {
    const char* body;
    const char* error;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"", "malformed JSON"},
           {"{\"urls\": [", "malformed JSON"},
           {"[]", "must be an object"},
           {"{}", "missing field 'urls'"},
           {R"({"urls": "http://a.test/"})", "urls must be an array, not a string"},
           {R"({"urls": []})", "urls is empty"},
           {R"({"urls": [3]})", "urls[0] must be a string, not a number"},
           {R"({"urls": ["http://a.test/", "a.test/x"]})", "urls[1] 'a.test/x': not an absolute"},
           {R"({"urls": ["ftp://a.test/"]})", "scheme 'ftp' is not http or https"},
           {R"({"urls": ["http:a.test"]})", "no '//'"},
           {R"({"urls": ["http:///x"]})", "no host"},
           {R"({"urls": ["http://a .test/"]})", "whitespace"},
           {R"({"urls": ["http://a.test/"], "priority": 1.5})", "priority must be an integer"},
           {R"({"urls": ["http://a.test/"], "priority": "1"})", "priority must be an integer"},
           {R"({"urls": ["http://a.test/"], "priority": -1})", "priority must be between 0"},
           {R"({"urls": ["http://a.test/"], "prio": 1})", "unknown field 'prio'"},
       }) {
    Result<SeedRequest> r = ParseSeedRequest(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr(c.error)) << c.body;
  }
}

TEST(ParsePolicyRequest, AcceptsPartialPolicies) {
  Result<HostPolicy> p = ParsePolicyRequest(R"({"crawl_delay_ms": 500})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->crawl_delay_ms, 500);
  EXPECT_FALSE(p->max_concurrent.has_value());
  EXPECT_FALSE(p->weight.has_value());
  p = ParsePolicyRequest(R"({"crawl_delay_ms": 0, "max_concurrent": 1, "weight": 2})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->max_concurrent, 1);
  EXPECT_EQ(p->weight, 2.0);
}

TEST(ParsePolicyRequest, RejectsNamingTheProblem) {
  struct Case {
    const char* body;
    const char* error;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"nope", "malformed JSON"},
           {"{}", "empty policy"},
           {R"({"dealy_ms": 5})", "unknown field 'dealy_ms'"},
           {R"({"crawl_delay_ms": "500"})", "crawl_delay_ms must be an integer, not a string"},
           {R"({"crawl_delay_ms": null})", "crawl_delay_ms must be an integer, not null"},
           {R"({"crawl_delay_ms": -5})", "crawl_delay_ms must be between 0 and 86400000"},
           {R"({"crawl_delay_ms": 18446744073709551615})", "crawl_delay_ms must be between"},
           {R"({"max_concurrent": 0})", "max_concurrent must be between 1"},
           {R"({"weight": 0})", "weight must be greater than 0"},
           {R"({"weight": true})", "weight must be a number, not a boolean"},
       }) {
    Result<HostPolicy> r = ParsePolicyRequest(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_THAT(r.status().message(), HasSubstr(c.error)) << c.body;
  }
}

TEST(ParsePageQuery, DefaultsAndAllFields) {
  Result<PageQuery> q = ParsePageQuery({});
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->limit, 100);
  EXPECT_FALSE(q->host || q->status || q->since_unix_ms || q->cursor);
  q = ParsePageQuery({{"host", "A.Test"},
                      {"status", "404"},
                      {"since", "1714564800"},
                      {"limit", "1000"},
                      {"cursor", "xyz"}});
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->host, "a.test");
  EXPECT_EQ(q->status, 404);
  EXPECT_EQ(q->since_unix_ms, 1714564800000);
  EXPECT_EQ(q->limit, 1000);
  EXPECT_EQ(q->cursor, "xyz");
}

TEST(ParsePageQuery, RejectsNamingTheProblem) {
  struct Case {
    QueryParams params;
    const char* error;
  };
  for (const Case& c : std::vector<Case>{
           {{{"limit", "0"}}, "limit: '0' is not an integer in 1..1000"},
           {{{"limit", "1001"}}, "limit"},
           {{{"limit", "10x"}}, "limit"},
           {{{"limit", ""}}, "limit"},
           {{{"status", "99"}}, "status: '99'"},
           {{{"status", "abc"}}, "status"},
           {{{"since", "yesterday"}}, "since: 'yesterday'"},
           {{{"since", "2024-02-30T00:00:00Z"}}, "since"},
           {{{"since", "2024-05-01T12:00:00"}}, "since"},  // no offset
           {{{"host", ""}}, "host: empty host name"},
           {{{"host", std::string(254, 'a')}}, "longer than 253"},
           {{{"cursor", ""}}, "cursor"},
           {{{"sort", "url"}}, "unknown query parameter 'sort'"},
           {{{"limit", "5"}, {"limit", "6"}}, "'limit' given twice"},
       }) {
    Result<PageQuery> q = ParsePageQuery(c.params);
    ASSERT_FALSE(q.ok()) << c.error;
    EXPECT_THAT(q.status().message(), HasSubstr(c.error));
  }
}

TEST(ParseSince, Rfc3339AndUnixSeconds) {
  EXPECT_EQ(*ParseSince("0"), 0);
  EXPECT_EQ(*ParseSince("1714564800"), 1714564800000);
  EXPECT_EQ(*ParseSince("2024-05-01T12:00:00Z"), 1714564800000);
  EXPECT_EQ(*ParseSince("2024-05-01t12:00:00z"), 1714564800000);
  EXPECT_EQ(*ParseSince("2024-05-01T14:00:00.25+02:00"), 1714564800250);
  EXPECT_EQ(*ParseSince("2024-05-01T11:30:00-00:30"), 1714564800000);
  EXPECT_EQ(*ParseSince("1969-12-31T23:59:59Z"), -1000);
  EXPECT_EQ(*ParseSince("2000-02-29T00:00:00Z"), 951782400000);
  EXPECT_FALSE(ParseSince("1900-02-29T00:00:00Z").ok());
  EXPECT_FALSE(ParseSince("2024-13-01T00:00:00Z").ok());
  EXPECT_FALSE(ParseSince("2024-05-01T12:00:00Zjunk").ok());
  EXPECT_FALSE(ParseSince("2024-05-01T12:00:00.Z").ok());
  EXPECT_FALSE(ParseSince("-5").ok());
  EXPECT_FALSE(ParseSince("99999999999999999999").ok());
  EXPECT_FALSE(ParseSince("").ok());
}

TEST(FormatRfc3339Ms, RoundTrips) {
  EXPECT_EQ(FormatRfc3339Ms(1714564800250), "2024-05-01T12:00:00.250Z");
  EXPECT_EQ(FormatRfc3339Ms(-1), "1969-12-31T23:59:59.999Z");
  for (int64_t ms : {int64_t{0}, int64_t{951782400000}, int64_t{1714564800250}}) {
    EXPECT_EQ(*ParseSince(FormatRfc3339Ms(ms)), ms);
  }
}

TEST(ParseHostSegment, DecodesAndLowercases) {
  EXPECT_EQ(*ParseHostSegment("A.Test"), "a.test");
  EXPECT_EQ(*ParseHostSegment("http%3A%2F%2FA.test%3A8080"), "http://a.test:8080");
  EXPECT_THAT(ParseHostSegment("").status().message(), HasSubstr("empty host name"));
  EXPECT_THAT(ParseHostSegment("a%zz").status().message(), HasSubstr("percent-escape"));
  EXPECT_THAT(ParseHostSegment("a%2").status().message(), HasSubstr("percent-escape"));
  EXPECT_THAT(ParseHostSegment("a%20b").status().message(), HasSubstr("space"));
  EXPECT_THAT(ParseHostSegment("%C3%A9.test").status().message(), HasSubstr("punycode"));
  EXPECT_TRUE(ParseHostSegment(std::string(253, 'a')).ok());
  EXPECT_THAT(ParseHostSegment(std::string(254, 'a')).status().message(),
              HasSubstr("longer than 253"));
}

TEST(ParsePageId, Decimal) {
  EXPECT_EQ(*ParsePageId("42"), 42u);
  EXPECT_EQ(*ParsePageId("18446744073709551615"), UINT64_MAX);
  for (const char* bad : {"", "-1", "4x", "0x10", "18446744073709551616", " 1"}) {
    EXPECT_THAT(ParsePageId(bad).status().message(), HasSubstr("not a decimal number")) << bad;
  }
}

TEST(Render, Shapes) {
  StatusSnapshot s;
  s.pages_per_sec = 1.5;
  s.queue_depth = 7;
  s.hosts = {1, 2, 3, 4};
  s.state = "paused";
  nlohmann::json j = ToJson(s);
  EXPECT_EQ(j["pages_per_sec"], 1.5);
  EXPECT_EQ(j["hosts"]["waiting"], 3);
  EXPECT_EQ(j["state"], "paused");
  for (const char* k : {"pages_per_sec", "queue_depth", "hosts", "error_rate_percent",
                        "bytes_stored", "pages_stored", "uptime_s", "state"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_FALSE(j.contains("shared"));  // a single-process crawl
  s.shared = SharedShare{.worker = "w1",
                         .partitions_held = 22,
                         .partitions = 64,
                         .taken = 9,
                         .done = 7,
                         .admitted_new = 30};
  j = ToJson(s);
  EXPECT_EQ(j["shared"]["worker"], "w1");
  EXPECT_EQ(j["shared"]["partitions_held"], 22);
  EXPECT_EQ(j["shared"]["partitions"], 64);
  EXPECT_EQ(j["shared"]["taken"], 9);
  EXPECT_EQ(j["shared"]["done"], 7);
  EXPECT_EQ(j["shared"]["admitted_new"], 30);
  SeedResult r{2, {{"http://x.test/", "out of scope"}}};
  EXPECT_EQ(DumpJson(ToJson(r)),
            R"({"queued":2,"rejected":[{"reason":"out of scope","url":"http://x.test/"}]})");
  PageList list;
  list.pages.push_back({});
  list.pages[0].title = "bad \xff utf-8";
  EXPECT_TRUE(ToJson(list)["next_cursor"].is_null());
  std::string dumped = DumpJson(ToJson(list));  // does not throw
  EXPECT_NE(dumped.find("\"warc_file\""), std::string::npos);
  EXPECT_NE(dumped.find("1970-01-01T00:00:00.000Z"), std::string::npos);
}

// --metadata: the writer's state in /status (an outage included); pages carry the crawler's
// outcome, attempts (no WARC record) among them.
TEST(Render, MetadataStatusAndPageOutcomes) {
  StatusSnapshot s;
  EXPECT_FALSE(ToJson(s).contains("metadata"));  // without --metadata
  s.metadata = MetadataStatus{.database_up = false,
                              .outage_seconds = 4.5,
                              .rows_written = 120,
                              .failures = 3,
                              .cursor = 130,
                              .last_error = "Unavailable: connection refused"};
  nlohmann::json j = ToJson(s)["metadata"];
  EXPECT_EQ(j["database_up"], false);
  EXPECT_EQ(j["outage_seconds"], 4.5);
  EXPECT_EQ(j["rows_written"], 120);
  EXPECT_EQ(j["failures"], 3);
  EXPECT_EQ(j["cursor"], 130);
  EXPECT_EQ(j["last_error"], "Unavailable: connection refused");
  PageRecord attempt{.id = 9, .url = "http://a.test/x", .outcome = "retried", .reason = "HTTP 503"};
  nlohmann::json p = ToJson(attempt);
  EXPECT_EQ(p["outcome"], "retried");
  EXPECT_EQ(p["reason"], "HTTP 503");
  EXPECT_EQ(p["warc_file"], "");  // the existing fields stay
  EXPECT_EQ(p["status"], 0);
}

}  // namespace
}  // namespace harvest::admin
