// ExtractHtml: links, <base>, canonical, meta robots, title and visible text from one page.
#include "extract/extract.h"

#include <algorithm>
#include <array>
#include <string>

#include "base/ascii.h"
#include "extract/char_ref.h"
#include "extract/charset.h"
#include "extract/collapse.h"
#include "extract/tokenizer.h"

namespace harvest::extract {
namespace {

using internal::AppendCollapsed;
using internal::Tag;
using internal::TextKind;

// WHATWG URL's "C0 control or space" (U+0000 to U+0020; HTML's whitespace among them).
bool IsC0ControlOrSpace(char c) { return static_cast<unsigned char>(c) <= 0x20; }

// Strips leading/trailing C0 controls and spaces and removes tab/CR/LF inside (as the WHATWG
// URL parser does before parsing).
std::string CleanUrl(std::string_view v) {
  v = TrimIf(v, IsC0ControlOrSpace);
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c != '\t' && c != '\n' && c != '\r') out.push_back(c);
  }
  return out;
}

// Splits a space-separated token list, lowercases, joins with single spaces.
std::string NormalizeTokens(std::string_view v) {
  std::string out;
  size_t i = 0;
  while (i < v.size()) {
    while (i < v.size() && IsHtmlSpace(v[i])) ++i;
    size_t start = i;
    while (i < v.size() && !IsHtmlSpace(v[i])) ++i;
    if (i > start) {
      if (!out.empty()) out.push_back(' ');
      for (size_t k = start; k < i; ++k) out.push_back(AsciiLower(v[k]));
    }
  }
  return out;
}

bool HasToken(std::string_view tokens, std::string_view token) {
  size_t i = 0;
  while (i <= tokens.size()) {
    size_t end = tokens.find(' ', i);
    if (end == std::string_view::npos) end = tokens.size();
    if (tokens.substr(i, end - i) == token) return true;
    i = end + 1;
  }
  return false;
}

// Applies robots directives from a comma/space separated list ("noindex, nofollow").
void ApplyRobotsDirective(std::string_view token, RobotsDirectives* d) {
  std::string t = ToLowerAscii(token);
  if (t == "noindex") d->noindex = true;
  if (t == "nofollow") d->nofollow = true;
  if (t == "none") d->noindex = d->nofollow = true;
}

void ApplyRobotsList(std::string_view v, RobotsDirectives* d) {
  size_t i = 0;
  while (i < v.size()) {
    while (i < v.size() && (IsHtmlSpace(v[i]) || v[i] == ',')) ++i;
    size_t start = i;
    while (i < v.size() && !IsHtmlSpace(v[i]) && v[i] != ',') ++i;
    if (i > start) ApplyRobotsDirective(v.substr(start, i - start), d);
  }
}

class ExtractHandler : public internal::TokenHandler {
 public:
  ExtractHandler(const ExtractOptions& options, PageInfo* page) : opt_(options), page_(page) {
    token_ = ToLowerAscii(options.product_token);
  }

  // Only the elements OnTag reads attributes of (links, <base>, <meta>); every other tag's
  // attributes are skipped by the tokenizer, which real pages' class/style/id-laden markup
  // makes most of its work otherwise.
  bool WantsAttributes(internal::TagInfo info) const override {
    using internal::TagId;
    switch (info.id) {
      case TagId::kA:
      case TagId::kArea:
      case TagId::kLink:
      case TagId::kFrame:
      case TagId::kIframe:
      case TagId::kBase:
      case TagId::kMeta:
        return true;
      default:
        return false;
    }
  }

