// Site: the host list, the path families of every host, their robots.txt rules and the link
// graph — all pure functions of the seed.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "base/ascii.h"
#include "testweb/big_site.h"
#include "testweb/corpus.h"
#include "testweb/internal.h"
#include "testweb/session_trap.h"

namespace harvest::testweb {

namespace {

// Special hosts after the normal ones, in this order (hostile ones only with hostile=true).
struct SpecialHost {
  const char* name;
  RobotsKind robots;
  int pages;
};
constexpr SpecialHost kHostileHosts[] = {
    {"hostile.test", RobotsKind::kNormal, 1},
    {"robots-5xx.test", RobotsKind::k5xx, kSpecialHostPages},
    {"robots-404.test", RobotsKind::k404, kSpecialHostPages},
    {"robots-redirect.test", RobotsKind::kRedirect, kSpecialHostPages},
    {"robots-big.test", RobotsKind::kBig, kSpecialHostPages},
};
// robots.txt variants of normal hosts; kHostileVariant marks hostile.test.
constexpr int kVariantStar = 0;          // one `*` group with Allow/Disallow/wildcards
constexpr int kVariantHarvestGroup = 1;  // a `harvest` group that replaces `*` for us
constexpr int kVariantWildcards = 2;     // /private/*, /p/*?print=
constexpr int kVariantAllowAll = 3;      // empty Disallow
constexpr int kHostileVariant = 10;
constexpr int kSpecialVariant = 11;
constexpr int kBigSiteVariant = 12;      // big.test: Disallow: /search
constexpr int kSessionTrapVariant = 13;  // sessions.test: allow all

std::string TreePath(int index) { return index == 0 ? "/" : "/p/" + std::to_string(index); }

// Parses a non-negative decimal without sign or leading '+'; -1 when not a number.
long ParseIndex(std::string_view s) {
  if (s.empty() || s.size() > 9) return -1;
  if (s.size() > 1 && s[0] == '0') return -1;  // one spelling per page
  long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

// Family pages: "<prefix><N><suffix>" with N < kFamilySize.
struct Family {
  const char* prefix;
  const char* suffix;
};
constexpr Family kFamilies[] = {
    {"/private/open/", ".html"}, {"/private/", ".html"}, {"/files/doc-", ".pdf"},
    {"/harvest-only/", ".html"}, {"/tmp/", ".html"},     {"/early/", ".html"},
    {"/late/", ".html"},
};

}  // namespace

const char* RobotsKindName(RobotsKind kind) {
  switch (kind) {
    case RobotsKind::kNormal:
      return "normal";
    case RobotsKind::k5xx:
      return "5xx";
    case RobotsKind::k404:
      return "404";
    case RobotsKind::kRedirect:
      return "redirect";
    case RobotsKind::kBig:
      return "big";
  }
  return "normal";
}

const char* RequestKindName(RequestKind kind) {
  switch (kind) {
    case RequestKind::kPage:
      return "page";
    case RequestKind::kRobots:
      return "robots";
    case RequestKind::kSitemap:
      return "sitemap";
    case RequestKind::kTrap:
      return "trap";
    case RequestKind::kEdge:
      return "edge";
    case RequestKind::kUnknown:
      return "unknown";
  }
  return "unknown";
}

Site::Site(SiteOptions options) : options_(options) {
  options_.hosts = std::clamp(options_.hosts, 1, kMaxHosts);
  options_.pages = std::max(options_.pages, 1);
  options_.links = std::max(options_.links, 0);
  options_.cross_host_share = std::clamp(options_.cross_host_share, 0.0, 1.0);
  options_.change_percent = std::clamp(options_.change_percent, 0, 100);
  // At most half the candidates are copies, so that originals to copy from stay plentiful.
  options_.near_dup_percent = std::clamp(options_.near_dup_percent, 0, 50);
  options_.big_site = std::clamp(options_.big_site, 0, kMaxBigSiteArticles);
  if (options_.corpus && options_.corpus->size() == 0) options_.corpus.reset();
  // Real pages are not labelled near-copies of each other (docs/testweb.md "Real pages").
  if (options_.corpus) options_.near_dup_percent = 0;
  // Smallest fanout whose depth-5 tree holds every page (so each page is <= 5 hops deep).
  for (tree_fanout_ = 2;; ++tree_fanout_) {
    long total = 0, level = 1;
    for (int d = 0; d <= 5; ++d, level *= tree_fanout_) total += level;
    if (total >= options_.pages) break;
  }
  const uint64_t seed = options_.seed;
  for (int i = 0; i < options_.hosts; ++i) {
    HostInfo h;
    char name[32];
    std::snprintf(name, sizeof(name), "h%04d.test", i);
    h.name = name;
    h.pages = options_.pages;
    uint64_t r = Mix(seed, i, 1) % 10;
    h.variant = r < 6   ? kVariantStar
                : r < 8 ? kVariantHarvestGroup
                : r < 9 ? kVariantWildcards
                        : kVariantAllowAll;
    if (static_cast<int>(Mix(seed, i, 2) % 100) < options_.crawl_delay_percent) {
      h.crawl_delay_ms = Mix(seed, i, 5) % 2 == 0 ? 500 : 1000;
    }
    h.calendar = Mix(seed, i, 3) % 20 == 0;
    h.sitemap_index = Mix(seed, i, 4) % 5 == 0;
    hosts_.push_back(std::move(h));
  }
  if (options_.hostile) {
    for (const SpecialHost& s : kHostileHosts) {
      HostInfo h;
      h.name = s.name;
      h.normal = false;
      h.robots = s.robots;
      h.pages = s.pages;
      h.variant = h.name == kHostileHost ? kHostileVariant : kSpecialVariant;
      h.calendar = h.name == kHostileHost;
      hosts_.push_back(std::move(h));
    }
  }
  if (options_.big_site > 0) {
    HostInfo h;
    h.name = std::string(kBigSiteHost);
    h.normal = false;
    h.variant = kBigSiteVariant;
    h.articles = options_.big_site;
    hosts_.push_back(std::move(h));
  }
  if (options_.trap_host) {
    HostInfo h;
    h.name = std::string(kSessionTrapHost);
    h.normal = false;
    h.variant = kSessionTrapVariant;
    h.trap = true;
    hosts_.push_back(std::move(h));
  }
  HostInfo control;
  control.name = std::string(kControlHost);
  control.normal = false;
  control.variant = kSpecialVariant;
  hosts_.push_back(std::move(control));
}

int Site::FindHost(std::string_view header) const {
  if (header.size() > 255) return -1;
  size_t colon = header.rfind(':');
  if (colon != std::string_view::npos) header = header.substr(0, colon);
  if (!header.empty() && header.back() == '.') header.remove_suffix(1);  // FQDN form
  std::string name = ToLowerAscii(header);
  // "h" + at least 4 digits (h0000 ... h9999, then h10000 ... h999999) + ".test".
  // (hostile.test has the same shape, but not digits.)
  if (name.size() >= 10 && name.size() <= 12 && name[0] == 'h' && name.ends_with(".test")) {
    long index = 0;
    bool digits = true;
    for (size_t i = 1; digits && i + 5 < name.size(); ++i) {
      digits = name[i] >= '0' && name[i] <= '9';
      index = index * 10 + (name[i] - '0');
    }
    // Only the canonical spelling: "h010000.test" is not h10000.test.
    if (digits) {
      return index < options_.hosts && hosts_[index].name == name ? static_cast<int>(index) : -1;
    }
  }
  for (size_t i = options_.hosts; i < hosts_.size(); ++i) {
    if (hosts_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

void SplitTarget(std::string_view target, std::string* path, std::string* query) {
  size_t hash = target.find('#');
  if (hash != std::string_view::npos) target = target.substr(0, hash);
  size_t q = target.find('?');
  std::string_view p = target.substr(0, q);
  *query = q == std::string_view::npos ? "" : std::string(target.substr(q + 1));
  // Drop path parameters (";jsessionid=...") of every segment: same page identity.
  path->clear();
  size_t i = 0;
  while (i < p.size()) {
    size_t semi = p.find(';', i);
    if (semi == std::string_view::npos) {
      path->append(p.substr(i));
      break;
    }
    path->append(p.substr(i, semi - i));
    size_t slash = p.find('/', semi);
    if (slash == std::string_view::npos) break;
    i = slash;
  }
  if (path->empty()) *path = "/";
}

// The query part of a page identity: the parameters a crawler cannot know to be
// meaningless, sorted. Tracking and session-id parameters (which the pages add to links and
// the server ignores) are left out, so `?b=2&a=1`, `?a=1&b=2&utm_source=x` and `?a=1&b=2`
// are one page while `/p/1` and `/p/1?a=1&b=2` are two URLs — and two pages to fetch.
// Crawl-delay in seconds as robots.txt writes it: "1", or "0.5" (fractional values are
// allowed by the de-facto standard and Harvest must honour them).
std::string CrawlDelayText(int ms) {
  std::string text = std::to_string(ms / 1000);
  if (ms % 1000 != 0) {
    char frac[8];
    std::snprintf(frac, sizeof frac, "%03d", ms % 1000);
    std::string f(frac);
    while (!f.empty() && f.back() == '0') f.pop_back();
    text += "." + f;
  }
  return text;
}

std::string IdentityQuery(std::string_view query) {
  std::vector<std::string> kept;
  size_t i = 0;
  while (i <= query.size() && !query.empty()) {
    size_t amp = query.find('&', i);
    if (amp == std::string_view::npos) amp = query.size();
    std::string param(query.substr(i, amp - i));
    i = amp + 1;
    if (param.empty()) {
      if (amp >= query.size()) break;
      continue;
    }
    std::string name = param.substr(0, param.find('='));
    LowerAsciiInPlace(name);
    bool ignorable = name.starts_with("utm_") || name == "gclid" || name == "fbclid" ||
                     name == "msclkid" || name == "sid" || name == "jsessionid" ||
                     name == "phpsessid" || name == "sessionid";
    if (!ignorable) kept.push_back(std::move(param));
    if (amp >= query.size()) break;
  }
  if (kept.empty()) return "";
  std::stable_sort(kept.begin(), kept.end(), [](const std::string& a, const std::string& b) {
    return a.substr(0, a.find('=')) < b.substr(0, b.find('='));
  });
  std::string out = "?";
  for (size_t k = 0; k < kept.size(); ++k) {
    if (k > 0) out += '&';
    out += kept[k];
  }
  return out;
}

PageRef FindPage(const Site& site, int host, std::string_view path, std::string_view query) {
  (void)query;
  PageRef ref;
  if (host < 0) return ref;
  const HostInfo& h = site.hosts()[host];
  if (h.pages == 0) return ref;
  if (path == "/") return {PageType::kTree, 0, "/"};
  if (path.starts_with("/p/") && h.name != kHostileHost) {
    long n = ParseIndex(path.substr(3));
    if (n >= 1 && n < h.pages) return {PageType::kTree, static_cast<int>(n), std::string(path)};
    return ref;
  }
  if (path == "/search" && h.normal) return {PageType::kSearch, 0, "/search"};
  if (path.starts_with("/calendar/") && h.calendar) {
    std::string_view rest = path.substr(10);
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos) return ref;
    long year = ParseIndex(rest.substr(0, slash));
    long month = ParseIndex(rest.substr(slash + 1));
    if (year >= 1 && year <= 9999 && month >= 1 && month <= 12) {
      return {PageType::kCalendar, static_cast<int>(year * 100 + month), std::string(path)};
    }
    return ref;
  }
  if (h.name == kHostileHost) return ref;
  for (const Family& f : kFamilies) {
    if (!path.starts_with(f.prefix) || !path.ends_with(f.suffix)) continue;
    std::string_view mid = path.substr(std::strlen(f.prefix),
                                       path.size() - std::strlen(f.prefix) - std::strlen(f.suffix));
    long n = ParseIndex(mid);
    if (n < 0 || n >= kFamilySize) continue;
    const std::string_view prefix = f.prefix;
    bool early_late = prefix.starts_with("/early/") || prefix.starts_with("/late/");
    if (early_late != (h.robots == RobotsKind::kBig)) continue;
    return {PageType::kFamily, static_cast<int>(n), std::string(path)};
  }
  return ref;
}

bool Site::DisallowedForHarvest(int host, std::string_view target) const {
  if (host < 0) return false;
  size_t hash = target.find('#');
  if (hash != std::string_view::npos) target = target.substr(0, hash);
  std::string_view path = target.substr(0, target.find('?'));
  if (path == "/robots.txt") return false;
  const HostInfo& h = hosts_[host];
  switch (h.robots) {
    case RobotsKind::k5xx:
      return true;  // unreachable robots.txt: disallow everything
    case RobotsKind::k404:
      return false;
    case RobotsKind::kRedirect:
      return target.starts_with("/private/");
    case RobotsKind::kBig:
      return target.starts_with("/early/");  // "/late/" is past 500 KiB
    case RobotsKind::kNormal:
      break;
  }
  // Each branch mirrors the rules RobotsTxt() writes for the group that applies to harvest;
  // where an Allow is the longest matching rule it is tested first.
  switch (h.variant) {
    case kVariantStar:
      if (target.starts_with("/private/open/")) return false;
      return target.starts_with("/private/") || target.ends_with(".pdf") ||
             target.starts_with("/search") || target.starts_with("/tmp/");
    case kVariantHarvestGroup:
      return target.starts_with("/harvest-only/") || target.ends_with(".pdf");
    case kVariantWildcards:
      if (target.starts_with("/private/open/")) return false;
      return target.starts_with("/private/") || target.ends_with(".pdf") ||
             (target.starts_with("/p/") && target.find("?print=", 3) != std::string_view::npos) ||
             target.starts_with("/search");
    case kHostileVariant:
      return target.starts_with("/edge/disallowed/");
    case kBigSiteVariant:
      return target.starts_with("/search");
    default:
      return false;
  }
}

std::string Site::RobotsTxt(int host) const {
  const HostInfo& h = hosts_[host];
  if (h.articles > 0) return BigSite(*this, host).RobotsTxt();
  if (h.trap) return SessionTrap(*this, host).RobotsTxt();
  std::string delay =
      h.crawl_delay_ms ? "Crawl-delay: " + CrawlDelayText(h.crawl_delay_ms) + "\n" : "";
  std::string sitemap = "Sitemap: http://" + h.name + "/sitemap.xml\n";
  if (h.robots == RobotsKind::kRedirect) return "User-agent: *\nDisallow: /private/\n";
  if (h.robots == RobotsKind::kBig) return BigRobotsTxt();
  if (h.variant == kHostileVariant) return "User-agent: *\nDisallow: /edge/disallowed/\n";
  std::string other = "# robots.txt for " + h.name + "\nUser-agent: otherbot\nDisallow: /\n\n";
  switch (h.variant) {
    case kVariantStar:
      return other +
             "User-agent: *\nAllow: /private/open/\nDisallow: /private/\nDisallow: /*.pdf$\n"
             "Disallow: /search\nDisallow: /tmp/\n" +
             delay + "\n" + sitemap;
    case kVariantHarvestGroup: {
      static const char* kSpellings[] = {"harvest", "Harvest", "HARVEST"};
      int index = static_cast<int>(Mix(options_.seed, host, 6) % 3);
      std::string agents = std::string("User-agent: ") + kSpellings[index] + "\n";
      if (Mix(options_.seed, host, 8) % 2 == 0) agents = "User-agent: examplebot\n" + agents;
      return other + "User-agent: *\nDisallow: /private/\nDisallow: /harvest-only/\n\n" + agents +
             "Allow: /\nDisallow: /harvest-only/\nDisallow: /*.pdf$\n" + delay + "\n" + sitemap;
    }
    case kVariantWildcards:
      return "User-agent: *\nDisallow: /private/*\nAllow: /private/open/\nDisallow: /*.pdf$\n"
             "Disallow: /p/*?print=\nDisallow: /search\n" +
             delay + "\n" + sitemap;
    default:
      return other + "User-agent: *\nDisallow:\n" + delay + "\n" + sitemap;
  }
}

std::string BigRobotsTxt() {
  std::string out =
      "# robots-big.test: 600 KB; the rule after the 500 KiB mark must be ignored\n"
      "User-agent: *\nDisallow: /early/\n";
  int n = 0;
  auto filler = [&](size_t until) {
    while (out.size() < until) {
      char line[80];
      std::snprintf(line, sizeof(line),
                    "# filler %07d ..........................................\n", n++);
      out += line;
    }
  };
  filler(kRobotsParseLimit + 16 * 1024);
  out += "Disallow: /late/\n";
  filler(kBigRobotsBytes);
  return out;
}

namespace {

// A link from `from` (a tree path) to tree path `to` on the same host, in one of many
// spellings that all resolve to the same page.
Link SameHostLink(const HostInfo& h, std::string_view from, const std::string& to, Rng& rng) {
  Link l;
  l.host = h.name;
  l.target = to;
  switch (rng.Below(14)) {
    case 0:
      l.href = to;
      break;
    case 1:
      l.href = "http://" + h.name + to;
      break;
    case 2:
      l.href = "http://" + ToUpperAscii(h.name) + to;
      break;
    case 3:
      l.href = "http://" + h.name + ":80" + to;
      break;
    case 4:
      if (from == "/")
        l.href = to == "/" ? "./" : to.substr(1);
      else
        l.href = to == "/" ? "../" : to.substr(3);
      break;
    case 5:
      l.href = "../" + to.substr(1);
      break;
    case 6:
      l.href = to + "#sec-" + std::to_string(rng.Below(9));
      break;
    case 7:
      l.href = l.target = to + "?a=1&b=2";
      break;
    case 8:
      l.href = l.target = to + "?b=2&a=1";
      break;
    case 9:
      l.href = l.target = to + "?utm_source=newsletter&utm_medium=email";
      break;
    case 10:
      l.href = l.target = to + "?gclid=" + Hex(rng.Next(), 12);
      break;
    case 11:
      l.href = l.target = to + "?fbclid=" + Hex(rng.Next(), 16);
      break;
    case 12:
      l.href = l.target = to + ";jsessionid=" + ToUpperAscii(Hex(rng.Next(), 16));
      break;
    default:
      l.href = l.target = to + "?sid=" + Hex(rng.Next(), 10);
      break;
  }
  // "&" must be escaped in HTML attributes; the generator writes hrefs escaped later.
  return l;
}

Link PlainLink(const std::string& host, const std::string& target, bool absolute) {
  Link l;
  l.host = host;
  l.target = target;
  l.href = absolute ? "http://" + host + target : target;
  return l;
}

}  // namespace

std::vector<Link> Site::LinksOf(int host, std::string_view path) const {
  std::vector<Link> links;
  if (host < 0) return links;
  const HostInfo& h = hosts_[host];
  std::string query_unused, canon;
  SplitTarget(path, &canon, &query_unused);
  if (h.articles > 0) {
    const BigSite big(*this, host);
    return big.LinksOf(big.Find(canon));
  }
  if (h.trap) {
    const SessionTrap trap(*this, host);
    const std::optional<uint64_t> id = trap.Find(canon);
    return id ? trap.LinksOf(*id) : links;
  }
  PageRef page = FindPage(*this, host, canon, "");
  if (h.name == kHostileHost && page.type != PageType::kCalendar) return EdgeLinks(*this, path);
  if (page.type == PageType::kFamily || page.type == PageType::kSearch) {
    links.push_back(PlainLink(h.name, "/", false));
    return links;
  }
  if (page.type == PageType::kCalendar) {
    int year = page.index / 100, month = page.index % 100;
    int py = month == 1 ? year - 1 : year, pm = month == 1 ? 12 : month - 1;
    int ny = month == 12 ? year + 1 : year, nm = month == 12 ? 1 : month + 1;
    if (py >= 1) {
      links.push_back(
          PlainLink(h.name, "/calendar/" + std::to_string(py) + "/" + std::to_string(pm), false));
    }
    if (ny <= 9999) {
      links.push_back(
          PlainLink(h.name, "/calendar/" + std::to_string(ny) + "/" + std::to_string(nm), false));
    }
    return links;
  }
  if (page.type != PageType::kTree) return links;
  if (options_.corpus && h.normal) return CorpusLinks(*this, host, page.index, CorpusUrlStyle{});
  const int i = page.index;
  const std::string from = TreePath(i);
  Rng rng(Mix(options_.seed, host, static_cast<uint64_t>(i) * 131 + 7));
  links.push_back(PlainLink(h.name, "/", false));  // nav "Home"
  for (long c = static_cast<long>(i) * tree_fanout_ + 1;
       c <= static_cast<long>(i) * tree_fanout_ + tree_fanout_ && c < h.pages; ++c) {
    links.push_back(SameHostLink(h, from, TreePath(static_cast<int>(c)), rng));
  }
  if (i == 0) {
    const std::string n = std::to_string(rng.Below(kFamilySize));
    if (h.robots == RobotsKind::kBig) {
      links.push_back(PlainLink(h.name, "/early/" + n + ".html", false));
      links.push_back(PlainLink(h.name, "/late/" + n + ".html", false));
    } else {
      links.push_back(PlainLink(h.name, "/private/" + n + ".html", false));
      links.push_back(PlainLink(h.name, "/private/open/" + n + ".html", true));
    }
    if (h.normal) {
      links.push_back(PlainLink(h.name, "/files/doc-" + n + ".pdf", false));
      links.push_back(PlainLink(h.name, "/harvest-only/" + n + ".html", false));
      links.push_back(PlainLink(h.name, "/tmp/" + n + ".html", false));
      links.push_back(PlainLink(h.name, "/search?q=harvest+" + n, false));
      if (h.calendar) links.push_back(PlainLink(h.name, "/calendar/2026/11", false));
    }
    if (host == 0 && options_.hostile) {
      // The hostile hosts only (they follow the normal ones): big.test and sessions.test are
      // seeds of their own.
      for (size_t s = options_.hosts; s < options_.hosts + std::size(kHostileHosts); ++s) {
        links.push_back(PlainLink(hosts_[s].name, "/", true));
      }
    }
  }
  if (!h.normal) return links;
  const int normal_hosts = options_.hosts;
  while (static_cast<int>(links.size()) < options_.links) {
    if (normal_hosts > 1 && rng.Chance(options_.cross_host_share)) {
      int other = static_cast<int>(rng.Below(normal_hosts - 1));
      if (other >= host) ++other;
      const HostInfo& o = hosts_[other];
      std::string to = TreePath(static_cast<int>(rng.Below(o.pages)));
      Link l = PlainLink(o.name, to, true);
      switch (rng.Below(5)) {
        case 0:
          l.href = "http://" + ToUpperAscii(o.name) + to;
          break;
        case 1:
          l.href = "http://" + o.name + ":80" + to;
          break;
        case 2:
          l.href = l.target = to + "?utm_source=partner";
          l.href = "http://" + o.name + l.target;
          break;
        case 3:
          l.href += "#top";
          break;
        default:
          break;
      }
      links.push_back(std::move(l));
      continue;
    }
    uint64_t u = rng.Below(100);
    int target = static_cast<int>(rng.Below(h.pages));
    if (u < 8) {
      static const char* kExtra[] = {"/private/", "/private/open/", "/tmp/", "/harvest-only/"};
      std::string n = std::to_string(rng.Below(kFamilySize));
      links.push_back(u < 2 ? PlainLink(h.name, "/files/doc-" + n + ".pdf", false)
                            : PlainLink(h.name, kExtra[u % 4] + n + ".html", false));
    } else if (u < 14) {
      Link l = SameHostLink(h, from, TreePath(target), rng);
      l.nofollow = true;
      links.push_back(std::move(l));
    } else if (u < 20 && target >= 1) {
      links.push_back(PlainLink(h.name, TreePath(target) + "?print=1", false));
    } else {
      links.push_back(SameHostLink(h, from, TreePath(target), rng));
    }
  }
  return links;
}

bool Site::PageNofollow(int host, std::string_view path) const {
  if (host < 0) return false;
  const HostInfo& h = hosts_[host];
  if (h.name == kHostileHost) return EdgeNofollow(path);
  std::string canon, query;
  SplitTarget(path, &canon, &query);
  PageRef page = FindPage(*this, host, canon, query);
  if (page.type != PageType::kTree || !h.normal) return false;
  if (options_.corpus) return false;  // real pages carry no robots directives (corpus.h)
  // Only leaves: nofollow on an inner node would cut its subtree off the allowed graph.
  if (static_cast<long>(page.index) * tree_fanout_ + 1 < h.pages) return false;
  uint64_t r = Mix(options_.seed, host, static_cast<uint64_t>(page.index) * 131 + 9) % 14;
  return r == 0 || r == 1;  // 0: meta robots nofollow, 1: X-Robots-Tag: nofollow
}

bool LeafNofollowIsHeader(const Site& site, int host, int index) {
  return Mix(site.options().seed, host, static_cast<uint64_t>(index) * 131 + 9) % 14 == 1;
}

std::vector<EdgeInfo> Site::Edges() const {
  return options_.hostile ? EdgeList(*this) : std::vector<EdgeInfo>{};
}

std::vector<std::string> Site::SeedUrls() const {
  std::vector<std::string> out;
  for (const HostInfo& h : hosts_) {
    if (h.normal || h.articles > 0 || h.trap) out.push_back("http://" + h.name + "/");
  }
  return out;
}

Route Site::Resolve(std::string_view host_header, std::string_view target) const {
  Route r;
  r.host = FindHost(host_header);
  if (r.host < 0) return r;
  const HostInfo& h = hosts_[r.host];
  if (h.name == kControlHost) return r;
  std::string path, query;
  SplitTarget(target, &path, &query);
  r.disallowed = DisallowedForHarvest(r.host, target);
  if (path == "/robots.txt" || (path == "/robots-real.txt" && h.robots == RobotsKind::kRedirect)) {
    r.kind = RequestKind::kRobots;
    r.page = h.name + path;
    return r;
  }
  if (h.normal && (path == "/sitemap.xml" || (h.sitemap_index && (path == "/sitemap-1.xml" ||
                                                                  path == "/sitemap-2.xml.gz")))) {
    r.kind = RequestKind::kSitemap;
    r.page = h.name + path;
    return r;
  }
  if (h.articles > 0) {
    const BigPage page = BigSite(*this, r.host).Find(path);
    if (page.type == BigPageType::kNone) return r;
    const bool sitemap =
        page.type == BigPageType::kSitemapIndex || page.type == BigPageType::kSitemap;
    r.kind = sitemap ? RequestKind::kSitemap : RequestKind::kPage;
    r.page = h.name + path + (sitemap ? "" : IdentityQuery(query));
    return r;
  }
  if (h.trap) {
    if (!SessionTrap(*this, r.host).Find(path)) return r;
    r.kind = RequestKind::kTrap;
    r.page = h.name + path + IdentityQuery(query);
    return r;
  }
  if (h.name == kHostileHost && path.starts_with("/edge/")) {
    if (!KnownEdgePath(path)) return r;
    r.kind = RequestKind::kEdge;
    r.page = h.name + path;
    return r;
  }
  PageRef page = FindPage(*this, r.host, path, query);
  switch (page.type) {
    case PageType::kNone:
      return r;
    case PageType::kCalendar:
      r.kind = RequestKind::kTrap;
      break;
    default:
      r.kind = RequestKind::kPage;
      break;
  }
  r.page = h.name + page.canonical + IdentityQuery(query);
  return r;
}

bool Site::PageChanges(int host, int index) const {
  if (host < 0 || index <= 0) return false;
  // The special robots hosts keep the default share whatever the option: their pages exist
  // to test robots.txt handling, not recrawling.
  const int percent = hosts_[host].normal ? options_.change_percent : 10;
  const int rank = ((index % 10 + 7) % 10) * 10 + (index / 10) % 10;
  return rank < percent;
}

namespace {

// Salts of the near-copy choices (any constants distinct from the other Mix() uses).
constexpr uint64_t kNearCopySalt = 0x6e656172;  // "near"
constexpr uint64_t kNearSourceSalt = 0x73726365;
// Tries at picking an original at random before scanning for one.
constexpr int kNearSourceTries = 64;

}  // namespace

std::optional<TreePage> Site::NearCopySource(int host, int index) const {
  if (options_.near_dup_percent == 0 || host < 0 || host >= options_.hosts || index <= 0) {
    return std::nullopt;
  }
  // A copy candidate: a normal host's non-root tree page that does not change (a copy's text
  // is fixed; the changing pages keep their own rule).
  auto candidate = [&](int h, int i) {
    return Mix(options_.seed, h, static_cast<uint64_t>(i) * 131 + kNearCopySalt) % 100 <
           static_cast<uint64_t>(options_.near_dup_percent);
  };
  auto original = [&](int h, int i) { return i >= 1 && !PageChanges(h, i) && !candidate(h, i); };
  if (index >= options_.pages || PageChanges(host, index) || !candidate(host, index)) {
    return std::nullopt;
  }
  // Half the copies copy a page of their own host, half one of another host.
  const int pages = options_.pages;
  for (int t = 0; t < kNearSourceTries; ++t) {
    const uint64_t r = Mix(Mix(options_.seed, host, index), kNearSourceSalt, t);
    int h = host;
    if (options_.hosts > 1 && (r & 1) != 0) {
      h = static_cast<int>((r >> 1) % (options_.hosts - 1));
      if (h >= host) ++h;
    }
    if (pages <= 1) break;
    const int i = 1 + static_cast<int>((r >> 20) % static_cast<uint64_t>(pages - 1));
    if (original(h, i)) return TreePage{h, i};
  }
  // Unlucky or tiny webs: the first original of this host, else none (then the page renders
  // as itself and is in no group).
  for (int i = 1; i < pages; ++i) {
    if (original(host, i)) return TreePage{host, i};
  }
  return std::nullopt;
}

std::vector<std::vector<std::string>> Site::NearDuplicateGroups() const {
  std::vector<std::vector<std::string>> groups;
  if (options_.near_dup_percent == 0) return groups;
  // Copies by their original, ordered by (host, index) of the original.
  std::map<std::pair<int, int>, std::vector<std::string>> by_source;
  for (int h = 0; h < options_.hosts; ++h) {
    for (int i = 1; i < options_.pages; ++i) {
      if (std::optional<TreePage> s = NearCopySource(h, i)) {
        by_source[{s->host, s->index}].push_back(hosts_[h].name + TreePath(i));
      }
    }
  }
  for (auto& [source, copies] : by_source) {
    std::vector<std::string> group{hosts_[source.first].name + TreePath(source.second)};
    group.insert(group.end(), copies.begin(), copies.end());
    groups.push_back(std::move(group));
  }
  return groups;
}

std::vector<std::string> Site::ChangingPages(int host) const {
  std::vector<std::string> out;
  if (host < 0 || host >= static_cast<int>(hosts_.size())) return out;
  const HostInfo& h = hosts_[host];
  if (h.name == kHostileHost) {
    if (options_.hostile) out.push_back(h.name + "/edge/changing");
    return out;
  }
  for (int i = 1; i < h.pages; ++i) {
    if (PageChanges(host, i)) out.push_back(h.name + TreePath(i));
  }
  return out;
}

}  // namespace harvest::testweb
