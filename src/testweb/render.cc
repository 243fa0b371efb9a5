// HTML, sitemap and compressed bodies of the synthetic web.
#include <libdeflate.h>
#include <zlib.h>

#include <cstdio>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "testweb/corpus.h"
#include "testweb/internal.h"

namespace harvest::testweb {

namespace {

constexpr const char* kWords[] = {
    "harvest", "river",   "stone",    "market",  "garden",  "winter",  "signal",   "lantern",
    "orchard", "copper",  "meadow",   "engine",  "harbor",  "violet",  "canyon",   "archive",
    "crystal", "falcon",  "thunder",  "velvet",  "compass", "glacier", "summit",   "ember",
    "willow",  "forest",  "quartz",   "beacon",  "saddle",  "timber",  "crater",   "island",
    "marble",  "pepper",  "cotton",   "anchor",  "the",     "a",       "of",       "and",
    "to",      "in",      "is",       "was",     "for",     "on",      "with",     "as",
    "by",      "at",      "from",     "that",    "which",   "under",   "over",     "between",
    "quiet",   "bright",  "ancient",  "rapid",   "gentle",  "hidden",  "northern", "silver",
    "golden",  "narrow",  "distant",  "early",   "late",    "village", "railway",  "bridge",
    "library", "museum",  "festival", "season",  "journey", "letter",  "report",   "council",
    "harbour", "weather", "history",  "science", "network", "crawler", "protocol", "document",
    "package", "station", "theory",   "picture", "method",
};
constexpr size_t kWordCount = sizeof(kWords) / sizeof(kWords[0]);
const std::vector<std::string_view> kWordViews(std::begin(kWords), std::end(kWords));

std::string Capitalized(std::string w) {
  if (!w.empty() && w[0] >= 'a' && w[0] <= 'z') w[0] = static_cast<char>(w[0] - 32);
  return w;
}

std::string Title(Rng& rng) {
  std::string t;
  size_t n = 3 + rng.Below(4);
  for (size_t i = 0; i < n; ++i) {
    if (i) t += ' ';
    t += Capitalized(kWords[rng.Below(kWordCount)]);
  }
  return t;
}

std::string Anchor(const Link& l, Rng& rng) {
  std::string a = "<a href=\"" + HtmlEscape(l.href) + "\"";
  if (l.nofollow) a += " rel=\"nofollow\"";
  return a + ">" + Capitalized(kWords[rng.Below(kWordCount)]) + " " +
         kWords[rng.Below(kWordCount)] + "</a>";
}

std::string Head(const std::string& title, const std::string& extra_meta) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
         HtmlEscape(title) +
         "</title>\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n" +
         extra_meta +
         "<style>body{font-family:sans-serif;max-width:42em;margin:auto}</style>\n</head>\n"
         "<body>\n";
}

// `mirrored`: the one-word edit of a labelled near-copy. It is the last word of the visible
// text, so it touches a single 3-word shingle (docs/testweb.md "Near-duplicates").
std::string Footer(const std::string& host, bool mirrored = false) {
  return "<footer><p>&copy; 2026 " + host + " &middot; a synthetic page served by harvest testweb" +
         (mirrored ? ", mirrored" : "") + "</p></footer>\n</body>\n</html>\n";
}

// Anchor text in the place of a link slot the page does not have (a near-copy with fewer
// links than its original): the same words, no link.
std::string Unlinked(Rng& rng) {
  return "<span>" + Capitalized(kWords[rng.Below(kWordCount)]) + " " +
         kWords[rng.Below(kWordCount)] + "</span>";
}

// Lays out `slots` link places through paragraphs until `out` reaches `target_bytes` (then
// an aside with the places left); returns the number of paragraphs. Slot i holds links[i]
// when the page has it, else only its anchor text; links beyond `slots` are appended
// without text. Originals pass slots == links.size(); a near-copy passes its original's
// link count and paragraph count (`paragraphs`, instead of a size: its hrefs differ in
// length), so that its visible text is the original's whatever its own links — the random
// draws never depend on the links.
size_t AppendArticle(Rng& rng, const std::vector<Link>& links, size_t first, size_t slots,
                     size_t target_bytes, std::optional<size_t> paragraphs, std::string* out) {
  size_t li = first;
  size_t written = 0;
  auto place = [&](size_t i) { return i < links.size() ? Anchor(links[i], rng) : Unlinked(rng); };
  while (paragraphs ? written < *paragraphs : out->size() < target_bytes) {
    ++written;
    out->append("<p>");
    AppendWords(rng, 40 + rng.Below(60), out);
    for (int k = 0; k < 2 && li < slots; ++k, ++li) {
      out->push_back(' ');
      out->append(place(li));
      out->push_back(' ');
      AppendWords(rng, 5 + rng.Below(20), out);
    }
    out->append("</p>\n");
    if (rng.Below(6) == 0) out->append("<h2>" + Title(rng) + "</h2>\n");
  }
  if (li < slots) {
    out->append("<aside><h2>Related</h2>\n<ul>\n");
    for (; li < slots; ++li) out->append("<li>" + place(li) + "</li>\n");
    out->append("</ul></aside>\n");
  }
  if (li < links.size()) {
    out->append("<p class=\"more\">");
    for (; li < links.size(); ++li) {
      std::string a = "<a href=\"" + HtmlEscape(links[li].href) + "\"";
      if (links[li].nofollow) a += " rel=\"nofollow\"";
      out->append(a + " aria-label=\"more\"></a>");
    }
    out->append("</p>\n");
  }
  return written;
}

}  // namespace

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void AppendWords(Rng& rng, size_t count, std::string* out) {
  bool sentence_start = true;
  for (size_t i = 0; i < count; ++i) {
    // One draw per word: the low half picks the word (multiply-shift, no division), the high
    // byte ends the sentence about one time in nine.
    const uint64_t v = rng.Next();
    const std::string_view w = WordAt(v);
    if (i) out->push_back(' ');
    size_t at = out->size();
    out->append(w);
    if (sentence_start && (*out)[at] >= 'a' && (*out)[at] <= 'z') (*out)[at] -= 32;
    sentence_start = (v >> 56) < 28 || i + 1 == count;
    if (sentence_start) out->push_back('.');
  }
}

