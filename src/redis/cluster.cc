// The Redis Cluster client: slot map, routing, pipelining, redirections, retries (redis.h).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>
#include <string_view>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "base/ascii.h"
#include "redis/connection.h"
#include "redis/redis.h"

namespace harvest::redis {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kFirstBackoff{50};
constexpr milliseconds kMaxBackoff{500};
constexpr int kMaxRedirectsInARow = 5;

// Errors after which the same request may succeed later (the cluster is changing).
bool IsTransient(std::string_view error) {
  return error.starts_with("TRYAGAIN") || error.starts_with("CLUSTERDOWN") ||
         error.starts_with("LOADING") || error.starts_with("MASTERDOWN");
}

// "MOVED 3999 127.0.0.1:6381" / "ASK 3999 127.0.0.1:6381" -> slot, address. An empty host
// (":6381", a node that does not know its address) becomes `from`'s host.
bool ParseRedirect(std::string_view error, std::string_view from, int* slot, std::string* addr) {
  size_t sp1 = error.find(' ');
  if (sp1 == std::string_view::npos) return false;
  size_t sp2 = error.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return false;
  std::string_view num = error.substr(sp1 + 1, sp2 - sp1 - 1);
  auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), *slot);
  if (ec != std::errc() || ptr != num.data() + num.size() || *slot < 0 || *slot >= kSlots) {
    return false;
  }
  std::string_view target = error.substr(sp2 + 1);
  size_t end = target.find(' ');
  if (end != std::string_view::npos) target = target.substr(0, end);
  if (target.starts_with(":")) {
    std::string host;
    int port = 0;
    if (!SplitHostPort(from, &host, &port)) return false;
    *addr = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + std::string(target);
  } else {
    *addr = std::string(target);
  }
  std::string host;
  int port = 0;
  return SplitHostPort(*addr, &host, &port);
}

std::string JoinHostPort(const std::string& host, int64_t port) {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

// A CLUSTER SLOTS node entry [ip, port, id, ...] -> "ip:port" ("" if unusable). An empty ip
// means "the node you asked".
std::string NodeAddress(const Reply& node, const std::string& asked) {
  if (node.type != Reply::Type::kArray || node.elements.size() < 2) return "";
  const Reply& ip = node.elements[0];
  const Reply& port = node.elements[1];
  if (ip.type != Reply::Type::kString || port.type != Reply::Type::kInteger) return "";
  if (port.integer < 1 || port.integer > 65535 || ip.str == "?") return "";
  if (ip.str.empty()) {
    std::string host;
    int asked_port = 0;
    if (!SplitHostPort(asked, &host, &asked_port)) return "";
    return JoinHostPort(host, port.integer);
  }
  return JoinHostPort(ip.str, port.integer);
}

}  // namespace

struct Cluster::Node {
  std::string host;
  int port = 0;
  std::unique_ptr<Connection> conn;
  bool dropped = false;      // the last connection was dropped by an error
  Clock::time_point failed;  // when it last failed (connect or I/O); epoch: never
};

// One request still to be answered in RunAll.
struct Cluster::Pending {
  size_t index = 0;
  std::string target;  // "" : route by the slot map
  bool asking = false;
  bool load_script = false;    // send SCRIPT LOAD before it
  bool script_loaded = false;  // SCRIPT LOAD was tried once already
  int redirects = 0;           // in a row
};

Cluster::Cluster(ClusterOptions options) : options_(std::move(options)), slot_owner_(kSlots, -1) {}

Cluster::~Cluster() = default;

Result<std::unique_ptr<Cluster>> Cluster::Connect(ClusterOptions options) {
  if (options.seeds.empty()) return Status::InvalidArgument("redis: no seed node given");
  for (const std::string& seed : options.seeds) {
    std::string host;
    int port = 0;
    if (!SplitHostPort(seed, &host, &port)) {
      return Status::InvalidArgument("redis: seed '" + seed + "' is not host:port");
    }
  }
  std::unique_ptr<Cluster> cluster(new Cluster(std::move(options)));
  std::string errors;
  for (const std::string& seed : cluster->options_.seeds) {
    std::vector<Reply> replies;
    Argv info = {"CLUSTER", "INFO"};
    Status s = cluster->Exchange(seed, {&info}, &replies);
    if (!s.ok()) {
      errors += (errors.empty() ? "" : "; ") + s.message();
      continue;
    }
    const Reply& r = replies[0];
    if (r.is_error()) {
      return Status::Unavailable("redis " + seed + ": CLUSTER INFO: " + r.str);
    }
    if (r.str.find("cluster_state:ok") == std::string::npos) {
      size_t at = r.str.find("cluster_state:");
      std::string state = at == std::string::npos ? "no cluster_state"
                                                  : r.str.substr(at, r.str.find('\r', at) - at);
      return Status::Unavailable("redis " + seed + ": the cluster is not ok (" + state + ")");
    }
    s = cluster->ReadSlotsFrom(seed);
    if (!s.ok()) return s;
    int unserved =
        static_cast<int>(std::count(cluster->slot_owner_.begin(), cluster->slot_owner_.end(), -1));
    if (unserved > 0) {
      return Status::Unavailable("redis " + seed + ": " + std::to_string(unserved) +
                                 " hash slots are not served by any master");
    }
    return cluster;
  }
  return Status::Unavailable("redis: no seed reachable: " + errors);
}

