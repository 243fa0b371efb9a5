// Conformance with the WHATWG URL Standard: runs every case of the WPT urltestdata.json
// (HARVEST_CONFORMANCE_DIR) and compares href and the component getters. Known deviations are
// listed, one per line, in testdata/url_expected_failures.txt; the test fails when the pass
// rate drops below 99%, when a case fails that is not listed, or when a listed case passes.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "url/url.h"

namespace harvest::url {
namespace {

using Json = nlohmann::json;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// WHATWG origin serialization (tuple origins for special non-file schemes, blob: unwrapped).
std::string Origin(const Url& u) {
  std::string_view s = u.scheme();
  if (s == "blob") {
    std::optional<Url> inner = Parse(u.path());
    if (inner && (inner->scheme() == "http" || inner->scheme() == "https")) return Origin(*inner);
    return "null";
  }
  if (s == "http" || s == "https" || s == "ws" || s == "wss" || s == "ftp") {
    return std::string(u.origin_key());
  }
  return "null";
}

// The WHATWG getters, derived from the Url accessors.
std::map<std::string, std::string> Getters(const Url& u) {
  std::string port = u.port() < 0 ? "" : std::to_string(u.port());
  return {
      {"href", u.href()},
      {"origin", Origin(u)},
      {"protocol", std::string(u.scheme()) + ":"},
      {"username", std::string(u.username())},
      {"password", std::string(u.password())},
      {"hostname", std::string(u.host())},
      {"host", std::string(u.host()) + (port.empty() ? "" : ":" + port)},
      {"port", port},
      {"pathname", std::string(u.path())},
      {"search", u.query().empty() ? "" : "?" + std::string(u.query())},
      {"hash", u.fragment().empty() ? "" : "#" + std::string(u.fragment())},
  };
}

// Returns "" when the case passes, else what went wrong.
std::string RunCase(const Json& c) {
  const std::string input = c["input"].get<std::string>();
  bool expect_failure = c.value("failure", false);
  std::optional<Url> base;
  if (c.contains("base") && !c["base"].is_null()) {
    base = Parse(c["base"].get<std::string>());
    if (!base) return expect_failure ? "" : "base failed to parse";
  }
  std::optional<Url> url = Parse(input, base ? &*base : nullptr);
  if (expect_failure) return url ? "parsed as " + url->href() + ", expected failure" : "";
  if (!url) return "failure, expected " + c["href"].get<std::string>();
  std::string problems;
  for (const auto& [name, value] : Getters(*url)) {
    if (!c.contains(name)) continue;
    std::string want = c[name].get<std::string>();
    if (want != value)
      problems += name + "=" + Json(value).dump() + " want " + Json(want).dump() + "; ";
  }
  return problems;
}

// Key of a case in the expectations file: the JSON of [input, base].
std::string CaseKey(const Json& c) {
  Json base = c.contains("base") ? c["base"] : Json(nullptr);
  return Json::array({c["input"], base}).dump();
}

TEST(UrlWpt, UrlTestData) {
  std::string text = ReadFile(std::string(HARVEST_CONFORMANCE_DIR) + "/urltestdata.json");
  ASSERT_FALSE(text.empty()) << "missing " << HARVEST_CONFORMANCE_DIR << "/urltestdata.json";
  Json cases = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(cases.is_array());

  // Expectations: lines of JSON arrays [input, base, reason]; '#' starts a comment line.
  std::map<std::string, std::string> expected;
  std::ifstream in(std::string(HARVEST_URL_TESTDATA_DIR) + "/url_expected_failures.txt");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    Json entry = Json::parse(line, nullptr, false);
    ASSERT_TRUE(entry.is_array() && entry.size() == 3) << "bad expectations line: " << line;
    expected[Json::array({entry[0], entry[1]}).dump()] = entry[2].get<std::string>();
  }

