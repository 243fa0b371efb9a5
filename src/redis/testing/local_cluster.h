// LocalCluster: a throw-away Redis Cluster on 127.0.0.1 for tests (scripts/redis-cluster).
//
// Start() runs `scripts/redis-cluster start` in a fresh temporary directory (the source tree
// is $HARVEST_SOURCE_DIR, else the CMAKE_SOURCE_DIR this was built from); the destructor
// stops the nodes and removes the directory; if the test process dies first, the script's
// watcher (--owner-pid) stops the nodes within a second or so. Needs redis-server and redis-cli
// (scripts/bootstrap installs them).
//
// Thread-safety: none; one owner.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"

namespace harvest::redis::testing {

class LocalCluster {
 public:
  // `masters` >= 3 masters, each with `replicas` replicas; returns once every node reports
  // cluster_state:ok and every replica is in sync. Unavailable with the script's output when
  // it fails.
  static Result<std::unique_ptr<LocalCluster>> Start(int masters, int replicas);
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;
  ~LocalCluster();  // stops the nodes, removes the directory

  // "127.0.0.1:P1,127.0.0.1:P2,..." (the masters at start), for ParseRedisUrl.
  std::string seeds() const { return seeds_; }
  // The cluster's directory (node-PORT/redis.log etc.).
  const std::string& dir() const { return dir_; }
  // SIGKILLs the index-th live master, masters ordered by the first slot they serve (master
  // 0 serves slot 0). The port killed is in last_killed_port().
  Status KillMaster(int index);
  int last_killed_port() const { return last_killed_port_; }

 private:
  LocalCluster(std::string script, std::string dir) : script_(script), dir_(dir) {}

  std::string script_;
  std::string dir_;
  std::string seeds_;
  int last_killed_port_ = 0;
};

}  // namespace harvest::redis::testing
