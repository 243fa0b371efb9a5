// Micro-benchmark: RobotsRules::IsAllowed / Check against a realistic ~100-rule robots.txt
// (several groups; prefixes, `*` wildcards and `$` anchors) over a mix of paths.
// Reported time is per check (items_per_second = checks per second).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "robots/robots.h"

namespace harvest::robots {
namespace {

std::string RealisticRobots() {
  std::string body =
      "# robots.txt for www.shop.test\n"
      "User-agent: Googlebot\nDisallow: /search\nDisallow: /*?sessionid=\nAllow: /search/about\n\n"
      "User-agent: Bingbot\nCrawl-delay: 5\nDisallow: /search\nDisallow: /cart/\n\n"
      "User-agent: AdsBot-Google\nDisallow: /checkout/\n\n";
  body += "User-agent: *\nUser-agent: harvest\nCrawl-delay: 1\n";
  const char* sections[] = {"account", "cart",     "checkout", "wishlist", "compare", "admin",
                            "api",     "internal", "tmp",      "print",    "export",  "feeds"};
  for (const char* s : sections) {
    body += "Disallow: /" + std::string(s) + "/\n";
    body += "Allow: /" + std::string(s) + "/help\n";
  }
  const char* params[] = {"sort", "order",      "dir",        "limit",  "sessionid", "sid",
                          "ref",  "utm_source", "utm_medium", "filter", "price",     "color",
                          "size", "page",       "view",       "mode"};
  for (const char* p : params) {
    body += "Disallow: /*?" + std::string(p) + "=\n";
    body += "Disallow: /*&" + std::string(p) + "=\n";
  }
  const char* exts[] = {".pdf", ".zip", ".json", ".xml", ".php", ".cgi", ".bak", ".sql"};
  for (const char* e : exts) body += "Disallow: /*" + std::string(e) + "$\n";
  for (int i = 0; i < 20; ++i) {
    body += "Disallow: /catalog/category-" + std::to_string(i) + "/*/reviews\n";
  }
  body += "Allow: /catalog/\nAllow: /media/*.jpg$\nDisallow: /media/\nDisallow: /*/print$\n";
  body += "Sitemap: https://www.shop.test/sitemap.xml\n";
  return body;
}

const std::vector<std::string>& Paths() {
  static const std::vector<std::string> paths = {
      "/",
      "/catalog/category-3/item-123456",
      "/catalog/category-7/item-42/reviews?page=2",
      "/catalog/shoes?sort=price&order=asc",
      "/catalog/shoes?color=red&size=42",
      "/product/blue-widget-2000",
      "/product/blue-widget-2000?utm_source=newsletter&utm_medium=email",
      "/media/img/2024/05/widget.jpg",
      "/media/docs/manual.pdf",
      "/account/orders",
      "/account/help/faq",
      "/cart/",
      "/search?q=widgets",
      "/blog/2024/05/12/how-to-choose-a-widget",
      "/blog/2024/05/12/how-to-choose-a-widget/print",
      "/downloads/firmware-1.2.3.zip",
      "/api/v2/products.json",
      "/%E3%83%84/%E5%95%86%E5%93%81?id=77",
      "/about-us",
      "/contact?ref=footer",
  };
  return paths;
}

void BM_IsAllowed(benchmark::State& state) {
  RobotsRules rules = RobotsRules::Parse(RealisticRobots());
  const auto& paths = Paths();
  size_t i = 0, allowed = 0;
  for (auto _ : state) {
    allowed += rules.IsAllowed("harvest", paths[i]);
    if (++i == paths.size()) i = 0;
  }
  benchmark::DoNotOptimize(allowed);
  state.SetItemsProcessed(state.iterations());
  state.counters["rules"] = static_cast<double>(rules.rule_count());
}
BENCHMARK(BM_IsAllowed);

void BM_Check(benchmark::State& state) {
  RobotsRules rules = RobotsRules::Parse(RealisticRobots());
  const auto& paths = Paths();
  size_t i = 0;
  for (auto _ : state) {
    MatchResult r = rules.Check("harvest", paths[i]);
    benchmark::DoNotOptimize(r);
    if (++i == paths.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Check);

void BM_Parse(benchmark::State& state) {
  std::string body = RealisticRobots();
  for (auto _ : state) {
    RobotsRules rules = RobotsRules::Parse(body);
    benchmark::DoNotOptimize(rules);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(body.size()));
}
BENCHMARK(BM_Parse);

}  // namespace
}  // namespace harvest::robots
