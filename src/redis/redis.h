// A synchronous Redis Cluster client (hiredis 0.14, blocking API).
//
// Routes each request to the master that serves its key's hash slot, pipelines requests per
// master (one write and one read-back per node and round), and follows the cluster through
// resharding and failover. Standards: the Redis Cluster specification
// (https://redis.io/docs/reference/cluster-spec/): key hash slots (CRC16-XMODEM mod 16384,
// `{hash tag}` rules), the slot map read with CLUSTER SLOTS, MOVED redirection (the slot map
// is refreshed and the request resent to the new owner) and ASK redirection (ASKING, then
// the request on the named node; the slot map is left as it is); RESP2 replies.
//
// Departures and limits:
// - Masters only: no reads from replicas (no READONLY), no pub/sub, no blocking commands,
//   no MULTI/EXEC, no TLS (rediss://), no AUTH.
// - Retries: connection loss, timeouts, CLUSTERDOWN, TRYAGAIN, LOADING and MASTERDOWN are
//   retried with a backoff (50 ms doubling to 500 ms, the slot map re-read from any
//   reachable node or seed before each retry) until ClusterOptions::retry_for, then
//   Status::Unavailable naming the node and the last error. A retried request may have been
//   applied once already: callers make their writes idempotent.
// - Redis error replies (WRONGTYPE, a script error, CROSSSLOT, ...) are data: a Reply of
//   type kError, not a failed Result. A failed Result means the request could not be
//   completed (unreachable cluster, malformed request).
// - Scripts: EVALSHA only. The client remembers the body of every Script passed to
//   Cluster::Eval (or Cluster::RegisterScript); an EVALSHA answered NOSCRIPT is resent once
//   after SCRIPT LOAD of that body on the same node. The free function Eval() builds the same
//   request without registering the body: its NOSCRIPT comes back as a kError Reply.
// - Redirections: more than 5 in a row for one request count as a transient error (backoff).
//
// Only src/redis includes <hiredis/hiredis.h>.
//
// Thread-safety: Reply, Request, Script, ClusterOptions are value types. A Cluster is not
// thread-safe: use one per thread. The client blocks SIGPIPE in the calling thread while it
// writes to a socket (hiredis writes with write(2)), so a peer that went away is an error,
// not a signal.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace harvest::redis {

inline constexpr int kSlots = 16384;

// A reply, copied out of hiredis.
struct Reply {
  enum class Type { kNil, kStatus, kError, kInteger, kString, kArray };
  Type type = Type::kNil;
  int64_t integer = 0;
  std::string str;              // kStatus, kError, kString
  std::vector<Reply> elements;  // kArray
  bool is_error() const { return type == Type::kError; }
  bool is_nil() const { return type == Type::kNil; }
  // For messages and tests: "nil", "status:OK", "error:ERR ...", "integer:3", "string:abc",
  // "array[2]{string:a,nil}". Strings longer than 64 bytes are cut.
  std::string DebugString() const;
};

using Argv = std::vector<std::string>;  // binary-safe arguments

struct Request {
  Argv argv;
  int key = 1;  // index in argv of the key that routes it (its hash slot); -1: any master
};

// A Lua script for EVALSHA; sha1 is the lowercase hex SHA-1 of body (as SCRIPT LOAD).
struct Script {
  std::string body;
  std::string sha1;
  explicit Script(std::string body);
};

// EVALSHA sha numkeys keys... args...  (routed by keys[0], any master without keys; all keys
// must share a slot). Does not register the body with a Cluster: see Cluster::Eval.
Request Eval(const Script& s, const std::vector<std::string>& keys,
             const std::vector<std::string>& args);

struct ClusterOptions {
  std::vector<std::string> seeds;  // "host:port" ("[v6]:port"), at least one
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds command_timeout{3000};
  // How long a request keeps being retried through connection loss, CLUSTERDOWN, TRYAGAIN,
  // a master failover (slot map refreshed from any reachable node) before an error Status.
  std::chrono::milliseconds retry_for{20000};
};

// "redis://h:p[,h:p...]" (also accepts the list without the scheme; an IPv6 host in
// brackets; one trailing "/") -> options with default timeouts. InvalidArgument naming the
// problem for anything else (rediss://, credentials, a database number, a missing port...).
Result<ClusterOptions> ParseRedisUrl(std::string_view url);

// CRC16-XMODEM mod 16384 with the {hash tag} rules of the Redis Cluster spec: if the key
// has a '{' and a later '}' with at least one byte between them, only those bytes are hashed.
uint16_t KeySlot(std::string_view key);

