// extract: link and metadata extraction from fetched pages, charset handling, sitemap parsing
// and Content-Encoding decoding — everything the process threads do to a body before hashing.
//
// Standards followed:
//   - HTML tokenization: WHATWG HTML §13.2.5 (tokenizer states: data, tag open, attribute
//     name/value, comments incl. `<!-->` and `--!>`, bogus comments, DOCTYPE, RAWTEXT,
//     RCDATA, script data with its escaped/double-escaped states, PLAINTEXT) and §13.2.5.72+
//     character references (full WHATWG named table, legacy no-semicolon forms, the
//     attribute rule, numeric references with the 0x80-0x9F replacement table).
//   - Encoding: WHATWG Encoding labels; HTML §13.2.3 encoding sniffing (BOM, transport
//     charset, the 1024-byte <meta> prescan), uchardet as the last resort.
//   - Sitemaps: sitemaps.org protocol 0.9 (urlset, sitemapindex, text; 50,000 URLs and
//     50 MiB uncompressed per file, an index of 50,000 sitemaps), parsed as a stream.
//   - Content-Encoding: RFC 9110 §8.4 (gzip, x-gzip, deflate, br, zstd, identity; lists are
//     decoded in reverse order of application).
//
// Deliberate departures (see docs/extraction.md):
//   - There is no tree builder. The tokenizer switches to RAWTEXT/RCDATA/script data on the
//     start tag alone (as the tree builder would for HTML elements). Foreign content (<svg>,
//     <math>) is tracked with a depth counter reset by the HTML "breakout" tags; HTML
//     integration points inside foreign content are not modelled. <noscript> is parsed as
//     markup (scripting disabled, as for a crawler). Tree-construction rules that drop
//     elements (e.g. <a> inside <select>, <frame> outside a <frameset>) are not applied, so
//     such links ARE returned.
//   - A BOM wins over the Content-Type charset, as in browsers (HTML §13.2.3.1).
//   - <![CDATA[ outside foreign content is a bogus comment (as the spec says); inside
//     foreign content it is text up to "]]>".
//
// Entry points: ExtractHtml, ParseXRobotsTag, IsHtml, SitemapReader (and ParseSitemap on top
// of it), DecodeContent, plus the charset helpers DetectCharset / ConvertToUtf8.
//
// Thread-safety: every function is pure and reentrant; no shared mutable state. A
// SitemapReader object is used by one thread at a time.
// Nothing here throws (std::bad_alloc aside) or crashes on hostile input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harvest::extract {

enum class LinkSource { kAnchor, kArea, kLink, kFrame, kIframe };

// "anchor", "area", "link", "frame", "iframe".
std::string_view LinkSourceName(LinkSource source);

struct Link {
  // The attribute value, character references decoded, leading/trailing ASCII whitespace
  // stripped and tab/CR/LF removed (as the WHATWG URL parser would). Never empty. Not resolved
  // against the base: the caller resolves and filters schemes.
  std::string href;
  LinkSource source = LinkSource::kAnchor;
  // Lowercased rel tokens, space-joined ("" when there is no rel attribute).
  std::string rel;
  // rel contains the token "nofollow". (Meta robots nofollow is reported separately in
  // PageInfo::meta_robots; it is not copied onto each link.)
  bool nofollow = false;
};

struct RobotsDirectives {
  bool noindex = false;
  bool nofollow = false;
};

struct ExtractOptions {
  // <meta name=robots> and <meta name=<product_token>> are both honoured (case-insensitive).
  // Default: "harvest".
  std::string product_token = "harvest";
  // Links beyond this count are dropped and counted in PageInfo::links_dropped, bounding the
  // memory one hostile page can cost. Default: 10,000.
  size_t max_links = 10000;
  // Collect visible text (for SimHash fingerprints). Default: true.
  bool want_text = true;
  // Visible text is cut (on a UTF-8 boundary) at this many bytes. Default: 1 MiB.
  size_t max_text_bytes = 1 << 20;
};

