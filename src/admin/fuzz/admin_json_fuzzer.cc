// Fuzz target for the admin API's JSON body parsers (POST /seeds, POST /hosts/{h}/policy)
// and answer rendering: any bytes, never a crash or an exception; what is accepted obeys
// the documented limits and renders as valid JSON.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "admin/requests.h"

using namespace harvest::admin;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  harvest::Result<SeedRequest> seeds = ParseSeedRequest(in);
  if (seeds.ok()) {
    if (seeds->urls.empty() || seeds->urls.size() > kMaxSeedUrls) __builtin_trap();
    SeedResult r;
    for (const std::string& u : seeds->urls) r.rejected.push_back({u, "fuzz"});
    (void)DumpJson(ToJson(r));
  }
  harvest::Result<HostPolicy> policy = ParsePolicyRequest(in);
  if (policy.ok()) {
    if (!policy->crawl_delay_ms && !policy->max_concurrent && !policy->weight) __builtin_trap();
    if (policy->crawl_delay_ms && (*policy->crawl_delay_ms < 0)) __builtin_trap();
    if (policy->weight && !(*policy->weight > 0)) __builtin_trap();
  }
  // Hostile strings from a Backend render without throwing.
  PageRecord page;
  page.title = std::string(in);
  page.url = std::string(in);
  (void)DumpJson(ToJson(page));
  (void)ParseHostSegment(in);
  (void)ParsePageId(in);
  return 0;
}