class Connection;  // connection.h (private)

class Cluster {  // not thread-safe: one per thread
 public:
  // Connects to the first reachable seed, checks CLUSTER INFO (Unavailable unless
  // cluster_state:ok) and reads the slot map (CLUSTER SLOTS; Unavailable unless every slot is
  // served). InvalidArgument for no seeds or a malformed seed.
  static Result<std::unique_ptr<Cluster>> Connect(ClusterOptions options);
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;
  ~Cluster();

  // One request: RunAll({r}).
  Result<Reply> Run(const Request& r);

  // Pipelined: requests grouped per master node, each node's group sent in one write and
  // read back; replies returned in request order. Requests for one node keep their order.
  // A reply that is a Redis error (e.g. WRONGTYPE, a script error) is returned as a kError
  // Reply, not a failed Result. MOVED: refresh the slot map, resend to the new owner. ASK:
  // ASKING + resend to the named node (no map refresh). NOSCRIPT for an EVALSHA of a known
  // script: SCRIPT LOAD the body, then resend. Connection errors, timeouts, CLUSTERDOWN,
  // TRYAGAIN, LOADING, MASTERDOWN: reconnect, refresh the slot map (every known node, then
  // the seeds), retry with a backoff of 50 ms doubling to 500 ms until retry_for, then
  // Status::Unavailable naming the node and the error. InvalidArgument (nothing sent) for a
  // request with an empty argv or a key index outside it.
  // NOTE: a retried request may have been applied once already; make writes idempotent.
  Result<std::vector<Reply>> RunAll(const std::vector<Request>& requests);

  // One command on one node ("host:port", need not be in the slot map), e.g. INFO on each
  // master; no redirection handling. A stale connection is reopened once; otherwise IOError
  // naming the node (no retry_for loop: a node that is down fails fast).
  Result<Reply> RunOnNode(const std::string& host_port, const Argv& argv);

  // EVALSHA of s (as the free Eval) and remembers s.body for NOSCRIPT.
  Request Eval(const Script& s, const std::vector<std::string>& keys,
               const std::vector<std::string>& args);
  // Remembers s.body for NOSCRIPT answers to EVALSHA requests built by the free Eval().
  void RegisterScript(const Script& s);

  // "host:port" of each master in the current slot map, ordered by the first slot it serves.
  std::vector<std::string> Masters() const;
  // The master serving `slot` in the current slot map ("" if none).
  std::string MasterForSlot(uint16_t slot) const;
  // Re-reads the slot map now (every known node, then the seeds). Run* do this themselves.
  Status RefreshSlots();

  struct Stats {
    uint64_t requests = 0;     // requests passed to Run, RunAll, RunOnNode
    uint64_t round_trips = 0;  // node batches written and read (slot map reads included)
    uint64_t bytes_out = 0;    // RESP bytes written
    uint64_t bytes_in = 0;     // RESP bytes read (computed from the replies' encoded sizes)
    uint64_t redirects = 0;    // MOVED and ASK answers
    uint64_t reconnects = 0;   // connections reopened after an error dropped them
    uint64_t retries = 0;      // backoff rounds after a transient error (lost node, failover)
  };
  Stats stats() const { return stats_; }

 private:
  struct Node;
  struct Pending;
  explicit Cluster(ClusterOptions options);

  // The node's connection, opened if needed; IOError/Unavailable naming the node.
  Result<Connection*> Open(const std::string& addr);
  void Drop(const std::string& addr, const std::string& why);
  // Sends argvs to addr in one pipeline; `replies` gets the replies read (all of them on
  // success, a prefix on a connection error, which drops the connection).
  Status Exchange(const std::string& addr, const std::vector<const Argv*>& argvs,
                  std::vector<Reply>* replies);
  Status ReadSlotsFrom(const std::string& addr);
  std::string Route(const Request& r);
  int Intern(const std::string& addr);

  ClusterOptions options_;
  std::map<std::string, std::unique_ptr<Node>> nodes_;  // by "host:port", every node seen
  std::vector<std::string> addrs_;                      // interned "host:port"
  std::unordered_map<std::string, int> addr_index_;
  std::vector<int> slot_owner_;        // kSlots entries: index into addrs_, -1 unknown
  std::vector<std::string> masters_;   // ordered by first slot
  std::vector<std::string> replicas_;  // from the last CLUSTER SLOTS
  std::unordered_map<std::string, std::string> scripts_;  // sha1 -> body
  size_t next_any_ = 0;
  Stats stats_;
};

}  // namespace harvest::redis
