// AddressGate: where the crawl connects for each host, decided before the host's first
// request (docs/architecture.md §2 [address]; docs/politeness.md "DNS and per-IP limits").
//
// A host name is reached, in this order of precedence:
//   1. pinned by the resolve file (`--resolve-file`): that address (and port, if given);
//   2. routed by a `--connect-to` entry matching the name (and port): the entry's address,
//      which the fetcher connects to (the own HTTP/1.1 client for a numeric address, libcurl
//      otherwise);
//   3. otherwise resolved by Harvest's own resolver (fetch::Resolver: c-ares, a bounded
//      cache honouring record TTLs within bounds, failures cached briefly), asynchronously:
//      the host waits (held in the frontier, other hosts go on) until the answer arrives.
// The address found is also the host's IP for the frontier's per-IP limits, so it is known
// before the host's first request. Without a resolver (tests on a fake fetcher that inject
// none) names are left to the fetcher and the IP is learned from the first response.
//
// Thread-safety: none; owned by the crawl's I/O thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fetch/fetch.h"
#include "fetch/resolver.h"

namespace harvest::crawl {

class AddressGate {
 public:
  enum class Kind {
    kReady,    // connect to `address` (empty: let the fetcher resolve or route the name)
    kPending,  // a lookup is running: hold the host until TakeResolved() reports its name
    kFailed,   // the name does not resolve (cached failure): `error` says why
  };
  struct Answer {
    Kind kind = Kind::kReady;
    std::string address;  // numeric IP (IPv6 without brackets); "" = unknown
    int port = 0;         // 0 = the URL's port
    bool pinned = false;  // from the resolve file: the request must carry the address
    std::string error;
  };

  // `resolver` may be nullptr (no lookups of our own). Not owned.
  AddressGate(fetch::PinTable pins, std::vector<std::string> connect_to, fetch::Resolver* resolver);

  // Where to connect for `name` (lower-case host name, IPv6 without brackets) on `port`.
  // kPending starts the lookup (one per name however many hosts ask).
  Answer Lookup(std::string_view name, int port);
  // Names whose lookup finished since the last call, with their answers.
  std::vector<fetch::Resolution> TakeResolved();

  bool resolving() const { return resolver_ != nullptr; }
  size_t pins() const { return pins_.size(); }

 private:
  // The CONNECT-TO-HOST of the first connect_to entry matching name:port, if any.
  std::optional<std::string> RoutedAddress(std::string_view name, int port) const;

  struct Route {
    std::string host;  // "" = any
    int port = 0;      // 0 = any
    std::string address;
  };
  fetch::PinTable pins_;
  std::vector<Route> routes_;
  fetch::Resolver* resolver_;
};

// The name and port of a host key "scheme://name[:port]" (default port by scheme); IPv6
// literals lose their brackets. {"", 0} for a key that is not one.
std::pair<std::string, int> HostNameAndPort(std::string_view host_key);

}  // namespace harvest::crawl