std::string_view WordAt(uint64_t draw) {
  return kWordViews[((draw & 0xffffffffu) * kWordCount) >> 32];
}

std::string Words(Rng& rng, size_t count) {
  std::string out;
  AppendWords(rng, count, &out);
  return out;
}

namespace {

std::string TreePathOf(int index) { return index == 0 ? "/" : "/p/" + std::to_string(index); }

// What the visible text of a tree page is made of: its own (an original) or, for a labelled
// near-copy, its original's generator, link count and paragraph count.
struct TextSource {
  int host = 0;
  int index = 0;
  bool mirrored = false;  // a near-copy: append the one-word edit
  size_t slots = 0;       // near-copies: the original's link count
  size_t paragraphs = 0;  // near-copies: the original's article paragraphs
};

// Renders tree page (host, index); `text` says whose text. Sets *layout_out (when given) to
// the link and paragraph counts used: what a near-copy of this page must reuse.
Rendered RenderTree(const Site& site, int host, int index, int64_t epoch, const TextSource& text,
                    TextSource* layout_out) {
  const HostInfo& h = site.hosts()[host];
  const HostInfo& th = site.hosts()[text.host];
  const uint64_t key = Mix(site.options().seed, host, static_cast<uint64_t>(index) * 131 + 11);
  const uint64_t text_key =
      Mix(site.options().seed, text.host, static_cast<uint64_t>(text.index) * 131 + 11);
  Rng rng(text_key);
  const std::string path = TreePathOf(index);
  std::vector<Link> links = site.LinksOf(host, path);
  Rendered r;
  std::string title = Title(rng);
  std::string meta;
  bool nofollow = site.PageNofollow(host, path);
  bool header_nofollow = nofollow && LeafNofollowIsHeader(site, host, index);
  bool noindex = key % 10 == 5;
  if (noindex || (nofollow && !header_nofollow)) {
    meta +=
        std::string("<meta name=\"robots\" content=\"") +
        (noindex ? (nofollow && !header_nofollow ? "noindex, nofollow" : "noindex") : "nofollow") +
        "\">\n";
  }
  if (header_nofollow)
    r.headers.push_back({"X-Robots-Tag", "nofollow"});
  else if (key % 10 == 6)
    r.headers.push_back({"X-Robots-Tag", "noindex"});
  meta += "<link rel=\"canonical\" href=\"http://" + h.name + path + "\">\n";
  std::string body = Head(title + " - " + th.name, meta);
  body +=
      "<header><nav>" + Anchor(links[0], rng) + " | <span>" + th.name + "</span></nav></header>\n";
  body += "<main>\n<article>\n<h1>" + HtmlEscape(title) + "</h1>\n";
  // A changing page draws its edition paragraph and its whole article from a generator of
  // the epoch, so that successive editions are far apart in SimHash (not near-duplicates,
  // docs/testweb.md); title, links and size stay those of the page.
  std::optional<Rng> edition;
  if (site.PageChanges(host, index)) {
    r.changes_with_epoch = true;
    edition.emplace(Mix(key, static_cast<uint64_t>(epoch), 0xed17));
    body += "<p class=\"version\">Edition " + std::to_string(epoch) + ": " +
            Words(*edition, 10 + static_cast<size_t>(Mix(key, epoch) % 30)) + "</p>\n";
  }
  if (key % 4 == 0) {
    // Links a correct extractor must not see: commented out and inside a script.
    body += "<!-- <a href=\"/ghost/comment-" + std::to_string(index) +
            ".html\">old</a> -->\n"
            "<script>var tpl = '<a href=\"/ghost/script-" +
            std::to_string(index) + ".html\">x</a>';</script>\n";
  }
  const size_t target = 5500 + rng.Below(23000);
  std::string footer = Footer(th.name, text.mirrored);
  body.reserve(target + 4096);
  const size_t slots = text.mirrored ? text.slots : links.size();
  const size_t paragraphs =
      AppendArticle(edition ? *edition : rng, links, 1, slots, target - footer.size() - 30,
                    text.mirrored ? std::optional<size_t>(text.paragraphs) : std::nullopt, &body);
  if (layout_out) {
    layout_out->slots = slots;
    layout_out->paragraphs = paragraphs;
  }
  body += "</article>\n</main>\n" + footer;
  r.body = std::move(body);
  return r;
}

}  // namespace

