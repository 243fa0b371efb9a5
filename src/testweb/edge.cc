// hostile.test: the documented hostile and edge-case behaviours (docs/testweb.md).
#include <string>

#include "testweb/internal.h"

namespace harvest::testweb {

namespace {

struct EdgeSpec {
  const char* path;
  const char* behaviour;
  const char* expect;
  bool must_fetch;  // a compliant crawler must request it (it is then in must_fetch)
  bool entry;       // linked from hostile.test/ (others are reached from an entry)
};

constexpr EdgeSpec kEdges[] = {
    {"/edge/slow", "slow-3s-before-headers", "fetched-or-timeout", false, true},
    {"/edge/endless", "endless-trickling-body", "timeout", false, true},
    {"/edge/huge", "body-12MiB", "too-large", false, true},
    {"/edge/gzip-bomb", "gzip-bomb-1100MiB", "too-large", false, true},
    {"/edge/redirect/1", "redirect-chain-3-hops", "redirect", false, true},
    {"/edge/redirect/2", "redirect-chain-hop", "redirect", false, false},
    {"/edge/redirect/3", "redirect-chain-hop", "redirect", false, false},
    {"/edge/redirect/end", "redirect-chain-end", "fetched", false, false},
    {"/edge/loop-a", "redirect-loop", "redirect-loop", false, true},
    {"/edge/loop-b", "redirect-loop", "redirect-loop", false, false},
    {"/edge/cross-host-redirect", "redirect-301-other-host", "redirect", false, true},
    {"/edge/status/404", "status-404", "error", false, true},
    {"/edge/status/410", "status-410", "error", false, true},
    {"/edge/status/500", "status-500", "error", false, true},
    {"/edge/status/503", "status-503-retry-after-2", "retry", false, true},
    {"/edge/status/429", "status-429-retry-after-3", "retry", false, true},
    {"/edge/charset/latin1", "charset-iso-8859-1-header", "fetched", true, true},
    {"/edge/charset/latin1-meta", "charset-iso-8859-1-meta", "fetched", true, true},
    {"/edge/charset/cp1251", "charset-windows-1251-header", "fetched", true, true},
    {"/edge/charset/cp1251-meta", "charset-windows-1251-meta-http-equiv", "fetched", true, true},
    {"/edge/charset/utf8-bom", "charset-utf-8-bom-only", "fetched", true, true},
    {"/edge/malformed", "malformed-html", "fetched", true, true},
    {"/edge/malformed/t1", "link-unquoted-attribute", "fetched", true, false},
    {"/edge/malformed/t2", "link-inside-unclosed-table", "fetched", true, false},
    {"/edge/malformed/t3", "link-uppercase-tag", "fetched", true, false},
    {"/edge/ghost/comment", "link-inside-comment", "not-fetched", false, false},
    {"/edge/ghost/script", "link-inside-script", "not-fetched", false, false},
    {"/edge/nofollow", "meta-robots-nofollow", "fetched", true, true},
    {"/edge/nofollow/target", "nofollow-target", "not-fetched", false, false},
    {"/edge/x-robots-nofollow", "x-robots-tag-nofollow", "fetched", true, true},
    {"/edge/x-robots-nofollow/target", "nofollow-target", "not-fetched", false, false},
    {"/edge/rel-nofollow", "rel-nofollow-link", "fetched", true, true},
    {"/edge/rel-nofollow/target", "nofollow-target", "not-fetched", false, false},
    {"/edge/noindex", "meta-robots-noindex", "fetched", true, true},
    {"/edge/noindex/target", "noindex-page-link-target", "fetched", true, false},
    {"/edge/x-robots-noindex", "x-robots-tag-noindex", "fetched", true, true},
    {"/edge/canonical", "rel-canonical", "fetched", true, true},
    {"/edge/canonical/target", "canonical-target", "fetched-or-not", false, false},
    {"/edge/base", "base-href", "fetched", true, true},
    {"/edge/based/target", "base-href-target", "fetched", true, false},
    {"/edge/dup-a", "exact-duplicate", "fetched", true, true},
    {"/edge/dup-b", "exact-duplicate", "fetched", true, true},
    {"/edge/near-a", "near-duplicate", "fetched", true, true},
    {"/edge/near-b", "near-duplicate", "fetched", true, true},
    {"/edge/changing", "changes-with-epoch", "fetched", true, true},
    {"/edge/disallowed/page.html", "robots-disallowed", "not-fetched", false, true},
};

const EdgeSpec* FindEdge(std::string_view path) {
  for (const EdgeSpec& e : kEdges) {
    if (path == e.path) return &e;
  }
  return nullptr;
}

Link HomeLink() { return {"/", std::string(kHostileHost), "/", false}; }
Link To(const std::string& href, const std::string& target, bool nofollow = false) {
  return {href, std::string(kHostileHost), target, nofollow};
}

std::string Page(const std::string& title, const std::string& head_extra, const std::string& body,
                 const char* charset = "utf-8") {
  std::string meta = charset ? std::string("<meta charset=\"") + charset + "\">\n" : "";
  return "<!DOCTYPE html>\n<html>\n<head>\n" + meta + "<title>" + title + "</title>\n" +
         head_extra + "</head>\n<body>\n" + body +
         "\n<p><a href=\"/\">Home</a></p>\n</body>\n"
         "</html>\n";
}

std::string Text(uint64_t seed, size_t words) {
  Rng rng(seed);
  std::string out;
  for (int i = 0; i < 8; ++i) out += "<p>" + Words(rng, words) + "</p>\n";
  return out;
}

Response Html(int status, std::string body, const char* type = "text/html; charset=utf-8") {
  Response r;
  r.status = status;
  r.headers.push_back({"Content-Type", type});
  r.body = std::make_shared<const std::string>(std::move(body));
  return r;
}

Response Redirect(int status, const std::string& location) {
  Response r =
      Html(status,
           Page("Moved", "", "<p>Moved to <a href=\"" + location + "\">" + location + "</a></p>"));
  r.headers.push_back({"Location", location});
  return r;
}

}  // namespace

bool KnownEdgePath(std::string_view path) { return FindEdge(path) != nullptr; }

bool EdgeNofollow(std::string_view path) {
  return path == "/edge/nofollow" || path == "/edge/x-robots-nofollow";
}

std::vector<EdgeInfo> EdgeList(const Site& site) {
  std::vector<EdgeInfo> out;
  (void)site;
  const std::string hostile(kHostileHost);
  for (const EdgeSpec& e : kEdges)
    out.push_back({hostile, e.path, e.behaviour, e.expect, e.must_fetch});
  out.push_back({hostile, "/calendar/2026/11", "infinite-calendar-trap", "trap", false});
  out.push_back({"robots-5xx.test", "/robots.txt", "robots-503", "nothing-else-fetched", false});
  out.push_back({"robots-404.test", "/robots.txt", "robots-404", "allow-all", false});
  out.push_back({"robots-redirect.test", "/robots.txt", "robots-301-to-robots-real.txt",
                 "follow-redirect", false});
  out.push_back({"robots-big.test", "/robots.txt", "robots-600KB-rule-after-500KiB",
                 "late-rule-ignored", false});
  return out;
}

std::vector<Link> EdgeLinks(const Site& site, std::string_view path) {
  (void)site;
  std::vector<Link> links;
  if (path == "/") {
    for (const EdgeSpec& e : kEdges) {
      if (e.entry) links.push_back(To(e.path, e.path));
    }
    links.push_back(To("/calendar/2026/11", "/calendar/2026/11"));
    return links;
  }
  if (!KnownEdgePath(path)) return links;
  if (path == "/edge/malformed") {
    links.push_back(To("/edge/malformed/t1", "/edge/malformed/t1"));
    links.push_back(To("/edge/malformed/t2", "/edge/malformed/t2"));
    links.push_back(To("/edge/malformed/t3", "/edge/malformed/t3"));
  } else if (path == "/edge/nofollow" || path == "/edge/x-robots-nofollow" ||
             path == "/edge/noindex") {
    std::string t = std::string(path) + "/target";
    links.push_back(To(t, t));
  } else if (path == "/edge/rel-nofollow") {
    links.push_back(To("/edge/rel-nofollow/target", "/edge/rel-nofollow/target", true));
  } else if (path == "/edge/base") {
    links.push_back(To("target", "/edge/based/target"));
  }
  links.push_back(HomeLink());
  return links;
}

Rendered RenderHostileRoot(const Site& site) {
  std::string body = "<h1>hostile.test</h1>\n<p>Every documented edge behaviour:</p>\n<ul>\n";
  for (const Link& l : EdgeLinks(site, "/")) {
    body += "<li><a href=\"" + l.href + "\">" + l.href + "</a></li>\n";
  }
  body += "</ul>\n" + Text(7, 60);
  Rendered r;
  r.body = Page("hostile.test edge cases", "", body);
  return r;
}

Response HandleEdge(const Site& site, const Request& request, const std::string& path,
                    int64_t epoch) {
  (void)request;
  const std::string base = "http://" + std::string(kHostileHost);
  if (path == "/edge/slow") {
    Response r = Html(200, Page("Slow", "", Text(11, 40)));
    r.delay_ms = 3000;
    return r;
  }
  if (path == "/edge/endless") {
    Response r = Html(200, "<!DOCTYPE html>\n<html><head><title>Endless</title></head><body>\n");
    r.trickle = true;
    r.close = true;
    return r;
  }
  if (path == "/edge/huge") {
    Response r = Html(200, "");
    r.body = HugeBody();
    return r;
  }
  if (path == "/edge/gzip-bomb") {
    Response r = Html(200, "");
    r.body = GzipBomb();
    r.headers.push_back({"Content-Encoding", "gzip"});
    return r;
  }
  if (path == "/edge/redirect/1") return Redirect(302, base + "/edge/redirect/2");
  if (path == "/edge/redirect/2") return Redirect(301, base + "/edge/redirect/3");
  if (path == "/edge/redirect/3") return Redirect(307, "/edge/redirect/end");
  if (path == "/edge/loop-a") return Redirect(302, base + "/edge/loop-b");
  if (path == "/edge/loop-b") return Redirect(302, "/edge/loop-a");
  if (path == "/edge/cross-host-redirect") {
    return Redirect(301, site.options().pages > 1 ? "http://h0000.test/p/1" : "http://h0000.test/");
  }
  if (path.rfind("/edge/status/", 0) == 0) {
    int status = std::stoi(path.substr(13));
    Response r = Html(status, Page("Status " + path.substr(13), "", "<p>status</p>"));
    if (status == 503) r.retry_after_s = 2;
    if (status == 429) r.retry_after_s = 3;
    if (r.retry_after_s > 0) r.headers.push_back({"Retry-After", std::to_string(r.retry_after_s)});
    return r;
  }
  if (path.rfind("/edge/ghost/", 0) == 0) return Html(404, Page("Not found", "", "<p>ghost</p>"));
  // Latin-1: "café naïve über façade"; windows-1251: "Привет, мир" (hello, world).
  const std::string latin1 =
      "<p>caf\xe9 na\xefve \xfc"
      "ber fa\xe7"
      "ade</p>";
  const std::string cp1251 = "<p>\xcf\xf0\xe8\xe2\xe5\xf2, \xec\xe8\xf0</p>";
  if (path == "/edge/charset/latin1") {
    return Html(200, Page("Latin-1", "", latin1, nullptr), "text/html; charset=iso-8859-1");
  }
  if (path == "/edge/charset/latin1-meta") {
    return Html(200, Page("Latin-1 meta", "", latin1, "iso-8859-1"), "text/html");
  }
  if (path == "/edge/charset/cp1251") {
    return Html(200, Page("Windows-1251", "", cp1251, nullptr), "text/html; charset=windows-1251");
  }
  if (path == "/edge/charset/cp1251-meta") {
    return Html(
        200,
        Page("Windows-1251 meta",
             "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\">\n",
             cp1251, nullptr),
        "text/html");
  }
  if (path == "/edge/charset/utf8-bom") {
    return Html(200,
                "\xEF\xBB\xBF" + Page("UTF-8 BOM", "",
                                      "<p>caf\xC3\xA9 \xD0\x9F\xD1\x80\xD0\xB8"
                                      "\xD0\xB2\xD0\xB5\xD1\x82</p>",
                                      nullptr),
                "text/html");
  }
  if (path == "/edge/malformed") {
    return Html(200,
                "<html><head><title>Malformed</title><body>\n<p>unclosed <b>bold <i>italic\n"
                "<a href=/edge/malformed/t1>unquoted</a>\n"
                "<div><table><tr><td><a href='/edge/malformed/t2'>single quotes\n"
                "<A HREF=\"/edge/malformed/t3\">upper case</A>\n"
                "<!-- <a href=\"/edge/ghost/comment\">hidden in a comment</a> -->\n"
                "<script>document.write('<a href=\"/edge/ghost/script\">fake</a>');</script>\n"
                "<p><a href=\"/\">home\n");
  }
  if (path == "/edge/nofollow") {
    return Html(200, Page("Nofollow", "<meta name=\"robots\" content=\"nofollow\">\n",
                          "<p><a href=\"/edge/nofollow/target\">do not follow</a></p>"));
  }
  if (path == "/edge/x-robots-nofollow") {
    Response r =
        Html(200, Page("X-Robots nofollow", "",
                       "<p><a href=\"/edge/x-robots-nofollow/target\">do not follow</a></p>"));
    r.headers.push_back({"X-Robots-Tag", "nofollow"});
    return r;
  }
  if (path == "/edge/rel-nofollow") {
    return Html(
        200, Page("rel nofollow", "",
                  "<p><a rel=\"nofollow\" href=\"/edge/rel-nofollow/target\">sponsored</a></p>"));
  }
  if (path == "/edge/noindex") {
    return Html(200, Page("Noindex", "<meta name=\"robots\" content=\"noindex\">\n",
                          "<p><a href=\"/edge/noindex/target\">follow me</a></p>"));
  }
  if (path == "/edge/x-robots-noindex") {
    Response r = Html(200, Page("X-Robots noindex", "", Text(13, 30)));
    r.headers.push_back({"X-Robots-Tag", "noindex"});
    return r;
  }
  if (path == "/edge/canonical") {
    return Html(200, Page("Canonical",
                          "<link rel=\"canonical\" href=\"" + base + "/edge/canonical/target\">\n",
                          Text(17, 30)));
  }
  if (path == "/edge/base") {
    return Html(200, Page("Base href", "<base href=\"" + base + "/edge/based/\">\n",
                          "<p><a href=\"target\">relative to base</a></p>"));
  }
  if (path == "/edge/dup-a" || path == "/edge/dup-b") {
    return Html(200, Page("Duplicate article", "", Text(19, 80)));
  }
  if (path == "/edge/near-a" || path == "/edge/near-b") {
    bool a = path == "/edge/near-a";
    std::string chrome = a ? "<nav>Daily Gazette | News | Sport</nav>\n"
                           : "<nav>Weekly Courier | Opinion | Culture | Weather</nav>\n";
    return Html(200, Page(a ? "Gazette" : "Courier", "",
                          chrome + Text(23, 240) +
                              (a ? "<footer>Gazette 2026</footer>"
                                 : "<footer>Courier, all rights</footer>")));
  }
  if (path == "/edge/changing") {
    Response r = Html(200, Page("Changing", "",
                                "<p>Edition " + std::to_string(epoch) + "</p>\n" +
                                    Text(29 + static_cast<uint64_t>(epoch), 40)));
    r.changes_with_epoch = true;
    return r;
  }
  return Html(200, Page(path.substr(6), "", Text(31, 40)));  // targets and disallowed page
}

}  // namespace harvest::testweb
