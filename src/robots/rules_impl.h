// Private: the compiled form of a robots.txt, shared (immutable) by RobotsRules copies.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "robots/pattern.h"
#include "robots/robots.h"

namespace harvest::robots {

struct CompiledRule {
  PathPattern pattern;
  bool allow = false;
  int line = 0;        // 0 for synthetic rules (DisallowAll)
  std::string value;   // the value as written, for display
  std::string reason;  // for synthetic rules: why the rule exists
};

// The merged rules of every group that applies to one agent, in decision order: longest
// pattern first, Allow before Disallow on equal length, then file order. The first rule
// that matches decides (RFC 9309 §2.2.2).
struct AgentRules {
  std::vector<uint32_t> order;  // indexes into Impl::rules
  std::optional<std::chrono::milliseconds> crawl_delay;
};

struct RobotsRules::Impl {
  std::vector<CompiledRule> rules;
  std::unordered_map<std::string, AgentRules> agents;  // key: lowercased product token
  std::optional<AgentRules> global;                    // the merged `*` groups
  std::vector<std::string> sitemaps;
  std::string no_match_note;  // shown when no rule matched (e.g. "robots.txt status 404")
  bool temporary = false;
  int lines = 0;

  // The rules that apply to product_token, or nullptr when none do.
  const AgentRules* Resolve(std::string_view product_token) const;
  // The deciding rule for a normalised path, or nullptr when no rule matches.
  const CompiledRule* Decide(const AgentRules& agent, std::string_view path) const;
};

// Builds the compiled rules from a body (robots_parse.cc).
std::shared_ptr<RobotsRules::Impl> CompileRobots(std::string_view body);

// Lowercased leading run of [A-Za-z_-] of s (the google/robotstxt product-token rule).
std::string ExtractAgentName(std::string_view s);

}  // namespace harvest::robots
