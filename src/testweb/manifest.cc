// The manifest: what a compliant crawler must fetch, computed by BFS over the generated link
// graph (never by crawling the server).
#include <algorithm>
#include <deque>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>
#include <vector>

#include "testweb/big_site.h"
#include "testweb/internal.h"

namespace harvest::testweb {

namespace {

// The crawler under test follows links up to this depth from its seeds.
constexpr int kMaxDepth = 10;

struct Node {
  int host;
  std::string path;  // canonical path of the page
  int depth;
};

std::vector<std::string> NotFetchPrefixes(const HostInfo& h) {
  switch (h.robots) {
    case RobotsKind::k5xx:
      return {"/"};
    case RobotsKind::kRedirect:
      return {"/private/"};
    case RobotsKind::kBig:
      return {"/early/"};
    case RobotsKind::k404:
      return {};
    case RobotsKind::kNormal:
      break;
  }
  if (h.name == kHostileHost) return {"/edge/disallowed/"};
  if (h.articles > 0) return {"/search"};
  if (h.trap) return {};
  switch (h.variant) {
    case 0:
      return {"/private/ (but /private/open/)", "/search", "/tmp/", "*.pdf"};
    case 1:
      return {"/harvest-only/", "*.pdf"};
    case 2:
      return {"/private/ (but /private/open/)", "/search", "/p/*?print=", "*.pdf"};
    default:
      return {};
  }
}

}  // namespace

std::string Site::ManifestJson() const {
  // Hash sets (sorted once at the end): most links point to pages already found, and with
  // hundreds of thousands of hosts an ordered set's string compares dominated the BFS.
  std::vector<std::unordered_set<std::string>> must(hosts_.size());
  std::vector<bool> discovered(hosts_.size(), false);
  std::deque<Node> queue;
  auto discover = [&](int host) {
    if (discovered[host]) return;
    discovered[host] = true;
    must[host].insert(hosts_[host].name + "/robots.txt");
    if (hosts_[host].robots == RobotsKind::kRedirect) {
      must[host].insert(hosts_[host].name + "/robots-real.txt");
    }
  };
  for (size_t i = 0; i < hosts_.size(); ++i) {
    if (!hosts_[i].normal) continue;
    discover(static_cast<int>(i));
    must[i].insert(hosts_[i].name + "/");
    queue.push_back({static_cast<int>(i), "/", 0});
  }
  // big.test: every page by construction (its links put each within depth 10 of its root,
  // checked by big_site_test); nothing of sessions.test.
  for (size_t i = 0; i < hosts_.size(); ++i) {
    if (hosts_[i].articles == 0) continue;
    for (std::string& id : BigSite(*this, static_cast<int>(i)).MustFetch()) {
      must[i].insert(std::move(id));
    }
  }
  const std::vector<EdgeInfo> edges = Edges();
  auto edge_must_fetch = [&](const std::string& path) {
    for (const EdgeInfo& e : edges) {
      if (e.host == kHostileHost && e.path == path) return e.must_fetch;
    }
    return false;
  };
  while (!queue.empty()) {
    Node n = std::move(queue.front());
    queue.pop_front();
    if (n.depth >= kMaxDepth || PageNofollow(n.host, n.path)) continue;
    // A page identity may carry a query (`/p/1?a=1`); the server serves the same page body.
    const std::string page_path = n.path.substr(0, n.path.find('?'));
    for (const Link& l : LinksOf(n.host, page_path)) {
      if (l.nofollow) continue;
      int h = FindHost(l.host);
      if (h < 0) continue;
      discover(h);
      Route r = Resolve(l.host, l.target);
      if (r.disallowed || r.page.empty()) continue;
      if (r.kind == RequestKind::kTrap || r.kind == RequestKind::kUnknown) continue;
      std::string path = r.page.substr(hosts_[h].name.size());
      if (r.kind == RequestKind::kEdge && !edge_must_fetch(path)) continue;
      if (!must[h].insert(r.page).second) continue;  // robots.txt ids never collide with pages
      queue.push_back({h, path, n.depth + 1});
    }
  }
  nlohmann::ordered_json doc;
  doc["seed"] = options_.seed;
  doc["change_percent"] = options_.change_percent;
  doc["near_dup_percent"] = options_.near_dup_percent;
  doc["hosts"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < hosts_.size(); ++i) {
    const HostInfo& h = hosts_[i];
    if (h.name == kControlHost) continue;
    nlohmann::ordered_json j;
    j["host"] = h.name;
    j["crawl_delay_ms"] = h.crawl_delay_ms;
    j["robots"] = RobotsKindName(h.robots);
    std::vector<std::string> sorted(must[i].begin(), must[i].end());
    std::sort(sorted.begin(), sorted.end());
    j["must_fetch"] = std::move(sorted);
    j["must_not_fetch_prefixes"] = NotFetchPrefixes(h);
    // Only pages a compliant crawler fetches: a check "every changing page was seen
    // changed" must not ask for a page robots.txt forbids (robots-5xx.test/p/3).
    std::vector<std::string> changing;
    for (std::string& id : ChangingPages(static_cast<int>(i))) {
      if (must[i].count(id)) changing.push_back(std::move(id));
    }
    j["changing"] = std::move(changing);
    if (h.articles > 0) {
      const BigSite big(*this, static_cast<int>(i));
      j["big_site"] = {{"articles", big.articles()},
                       {"archive_pages", big.archive_pages()},
                       {"sitemaps", big.sitemaps()}};
    }
    if (h.trap) j["trap"] = true;
    doc["hosts"].push_back(std::move(j));
  }
  doc["edge"] = nlohmann::ordered_json::array();
  for (const EdgeInfo& e : edges) {
    doc["edge"].push_back({{"host", e.host},
                           {"path", e.path},
                           {"behaviour", e.behaviour},
                           {"expect", e.expect},
                           {"must_fetch", e.must_fetch}});
  }
  doc["near_duplicates"] = NearDuplicateGroups();
  return doc.dump(1) + "\n";
}

}  // namespace harvest::testweb
