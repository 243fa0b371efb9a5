#include "robots/robots.h"

#include "base/ascii.h"
#include "robots/rules_impl.h"

namespace harvest::robots {
namespace {

const std::shared_ptr<const RobotsRules::Impl>& EmptyImpl() {
  static const std::shared_ptr<const RobotsRules::Impl> empty =
      std::make_shared<RobotsRules::Impl>();
  return empty;
}

std::shared_ptr<RobotsRules::Impl> DisallowAllImpl(std::string reason, bool temporary) {
  auto impl = std::make_shared<RobotsRules::Impl>();
  impl->rules.push_back(CompiledRule{PathPattern("/"), false, 0, "/", std::move(reason)});
  impl->global.emplace().order.push_back(0);
  impl->temporary = temporary;
  return impl;
}

std::string Display(const CompiledRule& rule) {
  std::string text = rule.allow ? "Allow: " : "Disallow: ";
  text += rule.value;
  if (!rule.reason.empty()) text += " (" + rule.reason + ")";
  return text;
}

// The path+query to match: fragment dropped, empty means "/".
std::string_view MatchTarget(std::string_view path_and_query) {
  if (size_t hash = path_and_query.find('#'); hash != std::string_view::npos) {
    path_and_query = path_and_query.substr(0, hash);
  }
  return path_and_query.empty() ? std::string_view("/") : path_and_query;
}

bool IsRobotsTxt(std::string_view target) {
  return target.substr(0, target.find('?')) == "/robots.txt";
}

}  // namespace

const AgentRules* RobotsRules::Impl::Resolve(std::string_view product_token) const {
  if (!agents.empty()) {
    std::string name = ExtractAgentName(product_token);
    if (!name.empty()) {
      if (auto it = agents.find(name); it != agents.end()) return &it->second;
    }
  }
  return global ? &*global : nullptr;
}

const CompiledRule* RobotsRules::Impl::Decide(const AgentRules& agent,
                                              std::string_view path) const {
  std::string normalized;
  if (NormalizePath(path, &normalized)) path = normalized;
  const ByteMask mask = ByteMask::Of(path);
  for (uint32_t index : agent.order) {
    const CompiledRule& rule = rules[index];
    if (rule.pattern.Matches(path, mask)) return &rule;
  }
  return nullptr;
}

RobotsRules::RobotsRules() : impl_(EmptyImpl()) {}
RobotsRules::RobotsRules(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

RobotsRules RobotsRules::Parse(std::string_view body) { return RobotsRules(CompileRobots(body)); }
RobotsRules RobotsRules::AllowAll() { return RobotsRules(); }
RobotsRules RobotsRules::DisallowAll() {
  return RobotsRules(DisallowAllImpl("implicit: disallow all", false));
}

MatchResult RobotsRules::Check(std::string_view product_token,
                               std::string_view path_and_query) const {
  std::string_view target = MatchTarget(path_and_query);
  if (IsRobotsTxt(target)) {
    return MatchResult{true, 0, "Allow: /robots.txt (implicit, RFC 9309 section 2.2.2)"};
  }
  const CompiledRule* rule = nullptr;
  if (const AgentRules* agent = impl_->Resolve(product_token)) rule = impl_->Decide(*agent, target);
  if (rule == nullptr) return MatchResult{true, 0, impl_->no_match_note};
  return MatchResult{rule->allow, rule->line, Display(*rule)};
}

bool RobotsRules::IsAllowed(std::string_view product_token, std::string_view path_and_query) const {
  std::string_view target = MatchTarget(path_and_query);
  if (IsRobotsTxt(target)) return true;
  const AgentRules* agent = impl_->Resolve(product_token);
  if (agent == nullptr) return true;
  const CompiledRule* rule = impl_->Decide(*agent, target);
  return rule == nullptr || rule->allow;
}

std::optional<std::chrono::milliseconds> RobotsRules::CrawlDelay(
    std::string_view product_token) const {
  const AgentRules* agent = impl_->Resolve(product_token);
  return agent ? agent->crawl_delay : std::nullopt;
}

const std::vector<std::string>& RobotsRules::Sitemaps() const { return impl_->sitemaps; }
bool RobotsRules::temporary() const { return impl_->temporary; }
size_t RobotsRules::rule_count() const { return impl_->rules.size(); }
int RobotsRules::line_count() const { return impl_->lines; }

size_t RobotsRules::memory_bytes() const {
  size_t total = sizeof(*this) + sizeof(Impl) + impl_->no_match_note.capacity();
  for (const CompiledRule& r : impl_->rules) {
    total += r.pattern.memory_bytes() + r.value.capacity() + r.reason.capacity() + sizeof(bool) +
             sizeof(int);
  }
  auto agent_bytes = [](const AgentRules& a) {
    return sizeof(AgentRules) + a.order.capacity() * sizeof(uint32_t);
  };
  for (const auto& [name, agent] : impl_->agents) {
    total += name.capacity() + agent_bytes(agent) + 2 * sizeof(void*);  // node overhead
  }
  total += impl_->agents.bucket_count() * sizeof(void*);
  if (impl_->global) total += agent_bytes(*impl_->global);
  for (const std::string& s : impl_->sitemaps) total += sizeof(std::string) + s.capacity();
  return total;
}

RobotsRules FromFetch(int status, std::string_view body, int redirects_followed) {
  if (redirects_followed > kMaxRedirects || (status >= 300 && status < 400)) {
    // RFC 9309 §2.3.1.2: past five redirects the file MAY be treated as unavailable (4xx).
    auto impl = std::make_shared<RobotsRules::Impl>();
    impl->no_match_note = "(robots.txt unavailable: redirects, allow all)";
    return RobotsRules(std::move(impl));
  }
  if (status >= 200 && status < 300) return RobotsRules::Parse(body);
  if (status >= 400 && status < 500 && status != 429) {
    // RFC 9309 §2.3.1.3: "unavailable" — the crawler may access any resource.
    auto impl = std::make_shared<RobotsRules::Impl>();
    impl->no_match_note = "(robots.txt status " + std::to_string(status) + ": allow all)";
    return RobotsRules(std::move(impl));
  }
  // RFC 9309 §2.3.1.4: "unreachable" (5xx, and by docs/architecture.md §1.2 also 429, network
  // errors and anything unexpected) — assume complete disallow and retry later.
  std::string reason = status == 0
                           ? "robots.txt unreachable: network error, retry later"
                           : "robots.txt status " + std::to_string(status) + ", retry later";
  return RobotsRules(DisallowAllImpl(std::move(reason), /*temporary=*/true));
}

std::string ProductToken(std::string_view user_agent) {
  user_agent = TrimLeadingIf(user_agent, IsHttpOws);
  std::string token;
  for (char c : user_agent) {
    if (c == '/' || c == ' ' || c == '\t' || c == ';' || c == '(') break;
    token.push_back(AsciiLower(c));
  }
  return token;
}

}  // namespace harvest::robots
