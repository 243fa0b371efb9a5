// Test support shared by audit_test.cc and audit_per_ip_test.cc: request log lines, manifests
// and a clean crawl of two hosts. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "audit/audit.h"

namespace harvest::audit::audit_test_util {

using nlohmann::json;

constexpr int64_t kT0 = 1700000000000000;  // µs
constexpr int64_t kMs = 1000;

// Builds one request log line; times in ms after kT0.
struct Req {
  std::string host;
  std::string path;
  int64_t start_ms;
  int64_t end_ms;
  int status = 200;
  json extra = json::object();
  std::string Line() const {
    json j = {{"host", host},
              {"path", path},
              {"page", nullptr},
              {"start_us", kT0 + start_ms * kMs},
              {"end_us", kT0 + end_ms * kMs},
              {"status", status},
              {"bytes", 10},
              {"conn", 1},
              {"kind", "page"},
              {"disallowed", false}};
    j.update(extra);
    return j.dump();
  }
};

inline std::string Log(const std::vector<Req>& reqs) {
  std::string out;
  for (const auto& r : reqs) out += r.Line() + "\n";
  return out;
}

// `hosts` as written at the call site: `ManifestJson({Host(...)})` is an array of one host
// under gcc but a copy of the one host under clang (nlohmann::json's single-element brace
// initialisation), and `ManifestJson({})` null; both are made the array they mean.
inline json ManifestJson(json hosts) {
  if (hosts.is_null()) hosts = json::array();
  if (hosts.is_object()) hosts = json::array({std::move(hosts)});
  return {{"seed", 1}, {"hosts", std::move(hosts)}, {"edge", json::array()}};
}

inline json Host(const std::string& name, std::vector<std::string> must_fetch,
                 int64_t crawl_delay_ms = 0, std::vector<std::string> prefixes = {}) {
  return {{"host", name},
          {"crawl_delay_ms", crawl_delay_ms},
          {"robots", "normal"},
          {"must_fetch", must_fetch},
          {"must_not_fetch_prefixes", prefixes}};
}

inline AuditReport Audit(const std::string& log, const json& manifest, AuditOptions options = {}) {
  std::istringstream in(log);
  Result<AuditReport> r = RunAudit(in, manifest, options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : AuditReport{};
}

inline const HostReport& HostOf(const AuditReport& r, const std::string& host) {
  for (const auto& h : r.hosts) {
    if (h.host == host) return h;
  }
  static HostReport none;
  ADD_FAILURE() << "no host " << host;
  return none;
}

// A polite crawl of two hosts: robots.txt first, then pages 1 s apart (end to start).
inline std::vector<Req> CleanCrawl() {
  return {{"a.test", "/robots.txt", 0, 10},  {"b.test", "/robots.txt", 5, 20},
          {"a.test", "/", 1010, 1030},       {"b.test", "/", 1020, 1100},
          {"a.test", "/p/1", 2030, 2040},    {"b.test", "/p/1", 2100, 2150},
          {"a.test", "/p/2?x=1", 3040, 3050}};
}

inline json CleanManifest() {
  return ManifestJson(
      {Host("a.test", {"a.test/robots.txt", "a.test/", "a.test/p/1", "a.test/p/2?x=1"}),
       Host("b.test", {"b.test/robots.txt", "b.test/", "b.test/p/1"})});
}

}  // namespace harvest::audit::audit_test_util
