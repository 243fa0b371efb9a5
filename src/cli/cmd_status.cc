// harvest status --redis: workers, partitions and totals of a shared crawl
// (docs/distributed.md).
#include <cstdio>

#include "cli/cluster_flags.h"
#include "cli/command.h"

namespace harvest::cli {
namespace {

int RunStatus(const ClusterFlags& f) {
  if (f.redis.empty()) {
    return UsageError("status",
                      "--redis is required (the status of a single-process crawl is "
                      "its admin API: harvest crawl --admin)");
  }
  Result<redis::ClusterOptions> r = redis::ParseRedisUrl(f.redis);
  if (!r.ok()) return UsageError("status", "--redis: " + r.status().message());
  Result<cluster::ClusterStatus> st = cluster::ReadStatus(*r, f.prefix);
  if (!st.ok()) {
    std::fprintf(stderr, "harvest status: %s\n", st.status().message().c_str());
    return kExitFailure;
  }
  std::printf("%s\n", cluster::StatusJson(*st).c_str());
  return kExitOk;
}

CommandRegistration reg("status", "Show the workers, partitions and totals of a shared crawl",
                        [](CLI::App* app) -> CommandRunner {
                          auto f = std::make_shared<ClusterFlags>();
                          AddRedisFlags(app, f.get());
                          return [f] { return RunStatus(*f); };
                        });

}  // namespace
}  // namespace harvest::cli