  void OnTag(const Tag& tag) override {
    using internal::TagId;
    const TagId id = tag.info.id;
    const bool hidden = (tag.info.flags & internal::kTagHidden) != 0;
    if ((tag.info.flags & internal::kTagInline) == 0) text_space_ = true;
    if (id == TagId::kSvg) svg_depth_ += tag.is_end ? (svg_depth_ > 0 ? -1 : 0) : 1;
    if (tag.is_end) {
      if (hidden && hidden_depth_ > 0) --hidden_depth_;
      if (id == TagId::kTitle && in_title_) {
        in_title_ = false;
        have_title_ = true;
      }
      return;
    }
    // (A self-closing flag is ignored on these HTML elements, so always count the start.)
    if (hidden) ++hidden_depth_;
    switch (id) {
      case TagId::kA:
        AddLink(tag, "href", LinkSource::kAnchor);
        break;
      case TagId::kArea:
        AddLink(tag, "href", LinkSource::kArea);
        break;
      case TagId::kLink:
        OnLinkElement(tag);
        break;
      case TagId::kFrame:
        AddLink(tag, "src", LinkSource::kFrame);
        break;
      case TagId::kIframe:
        AddLink(tag, "src", LinkSource::kIframe);
        break;
      case TagId::kBase:
        OnBase(tag);
        break;
      case TagId::kMeta:
        OnMeta(tag);
        break;
      case TagId::kTitle:
        if (!have_title_ && svg_depth_ == 0) in_title_ = true;
        break;
      default:
        break;
    }
  }

  void OnText(std::string_view text, TextKind kind) override {
    if (in_title_) {
      title_raw_.clear();
      if (kind == TextKind::kRawtext) {
        title_raw_.append(text);
      } else {
        internal::AppendDecoded(text, /*in_attribute=*/false, &title_raw_);
      }
      AppendCollapsed(title_raw_, kMaxTitleBytes, &title_space_, &page_->title);
      return;
    }
    if (!opt_.want_text || hidden_depth_ > 0 || kind == TextKind::kRawtext) return;
    if (page_->text.size() >= opt_.max_text_bytes) return;
    if (text.find('&') == std::string_view::npos) {
      AppendCollapsed(text, opt_.max_text_bytes, &text_space_, &page_->text);
      return;
    }
    decoded_.clear();
    internal::AppendDecoded(text, /*in_attribute=*/false, &decoded_);
    AppendCollapsed(decoded_, opt_.max_text_bytes, &text_space_, &page_->text);
  }

 private:
  // A <title> longer than this is cut: it feeds logs and indexes, not fingerprints.
  static constexpr size_t kMaxTitleBytes = 4096;

  void AddLink(const Tag& tag, std::string_view attr, LinkSource source) {
    const std::string* value = tag.Find(attr);
    if (value == nullptr) return;
    std::string href = CleanUrl(*value);
    if (href.empty()) return;
    if (page_->links.size() >= opt_.max_links) {
      ++page_->links_dropped;
      return;
    }
    Link link;
    link.href = std::move(href);
    link.source = source;
    const std::string* rel = tag.Find("rel");
    if (rel != nullptr && source != LinkSource::kFrame && source != LinkSource::kIframe) {
      link.rel = NormalizeTokens(*rel);
      link.nofollow = HasToken(link.rel, "nofollow");
    }
    page_->links.push_back(std::move(link));
  }

  void OnLinkElement(const Tag& tag) {
    const std::string* rel = tag.Find("rel");
    if (rel == nullptr) return;
    std::string tokens = NormalizeTokens(*rel);
    bool canonical = HasToken(tokens, "canonical");
    if (!canonical && !HasToken(tokens, "next") && !HasToken(tokens, "prev") &&
        !HasToken(tokens, "alternate")) {
      return;
    }
    if (canonical && !have_canonical_) {
      const std::string* href = tag.Find("href");
      if (href != nullptr && !CleanUrl(*href).empty()) {
        have_canonical_ = true;
        page_->canonical = CleanUrl(*href);
      }
    }
    AddLink(tag, "href", LinkSource::kLink);
  }

  void OnBase(const Tag& tag) {
    const std::string* href = tag.Find("href");
    if (href != nullptr && !have_base_) {
      have_base_ = true;
      page_->base_href = CleanUrl(*href);
    }
  }