Rendered RenderTreePage(const Site& site, int host, int index, int64_t epoch) {
  if (site.options().corpus && site.hosts()[host].normal) {
    return RenderCorpusPage(site, host, index, epoch, CorpusUrlStyle{});
  }
  TextSource text{.host = host, .index = index};
  if (std::optional<TreePage> source = site.NearCopySource(host, index)) {
    // Render the original first for its link and paragraph counts (originals are never
    // copies, so this happens once per copy). Copies are a small share of the pages.
    const TextSource original{.host = source->host, .index = source->index};
    RenderTree(site, source->host, source->index, epoch, original, &text);
    text.host = source->host;
    text.index = source->index;
    text.mirrored = true;
  }
  return RenderTree(site, host, index, epoch, text, nullptr);
}

Rendered RenderFamilyPage(const Site& site, int host, const PageRef& page) {
  const HostInfo& h = site.hosts()[host];
  Rng rng(Mix(site.options().seed, host, std::hash<std::string>{}(page.canonical)));
  Rendered r;
  if (page.canonical.size() > 4 && page.canonical.substr(page.canonical.size() - 4) == ".pdf") {
    r.content_type = "application/pdf";
    r.body = "%PDF-1.4\n% testweb synthetic document " + h.name + page.canonical + "\n" +
             Words(rng, 200) + "\n%%EOF\n";
    return r;
  }
  std::string title = page.type == PageType::kSearch ? "Search results" : Title(rng);
  std::string body = Head(title + " - " + h.name, "");
  body += "<header><nav><a href=\"/\">Home</a></nav></header>\n<main>\n<h1>" + HtmlEscape(title) +
          "</h1>\n";
  while (body.size() < 5600) body += "<p>" + Words(rng, 60) + "</p>\n";
  body += "</main>\n" + Footer(h.name);
  r.body = std::move(body);
  return r;
}

Rendered RenderCalendar(const Site& site, int host, int year, int month) {
  static const char* kMonths[] = {"January",   "February", "March",    "April",
                                  "May",       "June",     "July",     "August",
                                  "September", "October",  "November", "December"};
  const HostInfo& h = site.hosts()[host];
  Rng rng(Mix(site.options().seed, host, static_cast<uint64_t>(year) * 100 + month));
  std::string title = std::string("Events in ") + kMonths[month - 1] + " " + std::to_string(year);
  std::string body = Head(title + " - " + h.name, "");
  body += "<main>\n<h1>" + title + "</h1>\n<table>\n";
  for (int d = 1; d <= 28; ++d) {
    body += "<tr><td>" + std::to_string(d) + "</td><td>" + Words(rng, 12) + "</td></tr>\n";
  }
  body += "</table>\n<p>";
  for (const Link& l :
       site.LinksOf(host, "/calendar/" + std::to_string(year) + "/" + std::to_string(month))) {
    body += Anchor(l, rng) + " ";
  }
  body += "</p>\n</main>\n" + Footer(h.name);
  Rendered r;
  r.body = std::move(body);
  return r;
}

