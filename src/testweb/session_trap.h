// sessions.test (SiteOptions::trap_host): a session-id trap. Every page links
// kSessionLinksPerPage URLs never linked before — "/s/<12 hex>/<name>?sid=<16 hex>", the ids
// derived from the linking page's own id — so the URL space is endless but deterministic.
// The URLs are short (under 50 bytes), have one query parameter and no repeated path segment:
// a crawler's URL-shape guards (length, parameter count, repeated segments) do not catch
// them, only its per-host budgets (daily quota, backlog) can bound the crawl. robots.txt
// allows everything. Nothing on the host is must_fetch (the manifest marks it "trap": true).
// Layout: docs/testweb.md "sessions.test".
//
// SessionTrap is a view: cheap to make per request, immutable, safe to share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "testweb/internal.h"

namespace harvest::testweb {

inline constexpr std::string_view kSessionTrapHost = "sessions.test";
// New URLs each page links (besides "/").
inline constexpr int kSessionLinksPerPage = 4;

class SessionTrap {
 public:
  // `host` is sessions.test's index in site.hosts(); `site` must outlive the view.
  SessionTrap(const Site& site, int host);

  // The page id a canonical path (no query) names: 0 for "/", the 48-bit id of
  // "/s/<12 lower-case hex>/<name>" when <name> is the one PagePath(id) writes; nullopt
  // for anything else.
  std::optional<uint64_t> Find(std::string_view path) const;
  // "/s/<12 hex>/<name>" of page `id` (id > 0); "/" for 0.
  std::string PagePath(uint64_t id) const;
  // The ids page `id` links: kSessionLinksPerPage of them, derived from (seed, id).
  std::vector<uint64_t> ChildIds(uint64_t id) const;
  // "/" then one "/s/<child>/<name>?sid=<16 hex>" per child id.
  std::vector<Link> LinksOf(uint64_t id) const;
  // robots.txt: allow everything, no Crawl-delay, no sitemap.
  std::string RobotsTxt() const;
  // A small HTML page (~1.5 KB) whose text and links are its id's.
  Rendered Render(uint64_t id) const;

 private:
  const Site& site_;
  const HostInfo& info_;
};

}  // namespace harvest::testweb
