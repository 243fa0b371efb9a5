// Real pages: loading and splitting corpus files, rewiring their links, assembling pages and
// exporting the web for a static server (corpus.h, docs/testweb.md "Real pages").
#include "testweb/corpus.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "base/ascii.h"

namespace harvest::testweb {

namespace {

namespace fs = std::filesystem;

// Salt of the link choices (distinct from the other Mix() uses of the site).
constexpr uint64_t kCorpusLinkSalt = 0x636f7270;  // "corp"
// The first bytes in which a file must show it is HTML.
constexpr size_t kSniffBytes = 4096;
// What a URL attribute that is not followed as a link becomes: a URL no crawler requests.
constexpr std::string_view kInertUrl = "\"data:,\"";

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char LowerChar(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

// Position of `needle` (lower case) in `s` from `from`, ASCII case-insensitively; npos if none.
size_t FindNoCase(std::string_view s, std::string_view needle, size_t from) {
  if (needle.empty() || s.size() < needle.size()) return std::string_view::npos;
  for (size_t i = from; i + needle.size() <= s.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && LowerChar(s[i + k]) == needle[k]) ++k;
    if (k == needle.size()) return i;
  }
  return std::string_view::npos;
}

// The space-separated tokens of an attribute value, lower case, each surrounded by spaces
// (" next prev "), for whole-token tests with find(" token ").
std::string Tokens(std::string_view value) {
  std::string out = " ";
  for (char c : value) out += IsSpace(c) ? ' ' : LowerChar(c);
  return out + " ";
}
bool HasToken(const std::string& tokens, std::string_view token) {
  return tokens.find(" " + std::string(token) + " ") != std::string::npos;
}

std::string Trimmed(std::string_view v) {
  while (!v.empty() && IsSpace(v.front())) v.remove_prefix(1);
  while (!v.empty() && IsSpace(v.back())) v.remove_suffix(1);
  return ToLowerAscii(v);
}

struct Attribute {
  std::string name;        // lower case
  std::string_view value;  // without quotes
  size_t value_begin = 0;  // the value token, quotes included
  size_t value_end = 0;
  bool has_value = false;
};

struct StartTag {
  std::string name;  // lower case
  size_t begin = 0;  // '<'
  size_t end = 0;    // past '>'
  std::vector<Attribute> attributes;
  const Attribute* Find(std::string_view name) const {
    for (const Attribute& a : attributes) {
      if (a.name == name) return &a;
    }
    return nullptr;
  }
};

// Parses the start tag at s[i] == '<' (a letter follows), as an HTML tokenizer does: the
// name up to a space, '/' or '>', then attributes (names up to a space, '/', '>' or '='; values
// double-quoted, single-quoted or unquoted up to a space or '>'). A tag cut off by the end of
// the file ends there.
StartTag ParseStartTag(std::string_view s, size_t i) {
  StartTag tag;
  tag.begin = i;
  size_t p = i + 1;
  while (p < s.size() && !IsSpace(s[p]) && s[p] != '/' && s[p] != '>') {
    tag.name += LowerChar(s[p]);
    ++p;
  }
  while (p < s.size()) {
    while (p < s.size() && (IsSpace(s[p]) || s[p] == '/')) ++p;
    if (p >= s.size()) break;
    if (s[p] == '>') {
      ++p;
      break;
    }
    Attribute a;
    a.name += LowerChar(s[p++]);  // a first '=' belongs to the name
    while (p < s.size() && !IsSpace(s[p]) && s[p] != '/' && s[p] != '>' && s[p] != '=') {
      a.name += LowerChar(s[p++]);
    }
    size_t q = p;
    while (q < s.size() && IsSpace(s[q])) ++q;
    if (q < s.size() && s[q] == '=') {
      ++q;
      while (q < s.size() && IsSpace(s[q])) ++q;
      a.has_value = true;
      a.value_begin = q;
      if (q < s.size() && (s[q] == '"' || s[q] == '\'')) {
        const size_t close = s.find(s[q], q + 1);
        const size_t end = close == std::string_view::npos ? s.size() : close;
        a.value = s.substr(q + 1, end - q - 1);
        p = close == std::string_view::npos ? s.size() : close + 1;
      } else {
        p = q;
        while (p < s.size() && !IsSpace(s[p]) && s[p] != '>') ++p;
        a.value = s.substr(q, p - q);
      }
      a.value_end = p;
    }
    tag.attributes.push_back(std::move(a));
  }
  tag.end = p;
  return tag;
}

// Elements whose content is text up to their end tag (no tags, no links inside).
bool IsRawText(std::string_view name) {
  return name == "script" || name == "style" || name == "textarea" || name == "title" ||
         name == "xmp" || name == "iframe" || name == "noembed" || name == "noframes";
}

// URL attributes made inert when they are not a slot.
bool IsUrlAttribute(std::string_view name) {
  return name == "href" || name == "src" || name == "srcset" || name == "action" ||
         name == "formaction" || name == "poster" || name == "data" || name == "background" ||
         name == "cite" || name == "longdesc" || name == "manifest" || name == "xlink:href" ||
         name == "ping" || name == "lowsrc" || name == "dynsrc" || name == "codebase" ||
         name == "archive" || name == "classid" || name == "usemap" || name == "profile" ||
         name == "icon";
}

// One change to the file: [begin, end) replaced by `replacement`, or by a slot, or a
// zero-length mark of where the identity comment or the appendix goes.
struct Edit {
  size_t begin = 0;
  size_t end = 0;
  std::string_view replacement;
  int slot = -1;  // a SlotKind
  enum Mark { kNone, kMarker, kAppendix } mark = kNone;
  std::string_view original = {};  // a slot's value in the file
};

void EditTag(const StartTag& tag, std::vector<Edit>* edits, bool* marker_placed) {
  if (tag.name == "base") {
    edits->push_back({tag.begin, tag.end, "", -1, Edit::kNone});
    return;
  }
  if (tag.name == "meta") {
    const Attribute* name = tag.Find("name");
    const Attribute* equiv = tag.Find("http-equiv");
    const std::string n = name ? Trimmed(name->value) : "";
    if (n == "robots" || n == "harvest" || (equiv && Trimmed(equiv->value) == "refresh")) {
      edits->push_back({tag.begin, tag.end, "", -1, Edit::kNone});
      return;
    }
  }
  const Attribute* slot = nullptr;
  SlotKind kind = SlotKind::kLink;
  if (tag.name == "a" || tag.name == "area") {
    slot = tag.Find("href");
    const Attribute* rel = tag.Find("rel");
    if (rel && HasToken(Tokens(rel->value), "nofollow")) kind = SlotKind::kLinkNofollow;
  } else if (tag.name == "link") {
    const Attribute* rel = tag.Find("rel");
    const std::string tokens = rel ? Tokens(rel->value) : "";
    if (HasToken(tokens, "canonical") || HasToken(tokens, "next") || HasToken(tokens, "prev") ||
        HasToken(tokens, "alternate")) {
      slot = tag.Find("href");
      kind = SlotKind::kSelf;
    }
  } else if (tag.name == "frame" || tag.name == "iframe") {
    slot = tag.Find("src");
    kind = SlotKind::kSelf;
  }
  if (slot != nullptr && !slot->has_value) slot = nullptr;
  for (const Attribute& a : tag.attributes) {
    if (!a.has_value) continue;
    if (&a == slot) {
      edits->push_back(
          {a.value_begin, a.value_end, "", static_cast<int>(kind), Edit::kNone, a.value});
    } else if (IsUrlAttribute(a.name)) {
      edits->push_back({a.value_begin, a.value_end, kInertUrl, -1, Edit::kNone});
    }
  }
  if (!*marker_placed && tag.name == "head") {
    edits->push_back({tag.end, tag.end, "", -1, Edit::kMarker});
    *marker_placed = true;
  }
}

bool LooksLikeHtml(std::string_view data) {
  if (std::memchr(data.data(), '\0', data.size()) != nullptr) return false;
  const std::string_view head = data.substr(0, kSniffBytes);
  return FindNoCase(head, "<html", 0) != std::string_view::npos ||
         FindNoCase(head, "<!doctype html", 0) != std::string_view::npos ||
         FindNoCase(head, "<head", 0) != std::string_view::npos ||
         FindNoCase(head, "<body", 0) != std::string_view::npos;
}

std::string TreePathOf(int index) { return index == 0 ? "/" : "/p/" + std::to_string(index); }

std::string Origin(const Site& site, int host, const CorpusUrlStyle& style) {
  std::string origin =
      (style.https ? "https://" : "http://") + CorpusHostName(site, host, style.domain);
  if (style.port > 0) origin += ":" + std::to_string(style.port);
  return origin;
}

Link SameHost(const HostInfo& h, const std::string& path) {
  Link l;
  l.href = path;
  l.host = h.name;
  l.target = path;
  return l;
}

// Writes `data` to `path`; IOError naming the file when it cannot.
Status WriteWholeFile(const fs::path& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) return Status::IOError("cannot write " + path.string());
  return Status::Ok();
}

}  // namespace