  void OnMeta(const Tag& tag) {
    const std::string* name = tag.Find("name");
    const std::string* content = tag.Find("content");
    if (name == nullptr || content == nullptr) return;
    std::string n = NormalizeTokens(*name);
    if (n == "robots" || (!token_.empty() && n == token_)) {
      ApplyRobotsList(*content, &page_->meta_robots);
    }
  }

  const ExtractOptions& opt_;
  PageInfo* page_;
  std::string token_;
  int hidden_depth_ = 0;
  int svg_depth_ = 0;
  bool have_base_ = false;
  bool have_canonical_ = false;
  bool in_title_ = false;
  bool have_title_ = false;
  bool title_space_ = false;
  bool text_space_ = false;
  std::string title_raw_;
  std::string decoded_;
};

}  // namespace

std::string_view LinkSourceName(LinkSource source) {
  switch (source) {
    case LinkSource::kAnchor:
      return "anchor";
    case LinkSource::kArea:
      return "area";
    case LinkSource::kLink:
      return "link";
    case LinkSource::kFrame:
      return "frame";
    case LinkSource::kIframe:
      return "iframe";
  }
  return "unknown";
}

PageInfo ExtractHtml(std::string_view body, std::string_view content_type,
                     const ExtractOptions& options) {
  PageInfo page;
  page.charset = DetectCharset(body, content_type);
  std::string storage;
  std::string_view utf8 = internal::DecodeToUtf8(body, page.charset, &storage);
  // The visible text is smaller than the page (markup gone, whitespace collapsed): one
  // allocation instead of a dozen doublings, each copying the text so far.
  if (options.want_text) page.text.reserve(std::min(utf8.size(), options.max_text_bytes));
  ExtractHandler handler(options, &page);
  internal::Tokenize(utf8, &handler);
  return page;
}

RobotsDirectives ParseXRobotsTag(std::string_view value, std::string_view product_token) {
  RobotsDirectives d;
  std::string token = ToLowerAscii(product_token);
  bool applies = true;  // no agent prefix yet: applies to everyone
  size_t i = 0;
  while (i <= value.size()) {
    size_t end = value.find(',', i);
    if (end == std::string_view::npos) end = value.size();
    std::string_view item = value.substr(i, end - i);
    i = end + 1;
    size_t colon = item.find(':');
    if (colon != std::string_view::npos) {
      std::string name = ToLowerAscii(NormalizeTokens(item.substr(0, colon)));
      // Directives that take a value themselves are not agent prefixes.
      if (name != "unavailable_after" && name != "max-snippet" && name != "max-image-preview" &&
          name != "max-video-preview") {
        applies = name == token;
        item = item.substr(colon + 1);
      }
    }
    if (applies) ApplyRobotsList(item, &d);
    if (end == value.size()) break;
  }
  return d;
}

bool IsHtml(std::string_view content_type, std::string_view body) {
  std::string_view essence = content_type.substr(0, content_type.find(';'));
  const std::string mime = ToLowerAscii(TrimHtmlSpace(essence));
  if (mime == "text/html" || mime == "application/xhtml+xml") return true;
  if (!mime.empty() && mime != "unknown/unknown" && mime != "application/unknown" &&
      mime != "*/*") {
    return false;
  }
  // WHATWG MIME Sniffing §7.1: skip whitespace (and a UTF-8 BOM), match an HTML pattern
  // followed by a tag-terminating byte (space or '>').
  if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);
  body = TrimLeadingIf(body, IsHtmlSpace);
  static constexpr std::string_view kPatterns[] = {
      "<!doctype html", "<html", "<head",  "<script", "<iframe", "<h1",   "<div", "<font",
      "<table",         "<a",    "<style", "<title",  "<b",      "<body", "<br",  "<p"};
  for (std::string_view p : kPatterns) {
    if (body.size() <= p.size()) continue;
    if (!StartsWithIgnoreAsciiCase(body, p)) continue;
    char t = body[p.size()];
    if (t == ' ' || t == '>') return true;
  }
  return body.substr(0, 4) == "<!--";
}

}  // namespace harvest::extract
