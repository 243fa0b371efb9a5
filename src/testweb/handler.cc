// Handle(): one parsed request to one response, independent of sockets (unit-testable).
#include <strings.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "base/ascii.h"
#include "testweb/big_site.h"
#include "testweb/internal.h"
#include "testweb/session_trap.h"

namespace harvest::testweb {

namespace {

// Last-Modified of every static page; changing pages move one day per epoch.
constexpr time_t kBaseModified = 1793491200;  // 2026-11-01T00:00:00Z
constexpr time_t kSecondsPerDay = 86400;

// Content hash for ETags: eight bytes per step (a byte-wise FNV costs ~15 us per page).
uint64_t ContentHash(std::string_view s) {
  uint64_t h = s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    h = (h ^ word) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  for (; i < s.size(); ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 0x100000001b3ull;
  return Mix(h);
}

std::string HttpDate(time_t t) {
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[64];
  strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

// Parses an IMF-fixdate; -1 when malformed.
time_t ParseHttpDate(const std::string& s) {
  struct tm tm {};
  const char* end = strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr) return -1;
  return timegm(&tm);
}

bool AcceptsGzip(const std::string& accept_encoding) {
  const std::string lower = ToLowerAscii(accept_encoding);
  size_t pos = lower.find("gzip");
  if (pos == std::string::npos) return false;
  std::string rest = lower.substr(pos + 4, 8);
  return rest.find("q=0") == std::string::npos || rest.find("q=0.") != std::string::npos;
}

Response Plain(int status, std::string body, const char* type = "text/plain; charset=utf-8") {
  Response r;
  r.status = status;
  r.headers.push_back({"Content-Type", type});
  r.body = std::make_shared<const std::string>(std::move(body));
  return r;
}

Response FromRendered(Rendered rendered) {
  Response r = Plain(200, std::move(rendered.body), "");
  r.headers[0].second = rendered.content_type;
  for (auto& h : rendered.headers) r.headers.push_back(std::move(h));
  r.changes_with_epoch = rendered.changes_with_epoch;
  return r;
}

Response NotFound() {
  return Plain(404,
               "<!DOCTYPE html>\n<html><head><title>Not found</title></head><body>"
               "<h1>404 Not Found</h1></body></html>\n",
               "text/html; charset=utf-8");
}

Response Robots(const Site& site, int host, const std::string& path) {
  const HostInfo& h = site.hosts()[host];
  switch (h.robots) {
    case RobotsKind::k5xx:
      return Plain(503, "robots.txt temporarily unavailable\n");
    case RobotsKind::k404:
      return NotFound();
    case RobotsKind::kRedirect:
      if (path == "/robots.txt") {
        Response r = Plain(301, "moved\n");
        r.headers.push_back({"Location", "http://" + h.name + "/robots-real.txt"});
        return r;
      }
      return Plain(200, site.RobotsTxt(host));
    case RobotsKind::kBig: {
      static const auto big = std::make_shared<const std::string>(BigRobotsTxt());
      Response r = Plain(200, "");
      r.body = big;
      return r;
    }
    case RobotsKind::kNormal:
      break;
  }
  return Plain(200, site.RobotsTxt(host));
}

Response Control(const Request& req, const std::string& path, EpochControl* control) {
  if (path != "/__testweb/epoch" || control == nullptr) return NotFound();
  if (req.method == "POST") {
    int64_t next = control->epoch() + 1;
    if (!req.body.empty()) {
      char* end = nullptr;
      long long v = std::strtoll(req.body.c_str(), &end, 10);
      if (end == req.body.c_str()) return Plain(400, "body must be an integer epoch\n");
      next = v;
    }
    control->SetEpoch(next);
  } else if (req.method != "GET" && req.method != "HEAD") {
    Response r = Plain(405, "GET or POST\n");
    r.headers.push_back({"Allow", "GET, HEAD, POST"});
    return r;
  }
  return Plain(200, std::to_string(control->epoch()) + "\n");
}

// big.test's pages and sitemaps (Route200 sends its robots.txt).
Response BigSite200(const Site& site, int host, const std::string& path, const std::string& query) {
  const BigSite big(site, host);
  const BigPage page = big.Find(path);
  if (page.type == BigPageType::kSitemapIndex || page.type == BigPageType::kSitemap) {
    const bool gzip = path.ends_with(".gz");
    return Plain(200, big.RenderSitemap(page), gzip ? "application/gzip" : "application/xml");
  }
  return FromRendered(big.Render(page, query));
}

Response Route200(const Site& site, const Request& req, const Route& route, const std::string& path,
                  const std::string& query, int64_t epoch) {
  const HostInfo& h = site.hosts()[route.host];
  switch (route.kind) {
    case RequestKind::kSitemap:
    case RequestKind::kPage:
      if (h.articles > 0) return BigSite200(site, route.host, path, query);
      break;
    case RequestKind::kTrap:
      if (h.trap) {
        const SessionTrap trap(site, route.host);
        return FromRendered(trap.Render(trap.Find(path).value_or(0)));
      }
      break;
    default:
      break;
  }
  switch (route.kind) {
    case RequestKind::kRobots:
      return Robots(site, route.host, path);
    case RequestKind::kSitemap: {
      int part = path == "/sitemap-1.xml" ? 1 : path == "/sitemap-2.xml.gz" ? 2 : 0;
      return Plain(200, RenderSitemap(site, route.host, part),
                   part == 2 ? "application/gzip" : "application/xml");
    }
    case RequestKind::kEdge:
      return HandleEdge(site, req, path, epoch);
    case RequestKind::kPage:
    case RequestKind::kTrap: {
      if (h.name == kHostileHost && path == "/") return FromRendered(RenderHostileRoot(site));
      PageRef page = FindPage(site, route.host, path, query);
      if (page.type == PageType::kTree) {
        return FromRendered(RenderTreePage(site, route.host, page.index, epoch));
      }
      if (page.type == PageType::kCalendar) {
        return FromRendered(RenderCalendar(site, route.host, page.index / 100, page.index % 100));
      }
      return FromRendered(RenderFamilyPage(site, route.host, page));
    }
    case RequestKind::kUnknown:
      break;
  }
  return NotFound();
}

// ETag, Last-Modified, 304 and gzip for a 200 response with an in-memory body.
void Finish(const Request& req, int64_t epoch, Response* r) {
  if (r->status != 200 || r->trickle || !r->body || r->body->size() > (1 << 20)) return;
  bool encoded = false, html = false;
  for (const auto& [k, v] : r->headers) {
    encoded = encoded || k == "Content-Encoding";
    html = html || (k == "Content-Type" && v.rfind("text/html", 0) == 0);
  }
  if (encoded) return;
  time_t modified = kBaseModified + (r->changes_with_epoch ? epoch * kSecondsPerDay : 0);
  char etag[40];
  std::snprintf(etag, sizeof(etag), "\"%016llx\"",
                static_cast<unsigned long long>(ContentHash(*r->body)));
  // Only HTML is compressed on request: robots.txt, sitemaps (and the .xml.gz file) stay as
  // they are so that a sitemap is never gzip inside gzip.
  bool gzip = html && AcceptsGzip(req.accept_encoding);
  std::string tag = gzip ? std::string(etag, std::strlen(etag) - 1) + "-gz\"" : etag;
  r->headers.push_back({"ETag", tag});
  r->headers.push_back({"Last-Modified", HttpDate(modified)});
  r->headers.push_back({"Vary", "Accept-Encoding"});
  bool not_modified = false;
  if (!req.if_none_match.empty()) {
    not_modified = req.if_none_match.find(tag) != std::string::npos || req.if_none_match == "*";
  } else if (!req.if_modified_since.empty()) {
    time_t since = ParseHttpDate(req.if_modified_since);
    not_modified = since >= 0 && modified <= since;
  }
  if (not_modified) {
    r->status = 304;
    r->body.reset();
    return;
  }
  if (gzip) {
    r->body = std::make_shared<const std::string>(Gzip(*r->body, 1));
    r->headers.push_back({"Content-Encoding", "gzip"});
  }
}

}  // namespace

Response Handle(const Site& site, const Request& req, EpochControl* control) {
  Route route = site.Resolve(req.host, req.target);
  std::string path, query;
  SplitTarget(req.target, &path, &query);
  const int64_t epoch = control ? control->epoch() : 0;
  Response r;
  if (req.host.empty()) {
    r = Plain(400, "missing Host header\n");
  } else if (route.host < 0) {
    r = Plain(404, "unknown host\n");
  } else if (site.hosts()[route.host].name == kControlHost) {
    r = Control(req, path, control);
  } else if (req.method != "GET" && req.method != "HEAD") {
    r = Plain(405, "GET or HEAD only\n");
    r.headers.push_back({"Allow", "GET, HEAD"});
  } else {
    r = Route200(site, req, route, path, query, epoch);
    Finish(req, epoch, &r);
  }
  r.route = std::move(route);
  r.conditional = !req.if_none_match.empty() || !req.if_modified_since.empty();
  return r;
}

}  // namespace harvest::testweb