CorpusDocument SplitDocument(std::string name, std::string_view s) {
  std::vector<Edit> edits;
  bool marker_placed = false;
  size_t html_end = std::string_view::npos, doctype_end = std::string_view::npos;
  size_t body_close = std::string_view::npos;
  size_t i = 0;
  while (i < s.size()) {
    const size_t lt = s.find('<', i);
    if (lt == std::string_view::npos || lt + 1 >= s.size()) break;
    const char c = s[lt + 1];
    if (s.compare(lt, 4, "<!--") == 0) {
      if (s.compare(lt, 5, "<!-->") == 0) {
        i = lt + 5;
      } else if (s.compare(lt, 6, "<!--->") == 0) {
        i = lt + 6;
      } else {
        const size_t a = s.find("-->", lt + 4), b = s.find("--!>", lt + 4);
        const size_t end = std::min(a == std::string_view::npos ? s.size() : a + 3,
                                    b == std::string_view::npos ? s.size() : b + 4);
        i = end;
      }
    } else if (c == '!' || c == '?') {
      const size_t gt = s.find('>', lt + 2);
      i = gt == std::string_view::npos ? s.size() : gt + 1;
      if (doctype_end == std::string_view::npos &&
          FindNoCase(s.substr(lt, 9), "<!doctype", 0) == 0) {
        doctype_end = i;
      }
    } else if (c == '/') {
      if (lt + 2 < s.size() && IsAlpha(s[lt + 2]) &&
          FindNoCase(s.substr(lt, 6), "</body", 0) == 0) {
        body_close = lt;
      }
      const size_t gt = s.find('>', lt + 2);
      i = gt == std::string_view::npos ? s.size() : gt + 1;
    } else if (IsAlpha(c)) {
      const StartTag tag = ParseStartTag(s, lt);
      EditTag(tag, &edits, &marker_placed);
      if (html_end == std::string_view::npos && tag.name == "html") html_end = tag.end;
      i = tag.end;
      if (tag.name == "plaintext") break;
      if (IsRawText(tag.name)) {
        const size_t close = FindNoCase(s, "</" + tag.name, i);
        i = close == std::string_view::npos ? s.size() : close;
      }
    } else {
      i = lt + 1;
    }
  }
  if (!marker_placed) {
    const size_t at = html_end != std::string_view::npos      ? html_end
                      : doctype_end != std::string_view::npos ? doctype_end
                                                              : 0;
    edits.push_back({at, at, "", -1, Edit::kMarker});
  }
  if (body_close != std::string_view::npos) {
    edits.push_back({body_close, body_close, "", -1, Edit::kAppendix});
  }
  std::stable_sort(edits.begin(), edits.end(),
                   [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
  CorpusDocument doc;
  doc.name = std::move(name);
  doc.text.reserve(s.size());
  bool appendix_placed = false;
  size_t pos = 0;
  std::unordered_map<std::string_view, uint32_t> first_link;  // original value -> slot
  for (const Edit& e : edits) {
    if (e.begin < pos) continue;  // cannot happen: edits do not overlap
    doc.text.append(s.substr(pos, e.begin - pos));
    pos = e.end;
    if (e.slot >= 0) {
      doc.cuts.push_back(static_cast<uint32_t>(doc.text.size()));
      doc.kinds.push_back(static_cast<SlotKind>(e.slot));
      const auto k = static_cast<uint32_t>(doc.same_as.size());
      if (e.slot != static_cast<int>(SlotKind::kSelf)) {
        ++doc.link_slots;
        doc.same_as.push_back(first_link.try_emplace(e.original, k).first->second);
      } else {
        doc.same_as.push_back(k);
      }
    } else if (e.mark == Edit::kMarker) {
      doc.marker_at = static_cast<uint32_t>(doc.text.size());
    } else if (e.mark == Edit::kAppendix) {
      doc.appendix_at = static_cast<uint32_t>(doc.text.size());
      appendix_placed = true;
    } else {
      doc.text.append(e.replacement);
    }
  }
  doc.text.append(s.substr(std::min(pos, s.size())));
  if (!appendix_placed) doc.appendix_at = static_cast<uint32_t>(doc.text.size());
  doc.text.shrink_to_fit();
  return doc;
}

size_t Corpus::FileOf(int host, int index, int hosts) const {
  const uint64_t n = documents_.size();
  const uint64_t start =
      static_cast<uint64_t>(host) * n / static_cast<uint64_t>(std::max(hosts, 1));
  return static_cast<size_t>((start + static_cast<uint64_t>(index)) % n);
}

Result<std::shared_ptr<const Corpus>> LoadCorpus(const std::vector<std::string>& dirs,
                                                 CorpusStats* stats_out) {
  CorpusStats stats;
  std::vector<CorpusDocument> documents;
  if (dirs.empty()) return Status::InvalidArgument("corpus: no directory given");
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      return Status::InvalidArgument("corpus: " + dir + ": not a directory");
    }
    // Paths first, sorted, so that the corpus does not depend on the directory order.
    std::vector<fs::path> files;
    std::set<fs::path> visited{fs::canonical(dir, ec)};
    fs::recursive_directory_iterator it(dir,
                                        fs::directory_options::follow_directory_symlink |
                                            fs::directory_options::skip_permission_denied,
                                        ec);
    if (ec) return Status::IOError("corpus: cannot read " + dir + ": " + ec.message());
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) return Status::IOError("corpus: cannot read below " + dir + ": " + ec.message());
      const fs::directory_entry& entry = *it;
      std::error_code e2;
      if (entry.is_directory(e2)) {
        // A symlink back up the tree would recurse forever.
        if (!visited.insert(fs::canonical(entry.path(), e2)).second) it.disable_recursion_pending();
        continue;
      }
      if (!entry.is_regular_file(e2)) continue;
      const std::string ext = ToLowerAscii(entry.path().extension().string());
      if (ext == ".html" || ext == ".htm") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      ++stats.found;
      std::error_code e3;
      const uintmax_t size = fs::file_size(file, e3);
      if (e3) return Status::IOError("corpus: " + file.string() + ": " + e3.message());
      if (size < kMinCorpusFileBytes) {
        ++stats.too_small;
        continue;
      }
      if (size > kMaxCorpusFileBytes) {
        ++stats.too_large;
        continue;
      }
      std::ifstream in(file, std::ios::binary);
      std::string data(static_cast<size_t>(size), '\0');
      in.read(data.data(), static_cast<std::streamsize>(size));
      if (!in) return Status::IOError("corpus: cannot read " + file.string());
      if (!LooksLikeHtml(data)) {
        ++stats.not_html;
        continue;
      }
      CorpusDocument doc = SplitDocument(file.lexically_relative(dir).string(), data);
      ++stats.used;
      stats.bytes += size;
      stats.links += doc.link_slots;
      documents.push_back(std::move(doc));
    }
  }
  if (stats_out != nullptr) *stats_out = stats;
  if (documents.empty()) {
    std::string names;
    for (const std::string& d : dirs) names += (names.empty() ? "" : ", ") + d;
    return Status::InvalidArgument(
        "corpus: no usable HTML file (*.html, *.htm of 1 KiB to 1 MiB) "
        "under " +
        names + " (" + std::to_string(stats.found) + " found)");
  }
  return std::shared_ptr<const Corpus>(std::make_shared<Corpus>(std::move(documents)));
}

