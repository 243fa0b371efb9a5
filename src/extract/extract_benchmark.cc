// Micro-benchmark of ExtractHtml on a ~20 KB realistic page (and of the tokenizer path on a
// real python3-doc page when installed), and of DecodeContent on the gzip-compressed page
// (libdeflate, /0, against the zlib-only path, /1).
// Run: extract_benchmark --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "extract/decode.h"
#include "extract/extract.h"
#include "extract/test_util.h"

namespace harvest::extract {
namespace {

// A news-article-like page: head metadata, inline script and style, navigation, article
// text with inline markup and character references, related links, footer.
std::string RealisticPage() {
  std::string p =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"robots\" content=\"index, follow\">\n"
      "<title>Local council approves new riverside park &amp; cycle path | Example News</title>\n"
      "<link rel=\"canonical\" href=\"https://news.example.com/2024/05/riverside-park\">\n"
      "<link rel=\"alternate\" hreflang=\"de\" href=\"https://news.example.com/de/riverside\">\n"
      "<link rel=\"stylesheet\" href=\"/static/css/main.3f9a2c.css\">\n"
      "<script async src=\"https://cdn.example.com/analytics.js\"></script>\n"
      "<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push("
      "arguments);} gtag('js', new Date()); if (a < b && c > d) { console.log('<a href=x>'); "
      "}</script>\n<style>body{font-family:sans-serif;margin:0}.nav a{color:#333}"
      ".article p{line-height:1.6}</style>\n</head>\n<body class=\"article-page\">\n"
      "<header><nav class=\"nav\"><ul>\n";
  for (int i = 0; i < 40; ++i) {
    p += "<li class=\"nav-item\"><a href=\"/section/" + std::to_string(i) +
         "\" class=\"nav-link\" data-track=\"nav-" + std::to_string(i) + "\">Section " +
         std::to_string(i) + "</a></li>\n";
  }
  p += "</ul></nav></header>\n<main><article class=\"article\">\n<h1>Local council approves "
       "new riverside park</h1>\n<p class=\"byline\">By <a href=\"/authors/jane-doe\" "
       "rel=\"author\">Jane Doe</a> &middot; <time datetime=\"2024-05-01\">1 May 2024</time>"
       "</p>\n";
  for (int i = 0; i < 28; ++i) {
    p += "<p>The council voted on Tuesday to approve the plan, which will turn the former "
         "industrial site into a <strong>12-hectare park</strong> with a cycle path, "
         "playgrounds &amp; a caf&eacute;. &ldquo;This is a great day for the city,&rdquo; "
         "said the mayor. Read <a href=\"/2024/04/plan-" +
         std::to_string(i) +
         "?utm_source=article&amp;utm_medium=web\">the earlier report</a> "
         "or see <em>the full minutes</em> (PDF, 2&nbsp;MB).</p>\n";
    if (i % 7 == 3) {
      p += "<figure><img src=\"/img/park-" + std::to_string(i) +
           ".jpg\" alt=\"Artist's impression\" width=\"800\" height=\"450\" loading=\"lazy\">"
           "<figcaption>Artist&#39;s impression of the park.</figcaption></figure>\n";
    }
  }
  p += "</article>\n<aside><h2>Related</h2><ul>\n";
  for (int i = 0; i < 12; ++i) {
    p += "<li><a href=\"https://news.example.com/related/" + std::to_string(i) +
         "\" rel=\"nofollow\">Related story number " + std::to_string(i) + "</a></li>\n";
  }
  p += "</ul></aside></main>\n<!-- footer starts -->\n<footer><p>&copy; 2024 Example News. "
       "<a href=\"/privacy\">Privacy</a> | <a href=\"/terms\">Terms</a></p></footer>\n"
       "<script>document.querySelectorAll('.nav-link').forEach(function(el){el.addEventListener"
       "('click', function(){ gtag('event', 'nav'); });});</script>\n</body>\n</html>\n";
  return p;
}

void BM_ExtractHtml(benchmark::State& state, const std::string& page) {
  size_t links = 0;
  for (auto _ : state) {
    PageInfo info = ExtractHtml(page, "text/html; charset=utf-8");
    links += info.links.size();
    benchmark::DoNotOptimize(info);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * page.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["page_bytes"] = static_cast<double>(page.size());
  state.counters["links"] = static_cast<double>(links / std::max<size_t>(state.iterations(), 1));
}

void BM_ExtractHtml_Realistic(benchmark::State& state) {
  static const std::string page = RealisticPage();
  BM_ExtractHtml(state, page);
}
BENCHMARK(BM_ExtractHtml_Realistic);

void BM_ExtractHtml_NoText(benchmark::State& state) {
  static const std::string page = RealisticPage();
  ExtractOptions options;
  options.want_text = false;
  for (auto _ : state) benchmark::DoNotOptimize(ExtractHtml(page, "", options));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * page.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_ExtractHtml_NoText);

void BM_ExtractHtml_PythonDoc(benchmark::State& state) {
  static const std::string page = [] {
    std::ifstream in("/usr/share/doc/python3/html/library/functions.html", std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }();
  if (page.empty()) {
    state.SkipWithError("python3-doc not installed");
    return;
  }
  BM_ExtractHtml(state, page);
}
BENCHMARK(BM_ExtractHtml_PythonDoc);

// Real sites' pages: up to 2,000 HTML files of 1 KB to 1 MiB from the Debian documentation
// packages scripts/bench-peers --corpus real installs (cppreference, PostgreSQL, Python,
// Django, Sphinx), every 3rd file in path order so each package is represented; items = pages.
// Skipped when none is installed.
void BM_ExtractHtml_DebianDocs(benchmark::State& state) {
  static const std::vector<std::string> pages = [] {
    std::vector<std::string> paths;
    for (const char* dir :
         {"/usr/share/cppreference/doc/html", "/usr/share/doc/postgresql-doc-15/html",
          "/usr/share/doc/python3.11/html", "/usr/share/doc/python-django-doc/html",
          "/usr/share/doc/sphinx-doc/html"}) {
      std::error_code ec;
      for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
           !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        const std::string path = it->path().string();
        if (path.ends_with(".html")) paths.push_back(path);
      }
    }
    std::sort(paths.begin(), paths.end());
    std::vector<std::string> out;
    for (size_t i = 0; i < paths.size() && out.size() < 2000; i += 3) {
      std::ifstream in(paths[i], std::ios::binary);
      std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (page.size() >= 1024 && page.size() <= (1u << 20)) out.push_back(std::move(page));
    }
    return out;
  }();
  if (pages.empty()) {
    state.SkipWithError("no Debian documentation package installed");
    return;
  }
  size_t bytes = 0, links = 0, i = 0;
  for (auto _ : state) {
    const std::string& page = pages[i++ % pages.size()];
    PageInfo info = ExtractHtml(page, "text/html; charset=utf-8");
    bytes += page.size();
    links += info.links.size();
    benchmark::DoNotOptimize(info);
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["pages"] = static_cast<double>(pages.size());
  state.counters["links"] = static_cast<double>(links) / std::max<double>(state.iterations(), 1);
}
BENCHMARK(BM_ExtractHtml_DebianDocs);

// Items = pages. Arg 0: the libdeflate path DecodeContent takes; 1: zlib alone.
void BM_DecodeGzip(benchmark::State& state) {
  static const std::string page = RealisticPage();
  static const std::string gz = testing::Gzip(page);
  const auto inflater = state.range(0) == 0 ? internal::Inflater::kFast : internal::Inflater::kZlib;
  for (auto _ : state) {
    DecodeResult r = internal::DecodeContentWith("gzip", gz, 10 << 20, inflater);
    if (!r.ok || r.body.size() != page.size()) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * page.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_DecodeGzip)->Arg(0)->Arg(1);

}  // namespace
}  // namespace harvest::extract
