// Fuzz target for the untrusted-input parsers of extract: ExtractHtml (with charset sniffing
// and conversion), ParseXRobotsTag, IsHtml, ParseSitemap, SitemapReader and DecodeContent.
// The first input byte picks the entry point; the rest is the document. A sitemap is also fed
// to a SitemapReader in chunks (their sizes taken from the first byte's high bits), which
// must give what the one-shot parse gave.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "extract/extract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace harvest::extract;
  if (size == 0) return 0;
  uint8_t selector = data[0];
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (selector % 4) {
    case 0: {
      // HTML with a content type taken from the first line (may be empty).
      size_t nl = in.find('\n');
      std::string_view ct = nl == std::string_view::npos ? std::string_view() : in.substr(0, nl);
      std::string_view body = nl == std::string_view::npos ? in : in.substr(nl + 1);
      ExtractOptions options;
      options.max_links = 64;
      options.max_text_bytes = 4096;
      PageInfo page = ExtractHtml(body, ct, options);
      for (const Link& l : page.links) {
        if (l.href.empty()) __builtin_trap();  // contract: hrefs are never empty
      }
      if (page.text.size() > options.max_text_bytes) __builtin_trap();
      (void)IsHtml(ct, body);
      (void)ParseXRobotsTag(ct, "harvest");
      break;
    }
    case 1: {
      SitemapResult r = ParseSitemap(in, /*maybe_gzip=*/true);
      if (r.urls.size() > 50000) __builtin_trap();
      if (r.hints.size() != r.urls.size()) __builtin_trap();  // one hint per URL
      const size_t chunk = 1 + (selector >> 2) % 17;
      size_t n = 0;
      bool same = true;
      SitemapReader reader([&](std::string_view url, const SitemapHint&) {
        if (url.empty() || url.size() > kMaxSitemapUrlBytes) __builtin_trap();
        same = same && n < r.urls.size() && r.urls[n] == url;
        ++n;
      });
      for (size_t at = 0; at < in.size(); at += chunk) reader.Feed(in.substr(at, chunk));
      reader.Finish();
      if (!same || n != r.urls.size() || reader.error() != r.error) __builtin_trap();
      (void)ParseW3cDatetime(in.substr(0, 64));
      break;
    }
    case 2: {
      static constexpr std::string_view kCodings[] = {"gzip", "deflate",  "br",
                                                      "zstd", "gzip, br", "identity"};
      DecodeResult r = DecodeContent(kCodings[(selector / 4) % 6], in, 1 << 20);
      if (r.body.size() > (1 << 20)) __builtin_trap();
      break;
    }
    default: {
      // Charset conversion from a label chosen by the data.
      static constexpr std::string_view kLabels[] = {"utf-8",       "windows-1252",  "shift_jis",
                                                     "iso-2022-jp", "utf-16le",      "gb18030",
                                                     "euc-kr",      "x-user-defined"};
      (void)ConvertToUtf8(in, kLabels[(selector / 4) % 8]);
      (void)DetectCharset(in, "");
      break;
    }
  }
  return 0;
}
