// AddressGate: resolve file, --connect-to routes and the crawl's own resolver.
#include "crawl/address_gate.h"

#include <charconv>
#include <optional>

#include "base/host_key.h"

namespace harvest::crawl {
namespace {

// One field of a connect_to entry: a bracketed IPv6 literal or up to the next ':'.
std::string_view TakeField(std::string_view* rest) {
  std::string_view s = *rest;
  size_t end;
  if (!s.empty() && s.front() == '[') {
    const size_t close = s.find(']');
    end = close == std::string_view::npos ? s.size() : close + 1;
    end = s.find(':', end);
  } else {
    end = s.find(':');
  }
  if (end == std::string_view::npos) {
    *rest = {};
    return s;
  }
  *rest = s.substr(end + 1);
  return s.substr(0, end);
}

int ParsePort(std::string_view s) {
  int port = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), port);
  return ec == std::errc() && p == s.data() + s.size() ? port : 0;
}

}  // namespace

std::pair<std::string, int> HostNameAndPort(std::string_view key) {
  const HostKeyParts parts = SplitHostKey(key);
  int port = 0;
  if (parts.scheme == "http") {
    port = 80;
  } else if (parts.scheme == "https") {
    port = 443;
  } else {
    return {"", 0};
  }
  if (parts.name.starts_with('[') && !parts.name.ends_with(']')) return {"", 0};
  if (!parts.port.empty()) port = ParsePort(parts.port);
  return {std::string(Unbracket(parts.name)), port};
}

AddressGate::AddressGate(fetch::PinTable pins, std::vector<std::string> connect_to,
                         fetch::Resolver* resolver)
    : pins_(std::move(pins)), resolver_(resolver) {
  for (const std::string& entry : connect_to) {
    std::string_view rest = entry;
    Route r;
    r.host = std::string(Unbracket(TakeField(&rest)));
    r.port = ParsePort(TakeField(&rest));
    r.address = std::string(Unbracket(TakeField(&rest)));
    routes_.push_back(std::move(r));
  }
}

std::optional<std::string> AddressGate::RoutedAddress(std::string_view name, int port) const {
  for (const Route& r : routes_) {
    if (!r.host.empty() && r.host != name) continue;
    if (r.port != 0 && r.port != port) continue;
    return r.address;
  }
  return std::nullopt;
}

AddressGate::Answer AddressGate::Lookup(std::string_view name, int port) {
  Answer a;
  if (const fetch::Pin* pin = pins_.Find(name)) {
    a.address = pin->address;
    a.port = pin->port;
    a.pinned = true;
    return a;
  }
  if (std::optional<std::string> routed = RoutedAddress(name, port)) {
    a.address = std::move(*routed);  // curl routes it; this is the IP for per-IP limits
    return a;
  }
  if (resolver_ == nullptr) return a;  // the fetcher resolves; the IP comes with the response
  if (std::optional<fetch::Resolution> r = resolver_->Cached(name)) {
    if (r->ok) {
      a.address = std::move(r->address);
      a.pinned = true;
    } else {
      a.kind = Kind::kFailed;
      a.error = std::move(r->error);
    }
    return a;
  }
  resolver_->Resolve(name);
  a.kind = Kind::kPending;
  return a;
}

std::vector<fetch::Resolution> AddressGate::TakeResolved() {
  if (resolver_ == nullptr) return {};
  return resolver_->TakeCompleted();
}

}  // namespace harvest::crawl
