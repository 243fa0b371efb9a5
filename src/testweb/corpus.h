// Real pages (SiteOptions::corpus; docs/testweb.md "Real pages"): HTML files read once, split
// at the values of their URL attributes, and assembled on demand as the tree pages of the
// normal hosts, with their links rewired to the test web.
//
// Each file is scanned once with a small HTML tokenizer (comments, doctype, raw-text elements
// script/style/textarea/title/xmp/iframe/noembed/noframes/plaintext skipped; attributes
// quoted, unquoted or bare; names case-insensitive) and turned into a Document:
//   * link slots: the href of <a> and <area>, the values a crawler follows as links to other
//     pages; each page fills them with URLs of the test web (CorpusLinks). rel="nofollow"
//     is kept and remembered;
//   * self slots: the other URLs an HTML crawler follows — <link rel=canonical|next|prev|
//     alternate href>, <frame src>, <iframe src> — filled with the page's own path, so they
//     cost no request and name no page that does not exist;
//   * every other URL attribute (src, srcset, href of other elements and of other <link>s,
//     action, formaction, poster, data, background, cite, longdesc, manifest, xlink:href,
//     ping) becomes "data:," — inert, so no crawler requests a stylesheet, script or image
//     that the test web does not have;
//   * <base>, <meta name=robots|harvest> and <meta http-equiv=refresh> are cut out: they would
//     change where links resolve, hide links from a crawler or send it elsewhere.
// A page is then the document's text with the slots' values and, after the <head> tag (else
// at the top), one comment naming the page (unique bodies), plus, before </body>, links the
// file had no room for (tree children, hostile.test's hosts on h0000.test/).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "testweb/internal.h"

namespace harvest::testweb {

enum class SlotKind : uint8_t { kLink, kLinkNofollow, kSelf };

// One corpus file, split at its slots: text[0, cuts[0]) + value 0 + text[cuts[0], cuts[1]) + ...
// Each value is written with its double quotes.
struct CorpusDocument {
  std::string name;             // path below its corpus directory ("library/os.html")
  std::string text;             // the file without its slots' values and cut tags
  std::vector<uint32_t> cuts;   // where each slot's value goes, ascending
  std::vector<SlotKind> kinds;  // per slot
  // Per slot: the first link slot whose original value was the same (itself when none), so a
  // page names one target as often as the real page named its original, as navigation does.
  std::vector<uint32_t> same_as;
  uint32_t marker_at = 0;    // where the page's identity comment goes
  uint32_t appendix_at = 0;  // before the last </body> (else the end): extra links
  uint32_t link_slots = 0;   // kLink + kLinkNofollow slots
};

// Splits one HTML file (exposed for tests).
CorpusDocument SplitDocument(std::string name, std::string_view html);

class Corpus {
 public:
  explicit Corpus(std::vector<CorpusDocument> documents) : documents_(std::move(documents)) {}
  size_t size() const { return documents_.size(); }
  const CorpusDocument& document(size_t i) const { return documents_[i]; }
  // The file of tree page `index` of normal host `host` in a web of `hosts` x `pages`: host h
  // starts at file floor(h * size / hosts) and takes the next ones in path order (wrapping),
  // so hosts spread over the whole corpus, a host's pages are neighbouring files (often one
  // site), and with fewer files than pages files repeat across hosts.
  size_t FileOf(int host, int index, int hosts) const;

 private:
  std::vector<CorpusDocument> documents_;
};

// How the page spells URLs of other hosts: the served web writes http://hNNNN.test/...; an
// export writes <scheme>://hNNNN.<domain>[:port]/... Same-host links are root-relative.
struct CorpusUrlStyle {
  std::string domain = "test";
  int port = 0;
  bool https = false;
};

// The links of tree page (host, index) of a normal host, in document order: one per slot of
// its file (link slots rewired, self slots to the page itself), then the appended ones.
// Link targets: the first two followable link slots (or appended links) go to tree pages
// 2i+1 and 2i+2 (when they exist), so every page is reachable from "/"; every other link slot
// goes to a page of another normal host with probability cross_host_share, else to a page of
// this host. h0000.test/ also links hostile.test's hosts (with hostile on).
std::vector<Link> CorpusLinks(const Site& site, int host, int index, const CorpusUrlStyle& style);
// The page's HTML; `epoch` goes into the identity comment of a changing page. Sets
// *anchor_links (when given) to the page's <a>/<area> links (link slots and appended links).
Rendered RenderCorpusPage(const Site& site, int host, int index, int64_t epoch,
                          const CorpusUrlStyle& style, size_t* anchor_links = nullptr);
// Host name of normal host `host` under `domain` ("h0001.test" -> "h0001.peers.test").
std::string CorpusHostName(const Site& site, int host, std::string_view domain);

}  // namespace harvest::testweb
