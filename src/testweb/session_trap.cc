// sessions.test: the session-id trap's routes, links and pages (session_trap.h).
#include "testweb/session_trap.h"

#include <string>

namespace harvest::testweb {

namespace {

constexpr uint64_t kChildSalt = 0x6b696473;  // "kids"
constexpr uint64_t kSidSalt = 0x73696473;
constexpr uint64_t kTextSalt = 0x73657373;
constexpr uint64_t kIdMask = (uint64_t{1} << 48) - 1;  // 12 hex digits
constexpr int kIdDigits = 12;
// The last path segment: what kind of page the session URL pretends to be.
constexpr std::string_view kNames[] = {"page", "item", "list", "cart", "offers", "compare"};
constexpr size_t kNameCount = sizeof(kNames) / sizeof(kNames[0]);

std::string_view NameOf(uint64_t id) { return kNames[Mix(id, kChildSalt) % kNameCount]; }

}  // namespace

SessionTrap::SessionTrap(const Site& site, int host) : site_(site), info_(site.hosts()[host]) {}

std::string SessionTrap::PagePath(uint64_t id) const {
  if (id == 0) return "/";
  return "/s/" + Hex(id, kIdDigits) + "/" + std::string(NameOf(id));
}

std::optional<uint64_t> SessionTrap::Find(std::string_view path) const {
  if (path == "/") return 0;
  if (!path.starts_with("/s/") || path.size() < 3 + kIdDigits + 2) return std::nullopt;
  uint64_t id = 0;
  for (int i = 0; i < kIdDigits; ++i) {
    const char c = path[3 + i];
    const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) return std::nullopt;
    id = id << 4 | static_cast<uint64_t>(v);
  }
  if (id == 0 || path != PagePath(id)) return std::nullopt;
  return id;
}

std::vector<uint64_t> SessionTrap::ChildIds(uint64_t id) const {
  std::vector<uint64_t> out;
  const uint64_t key = Mix(site_.options().seed, kChildSalt, id);
  for (uint64_t j = 0; j < kSessionLinksPerPage; ++j) {
    const uint64_t child = Mix(key, j) & kIdMask;
    out.push_back(child == 0 ? 1 : child);  // 0 is "/"
  }
  return out;
}

std::vector<Link> SessionTrap::LinksOf(uint64_t id) const {
  std::vector<Link> links;
  links.push_back({"/", info_.name, "/", false});
  for (uint64_t child : ChildIds(id)) {
    const std::string target =
        PagePath(child) + "?sid=" + Hex(Mix(site_.options().seed, kSidSalt, child), 16);
    links.push_back({target, info_.name, target, false});
  }
  return links;
}

std::string SessionTrap::RobotsTxt() const {
  return "# robots.txt for sessions.test\nUser-agent: *\nDisallow:\n";
}

Rendered SessionTrap::Render(uint64_t id) const {
  Rng rng(Mix(site_.options().seed, kTextSalt, id));
  const std::string title =
      id == 0 ? std::string("Welcome") : std::string(NameOf(id)) + " " + Hex(id, kIdDigits);
  Rendered r;
  r.body = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
           HtmlEscape(title) + " - sessions.test</title>\n</head>\n<body>\n<h1>" +
           HtmlEscape(title) + "</h1>\n<p>";
  AppendWords(rng, 120, &r.body);
  r.body += "</p>\n<ul>\n";
  for (const Link& l : LinksOf(id)) {
    r.body += "<li><a href=\"" + HtmlEscape(l.href) + "\">" + std::string(WordAt(rng.Next())) +
              "</a></li>\n";
  }
  r.body += "</ul>\n<footer><p>&copy; 2026 sessions.test</p></footer>\n</body>\n</html>\n";
  return r;
}

}  // namespace harvest::testweb