std::string CorpusHostName(const Site& site, int host, std::string_view domain) {
  std::string name = site.hosts()[host].name;
  if (domain == "test") return name;
  if (name.ends_with(".test")) name.resize(name.size() - 5);
  return name + "." + std::string(domain);
}

std::vector<Link> CorpusLinks(const Site& site, int host, int index, const CorpusUrlStyle& style) {
  const SiteOptions& o = site.options();
  const Corpus& corpus = *o.corpus;
  const CorpusDocument& doc = corpus.document(corpus.FileOf(host, index, o.hosts));
  const HostInfo& h = site.hosts()[host];
  Rng rng(Mix(o.seed, host, static_cast<uint64_t>(index) * 131 + kCorpusLinkSalt));
  std::vector<int> children;
  for (long c = 2L * index + 1; c <= 2L * index + 2 && c < h.pages; ++c) {
    children.push_back(static_cast<int>(c));
  }
  size_t next_child = 0;
  const std::string self = TreePathOf(index);
  std::vector<Link> links;
  links.reserve(doc.kinds.size() + 2);
  for (size_t k = 0; k < doc.kinds.size(); ++k) {
    const SlotKind kind = doc.kinds[k];
    if (doc.same_as[k] != k) {  // the same target as an earlier link with this original
      Link l = links[doc.same_as[k]];
      l.nofollow = kind == SlotKind::kLinkNofollow;
      links.push_back(std::move(l));
      continue;
    }
    if (kind == SlotKind::kSelf) {
      links.push_back(SameHost(h, self));
      continue;
    }
    const bool nofollow = kind == SlotKind::kLinkNofollow;
    if (!nofollow && next_child < children.size()) {
      links.push_back(SameHost(h, TreePathOf(children[next_child++])));
      continue;
    }
    Link l;
    if (o.hosts > 1 && rng.Chance(o.cross_host_share)) {
      int other = static_cast<int>(rng.Below(o.hosts - 1));
      if (other >= host) ++other;
      const HostInfo& oh = site.hosts()[other];
      l.host = oh.name;
      l.target = TreePathOf(static_cast<int>(rng.Below(oh.pages)));
      l.href = Origin(site, other, style) + l.target;
    } else {
      l = SameHost(h, TreePathOf(static_cast<int>(rng.Below(h.pages))));
    }
    l.nofollow = nofollow;
    links.push_back(std::move(l));
  }
  // The children the file had no followable link for.
  for (; next_child < children.size(); ++next_child) {
    links.push_back(SameHost(h, TreePathOf(children[next_child])));
  }
  if (host == 0 && index == 0 && o.hostile) {
    for (const HostInfo& s : site.hosts()) {
      if (s.normal || !(s.name == kHostileHost || s.name.starts_with("robots-"))) continue;
      Link l;
      l.host = s.name;
      l.target = "/";
      l.href = "http://" + s.name + "/";
      links.push_back(std::move(l));
    }
  }
  return links;
}