int Cluster::Intern(const std::string& addr) {
  auto [it, added] = addr_index_.emplace(addr, static_cast<int>(addrs_.size()));
  if (added) addrs_.push_back(addr);
  return it->second;
}

Result<Connection*> Cluster::Open(const std::string& addr) {
  std::unique_ptr<Node>& node = nodes_[addr];
  if (node == nullptr) {
    node = std::make_unique<Node>();
    if (!SplitHostPort(addr, &node->host, &node->port)) {
      nodes_.erase(addr);
      return Status::InvalidArgument("redis: '" + addr + "' is not host:port");
    }
  }
  if (node->conn != nullptr) return node->conn.get();
  Result<std::unique_ptr<Connection>> conn =
      Connection::Open(node->host, node->port, options_.connect_timeout, options_.command_timeout);
  if (!conn.ok()) {
    node->failed = Clock::now();
    return conn.status();
  }
  if (node->dropped) {
    ++stats_.reconnects;
    node->dropped = false;
  }
  node->conn = std::move(conn).value();
  return node->conn.get();
}

void Cluster::Drop(const std::string& addr, const std::string& why) {
  auto it = nodes_.find(addr);
  if (it == nodes_.end() || it->second->conn == nullptr) return;
  spdlog::debug("redis {}: dropping the connection: {}", addr, why);
  it->second->conn.reset();
  it->second->dropped = true;
  it->second->failed = Clock::now();
}

Status Cluster::Exchange(const std::string& addr, const std::vector<const Argv*>& argvs,
                         std::vector<Reply>* replies) {
  replies->clear();
  Result<Connection*> conn = Open(addr);
  if (!conn.ok()) return conn.status();
  ++stats_.round_trips;
  for (const Argv* a : argvs) stats_.bytes_out += CommandSize(*a);
  Status s = (*conn)->Pipeline(argvs, replies);
  for (const Reply& r : *replies) stats_.bytes_in += ReplySize(r);
  if (!s.ok()) {
    Drop(addr, s.message());
    return Status::IOError("redis " + addr + ": " + s.message());
  }
  return s;
}

Status Cluster::ReadSlotsFrom(const std::string& addr) {
  std::vector<Reply> replies;
  Argv slots = {"CLUSTER", "SLOTS"};
  Status s = Exchange(addr, {&slots}, &replies);
  if (!s.ok()) return s;
  const Reply& r = replies[0];
  if (r.type != Reply::Type::kArray) {
    return Status::Unavailable("redis " + addr + ": CLUSTER SLOTS: " +
                               (r.is_error() ? r.str : "unexpected " + r.DebugString()));
  }
  struct Range {
    int64_t first, last;
    std::string master;
  };
  std::vector<Range> ranges;
  std::vector<std::string> replicas;
  for (const Reply& e : r.elements) {
    if (e.type != Reply::Type::kArray || e.elements.size() < 3 ||
        e.elements[0].type != Reply::Type::kInteger ||
        e.elements[1].type != Reply::Type::kInteger) {
      return Status::Unavailable("redis " + addr + ": malformed CLUSTER SLOTS entry " +
                                 e.DebugString());
    }
    int64_t first = e.elements[0].integer, last = e.elements[1].integer;
    if (first < 0 || last >= kSlots || first > last) {
      return Status::Unavailable("redis " + addr + ": CLUSTER SLOTS range " +
                                 std::to_string(first) + "-" + std::to_string(last));
    }
    std::string master = NodeAddress(e.elements[2], addr);
    if (master.empty()) continue;  // a master whose address is unknown ("?")
    ranges.push_back({first, last, master});
    for (size_t i = 3; i < e.elements.size(); ++i) {
      std::string replica = NodeAddress(e.elements[i], addr);
      if (!replica.empty()) replicas.push_back(replica);
    }
  }
  if (ranges.empty()) {
    return Status::Unavailable("redis " + addr + ": CLUSTER SLOTS lists no slot");
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.first < b.first; });
  std::fill(slot_owner_.begin(), slot_owner_.end(), -1);
  masters_.clear();
  for (const Range& range : ranges) {
    int owner = Intern(range.master);
    std::fill(slot_owner_.begin() + range.first, slot_owner_.begin() + range.last + 1, owner);
    if (std::find(masters_.begin(), masters_.end(), range.master) == masters_.end()) {
      masters_.push_back(range.master);
    }
  }
  replicas_ = std::move(replicas);
  return Status::Ok();
}

