// SURT keys (Sort-friendly URI Reordering Transform, as written by CDXJ/pywb) and registrable
// domains through libpsl.
#include <libpsl.h>

#include <algorithm>
#include <string>
#include <vector>

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
    if (host.size() > 4 && EqualsIgnoreCase(host.substr(0, 4), "www.")) host.remove_prefix(4);
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

std::string RegistrableDomain(std::string_view host) {
  if (host.empty() || IsIpHost(host)) return "";
  static const psl_ctx_t* const kPsl = [] {
    const psl_ctx_t* ctx = psl_builtin();
    return ctx != nullptr ? ctx : psl_latest(nullptr);
  }();
  if (kPsl == nullptr) return "";
  // The links of a page mostly share its host: the last answer of this thread is reused
  // (a public-suffix lookup costs ~0.5 us; docs/benchmarks.md, "Durable frontier at scale").
  thread_local std::string last_host, last_domain;
  if (host == last_host) return last_domain;
  std::string lower;
  lower.reserve(host.size());
  for (char c : host) lower.push_back(AsciiLower(c));
  while (!lower.empty() && lower.back() == '.') lower.pop_back();
  const char* rd = psl_registrable_domain(kPsl, lower.c_str());
  last_host.assign(host);
  last_domain = rd != nullptr ? std::string(rd) : "";
  return last_domain;
}

}  // namespace harvest::url
