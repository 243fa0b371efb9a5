// The design claims of the labelled near-duplicates and of the changing pages, checked with
// the crawler's own SimHash, both versions (docs/testweb.md "Near-duplicates"). Only this test
// links harvest_dedup: the testweb library itself shares no code with the crawler
// (docs/architecture.md §7).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "dedup/dedup.h"
#include "extract/extract.h"
#include "testweb/internal.h"
#include "testweb/testweb.h"

namespace harvest::testweb {
namespace {

// Deliberately crude visible text: drops comments, scripts and styles, turns every tag and
// entity into a space. The crawler's extractor is finer, but words are what SimHash reads.
std::string VisibleText(const std::string& html) {
  std::string out;
  out.reserve(html.size());
  size_t i = 0;
  auto skip_to = [&](const char* end) {
    size_t e = html.find(end, i);
    i = e == std::string::npos ? html.size() : e + std::char_traits<char>::length(end);
    out.push_back(' ');
  };
  while (i < html.size()) {
    if (html.compare(i, 4, "<!--") == 0) {
      skip_to("-->");
    } else if (html.compare(i, 7, "<script") == 0) {
      skip_to("</script>");
    } else if (html.compare(i, 6, "<style") == 0) {
      skip_to("</style>");
    } else if (html[i] == '<') {
      skip_to(">");
    } else if (html[i] == '&') {
      skip_to(";");
    } else {
      out.push_back(html[i++]);
    }
  }
  return out;
}

// Every claim holds for both SimHash versions (a crawl state keeps the one it began with).
dedup::SimHashVersion version = dedup::SimHashVersion::kV1;
constexpr dedup::SimHashVersion kVersions[] = {dedup::SimHashVersion::kV1,
                                               dedup::SimHashVersion::kV2};

uint64_t PageHash(const Site& site, int host, int index, int64_t epoch = 0) {
  return dedup::SimHash64(VisibleText(RenderTreePage(site, host, index, epoch).body), version);
}

SiteOptions NearOptions(int percent) {
  SiteOptions o;
  o.hosts = 60;
  o.pages = 50;
  o.near_dup_percent = percent;
  return o;
}

// "h0012.test/p/7" -> {12, 7}.
TreePage ParseId(const std::string& id) {
  TreePage p;
  p.host = std::stoi(id.substr(1, 4));
  p.index = std::stoi(id.substr(id.find("/p/") + 3));
  return p;
}

TEST(NearDuplicates, LabelledCopiesAreWithinDistance3ForAtLeast97Percent) {
  for (dedup::SimHashVersion v : kVersions) {
    version = v;
    SCOPED_TRACE("SimHash version " + std::to_string(static_cast<int>(v)));
    for (int percent : {10, 30}) {
      Site site(NearOptions(percent));
      int pairs = 0, near = 0;
      for (const auto& group : site.NearDuplicateGroups()) {
        ASSERT_GE(group.size(), 2u);
        const TreePage original = ParseId(group[0]);
        const uint64_t a = PageHash(site, original.host, original.index);
        const std::string original_text =
            VisibleText(RenderTreePage(site, original.host, original.index, 0).body);
        for (size_t k = 1; k < group.size(); ++k) {
          const TreePage copy = ParseId(group[k]);
          ASSERT_EQ(site.NearCopySource(copy.host, copy.index), original) << group[k];
          // A real edit, not an exact copy of the text.
          ASSERT_NE(VisibleText(RenderTreePage(site, copy.host, copy.index, 0).body),
                    original_text);
          ++pairs;
          if (dedup::HammingDistance(a, PageHash(site, copy.host, copy.index)) <= 3) ++near;
        }
      }
      // 60 hosts x 49 candidates at 10 %: about 260 copies (fewer: changing pages are
      // excluded).
      EXPECT_GE(pairs, percent * 20) << percent;
      std::printf(
          "SimHash v%d, near_dup_percent %d: %d of %d copies within distance 3 of their original\n",
          static_cast<int>(v), percent, near, pairs);
      EXPECT_GE(near * 100, pairs * 97) << near << " of " << pairs << " at " << percent << "%";
    }
  }
}

TEST(NearDuplicates, UnlabelledPagesAreFarApart) {
  for (dedup::SimHashVersion v : kVersions) {
    version = v;
    SCOPED_TRACE("SimHash version " + std::to_string(static_cast<int>(v)));
    Site site(NearOptions(10));
    std::set<std::pair<int, int>> labelled;
    for (const auto& group : site.NearDuplicateGroups()) {
      for (const auto& id : group) {
        TreePage p = ParseId(id);
        labelled.insert({p.host, p.index});
      }
    }
    // Every unlabelled tree page (roots included) against every other of a sample: no pair
    // within distance 3.
    std::vector<std::pair<std::string, uint64_t>> pages;
    for (int h = 0; h < 20; ++h) {
      for (int i = 0; i < 50; ++i) {
        if (labelled.count({h, i})) continue;
        pages.push_back({site.hosts()[h].name + " " + std::to_string(i), PageHash(site, h, i)});
      }
    }
    ASSERT_GT(pages.size(), 800u);
    int close = 0;
    for (size_t a = 0; a < pages.size(); ++a) {
      for (size_t b = a + 1; b < pages.size(); ++b) {
        if (dedup::HammingDistance(pages[a].second, pages[b].second) <= 3) {
          ++close;
          ADD_FAILURE() << pages[a].first << " and " << pages[b].first << " are near";
        }
      }
    }
    EXPECT_EQ(close, 0);
  }
}

TEST(NearDuplicates, SuccessiveEditionsOfAChangingPageAreNotNearDuplicates) {
  for (dedup::SimHashVersion v : kVersions) {
    version = v;
    SCOPED_TRACE("SimHash version " + std::to_string(static_cast<int>(v)));
    SiteOptions o = NearOptions(10);
    o.change_percent = 30;
    Site site(o);
    int pairs = 0;
    for (int h = 0; h < 30; ++h) {
      for (int i = 1; i < 50; ++i) {
        if (!site.PageChanges(h, i)) continue;
        for (int64_t e = 0; e < 3; ++e) {
          ++pairs;
          EXPECT_GT(dedup::HammingDistance(PageHash(site, h, i, e), PageHash(site, h, i, e + 1)), 3)
              << site.hosts()[h].name << "/p/" << i << " editions " << e << " and " << e + 1;
        }
      }
    }
    EXPECT_GT(pairs, 1000);
  }
}

// hostile.test's /edge/near-a and /edge/near-b (same article, other title, navigation and
// footer) must be near-duplicates for the crawler (tests/e2e/check_crawl.py), through the
// crawler's own text extraction, whichever SimHash version its state has.
TEST(NearDuplicates, EdgeNearPairIsWithinDistance3) {
  Site site(NearOptions(0));
  auto text = [&](const std::string& path) {
    Request r{.method = "GET", .target = path, .host = "hostile.test"};
    Response resp = HandleEdge(site, r, path, 0);
    EXPECT_EQ(resp.status, 200) << path;
    return extract::ExtractHtml(*resp.body, "text/html; charset=utf-8").text;
  };
  const std::string a = text("/edge/near-a"), b = text("/edge/near-b");
  ASSERT_NE(a, b);
  for (dedup::SimHashVersion v : kVersions) {
    const int d = dedup::HammingDistance(dedup::SimHash64(a, v), dedup::SimHash64(b, v));
    std::printf("SimHash v%d: /edge/near-a and /edge/near-b at distance %d\n", static_cast<int>(v),
                d);
    EXPECT_LE(d, 3) << "version " << static_cast<int>(v);
  }
}

TEST(NearDuplicates, CopiesKeepTheLinkGraphAndTheManifest) {
  // Fewer links than the tree needs on some pages, so copies and originals differ in link
  // count: every rendered link must still be the copy's own.
  for (int links : {20, 2}) {
    SiteOptions plain = NearOptions(0);
    plain.links = links;
    SiteOptions near = plain;
    near.near_dup_percent = 40;
    Site a(plain), b(near);
    nlohmann::json ma = nlohmann::json::parse(a.ManifestJson());
    nlohmann::json mb = nlohmann::json::parse(b.ManifestJson());
    EXPECT_EQ(ma["hosts"], mb["hosts"]);
    EXPECT_TRUE(ma["near_duplicates"].empty());
    ASSERT_FALSE(mb["near_duplicates"].empty());
    EXPECT_EQ(mb["near_dup_percent"], 40);
    int copies = 0;
    for (int h = 0; h < 60; ++h) {
      for (int i = 0; i < 50; ++i) {
        if (!b.NearCopySource(h, i)) {
          // Originals render exactly as without near-duplicates.
          EXPECT_EQ(RenderTreePage(a, h, i, 0).body, RenderTreePage(b, h, i, 0).body);
          continue;
        }
        ++copies;
        const std::string body = RenderTreePage(b, h, i, 0).body;
        for (const Link& l : b.LinksOf(h, i == 0 ? "/" : "/p/" + std::to_string(i))) {
          std::string href = HtmlEscape(l.href);
          EXPECT_NE(body.find("href=\"" + href + "\""), std::string::npos) << href;
        }
        EXPECT_NE(
            body.find("href=\"http://" + b.hosts()[h].name + "/p/" + std::to_string(i) + "\""),
            std::string::npos)
            << "canonical of a copy is its own";
      }
    }
    EXPECT_GT(copies, 500);
  }
}

}  // namespace
}  // namespace harvest::testweb