struct PageInfo {
  std::vector<Link> links;       // in document order
  size_t links_dropped = 0;      // links beyond ExtractOptions::max_links
  std::string base_href;         // first <base href>, raw (trimmed); "" when none
  std::string canonical;         // href of the first <link rel=canonical>, "" when none
  RobotsDirectives meta_robots;  // from <meta name=robots|token> (OR of all such tags)
  std::string title;             // first <title> (not inside <svg>), UTF-8, whitespace collapsed
  std::string text;              // visible text, UTF-8, whitespace collapsed
  // Charset used to decode: lowercase WHATWG canonical name ("utf-8", "windows-1252", ...).
  std::string charset;
};

// body: raw bytes (already content-decoded). content_type: the header value or "".
// Detects the charset, converts to UTF-8 (invalid bytes become U+FFFD), tokenizes and
// extracts. Never fails: garbage in gives a (possibly empty) PageInfo.
PageInfo ExtractHtml(std::string_view body, std::string_view content_type,
                     const ExtractOptions& options = {});

// Parses ONE X-Robots-Tag field value: comma-separated directives, each optionally prefixed
// by "<agent>:", which scopes it and the directives after it in the same value to that
// agent. Directives without an agent, or for product_token (case-insensitive), count.
// Several header lines: call once per line and OR the results (joining lines with ","
// would let an agent prefix leak onto the next line's directives).
RobotsDirectives ParseXRobotsTag(std::string_view header_value, std::string_view product_token);

// True when the Content-Type's essence is text/html or application/xhtml+xml; when the
// header is absent (or unknown/unknown, application/unknown, */*), sniffs the body per
// WHATWG MIME Sniffing §7.1 (HTML patterns only).
bool IsHtml(std::string_view content_type, std::string_view body);

// Charset sniffing (HTML §13.2.3): BOM, then the charset parameter of content_type, then
// the <meta> prescan of the first 1024 bytes, then "utf-8" if the bytes are valid UTF-8,
// then uchardet, then "windows-1252". Returns a lowercase WHATWG canonical name.
std::string DetectCharset(std::string_view body, std::string_view content_type);

// Converts body from charset (any WHATWG label) to UTF-8; a leading BOM of that charset is
// removed and invalid input becomes U+FFFD. Unknown labels are decoded as windows-1252.
std::string ConvertToUtf8(std::string_view body, std::string_view charset);

// Maps a WHATWG encoding label ("latin1", " ISO-8859-1 ", "utf8") to its canonical lowercase
// name ("windows-1252", "utf-8"); "" for an unknown label.
std::string CanonicalCharset(std::string_view label);

// What a sitemap says about one of its URLs (sitemaps.org 0.9): hints for the recrawl
// schedule (docs/freshness.md) and the URL's priority (docs/priority.md).
struct SitemapHint {
  int64_t lastmod_us = 0;    // <lastmod> (W3C datetime) as µs since the epoch; 0 = none
  int64_t changefreq_s = 0;  // <changefreq>: always 60, hourly 3600, daily 86400, weekly,
                             // monthly (30 d), yearly (365 d); 0 = none or "never"
  double priority = -1;      // <priority> 0.0..1.0; -1 = none or not a number in that range
};

// W3C datetime (sitemaps.org <lastmod>): "YYYY-MM-DD", or with "Thh:mm", ":ss", ".s" and a
// zone ("Z" or "+hh:mm"); µs since the epoch, nullopt when it is not one.
std::optional<int64_t> ParseW3cDatetime(std::string_view text);

// sitemaps.org protocol 0.9 limits, per sitemap file: "no more than 50,000 URLs and must be
// no larger than 50MB (52,428,800 bytes)" uncompressed; a sitemap index lists at most
// 50,000 sitemaps. A <loc> (or text line) longer than kMaxSitemapUrlBytes after decoding
// is skipped: the protocol says URLs "must be less than 2,048 characters", and admission
// refuses longer ones anyway (frontier::AdmissionOptions::max_url_length).
inline constexpr size_t kMaxSitemapUrls = 50000;
inline constexpr size_t kMaxSitemapBytes = 50u << 20;
inline constexpr size_t kMaxSitemapUrlBytes = 2048;

