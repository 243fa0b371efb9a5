// `harvest status --redis`: workers, partitions and totals of a shared crawl
// (docs/distributed.md).
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <map>

#include "cluster/cluster.h"
#include "cluster/internal.h"

namespace harvest::cluster {
namespace {

int64_t ToInt(const redis::Reply& r) {
  if (r.type == redis::Reply::Type::kInteger) return r.integer;
  if (r.type == redis::Reply::Type::kString) return std::strtoll(r.str.c_str(), nullptr, 10);
  return 0;
}

// "partitions=256;by=host;hot=a,b" → 256 + 2.
int PartitionsOfConfig(const std::string& config) {
  int n = std::atoi(config.c_str() + config.find('=') + 1);
  size_t hot = config.find("hot=");
  if (hot != std::string::npos && hot + 4 < config.size()) {
    n += 1;
    for (size_t i = hot + 4; i < config.size(); ++i) n += config[i] == ',';
  }
  return n;
}

}  // namespace

Result<ClusterStatus> ReadStatus(const redis::ClusterOptions& options, const std::string& prefix) {
  Result<std::unique_ptr<redis::Cluster>> c = redis::Cluster::Connect(options);
  if (!c.ok()) return c.status();
  redis::Cluster& r = **c;
  const std::string g = internal::GlobalTag(prefix);
  Result<std::vector<redis::Reply>> head =
      r.RunAll({{{"GET", g + "config"}},
                {{"ZRANGE", g + "workers", "0", "-1", "WITHSCORES"}},
                {{"TIME"}, -1}});
  if (!head.ok()) return head.status();
  ClusterStatus st;
  if ((*head)[0].type != redis::Reply::Type::kString) {
    return Status::NotFound("no crawl '" + prefix + "' in this Redis Cluster (no " + g +
                            "config key): has a worker been started with --redis-prefix " + prefix +
                            "?");
  }
  st.config = (*head)[0].str;
  st.partitions = PartitionsOfConfig(st.config);
  int64_t now_ms = 0;
  if ((*head)[2].elements.size() == 2) {
    now_ms = ToInt((*head)[2].elements[0]) * 1000 + ToInt((*head)[2].elements[1]) / 1000;
  }
  std::map<std::string, size_t> index;
  const std::vector<redis::Reply>& w = (*head)[1].elements;
  for (size_t i = 0; i + 1 < w.size(); i += 2) {
    const int64_t expires = ToInt(w[i + 1]);
    if (now_ms > 0 && expires < now_ms) continue;  // not renewed: gone
    index[w[i].str] = st.workers.size();
    st.workers.push_back({.id = w[i].str, .expires_ms = expires});
  }
  std::vector<redis::Request> reqs;
  for (int p = 0; p < st.partitions; ++p) {
    const std::string tag = internal::PartitionTag(prefix, p);
    reqs.push_back({{"GET", tag + "lease"}});
    reqs.push_back({{"GET", tag + "pending"}});
    reqs.push_back({{"GET", tag + "done"}});
    reqs.push_back({{"SCARD", tag + "seen"}});
  }
  Result<std::vector<redis::Reply>> all = r.RunAll(reqs);
  if (!all.ok()) return all.status();
  for (int p = 0; p < st.partitions; ++p) {
    const redis::Reply* rep = &(*all)[static_cast<size_t>(p) * 4];
    if (rep[0].type == redis::Reply::Type::kString) {
      const std::string owner = rep[0].str.substr(0, rep[0].str.find(' '));
      auto it = index.find(owner);
      if (it == index.end()) {
        index[owner] = st.workers.size();
        st.workers.push_back({.id = owner, .expires_ms = 0, .partitions = 1});
      } else {
        ++st.workers[it->second].partitions;
      }
    } else {
      ++st.unowned;
    }
    st.pending += ToInt(rep[1]);
    st.done += ToInt(rep[2]);
    st.seen += ToInt(rep[3]);
  }
  return st;
}

std::string StatusJson(const ClusterStatus& st) {
  nlohmann::json j;
  j["partitions"] = st.partitions;
  j["unowned_partitions"] = st.unowned;
  j["config"] = st.config;
  j["pending"] = st.pending;
  j["done"] = st.done;
  j["seen"] = st.seen;
  j["complete"] = st.pending == 0;
  nlohmann::json ws = nlohmann::json::array();
  for (const ClusterStatus::Worker& w : st.workers) {
    ws.push_back({{"id", w.id}, {"partitions", w.partitions}, {"expires_ms", w.expires_ms}});
  }
  j["workers"] = ws;
  return j.dump(2);
}

}  // namespace harvest::cluster