Rendered RenderCorpusPage(const Site& site, int host, int index, int64_t epoch,
                          const CorpusUrlStyle& style, size_t* anchor_links) {
  const Corpus& corpus = *site.options().corpus;
  const size_t file = corpus.FileOf(host, index, site.options().hosts);
  const CorpusDocument& doc = corpus.document(file);
  const std::vector<Link> links = CorpusLinks(site, host, index, style);
  Rendered r;
  r.content_type = "text/html";  // the file's own <meta charset> decides
  r.changes_with_epoch = site.PageChanges(host, index);
  std::string marker = "\n<!-- harvest testweb page " + CorpusHostName(site, host, style.domain) +
                       TreePathOf(index) + ": corpus file " + std::to_string(file) + " " + doc.name;
  if (r.changes_with_epoch) marker += ", edition " + std::to_string(epoch);
  marker += " -->\n";
  std::string appendix;
  if (links.size() > doc.kinds.size()) {
    appendix = "<p class=\"harvest-testweb-more\">";
    for (size_t k = doc.kinds.size(); k < links.size(); ++k) {
      appendix += "<a href=\"" + links[k].href + "\">more " + std::to_string(k) + "</a> ";
    }
    appendix += "</p>\n";
  }
  std::string& body = r.body;
  body.reserve(doc.text.size() + marker.size() + appendix.size() + links.size() * 48);
  // The identity comment and the appendix, in the order of their places in the text.
  struct Mark {
    uint32_t at;
    const std::string* text;
  };
  Mark marks[2] = {{doc.marker_at, &marker}, {doc.appendix_at, &appendix}};
  if (marks[1].at < marks[0].at) std::swap(marks[0], marks[1]);
  size_t pos = 0, next_mark = 0;
  auto emit_marks_before = [&](size_t at) {
    for (; next_mark < 2 && marks[next_mark].at <= at; ++next_mark) {
      body.append(doc.text, pos, marks[next_mark].at - pos);
      pos = marks[next_mark].at;
      body += *marks[next_mark].text;
    }
  };
  for (size_t k = 0; k < doc.cuts.size(); ++k) {
    emit_marks_before(doc.cuts[k]);
    body.append(doc.text, pos, doc.cuts[k] - pos);
    pos = doc.cuts[k];
    body += '"';
    body += links[k].href;
    body += '"';
  }
  emit_marks_before(doc.text.size());
  body.append(doc.text, pos, std::string::npos);
  if (anchor_links != nullptr) *anchor_links = doc.link_slots + (links.size() - doc.kinds.size());
  return r;
}

