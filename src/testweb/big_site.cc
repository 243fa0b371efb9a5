// big.test: routes, links, pages, robots.txt and sitemaps of the big news site (big_site.h).
#include "testweb/big_site.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "testweb/session_trap.h"

namespace harvest::testweb {

namespace {

// Salts of big.test's generated choices (any constants distinct from the other Mix() uses).
constexpr uint64_t kSlugSalt = 0x736c7567;  // "slug"
constexpr uint64_t kTitleSalt = 0x7469746c;
constexpr uint64_t kTextSalt = 0x74657874;
constexpr uint64_t kRelatedSalt = 0x72656c61;
constexpr uint64_t kSearchSalt = 0x73726368;
// Days since 1970-01-01 of 2026-11-01, the newest article's date (the test web's
// Last-Modified base).
constexpr int64_t kNewestDay = 20758;

// Parses a non-negative decimal of at most 9 digits without leading zeros; -1 otherwise.
long ParseNumber(std::string_view s) {
  if (s.empty() || s.size() > 9 || (s.size() > 1 && s[0] == '0')) return -1;
  long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

// Proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's civil_from_days).
void CivilFromDays(int64_t z, int* year, int* month, int* day) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  *month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *year = static_cast<int>(yoe + era * 400 + (*month <= 2 ? 1 : 0));
}

std::string Capitalized(std::string_view w) {
  std::string out(w);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 32);
  return out;
}

std::string Anchor(const Link& l, const std::string& text) {
  return "<a href=\"" + HtmlEscape(l.href) + "\">" + HtmlEscape(text) + "</a>";
}

std::string Head(const std::string& title, const std::string& canonical) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
         HtmlEscape(title) +
         " - big.test</title>\n<meta name=\"viewport\" content=\"width=device-width, "
         "initial-scale=1\">\n<link rel=\"canonical\" href=\"" +
         canonical + "\">\n</head>\n<body>\n";
}

constexpr std::string_view kFooter =
    "<footer><p>&copy; 2026 big.test &middot; a synthetic news site served by harvest "
    "testweb</p></footer>\n</body>\n</html>\n";

}  // namespace

BigSite::BigSite(const Site& site, int host)
    : site_(site),
      info_(site.hosts()[host]),
      articles_(info_.articles),
      origin_((site.options().big_site_https ? "https://" : "http://") + info_.name) {}

int BigSite::archive_pages() const {
  return (articles_ + kArticlesPerArchivePage - 1) / kArticlesPerArchivePage;
}

int BigSite::sitemaps() const {
  return (articles_ + kArticlesPerSitemap - 1) / kArticlesPerSitemap;
}

std::string BigSite::Date(int k) const {
  int year = 0, month = 0, day = 0;
  CivilFromDays(kNewestDay - (articles_ - k) / kArticlesPerDay, &year, &month, &day);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", year, month, day);
  return buf;
}

std::string BigSite::ArticlePath(int k) const {
  const std::string date = Date(k);
  std::string out = "/" + date.substr(0, 4) + "/" + date.substr(5, 2) + "/";
  const uint64_t key = Mix(site_.options().seed, kSlugSalt, static_cast<uint64_t>(k));
  for (uint64_t i = 0; i < 3; ++i) {
    out.append(WordAt(Mix(key, i)));
    out.push_back('-');
  }
  return out + std::to_string(k) + ".html";
}

std::string BigSite::ArchivePath(int page) const { return "/archive/page/" + std::to_string(page); }

std::string BigSite::SitemapPath(int j) const {
  return "/sitemaps/articles-" + std::to_string(j) + (j % 2 == 1 ? ".xml.gz" : ".xml");
}

std::string_view BigSite::SearchWord(int k) const {
  return WordAt(Mix(site_.options().seed, kSearchSalt, static_cast<uint64_t>(k)));
}

BigPage BigSite::Find(std::string_view path) const {
  if (path == "/") return {BigPageType::kRoot, 0};
  if (path == "/search") return {BigPageType::kSearch, 0};
  if (path == kSitemapIndexPath) return {BigPageType::kSitemapIndex, 0};
  constexpr std::string_view kArchive = "/archive/page/";
  if (path.starts_with(kArchive)) {
    const long page = ParseNumber(path.substr(kArchive.size()));
    if (page >= 1 && page <= archive_pages())
      return {BigPageType::kArchive, static_cast<int>(page)};
    return {};
  }
  constexpr std::string_view kSitemaps = "/sitemaps/articles-";
  if (path.starts_with(kSitemaps)) {
    std::string_view rest = path.substr(kSitemaps.size());
    const long j = ParseNumber(rest.substr(0, rest.find('.')));
    if (j >= 1 && j <= sitemaps() && path == SitemapPath(static_cast<int>(j))) {
      return {BigPageType::kSitemap, static_cast<int>(j)};
    }
    return {};
  }
  // An article: "/YYYY/MM/<slug>-<k>.html", exactly as ArticlePath(k) writes it.
  if (!path.ends_with(".html")) return {};
  const std::string_view stem = path.substr(0, path.size() - 5);
  const size_t dash = stem.rfind('-');
  if (dash == std::string_view::npos) return {};
  const long k = ParseNumber(stem.substr(dash + 1));
  if (k < 1 || k > articles_ || path != ArticlePath(static_cast<int>(k))) return {};
  return {BigPageType::kArticle, static_cast<int>(k)};
}