Status Cluster::RefreshSlots() {
  // Healthy masters first, then the other known nodes, the nodes that failed last (oldest
  // failure first), then the seeds.
  std::vector<std::string> order;
  auto add = [&](const std::string& a) {
    if (std::find(order.begin(), order.end(), a) == order.end()) order.push_back(a);
  };
  for (const std::string& m : masters_) add(m);
  for (const std::string& m : replicas_) add(m);
  for (const auto& [addr, node] : nodes_) add(addr);
  for (const std::string& s : options_.seeds) add(s);
  auto failed_at = [&](const std::string& a) {
    auto it = nodes_.find(a);
    return it == nodes_.end() ? Clock::time_point() : it->second->failed;
  };
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return failed_at(a) < failed_at(b);
  });
  std::string errors;
  for (const std::string& addr : order) {
    Status s = ReadSlotsFrom(addr);
    if (s.ok()) return s;
    errors += (errors.empty() ? "" : "; ") + s.message();
  }
  return Status::Unavailable("redis: cannot read the slot map from any node: " + errors);
}

std::string Cluster::Route(const Request& r) {
  if (r.key >= 0) {
    int owner = slot_owner_[KeySlot(r.argv[static_cast<size_t>(r.key)])];
    if (owner >= 0) return addrs_[static_cast<size_t>(owner)];
  }
  if (!masters_.empty()) return masters_[next_any_++ % masters_.size()];
  if (!options_.seeds.empty()) return options_.seeds[next_any_++ % options_.seeds.size()];
  return "";
}

std::vector<std::string> Cluster::Masters() const { return masters_; }

std::string Cluster::MasterForSlot(uint16_t slot) const {
  if (slot >= kSlots || slot_owner_[slot] < 0) return "";
  return addrs_[static_cast<size_t>(slot_owner_[slot])];
}

void Cluster::RegisterScript(const Script& s) { scripts_[s.sha1] = s.body; }

Request Cluster::Eval(const Script& s, const std::vector<std::string>& keys,
                      const std::vector<std::string>& args) {
  RegisterScript(s);
  return redis::Eval(s, keys, args);
}

Result<Reply> Cluster::Run(const Request& r) {
  Result<std::vector<Reply>> replies = RunAll({r});
  if (!replies.ok()) return replies.status();
  return std::move(replies->front());
}

