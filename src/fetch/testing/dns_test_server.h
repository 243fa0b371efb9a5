// DnsTestServer: a tiny UDP DNS server on 127.0.0.1 for the resolver's tests.
//
// Answers A (IPv4 address) or AAAA (IPv6 address) queries for scripted names with a chosen
// TTL (the other type gets an empty NOERROR answer, i.e. NODATA), NXDOMAIN for unscripted or
// SetNxdomain names, nothing at all for SetIgnore names (the client times out), and holds the
// queries of SetHold names until Release(). Counts the queries it sees per name and type.
// One thread; not for production use.
//
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <netinet/in.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"

namespace harvest::fetch::testing {

class DnsTestServer {
 public:
  static constexpr uint16_t kTypeA = 1;
  static constexpr uint16_t kTypeAAAA = 28;

  DnsTestServer() = default;
  ~DnsTestServer() { Stop(); }
  DnsTestServer(const DnsTestServer&) = delete;
  DnsTestServer& operator=(const DnsTestServer&) = delete;

  // Binds 127.0.0.1 at an ephemeral UDP port; false on failure.
  bool Start();
  void Stop();
  int port() const { return port_; }
  // For ResolverOptions::servers.
  std::string servers() const { return "127.0.0.1:" + std::to_string(port_); }

  void SetAnswer(const std::string& name, const std::string& address, uint32_t ttl);
  void SetNxdomain(const std::string& name);
  void SetIgnore(const std::string& name);
  void SetHold(const std::string& name);
  // Answers the held queries of `name` as SetAnswer says (and later ones at once).
  void Release(const std::string& name, const std::string& address, uint32_t ttl);

  // Queries seen for `name` of `type`.
  size_t queries(const std::string& name, uint16_t type = kTypeA) const;
  // Waits until queries(name, type) >= n or `limit` passes; the result of the last check.
  bool WaitForQueries(const std::string& name, size_t n, std::chrono::milliseconds limit,
                      uint16_t type = kTypeA) const;

 private:
  enum class Mode { kAnswer, kNxdomain, kIgnore, kHold };
  struct Rule {
    Mode mode = Mode::kNxdomain;
    std::string address;
    uint32_t ttl = 0;
  };
  struct Held {
    std::string query;
    sockaddr_in peer;
  };
  void Loop();
  void Reply(const std::string& query, const sockaddr_in& peer, const Rule& rule);
  // queries(name, type) >= n.
  bool SeenQueries(const std::string& name, size_t n, uint16_t type) const REQUIRES(mu_);

  int fd_ = -1;
  int stop_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  mutable Mutex mu_;
  mutable CondVar cv_;
  std::map<std::string, Rule> rules_ GUARDED_BY(mu_);
  std::map<std::pair<std::string, uint16_t>, size_t> queries_ GUARDED_BY(mu_);
  std::map<std::string, std::vector<Held>> held_ GUARDED_BY(mu_);
};

}  // namespace harvest::fetch::testing