std::vector<int> BigSite::RelatedArticles(int k) const {
  std::vector<int> out;
  const size_t want = static_cast<size_t>(std::min(kRelatedArticles, articles_ - 1));
  const uint64_t key = Mix(site_.options().seed, kRelatedSalt);
  for (uint64_t attempt = 0; out.size() < want; ++attempt) {
    const int r = 1 + static_cast<int>(Mix(key, static_cast<uint64_t>(k), attempt) %
                                       static_cast<uint64_t>(articles_));
    if (r != k && std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

std::vector<int> BigSite::ArchiveNav(int page) const {
  const int last = archive_pages();
  std::vector<int> candidates = {page - 1, page + 1, 1, last};
  for (int c = 0; c < kArchiveJumps; ++c) candidates.push_back(kArchiveJumps * (page - 1) + 2 + c);
  std::vector<int> out;
  for (int c : candidates) {
    if (c >= 1 && c <= last && c != page && std::find(out.begin(), out.end(), c) == out.end()) {
      out.push_back(c);
    }
  }
  return out;
}

Link BigSite::To(const std::string& target) const { return {target, info_.name, target, false}; }

std::vector<Link> BigSite::LinksOf(const BigPage& page) const {
  std::vector<Link> links;
  switch (page.type) {
    case BigPageType::kRoot: {
      if (articles_ > 0) links.push_back(To(ArchivePath(1)));
      for (int k = articles_; k > std::max(0, articles_ - kRecentArticles); --k) {
        links.push_back(To(ArticlePath(k)));
      }
      links.push_back(To("/search?q=" + std::string(SearchWord(0))));
      if (site_.options().trap_host) {
        const std::string scheme = site_.options().big_site_https ? "https://" : "http://";
        links.push_back({scheme + std::string(kSessionTrapHost) + "/",
                         std::string(kSessionTrapHost), "/", false});
      }
      break;
    }
    case BigPageType::kArticle:
      links.push_back(To("/"));
      links.push_back(To(ArchivePath(ArchivePageOf(page.number))));
      links.push_back(To("/search?q=" + std::string(SearchWord(page.number))));
      for (int r : RelatedArticles(page.number)) links.push_back(To(ArticlePath(r)));
      break;
    case BigPageType::kArchive: {
      links.push_back(To("/"));
      for (int p : ArchiveNav(page.number)) links.push_back(To(ArchivePath(p)));
      const int newest = articles_ - (page.number - 1) * kArticlesPerArchivePage;
      const int oldest = std::max(1, newest - kArticlesPerArchivePage + 1);
      for (int k = newest; k >= oldest; --k) links.push_back(To(ArticlePath(k)));
      break;
    }
    case BigPageType::kSearch:
      links.push_back(To("/"));
      break;
    case BigPageType::kNone:
    case BigPageType::kSitemapIndex:
    case BigPageType::kSitemap:
      break;
  }
  return links;
}

std::string BigSite::Title(int k) const {
  const uint64_t slug = Mix(site_.options().seed, kSlugSalt, static_cast<uint64_t>(k));
  std::string out = Capitalized(WordAt(Mix(slug, 0)));
  for (uint64_t i = 1; i < 3; ++i) out += " " + std::string(WordAt(Mix(slug, i)));
  const uint64_t more = Mix(site_.options().seed, kTitleSalt, static_cast<uint64_t>(k));
  out += " " + std::string(WordAt(Mix(more, 0))) + " " + std::string(WordAt(Mix(more, 1)));
  return out;
}

std::string BigSite::RobotsTxt() const {
  return "# robots.txt for big.test\nUser-agent: *\nDisallow: /search\n\nSitemap: " + origin_ +
         std::string(kSitemapIndexPath) + "\n";
}

Rendered BigSite::Render(const BigPage& page, std::string_view query) const {
  const std::vector<Link> links = LinksOf(page);
  Rendered r;
  std::string& body = r.body;
  Rng rng(Mix(Mix(site_.options().seed, kTextSalt), static_cast<uint64_t>(page.type),
              static_cast<uint64_t>(page.number)));
  switch (page.type) {
    case BigPageType::kRoot: {
      body = Head("The news", origin_ + "/");
      body += "<header><h1>big.test &mdash; the news</h1></header>\n<main>\n<p>";
      AppendWords(rng, 60, &body);
      body += "</p>\n<h2>Latest</h2>\n<ul>\n";
      size_t li = articles_ > 0 ? 1 : 0;
      for (int k = articles_; k > std::max(0, articles_ - kRecentArticles); --k, ++li) {
        body += "<li>" + Anchor(links[li], Title(k)) + " <time>" + Date(k) + "</time></li>\n";
      }
      body += "</ul>\n<p>";
      if (articles_ > 0) body += Anchor(links[0], "Archive") + " &middot; ";
      body += Anchor(links[li++], "Search");
      if (li < links.size()) body += " &middot; " + Anchor(links[li], "Our shop");
      body += "</p>\n</main>\n";
      break;
    }
    case BigPageType::kArticle: {
      const int k = page.number;
      const std::string title = Title(k);
      body = Head(title, origin_ + ArticlePath(k));
      body += "<header><nav>" + Anchor(links[0], "Home") + " | " + Anchor(links[1], "Archive") +
              " | " + Anchor(links[2], "More on " + std::string(SearchWord(k))) +
              "</nav></header>\n<main>\n<article>\n<h1>" + HtmlEscape(title) +
              "</h1>\n<p class=\"dateline\">No. " + std::to_string(k) + " &middot; <time>" +
              Date(k) + "</time></p>\n";
      for (int p = 0; p < 4; ++p) {
        body += "<p>";
        AppendWords(rng, 50 + rng.Below(50), &body);
        body += "</p>\n";
      }
      body += "</article>\n<aside><h2>Related</h2>\n<ul>\n";
      const std::vector<int> related = RelatedArticles(k);
      for (size_t i = 0; i < related.size(); ++i) {
        body += "<li>" + Anchor(links[3 + i], Title(related[i])) + "</li>\n";
      }
      body += "</ul></aside>\n</main>\n";
      break;
    }
    case BigPageType::kArchive: {
      const std::string title = "Archive, page " + std::to_string(page.number);
      body = Head(title, origin_ + ArchivePath(page.number));
      body += "<header><nav>" + Anchor(links[0], "Home") + "</nav></header>\n<main>\n<h1>" + title +
              "</h1>\n<nav class=\"pages\">";
      const std::vector<int> nav = ArchiveNav(page.number);
      for (size_t i = 0; i < nav.size(); ++i) {
        body += " " + Anchor(links[1 + i], std::to_string(nav[i]));
      }
      body += "</nav>\n<ul>\n";
      int k = articles_ - (page.number - 1) * kArticlesPerArchivePage;
      for (size_t i = 1 + nav.size(); i < links.size(); ++i, --k) {
        body += "<li>" + Anchor(links[i], Title(k)) + " <time>" + Date(k) + "</time></li>\n";
      }
      body += "</ul>\n</main>\n";
      break;
    }
    case BigPageType::kSearch: {
      std::string q(query.substr(0, 100));
      body = Head("Search", origin_ + "/search");
      body += "<header><nav>" + Anchor(links[0], "Home") +
              "</nav></header>\n<main>\n<h1>Search results for " + HtmlEscape(q) + "</h1>\n<p>";
      Rng results(Mix(rng.Next(), std::hash<std::string>{}(q)));
      AppendWords(results, 80, &body);
      body += "</p>\n</main>\n";
      break;
    }
    case BigPageType::kNone:
    case BigPageType::kSitemapIndex:
    case BigPageType::kSitemap:
      break;
  }
  body += kFooter;
  return r;
}

std::string BigSite::RenderSitemap(const BigPage& page) const {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  if (page.type == BigPageType::kSitemapIndex) {
    out += "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
    for (int j = 1; j <= sitemaps(); ++j) {
      const int newest = std::min(articles_, j * kArticlesPerSitemap);
      out += "<sitemap><loc>" + origin_ + SitemapPath(j) + "</loc><lastmod>" + Date(newest) +
             "</lastmod></sitemap>\n";
    }
    return out + "</sitemapindex>\n";
  }
  const int j = page.number;
  const int first = (j - 1) * kArticlesPerSitemap + 1;
  const int last = std::min(articles_, j * kArticlesPerSitemap);
  out += "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
  out.reserve(out.size() + static_cast<size_t>(last - first + 1) * 110);
  for (int k = first; k <= last; ++k) {
    out += "<url><loc>" + origin_ + ArticlePath(k) + "</loc><lastmod>" + Date(k) +
           "</lastmod></url>\n";
  }
  out += "</urlset>\n";
  return j % 2 == 1 ? Gzip(out) : out;
}

std::vector<std::string> BigSite::MustFetch() const {
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(articles_ + archive_pages() + 2));
  out.push_back(info_.name + "/");
  out.push_back(info_.name + "/robots.txt");
  for (int k = 1; k <= articles_; ++k) out.push_back(info_.name + ArticlePath(k));
  for (int p = 1; p <= archive_pages(); ++p) out.push_back(info_.name + ArchivePath(p));
  return out;
}

}  // namespace harvest::testweb
