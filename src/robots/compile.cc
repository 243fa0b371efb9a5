// Turns parsed robots.txt lines into RobotsRules::Impl: groups, merged per agent.
#include <algorithm>
#include <unordered_set>

#include "base/ascii.h"
#include "robots/parser.h"
#include "robots/rules_impl.h"

namespace harvest::robots {
namespace {

bool IsAgentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_';
}

// google/robotstxt: "*" alone, or followed by whitespace, names every crawler.
bool IsGlobalAgent(std::string_view value) {
  return !value.empty() && value[0] == '*' &&
         (value.size() == 1 || value[1] == ' ' || value[1] == '\t');
}

// Crawl-delay in seconds: digits with an optional fraction ("10", "0.5", ".5", "2.");
// anything else (signs, exponents, units, words) is invalid. Milliseconds are truncated.
std::optional<std::chrono::milliseconds> ParseCrawlDelay(std::string_view v) {
  constexpr int64_t kMaxMillis = kMaxCrawlDelay.count();
  int64_t millis = 0;
  bool digits = false;
  size_t i = 0;
  for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
    digits = true;
    millis = std::min<int64_t>(kMaxMillis, millis * 10 + (v[i] - '0') * 1000);
  }
  if (i < v.size() && v[i] == '.') {
    ++i;
    int64_t scale = 100;
    for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
      digits = true;
      millis += (v[i] - '0') * scale;
      scale /= 10;
    }
  }
  if (!digits || i != v.size()) return std::nullopt;
  return std::chrono::milliseconds(std::min<int64_t>(millis, kMaxMillis));
}

struct Group {
  std::vector<std::string> names;  // lowercased product tokens
  bool global = false;
  std::vector<uint32_t> rules;
  std::optional<std::chrono::milliseconds> crawl_delay;
};

class Builder {
 public:
  explicit Builder(RobotsRules::Impl* impl) : impl_(impl) {}

  void OnLine(const RobotsLine& line) {
    switch (line.key) {
      case Key::kUserAgent:
        OnUserAgent(line.value);
        break;
      case Key::kAllow:
      case Key::kDisallow:
        OnRule(line);
        break;
      case Key::kCrawlDelay:
        if (Group* g = Current()) {
          in_rules_ = true;
          if (auto d = ParseCrawlDelay(line.value)) {
            g->crawl_delay = g->crawl_delay ? std::max(*g->crawl_delay, *d) : *d;
          }
        }
        break;
      case Key::kSitemap:
        OnSitemap(line.value);
        break;
      case Key::kUnknown:
        break;
    }
  }

  void Finish() {
    for (const Group& g : groups_) {
      if (g.global) Merge(g, &impl_->global.emplace());
      for (const std::string& name : g.names) Merge(g, &impl_->agents[name]);
    }
    if (impl_->global) Sort(&*impl_->global);
    for (auto& [name, agent] : impl_->agents) Sort(&agent);
  }

 private:
  Group* Current() { return groups_.empty() ? nullptr : &groups_.back(); }

  void OnUserAgent(std::string_view value) {
    // A user-agent line after a rule starts a new group (RFC 9309 §2.1).
    if (groups_.empty() || in_rules_) groups_.emplace_back();
    in_rules_ = false;
    Group& g = groups_.back();
    if (IsGlobalAgent(value)) {
      g.global = true;
    } else if (std::string name = ExtractAgentName(value); !name.empty()) {
      g.names.push_back(std::move(name));
    }
  }

  void OnRule(const RobotsLine& line) {
    Group* g = Current();
    if (g == nullptr) return;  // rules before any user-agent line belong to no group
    in_rules_ = true;
    if (line.value.empty()) return;  // "Disallow:" matches nothing (allow all)
    bool allow = line.key == Key::kAllow;
    AddRule(g, allow, line.number, line.value, NormalizePattern(line.value));
    // google/robotstxt: "Allow: /dir/index.htm[l]" also allows the directory itself.
    size_t slash = line.value.rfind('/');
    if (allow && slash != std::string_view::npos &&
        line.value.substr(slash).starts_with("/index.htm")) {
      AddRule(g, true, line.number, line.value,
              NormalizePattern(std::string(line.value.substr(0, slash + 1)) + "$"));
    }
  }

  void AddRule(Group* g, bool allow, int line, std::string_view value, std::string pattern) {
    impl_->rules.push_back(CompiledRule{PathPattern(pattern), allow, line, std::string(value), {}});
    g->rules.push_back(static_cast<uint32_t>(impl_->rules.size() - 1));
  }

  void OnSitemap(std::string_view value) {
    if (value.empty() || impl_->sitemaps.size() >= kMaxSitemaps) return;
    std::string url(value);
    if (seen_sitemaps_.insert(url).second) impl_->sitemaps.push_back(std::move(url));
  }

  static void Merge(const Group& g, AgentRules* into) {
    into->order.insert(into->order.end(), g.rules.begin(), g.rules.end());
    if (g.crawl_delay) {
      into->crawl_delay =
          into->crawl_delay ? std::max(*into->crawl_delay, *g.crawl_delay) : *g.crawl_delay;
    }
  }

  void Sort(AgentRules* agent) const {
    auto& order = agent->order;
    std::sort(order.begin(), order.end());
    order.erase(std::unique(order.begin(), order.end()), order.end());
    const auto& rules = impl_->rules;
    std::stable_sort(order.begin(), order.end(), [&rules](uint32_t a, uint32_t b) {
      const CompiledRule& x = rules[a];
      const CompiledRule& y = rules[b];
      if (x.pattern.priority() != y.pattern.priority()) {
        return x.pattern.priority() > y.pattern.priority();
      }
      return x.allow && !y.allow;
    });
    order.shrink_to_fit();
  }

  RobotsRules::Impl* impl_;
  std::vector<Group> groups_;
  bool in_rules_ = false;
  std::unordered_set<std::string> seen_sitemaps_;
};

}  // namespace

std::string ExtractAgentName(std::string_view s) {
  std::string name;
  for (char c : s) {
    if (!IsAgentChar(c)) break;
    name.push_back(AsciiLower(c));
  }
  return name;
}

std::shared_ptr<RobotsRules::Impl> CompileRobots(std::string_view body) {
  auto impl = std::make_shared<RobotsRules::Impl>();
  Builder builder(impl.get());
  impl->lines = ParseRobotsLines(body, [&builder](const RobotsLine& l) { builder.OnLine(l); });
  builder.Finish();
  return impl;
}

}  // namespace harvest::robots