// A streaming sitemap parser (sitemaps.org 0.9): XML <urlset> and <sitemapindex> (namespace
// prefixes, CDATA, comments, processing instructions and DOCTYPE tolerated; entities
// decoded) or a text sitemap (one URL per line), optionally gzip-compressed — up to two
// gzip layers, detected by their magic bytes, so a .xml.gz served with Content-Encoding:
// gzip needs no decoding first. The body is fed in chunks of any size, split anywhere; a
// gzip body is inflated chunk by chunk. Each URL is handed to the callback, with its hints,
// as soon as its <url>/<sitemap> element ends (a text sitemap's line as soon as its newline
// is read) — nothing of the document is kept.
//
// Memory is bounded whatever the document: a gzip layer's inflate state and 64 KiB output
// block, one element's text (8 KiB of raw <loc> text, 256 bytes per hint; longer ones are
// skipped), element names cut at 128 bytes, and at most 64 nested elements (deeper is an
// error). Limits (sitemaps.org): after kMaxSitemapUrls URLs, or kMaxSitemapBytes of
// uncompressed input, the reader stops and truncated() is true. It never fails on hostile
// input: faults (corrupt or cut gzip, a root element that is not a sitemap's, nesting) stop
// it with error() set, and the URLs emitted before stay valid.
//
// Thread-safety: one reader per document, on one thread; the callback runs inside Feed()
// and Finish() and must not throw.
class SitemapReader {
 public:
  // url: the <loc> text (entities decoded, trimmed) or the text line (trimmed); never empty,
  // at most kMaxSitemapUrlBytes. The view is valid during the call only. hint: empty for a
  // text sitemap and for a sitemap index's entries.
  using Callback = std::function<void(std::string_view url, const SitemapHint& hint)>;

  // maybe_gzip: a body (or its inflated content) starting with the gzip magic is inflated.
  explicit SitemapReader(Callback on_url, bool maybe_gzip = true);
  ~SitemapReader();
  SitemapReader(const SitemapReader&) = delete;
  SitemapReader& operator=(const SitemapReader&) = delete;

  // Parses the next bytes of the body. Returns false once the reader has stopped (a limit
  // or a fault); later input is ignored.
  bool Feed(std::string_view chunk);
  // The body has ended. Emits a last text line without its newline (unless input_cut: the
  // body was cut short, so that line may be a cut URL), reports a gzip stream without its
  // end and an XML document without a root element. Call once, after the last Feed().
  void Finish(bool input_cut = false);

  bool is_index() const;             // the root element is <sitemapindex>: the URLs are sitemaps
  bool truncated() const;            // stopped at kMaxSitemapUrls URLs or kMaxSitemapBytes
  const std::string& error() const;  // "" or the first fault ("corrupt gzip sitemap", ...)
  size_t urls() const;               // URLs emitted so far
  size_t skipped() const;            // <loc>s / lines longer than kMaxSitemapUrlBytes, not emitted
  uint64_t bytes() const;            // uncompressed bytes parsed so far

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

struct SitemapResult {
  std::vector<std::string> urls;   // <loc> values (entities decoded, trimmed) or text lines
  std::vector<SitemapHint> hints;  // one per url (all empty for a text sitemap or an index)
  bool is_index = false;           // a <sitemapindex>: urls are sitemaps
  bool truncated = false;          // more than 50,000 URLs, or more than 50 MiB uncompressed
  size_t skipped = 0;              // URLs longer than kMaxSitemapUrlBytes
  std::string error;               // "" when the document was a sitemap
};

// Parses a whole XML sitemap, sitemap index or text sitemap with a SitemapReader and
// collects its URLs (tests and small documents; the crawl streams). With maybe_gzip, gzip
// is inflated as the reader does.
SitemapResult ParseSitemap(std::string_view body, bool maybe_gzip = true);

// Decodes a body by Content-Encoding (gzip, x-gzip, deflate — zlib or raw —, br, zstd,
// identity; a list like "gzip, br" is undone in reverse), refusing to produce more than
// max_bytes: then ok = false, too_large = true and body holds the first max_bytes bytes, so a
// decompression bomb is stopped. Corrupt or truncated input: ok = false, error set, body
// holds what decoded before the fault. Unknown coding: ok = false, unsupported = true,
// body = raw.
struct DecodeResult {
  std::string body;
  bool ok = true;
  bool too_large = false;
  std::string error;
  bool unsupported = false;  // a coding this decoder does not know
};
DecodeResult DecodeContent(std::string_view content_encoding, std::string_view raw,
                           size_t max_bytes);

}  // namespace harvest::extract
