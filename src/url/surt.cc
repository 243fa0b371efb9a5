// SURT keys (Sort-friendly URI Reordering Transform, as written by CDXJ/pywb) and registrable
// domains through libpsl.
#include <libpsl.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/hash.h"
#include "url/internal.h"

namespace harvest::url {

std::string Surt(const Url& url) {
  std::string out;
  std::string_view scheme = url.scheme();
  bool web = scheme == "http" || scheme == "https";
  if (!web) {
    out.append(scheme);
    out.push_back(':');
  }
  std::string_view host = url.host();
  if (IsIpHost(host)) {
    out.append(host);
  } else {
    // Labels in reverse order, comma-joined; the leftmost "www" label is dropped.
    if (host.size() > 4 && EqualsIgnoreAsciiCase(host.substr(0, 4), "www.")) host.remove_prefix(4);
    bool first = true;
    while (true) {
      size_t dot = host.rfind('.');
      std::string_view label = dot == std::string_view::npos ? host : host.substr(dot + 1);
      if (!first) out.push_back(',');
      first = false;
      for (char c : label) out.push_back(AsciiLower(c));
      if (dot == std::string_view::npos) break;
      host = host.substr(0, dot);
    }
  }
  if (url.port() >= 0) {
    out.push_back(':');
    out.append(std::to_string(url.port()));
  }
  out.push_back(')');
  for (char c : url.path()) out.push_back(AsciiLower(c));
  if (url.has_query()) {
    // Lowercased, then parameters sorted stably by name (as pywb's surt does).
    std::string query;
    for (char c : url.query()) query.push_back(AsciiLower(c));
    std::vector<std::string_view> params;
    std::string_view q = query;
    for (size_t amp; (amp = q.find('&')) != std::string_view::npos; q.remove_prefix(amp + 1)) {
      params.push_back(q.substr(0, amp));
    }
    params.push_back(q);
    auto name = [](std::string_view p) { return p.substr(0, p.find('=')); };
    std::stable_sort(params.begin(), params.end(),
                     [&](std::string_view a, std::string_view b) { return name(a) < name(b); });
    out.push_back('?');
    for (size_t i = 0; i < params.size(); ++i) {
      if (i > 0) out.push_back('&');
      out.append(params[i]);
    }
  }
  return out;
}

namespace {

// The memo of RegistrableDomain: kDomainCacheSize entries per thread, of host names up to
// kDomainCacheMaxHost bytes (~100 KB per thread when full).
constexpr size_t kDomainCacheSize = 1024;
constexpr size_t kDomainCacheMaxHost = 64;
struct DomainCacheEntry {
  std::string host;
  std::string domain;
  bool used = false;
};
thread_local DomainCacheEntry tls_domain_cache[kDomainCacheSize];

std::string RegistrableDomainUncached(const psl_ctx_t* psl, std::string_view host) {
  std::string lower;
  lower.reserve(host.size());
  for (char c : host) lower.push_back(AsciiLower(c));
  while (!lower.empty() && lower.back() == '.') lower.pop_back();
  const char* rd = psl_registrable_domain(psl, lower.c_str());
  return rd != nullptr ? std::string(rd) : "";
}

}  // namespace

std::string RegistrableDomain(std::string_view host) {
  if (host.empty() || IsIpHost(host)) return "";
  static const psl_ctx_t* const kPsl = [] {
    const psl_ctx_t* ctx = psl_builtin();
    return ctx != nullptr ? ctx : psl_latest(nullptr);
  }();
  if (kPsl == nullptr) return "";
  // A page links to its own host and a few others, again and again: a per-thread
  // direct-mapped memo of recent answers spares most public-suffix lookups (~0.5 us each;
  // docs/benchmarks.md, "Durable frontier at scale"). The list is fixed for the process.
  if (host.size() > kDomainCacheMaxHost) return RegistrableDomainUncached(kPsl, host);
  DomainCacheEntry& e = tls_domain_cache[Fnv1a64(host) % kDomainCacheSize];
  if (!e.used || e.host != host) {
    e.host.assign(host);
    e.domain = RegistrableDomainUncached(kPsl, host);
    e.used = true;
  }
  return e.domain;
}

}  // namespace harvest::url