Result<StaticExportStats> ExportStaticWeb(const Site& site, const StaticExportOptions& options) {
  if (!site.options().corpus) {
    return Status::InvalidArgument("export: only a real-pages web (a corpus) can be exported");
  }
  if (options.domain.empty() || options.domain.find_first_of("/: ") != std::string::npos) {
    return Status::InvalidArgument("export: bad domain '" + options.domain + "'");
  }
  const CorpusUrlStyle style{options.domain, options.port, options.https};
  const fs::path www = fs::path(options.dir) / "www";
  StaticExportStats stats;
  std::vector<bool> used(site.options().corpus->size(), false);
  std::string seeds, names;
  for (size_t h = 0; h < site.hosts().size(); ++h) {
    const HostInfo& info = site.hosts()[h];
    if (!info.normal) continue;
    const int host = static_cast<int>(h);
    const std::string name = CorpusHostName(site, host, options.domain);
    const fs::path root = www / name;
    std::error_code ec;
    fs::create_directories(root / "p", ec);
    if (ec)
      return Status::IOError("export: cannot create " + (root / "p").string() + ": " +
                             ec.message());
    Status s = WriteWholeFile(root / "robots.txt", "User-agent: *\nDisallow:\n");
    if (!s.ok()) return s;
    for (int i = 0; i < info.pages; ++i) {
      size_t anchors = 0;
      const Rendered page = RenderCorpusPage(site, host, i, 0, style, &anchors);
      s = WriteWholeFile(i == 0 ? root / "index.html" : root / "p" / std::to_string(i), page.body);
      if (!s.ok()) return s;
      used[site.options().corpus->FileOf(host, i, site.options().hosts)] = true;
      ++stats.pages;
      stats.bytes += page.body.size();
      stats.links += anchors;
    }
    seeds += (options.https ? "https://" : "http://") + name +
             (options.port > 0 ? ":" + std::to_string(options.port) : "") + "/\n";
    names += name + "\n";
  }
  stats.distinct_files = static_cast<size_t>(std::count(used.begin(), used.end(), true));
  Status s = WriteWholeFile(fs::path(options.dir) / "seeds.txt", seeds);
  if (!s.ok()) return s;
  s = WriteWholeFile(fs::path(options.dir) / "hosts.txt", names);
  if (!s.ok()) return s;
  return stats;
}

}  // namespace harvest::testweb
