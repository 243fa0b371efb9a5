// big.test (SiteOptions::big_site = N): one host shaped like a real news site — N articles
// under dated paths, a paginated archive, a sitemap index of sitemaps of up to 5,000 URLs
// (sitemaps.org 0.9, the odd-numbered ones gzip-compressed) named by robots.txt, and a search
// that robots.txt disallows. Layout and rules: docs/testweb.md "big.test".
//
// Everything is arithmetic on (seed, N, number): an article's path, date, links and text, an
// archive page's articles and its navigation are computed for the one page asked for, so a
// request costs the same at N = 20,000 as at N = 20 (only a sitemap, 5,000 URLs, is O(its
// size)). BigSite is a view: cheap to make per request, immutable, safe to share.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "testweb/internal.h"

namespace harvest::testweb {

inline constexpr std::string_view kBigSiteHost = "big.test";
// Articles listed per archive page (/archive/page/<i>), newest first.
inline constexpr int kArticlesPerArchivePage = 500;
// Article URLs per sitemap. sitemaps.org allows 50,000; large sites commonly cut at a few
// thousand, and more files exercise the sitemap index.
inline constexpr int kArticlesPerSitemap = 5000;
// Other articles each article links ("Related").
inline constexpr int kRelatedArticles = 5;
// Newest articles linked from big.test/.
inline constexpr int kRecentArticles = 10;
// Page-number links of an archive page beyond previous/next/first/last: pages 5(i-1)+2 ...
// 5(i-1)+6, so that every archive page is within ~log5(pages) hops of the first and every
// article within the crawler's default depth (10) of big.test/.
inline constexpr int kArchiveJumps = 5;
// Articles published per day: article N is dated 2026-11-01, older ones earlier.
inline constexpr int kArticlesPerDay = 20;

enum class BigPageType { kNone, kRoot, kArticle, kArchive, kSearch, kSitemapIndex, kSitemap };

// A page of big.test: article number (1 ... N), archive page (1 ... archive_pages()) or
// sitemap number (1 ... sitemaps()); 0 for the others.
struct BigPage {
  BigPageType type = BigPageType::kNone;
  int number = 0;
};

class BigSite {
 public:
  // `host` is big.test's index in site.hosts(); `site` must outlive the view.
  BigSite(const Site& site, int host);

  int articles() const { return articles_; }
  int archive_pages() const;  // ceil(N / 500)
  int sitemaps() const;       // ceil(N / 5000)

  // The page a canonical path (no query, no fragment) names; kNone when none.
  BigPage Find(std::string_view path) const;

  // "/2026/10/river-stone-market-19950.html": year and month of the article's date, three
  // words of a slug, the number. 1 <= k <= N.
  std::string ArticlePath(int k) const;
  std::string ArchivePath(int page) const;  // "/archive/page/3"
  // "/sitemaps/articles-1.xml.gz" (odd j, gzip) or "/sitemaps/articles-2.xml" (even j).
  std::string SitemapPath(int j) const;
  static constexpr std::string_view kSitemapIndexPath = "/sitemap_index.xml";
  // Publication date of article k, "YYYY-MM-DD" (the sitemap's <lastmod>).
  std::string Date(int k) const;
  // The archive page that lists article k.
  int ArchivePageOf(int k) const { return (articles_ - k) / kArticlesPerArchivePage + 1; }
  // The kRelatedArticles (fewer when N <= 5) distinct other articles article k links.
  std::vector<int> RelatedArticles(int k) const;
  // The archive pages archive page `page` links: previous, next, first, last and its
  // kArchiveJumps page-number links, without itself and without repeats.
  std::vector<int> ArchiveNav(int page) const;
  // The word article k's search link asks for (/search?q=<word>).
  std::string_view SearchWord(int k) const;

  // The <a> links of a page (empty for kNone and the sitemaps).
  std::vector<Link> LinksOf(const BigPage& page) const;
  std::string RobotsTxt() const;
  // The HTML of a page (kRoot, kArticle, kArchive, kSearch); `query` is the search's.
  Rendered Render(const BigPage& page, std::string_view query) const;
  // The sitemap index (kSitemapIndex) or sitemap j (kSitemap; gzip for odd j).
  std::string RenderSitemap(const BigPage& page) const;
  // The identities a compliant crawler fetches: "big.test/", every article, every archive
  // page and "big.test/robots.txt" (unsorted).
  std::vector<std::string> MustFetch() const;

 private:
  std::string Title(int k) const;
  Link To(const std::string& target) const;

  const Site& site_;
  const HostInfo& info_;
  int articles_;
  std::string origin_;  // "http://big.test" or "https://big.test"
};

}  // namespace harvest::testweb
