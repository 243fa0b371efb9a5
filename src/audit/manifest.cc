// Manifest parsing and the host / identity normalisation shared by the audit's checks.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "audit/audit.h"
#include "base/ascii.h"
#include "base/host_key.h"

namespace harvest::audit {

std::string NormalizeHost(std::string_view host) { return ToLowerAscii(NameOfAuthority(host)); }

std::string NormalizeIdentity(std::string_view identity) {
  size_t slash = identity.find('/');
  if (slash == std::string_view::npos) return NormalizeHost(identity);
  std::string out = NormalizeHost(identity.substr(0, slash));
  out.append(identity.substr(slash));
  return out;
}

namespace {

// Robots-style prefix match with '*' wildcards and an optional final '$' anchor.
bool WildcardPrefix(std::string_view pat, std::string_view s) {
  bool anchored = !pat.empty() && pat.back() == '$';
  if (anchored) pat.remove_suffix(1);
  size_t star = pat.find('*');
  if (star == std::string_view::npos) return anchored ? s == pat : s.starts_with(pat);
  if (!s.starts_with(pat.substr(0, star))) return false;
  std::string_view rest_pat = pat.substr(star + 1);
  if (anchored) {
    std::string anchored_rest(rest_pat);
    anchored_rest += '$';
    for (size_t i = star; i <= s.size(); ++i)
      if (WildcardPrefix(anchored_rest, s.substr(i))) return true;
    return false;
  }
  for (size_t i = star; i <= s.size(); ++i)
    if (WildcardPrefix(rest_pat, s.substr(i))) return true;
  return false;
}

}  // namespace

bool MatchesNotFetchPattern(std::string_view pattern, std::string_view path) {
  std::string_view rule = pattern.substr(0, pattern.find(" ("));
  if (rule.empty()) return false;
  size_t but = pattern.find("(but ");
  if (but != std::string_view::npos) {
    std::string_view except = pattern.substr(but + 5);
    except = except.substr(0, except.find(')'));
    if (!except.empty() && path.starts_with(except)) return false;
  }
  return WildcardPrefix(rule, path);
}

namespace {

Status StringArray(const nlohmann::json& host, const char* key, const std::string& where,
                   std::vector<std::string>* out) {
  auto it = host.find(key);
  if (it == host.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return Status::InvalidArgument(where + "." + key + " is not an array");
  for (size_t i = 0; i < it->size(); ++i) {
    const auto& v = (*it)[i];
    if (!v.is_string())
      return Status::InvalidArgument(where + "." + key + "[" + std::to_string(i) +
                                     "] is not a string");
    out->push_back(v.get<std::string>());
  }
  return Status::Ok();
}

}  // namespace

Result<Manifest> ParseManifest(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("manifest is not a JSON object");
  auto hosts = j.find("hosts");
  if (hosts == j.end() || !hosts->is_array())
    return Status::InvalidArgument("manifest has no \"hosts\" array");
  Manifest m;
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < hosts->size(); ++i) {
    const auto& h = (*hosts)[i];
    std::string where = "manifest hosts[" + std::to_string(i) + "]";
    if (!h.is_object()) return Status::InvalidArgument(where + " is not an object");
    auto name = h.find("host");
    if (name == h.end() || !name->is_string() || name->get<std::string>().empty())
      return Status::InvalidArgument(where + ".host is missing or not a non-empty string");
    ManifestHost parsed;
    parsed.host = NormalizeHost(name->get<std::string>());
    if (auto d = h.find("crawl_delay_ms"); d != h.end() && !d->is_null()) {
      if (!d->is_number() || d->get<double>() < 0)
        return Status::InvalidArgument(where + ".crawl_delay_ms is not a non-negative number");
      parsed.crawl_delay_ms = static_cast<int64_t>(d->get<double>());
    }
    if (auto t = h.find("trap"); t != h.end() && !t->is_null()) {
      if (!t->is_boolean()) return Status::InvalidArgument(where + ".trap is not a boolean");
      parsed.trap = t->get<bool>();
    }
    std::vector<std::string> must_fetch;
    if (Status s = StringArray(h, "must_fetch", where, &must_fetch); !s.ok()) return s;
    if (Status s =
            StringArray(h, "must_not_fetch_prefixes", where, &parsed.must_not_fetch_prefixes);
        !s.ok())
      return s;
    for (auto& id : must_fetch) parsed.must_fetch.push_back(NormalizeIdentity(id));

    auto [it, fresh] = index.emplace(parsed.host, m.hosts.size());
    if (fresh) {
      m.hosts.push_back(std::move(parsed));
      continue;
    }
    // A repeated host: merge conservatively (largest delay, union of lists).
    ManifestHost& into = m.hosts[it->second];
    into.crawl_delay_ms = std::max(into.crawl_delay_ms, parsed.crawl_delay_ms);
    into.trap = into.trap || parsed.trap;
    for (auto& id : parsed.must_fetch) into.must_fetch.push_back(std::move(id));
    for (auto& p : parsed.must_not_fetch_prefixes)
      into.must_not_fetch_prefixes.push_back(std::move(p));
  }
  for (auto& h : m.hosts) {  // drop repeated identities, keeping manifest order
    std::unordered_set<std::string> seen;
    std::erase_if(h.must_fetch, [&](const std::string& id) { return !seen.insert(id).second; });
  }
  return m;
}

}  // namespace harvest::audit