Result<std::vector<Reply>> Cluster::RunAll(const std::vector<Request>& requests) {
  for (size_t i = 0; i < requests.size(); ++i) {
    const Request& r = requests[i];
    if (r.argv.empty()) {
      return Status::InvalidArgument("redis: request " + std::to_string(i) + " is empty");
    }
    if (r.key < -1 || r.key >= static_cast<int>(r.argv.size())) {
      return Status::InvalidArgument("redis: request " + std::to_string(i) + " (" + r.argv[0] +
                                     "): key index " + std::to_string(r.key) + " is outside its " +
                                     std::to_string(r.argv.size()) + " arguments");
    }
  }
  stats_.requests += requests.size();
  std::vector<Reply> results(requests.size());
  std::vector<Pending> pending(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) pending[i].index = i;

  static const Argv kAsking = {"ASKING"};
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + options_.retry_for;
  milliseconds backoff = kFirstBackoff;

  while (!pending.empty()) {
    // Group by node, in request order within a node.
    std::map<std::string, std::vector<Pending>> groups;
    for (Pending& p : pending) {
      std::string target = p.target.empty() ? Route(requests[p.index]) : p.target;
      groups[target].push_back(std::move(p));
    }
    pending.clear();
    bool must_wait = false;     // a transient error: back off, re-read the slot map
    bool must_refresh = false;  // a MOVED: re-read the slot map
    std::string last_error;

    for (auto& [addr, items] : groups) {
      // The pipeline: [SCRIPT LOAD] [ASKING] request, for each item.
      enum class Kind { kAux, kRequest };
      std::vector<const Argv*> argvs;
      std::vector<std::pair<Kind, size_t>> what;  // per command: kind, item index
      std::vector<Argv> loads;
      loads.reserve(items.size());
      std::set<std::string_view> loading;  // one SCRIPT LOAD per script and batch
      for (size_t k = 0; k < items.size(); ++k) {
        const Pending& p = items[k];
        const Argv& argv = requests[p.index].argv;
        if (p.load_script && loading.insert(argv[1]).second) {
          loads.push_back({"SCRIPT", "LOAD", scripts_[argv[1]]});
          argvs.push_back(&loads.back());
          what.emplace_back(Kind::kAux, k);
        }
        if (p.asking) {
          argvs.push_back(&kAsking);
          what.emplace_back(Kind::kAux, k);
        }
        argvs.push_back(&requests[p.index].argv);
        what.emplace_back(Kind::kRequest, k);
      }
      std::vector<Reply> replies;
      Status s = addr.empty() ? Status::Unavailable("redis: no node known")
                              : Exchange(addr, argvs, &replies);
      if (!s.ok()) {
        must_wait = true;
        last_error = s.message();
      }
      for (size_t c = 0; c < argvs.size(); ++c) {
        if (what[c].first != Kind::kRequest) continue;
        Pending& p = items[what[c].second];
        p.load_script = false;
        if (c >= replies.size()) {  // not answered: the connection failed
          p.target.clear();
          p.asking = false;
          p.script_loaded = false;  // the next node may need the script too
          pending.push_back(std::move(p));
          continue;
        }
        Reply& reply = replies[c];
        if (!reply.is_error()) {
          results[p.index] = std::move(reply);
          continue;
        }
        const std::string& error = reply.str;
        int slot = 0;
        std::string to;
        if ((error.starts_with("MOVED ") || error.starts_with("ASK ")) &&
            ParseRedirect(error, addr, &slot, &to)) {
          ++stats_.redirects;
          if (++p.redirects > kMaxRedirectsInARow) {
            p.redirects = 0;
            p.target.clear();
            p.asking = false;
            must_wait = true;
            last_error = "redis " + addr + ": too many redirections, last: " + error;
          } else if (error[0] == 'M') {
            slot_owner_[static_cast<size_t>(slot)] = Intern(to);
            must_refresh = true;
            p.target.clear();
            p.asking = false;
          } else {
            p.target = to;
            p.asking = true;
          }
          pending.push_back(std::move(p));
          continue;
        }
        p.redirects = 0;
        const Argv& argv = requests[p.index].argv;
        if (error.starts_with("NOSCRIPT") && !p.script_loaded && argv.size() >= 2 &&
            EqualsIgnoreAsciiCase(argv[0], "EVALSHA") && scripts_.count(argv[1]) > 0) {
          p.load_script = true;
          p.script_loaded = true;
          p.target = addr;  // the same node (and ASKING again if it was an ASK target)
          pending.push_back(std::move(p));
          continue;
        }
        if (IsTransient(error)) {
          must_wait = true;
          last_error = "redis " + addr + ": " + error;
          p.target.clear();
          p.asking = false;
          pending.push_back(std::move(p));
          continue;
        }
        results[p.index] = std::move(reply);  // a Redis error is data
      }
    }
    if (pending.empty()) break;
    if (must_wait) {
      Clock::time_point now = Clock::now();
      if (now + backoff > deadline) {
        auto spent = std::chrono::duration_cast<milliseconds>(now - start).count();
        return Status::Unavailable(last_error + " (" + std::to_string(pending.size()) + " of " +
                                   std::to_string(requests.size()) + " requests unanswered after " +
                                   std::to_string(spent) + " ms of retries)");
      }
      ++stats_.retries;
      spdlog::debug("redis: {}; retrying {} requests in {} ms", last_error, pending.size(),
                    backoff.count());
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, kMaxBackoff);
      (void)RefreshSlots();  // failure: the next round fails and waits again
    } else if (must_refresh) {
      (void)RefreshSlots();  // failure: the MOVED targets are in the map already
    }
  }
  return results;
}

Result<Reply> Cluster::RunOnNode(const std::string& host_port, const Argv& argv) {
  if (argv.empty()) return Status::InvalidArgument("redis: empty command for " + host_port);
  ++stats_.requests;
  auto it = nodes_.find(host_port);
  bool had_connection = it != nodes_.end() && it->second->conn != nullptr;
  std::vector<Reply> replies;
  Status s = Exchange(host_port, {&argv}, &replies);
  if (!s.ok() && had_connection) s = Exchange(host_port, {&argv}, &replies);  // stale: once
  if (!s.ok()) return s;
  return std::move(replies[0]);
}

}  // namespace harvest::redis
