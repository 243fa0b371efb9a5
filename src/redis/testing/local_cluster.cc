// LocalCluster (local_cluster.h).
#include "redis/testing/local_cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <system_error>

namespace harvest::redis::testing {
namespace {

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Runs `command` (sh -c) and returns its exit status; stdout and stderr into *output.
int RunCommand(const std::string& command, std::string* output) {
  output->clear();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    *output = "popen failed";
    return -1;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) output->append(buf, n);
  int status = pclose(pipe);
  if (status == -1) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

Result<std::unique_ptr<LocalCluster>> LocalCluster::Start(int masters, int replicas) {
  const char* env = getenv("HARVEST_SOURCE_DIR");
  std::string source = env != nullptr && *env != '\0' ? env : HARVEST_DEFAULT_SOURCE_DIR;
  std::string script = source + "/scripts/redis-cluster";
  std::error_code ec;
  if (!std::filesystem::exists(script, ec)) {
    return Status::NotFound(script + " not found (set HARVEST_SOURCE_DIR to the source tree)");
  }
  std::string tmpl = (std::filesystem::temp_directory_path(ec) / "harvest-redis-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    return Status::IOError("cannot create a temporary directory from " + tmpl);
  }
  std::unique_ptr<LocalCluster> cluster(new LocalCluster(script, tmpl));
  std::string output;
  int rc = RunCommand("bash " + Quote(script) + " start " + Quote(tmpl) + " --masters " +
                          std::to_string(masters) + " --replicas " + std::to_string(replicas) +
                          " --owner-pid " + std::to_string(getpid()),
                      &output);
  if (rc != 0) {
    return Status::Unavailable("scripts/redis-cluster start failed (exit " + std::to_string(rc) +
                               "): " + Trim(output));
  }
  std::ifstream in(tmpl + "/seeds");
  std::string seeds;
  std::getline(in, seeds);
  if (Trim(seeds).empty()) return Status::Internal("scripts/redis-cluster wrote no seeds");
  cluster->seeds_ = Trim(seeds);
  return cluster;
}

LocalCluster::~LocalCluster() {
  std::string output;
  (void)RunCommand("bash " + Quote(script_) + " stop " + Quote(dir_), &output);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

Status LocalCluster::KillMaster(int index) {
  std::string output;
  int rc = RunCommand(
      "bash " + Quote(script_) + " kill-master " + Quote(dir_) + " " + std::to_string(index),
      &output);
  if (rc != 0) {
    return Status::Unavailable("scripts/redis-cluster kill-master failed (exit " +
                               std::to_string(rc) + "): " + Trim(output));
  }
  output = Trim(output);
  size_t nl = output.rfind('\n');
  last_killed_port_ = atoi(output.c_str() + (nl == std::string::npos ? 0 : nl + 1));
  return Status::Ok();
}

}  // namespace harvest::redis::testing