std::string RenderSitemap(const Site& site, int host, int part) {
  const HostInfo& h = site.hosts()[host];
  const std::string base = "http://" + h.name;
  if (part == 0 && h.sitemap_index) {
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
           "<sitemap><loc>" +
           base +
           "/sitemap-1.xml</loc></sitemap>\n"
           "<sitemap><loc>" +
           base + "/sitemap-2.xml.gz</loc></sitemap>\n</sitemapindex>\n";
  }
  int from = 0, to = h.pages;
  if (part == 1) to = h.pages / 2;
  if (part == 2) from = h.pages / 2;
  std::string out =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
  for (int i = from; i < to; ++i) {
    out += "<url><loc>" + base + (i == 0 ? "/" : "/p/" + std::to_string(i)) +
           "</loc><lastmod>2026-11-01</lastmod></url>\n";
  }
  out += "</urlset>\n";
  return part == 2 ? Gzip(out) : out;
}

std::string Gzip(std::string_view data, int level) {
  // libdeflate: about 3x cheaper than zlib at level 1, and the test web gzips every HTML
  // page it serves, so this was most of its CPU per request. One compressor per thread and
  // level (allocating one costs more than compressing a page).
  struct Compressors {
    libdeflate_compressor* by_level[13] = {};
    ~Compressors() {
      for (libdeflate_compressor* c : by_level) libdeflate_free_compressor(c);
    }
  };
  thread_local Compressors compressors;
  if (level < 0 || level > 12) return "";
  libdeflate_compressor*& c = compressors.by_level[level];
  if (c == nullptr) c = libdeflate_alloc_compressor(level);
  if (c == nullptr) return "";
  std::string out(libdeflate_gzip_compress_bound(c, data.size()), '\0');
  out.resize(libdeflate_gzip_compress(c, data.data(), data.size(), out.data(), out.size()));
  return out;  // empty on failure (cannot happen with the bound), as before
}

namespace {

// One Z_FULL_FLUSH deflate block of `n` zero bytes: self-contained (no back-reference before
// it) and byte-aligned, so copies of it can be concatenated into a valid deflate stream.
std::string ZeroBlock(size_t n) {
  std::string zeros(n, '\0');
  z_stream zs{};
  deflateInit2(&zs, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, n) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(zeros.data());
  zs.avail_in = static_cast<uInt>(n);
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FULL_FLUSH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

void PutLe32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

const std::shared_ptr<const std::string>& GzipBomb() {
  static const std::shared_ptr<const std::string> bomb = [] {
    constexpr size_t kChunk = 1024 * 1024;
    const size_t copies = kBombInflatedBytes / kChunk;
    std::string block = ZeroBlock(kChunk);
    std::string zeros(kChunk, '\0');
    uLong chunk_crc = crc32(0, reinterpret_cast<const Bytef*>(zeros.data()), kChunk);
    uLong crc = chunk_crc;
    for (size_t i = 1; i < copies; ++i) crc = crc32_combine(crc, chunk_crc, kChunk);
    auto out = std::make_shared<std::string>("\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03", 10);
    out->reserve(10 + block.size() * copies + 13);
    for (size_t i = 0; i < copies; ++i) out->append(block);
    out->append("\x01\x00\x00\xff\xff", 5);  // final empty stored block
    PutLe32(out.get(), static_cast<uint32_t>(crc));
    PutLe32(out.get(), static_cast<uint32_t>(copies * kChunk & 0xffffffffu));
    return std::shared_ptr<const std::string>(std::move(out));
  }();
  return bomb;
}

const std::shared_ptr<const std::string>& HugeBody() {
  static const std::shared_ptr<const std::string> huge = [] {
    auto out = std::make_shared<std::string>(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        "<title>Huge</title></head><body>\n");
    Rng rng(42);
    std::string para = "<p>" + Words(rng, 200) + "</p>\n";
    while (out->size() + para.size() < kHugeBodyBytes - 20) out->append(para);
    out->append("</body></html>\n");
    out->resize(kHugeBodyBytes, '\n');
    return std::shared_ptr<const std::string>(std::move(out));
  }();
  return huge;
}

}  // namespace harvest::testweb