  int total = 0, passed = 0;
  std::map<std::string, bool> seen;
  for (const Json& c : cases) {
    if (!c.is_object()) continue;  // comments
    ++total;
    std::string key = CaseKey(c);
    std::string problem = RunCase(c);
    bool listed = expected.count(key) > 0;
    seen[key] = true;
    if (problem.empty()) {
      ++passed;
      EXPECT_FALSE(listed) << "unexpectedly passes (remove from expectations): " << key;
    } else {
      EXPECT_TRUE(listed) << "unexpected failure: " << key << ": " << problem;
    }
  }
  for (const auto& [key, reason] : expected) {
    EXPECT_TRUE(seen.count(key)) << "expectation names no case: " << key;
  }
  double rate = 100.0 * passed / total;
  std::printf("WPT urltestdata: %d/%d passed (%.2f%%)\n", passed, total, rate);
  EXPECT_GE(rate, 99.0);
}

// ParseCanonical canonicalizes the parser's record in place and serializes once; it must give
// exactly Canonicalize(Parse(...)): over every WPT input (with its base) and a crawler's
// links, under the default options, all of them off and others on.
TEST(UrlWpt, ParseCanonicalEqualsParseThenCanonicalize) {
  std::string text = ReadFile(std::string(HARVEST_CONFORMANCE_DIR) + "/urltestdata.json");
  ASSERT_FALSE(text.empty()) << "missing " << HARVEST_CONFORMANCE_DIR << "/urltestdata.json";
  Json cases = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(cases.is_array());
  std::vector<std::pair<std::string, std::string>> inputs;  // input, base ("" for none)
  for (const Json& c : cases) {
    if (!c.is_object()) continue;
    std::string base =
        c.contains("base") && c["base"].is_string() ? c["base"].get<std::string>() : "";
    inputs.emplace_back(c["input"].get<std::string>(), base);
  }
  for (const char* link :
       {"/a/./b/../index.html;jsessionid=9?utm_source=x&b=%41&a=&sid=1#top", "../up/?", "?q",
        "#frag", "//User:Pw@Other.Example.COM.:8080/p/default.asp?z=1&y", "HTTP://H/%7e/",
        "mailto:Someone@Example.com?Subject=hi", "sc://X%41/p%2e?b&a#f", "file:///C:/a/../b/"}) {
    inputs.emplace_back(link, "https://www.example.com:8443/dir/page.html?x=1");
  }
  CanonOptions off;
  off.lowercase_host = off.drop_fragment = off.normalize_percent_encoding = false;
  off.sort_query = off.drop_empty_query = off.drop_empty_query_params = false;
  off.drop_session_path_params = off.drop_host_trailing_dot = false;
  off.tracking_params.clear();
  off.session_params.clear();
  CanonOptions on;
  on.drop_userinfo = on.strip_trailing_slash = on.strip_index = true;
  CanonOptions lower_only = off;
  lower_only.lowercase_host = true;
  int compared = 0;
  for (const auto& [input, base_text] : inputs) {
    std::optional<Url> base;
    if (!base_text.empty()) {
      base = Parse(base_text);
      if (!base) continue;
    }
    const Url* b = base ? &*base : nullptr;
    for (const CanonOptions* o :
         {&DefaultCanonOptions(), static_cast<const CanonOptions*>(&off),
          static_cast<const CanonOptions*>(&on), static_cast<const CanonOptions*>(&lower_only)}) {
      std::optional<Url> parsed = Parse(input, b);
      std::optional<Url> fused = ParseCanonical(input, b, *o);
      ASSERT_EQ(parsed.has_value(), fused.has_value()) << input << " base " << base_text;
      if (!parsed) continue;
      const Url two_step = Canonicalize(*parsed, *o);
      EXPECT_EQ(fused->href(), two_step.href()) << input << " base " << base_text;
      EXPECT_EQ(Getters(*fused), Getters(two_step)) << input << " base " << base_text;
      ++compared;
    }
  }
  EXPECT_GT(compared, 2000);
}

}  // namespace
}  // namespace harvest::url
