// Parsing and validation of admin API requests, and JSON rendering of its answers
// (docs/admin-api.md). Pure functions with no I/O, so they can be unit-tested and fuzzed
// (src/admin/fuzz/) apart from the HTTP server.
//
// Every parser returns InvalidArgument with a message naming the field and the problem
// ("urls[2]: not an absolute http or https URL", "unknown field 'dealy_ms'"); the server
// answers those with 400 and does not call the Backend.
//
// Thread-safety: stateless functions; safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "admin/backend.h"
#include "base/status.h"

namespace harvest::admin {

// Limits on request contents, beyond the server's body size limit.
inline constexpr size_t kMaxSeedUrls = 10000;
inline constexpr size_t kMaxUrlLength = 8192;
inline constexpr size_t kMaxHostLength = 253;
inline constexpr size_t kMaxCursorLength = 1024;
inline constexpr int64_t kMaxCrawlDelayMs = 24LL * 3600 * 1000;  // one day
inline constexpr int kMaxLimit = 1000;

// POST /seeds body: {"urls": ["http://...", ...], "priority": N}. `urls` is required and
// non-empty; each must be an absolute http or https URL with a host, without whitespace or
// control characters (full parsing and scope are the Backend's: it answers with `rejected`).
Result<SeedRequest> ParseSeedRequest(std::string_view body);

// POST /hosts/{host}/policy body: {"crawl_delay_ms": int 0..86400000, "max_concurrent":
// int >= 1, "weight": number > 0}. At least one field; fields left out stay absent.
Result<HostPolicy> ParsePolicyRequest(std::string_view body);

// GET /pages query: host, status (100..599), since, limit (1..1000), cursor. Unknown or
// repeated parameters are errors. `since` is RFC 3339 ("2024-05-01T12:00:00Z",
// "2024-05-01T14:00:00.5+02:00") or unix seconds ("1714564800").
using QueryParams = std::multimap<std::string, std::string>;
Result<PageQuery> ParsePageQuery(const QueryParams& params);

// The {host} path segment: percent-decoded, then NormalizeHost.
Result<std::string> ParseHostSegment(std::string_view raw_segment);
// A host name (or origin, as the Backend understands it) from a request: 1..253 printable
// ASCII characters without spaces, lower-cased.
Result<std::string> NormalizeHost(std::string host);

// The {id} path segment: a decimal page id.
Result<uint64_t> ParsePageId(std::string_view raw_segment);

// RFC 3339 date-time or unix seconds → unix milliseconds.
Result<int64_t> ParseSince(std::string_view text);

// Percent-decoding; InvalidArgument on a malformed escape.
Result<std::string> PercentDecode(std::string_view in);

// Milliseconds since the epoch → "2024-05-01T12:00:00.250Z" (UTC).
std::string FormatRfc3339Ms(int64_t unix_ms);

// JSON answers. Strings are rendered with invalid UTF-8 replaced (U+FFFD), never thrown on.
nlohmann::json ToJson(const SeedResult& result);
nlohmann::json ToJson(const StatusSnapshot& status);
nlohmann::json ToJson(const PageRecord& page);
nlohmann::json ToJson(const PageList& list);
// {"error": message}
nlohmann::json ErrorJson(std::string_view message);
// json.dump() that never throws (invalid UTF-8 is replaced).
std::string DumpJson(const nlohmann::json& j);

}  // namespace harvest::admin
