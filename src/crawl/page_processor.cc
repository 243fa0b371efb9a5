#include "crawl/page_processor.h"

#include <algorithm>
#include <vector>

#include "base/ascii.h"
#include "base/hash.h"
#include "dedup/dedup.h"
#include "extract/extract.h"
#include "robots/robots.h"
#include "url/url.h"

namespace harvest::crawl {
namespace {

// "text/html; charset=utf-8" -> "text/html".
std::string MimeOf(std::string_view content_type) {
  size_t semi = content_type.find(';');
  return ToLowerAscii(TrimHttpOws(content_type.substr(0, semi)));
}

void AppendDetail(StoreTask* store, std::string_view note) {
  if (!store->detail.empty()) store->detail += "; ";
  store->detail += note;
}

// A Content-Encoding that leaves the body as it is: none, or "identity" (any case, spaces
// around it).
bool IsIdentityCoding(std::string_view coding) {
  coding = TrimHttpOws(coding);
  return coding.empty() || EqualsIgnoreAsciiCase(coding, "identity");
}

// The decoded bytes looked at to tell a sitemap from HTML or another XML document.
constexpr size_t kSniffBytes = 2048;

bool NamedLikeSitemap(std::string_view path) {
  return path.ends_with(".xml") || path.ends_with(".xml.gz");
}

bool LooksLikeSitemap(std::string_view mime, std::string_view path, std::string_view body) {
  if (NamedLikeSitemap(path)) return true;
  if (mime.find("xml") == std::string_view::npos) return false;
  std::string_view head = body.substr(0, kSniffBytes);
  return head.find("<urlset") != std::string_view::npos ||
         head.find("<sitemapindex") != std::string_view::npos;
}

// A Content-Encoding the sitemap reader undoes itself as it streams: none, or one gzip layer
// (it inflates a body that starts with the gzip magic, up to two layers deep).
bool SitemapStreamable(std::string_view coding) {
  coding = TrimHttpOws(coding);
  return IsIdentityCoding(coding) || EqualsIgnoreAsciiCase(coding, "gzip") ||
         EqualsIgnoreAsciiCase(coding, "x-gzip");
}

}  // namespace

PageProcessor::PageProcessor(const CrawlOptions& options, PageProcessorOptions processor)
    : options_(options),
      processor_options_(processor),
      product_token_(robots::ProductToken(options.fetch.user_agent)) {}

FoundLink MakeFoundLink(const url::Url& u) {
  FoundLink link;
  link.url = u.href();
  const std::string_view href = link.url;
  auto offset = [&](std::string_view part) {
    return static_cast<uint32_t>(part.empty() ? 0 : part.data() - u.href().data());
  };
  const std::string_view origin = u.origin_key();
  if (href.substr(0, origin.size()) == origin) {
    link.origin_len = static_cast<uint32_t>(origin.size());
  } else {
    link.own_origin = std::string(origin);
  }
  const std::string_view host = u.host(), path = u.path(), query = u.query();
  link.host_at = offset(host), link.host_len = static_cast<uint32_t>(host.size());
  link.path_at = offset(path), link.path_len = static_cast<uint32_t>(path.size());
  link.query_at = offset(query), link.query_len = static_cast<uint32_t>(query.size());
  // Most links of a page are to its own host: the last host's domain (the Public Suffix
  // List is fixed for the process) spares a psl_registrable_domain call per such link.
  thread_local std::string last_host, last_domain;
  if (host != last_host) {
    last_domain = url::RegistrableDomain(host);
    last_host.assign(host);
  }
  const std::string& domain = last_domain;
  if (host.size() >= domain.size() && host.substr(host.size() - domain.size()) == domain) {
    link.domain_len = static_cast<uint32_t>(domain.size());
  } else {
    link.own_domain = domain;
  }
  link.fp = url::Fingerprint64(link.url);
  return link;
}

bool PageProcessor::AddLink(std::string_view href, const url::Url& base, bool redirect,
                            bool sitemap, PageLinks* links) const {
  ++links->links_seen;
  std::optional<url::Url> parsed = url::ParseCanonical(href, &base, options_.canon);
  if (!parsed) return false;
  if (parsed->scheme() != "http" && parsed->scheme() != "https") return false;
  if (parsed->host().empty()) return false;
  FoundLink link = MakeFoundLink(*parsed);
  link.redirect = redirect;
  link.sitemap = sitemap;
  links->links.push_back(std::move(link));
  return true;
}

void PageProcessor::Process(PageTask& task, PageLinks* links, StoreTask* store) const {
  fetch::FetchResult& r = task.result;
  links->source = task.item;

  store::Capture& c = store->capture;
  c.target_uri = r.effective_url.empty() ? task.item.url : r.effective_url;
  c.fetch_time_us = r.start_wall_us;
  store->fetch_end_us = std::max(task.completed_us, r.start_wall_us + r.total_time.count());
  c.ip = r.ip;
  c.request_header = std::move(r.request_head);
  c.response_header = std::move(r.response_head);
  c.truncated = r.truncated;
  c.status = r.status;
  std::string content_type(r.Header("content-type").value_or(""));
  c.mime = MimeOf(content_type);
  c.via = task.item.via;
  c.hops = task.item.depth;
  store->outcome = task.outcome.empty() ? "fetched" : task.outcome;
  store->shared_robots = std::move(task.shared_robots);
  if (!task.is_robots) {
    store->mark_done = true;
    store->item = task.item;
    store->etag = std::string(r.Header("etag").value_or(""));
    store->last_modified = std::string(r.Header("last-modified").value_or(""));
    store->previous = std::move(task.previous);
    store->policy = task.policy;
    store->not_modified = task.not_modified;
  }
  store->detail = task.detail;
  if (!r.truncated.empty()) {
    store->detail += (store->detail.empty() ? "" : "; ") + std::string("truncated: ") + r.truncated;
  }

  std::optional<url::Url> page_url = url::Parse(task.item.url);
  // The CDXJ key comes from the same canonicalizer that decides URL identity.
  if (page_url && !task.is_robots) c.surt = url::Surt(*page_url);
  if (page_url && !task.is_robots) {
    if (r.status >= 300 && r.status < 400) {
      if (auto location = r.Header("location")) {
        AddLink(*location, *page_url, /*redirect=*/true, /*sitemap=*/false, links);
      }
    } else if (r.status >= 200 && r.status < 300) {
      ExtractLinks(task, *page_url, c.mime, content_type, links, store);
    }
  }
  c.payload = std::move(r.body);
  c.payload_digest = store::PayloadDigest(c.payload, options_.warc.digest);
  for (const FoundLink& l : links->links) c.outlinks.push_back(l.url);
}

// A truncated body is parsed as far as it was received: its early links are followed, only
// the cut part is lost. A compressed body cut mid-stream decodes to the part before the cut.
void PageProcessor::ExtractLinks(const PageTask& task, const url::Url& page_url,
                                 std::string_view mime, const std::string& content_type,
                                 PageLinks* links, StoreTask* store) const {
  const fetch::FetchResult& r = task.result;
  const std::string_view encoding = r.Header("content-encoding").value_or("");
  // A sitemap (named one, or XML that might be one) is streamed from the body as received:
  // the reader inflates gzip block by block, so the inflated document is never held. Only
  // its first bytes are decoded here, to tell it from HTML.
  if (SitemapStreamable(encoding) &&
      (task.sitemap_hint || mime.find("xml") != std::string_view::npos ||
       NamedLikeSitemap(page_url.path()))) {
    std::string head = IsIdentityCoding(encoding)
                           ? r.body.substr(0, kSniffBytes)
                           : extract::DecodeContent(encoding, r.body, kSniffBytes).body;
    if (!extract::IsHtml(content_type, head) &&
        (task.sitemap_hint || LooksLikeSitemap(mime, page_url.path(), head))) {
      ExtractFromSitemap(task, page_url, r.body, links, store);
      return;
    }
  }
  // An uncoded body within the cap is parsed where it is (no copy of the page).
  std::string_view body = r.body;
  extract::DecodeResult decoded;
  if (!IsIdentityCoding(encoding) || r.body.size() > options_.max_decoded_bytes) {
    decoded = extract::DecodeContent(encoding, r.body, options_.max_decoded_bytes);
    const bool cut_stream = !r.truncated.empty() && !decoded.ok && !decoded.too_large;
    if (!decoded.ok && !cut_stream) {
      AppendDetail(store, decoded.too_large ? "decoded body over the cap (not parsed)"
                                            : "content decoding failed: " + decoded.error);
      return;
    }
    body = decoded.body;
  }
  if (extract::IsHtml(content_type, body)) {
    ExtractFromHtml(task, page_url, body, links, store);
  } else if (task.sitemap_hint || LooksLikeSitemap(mime, page_url.path(), body)) {
    // A sitemap in a Content-Encoding the reader does not stream (br, zstd, deflate), decoded
    // above within max_decoded_bytes.
    ExtractFromSitemap(task, page_url, body, links, store);
  }
}

// Each URL of the sitemap becomes a link as the reader finds it (an index's entries are
// sitemaps); only the links are held. A sitemap cut (by the fetch's body cap, the 50,000-URL
// or 50 MiB limit, or a fault) keeps the URLs before the cut, and the outcome says so.
void PageProcessor::ExtractFromSitemap(const PageTask& task, const url::Url& page_url,
                                       std::string_view body, PageLinks* links,
                                       StoreTask* store) const {
  const extract::SitemapReader* reader = nullptr;
  extract::SitemapReader sitemap(
      [&](std::string_view url, const extract::SitemapHint& hint) {
        if (!AddLink(url, page_url, false, /*sitemap=*/reader->is_index(), links)) return;
        FoundLink& link = links->links.back();
        link.lastmod_us = hint.lastmod_us;
        link.changefreq_s = hint.changefreq_s;
        link.sitemap_priority = hint.priority;
      },
      /*maybe_gzip=*/true);
  reader = &sitemap;
  sitemap.Feed(body);
  sitemap.Finish(/*input_cut=*/!task.result.truncated.empty());
  const std::string& error = sitemap.error();
  if (sitemap.truncated()) {
    AppendDetail(store, "sitemap truncated: " + (error.empty() ? "more than 50,000 URLs" : error));
  } else if (!error.empty() && (task.sitemap_hint || !error.starts_with("not a sitemap"))) {
    AppendDetail(store, "sitemap: " + error);
  }
  if (sitemap.skipped() > 0) {
    AppendDetail(store, "sitemap: " + std::to_string(sitemap.skipped()) +
                            " URLs longer than 2048 bytes skipped");
  }
}

void PageProcessor::ExtractFromHtml(const PageTask& task, const url::Url& page_url,
                                    std::string_view body, PageLinks* links,
                                    StoreTask* store) const {
  extract::ExtractOptions eo;
  eo.product_token = product_token_;
  extract::PageInfo info =
      extract::ExtractHtml(body, task.result.Header("content-type").value_or(""), eo);
  extract::RobotsDirectives header_robots;
  for (const auto& [name, value] : task.result.headers) {
    if (EqualsIgnoreAsciiCase(name, "x-robots-tag")) {
      extract::RobotsDirectives d = extract::ParseXRobotsTag(value, product_token_);
      header_robots.noindex |= d.noindex;
      header_robots.nofollow |= d.nofollow;
    }
  }
  store->title = std::move(info.title);  // the admin API's page records
  if (!info.text.empty()) {
    store->simhash = dedup::SimHash64(info.text, processor_options_.simhash_version);
    store->has_simhash = true;
  }
  if (info.meta_robots.noindex || header_robots.noindex) AppendDetail(store, "noindex");
  if (info.meta_robots.nofollow || header_robots.nofollow) {
    links->links_seen += info.links.size();
    return;  // nofollow: links are not followed (and not listed as outlinks)
  }
  url::Url base = page_url;
  if (!info.base_href.empty()) {
    if (auto b = url::Parse(info.base_href, &page_url)) base = std::move(*b);
  }
  links->links.reserve(info.links.size());
  // A page names many targets more than once (navigation, a thumbnail and its caption): each
  // distinct href is resolved, canonicalised and handed to admission once, with the number
  // of times the page named it; every one counts as seen. Open addressing over the page's
  // hrefs, at most half full.
  size_t slots = 16;
  while (slots < 2 * info.links.size()) slots *= 2;
  std::vector<uint32_t> seen(slots, 0);  // index + 1 into info.links; 0 = empty
  // Per href of info.links: its FoundLink's index in links->links, or -1 (not handed on).
  std::vector<int32_t> handed(info.links.size(), -1);
  for (size_t k = 0; k < info.links.size(); ++k) {
    const extract::Link& link = info.links[k];
    if (link.nofollow && !options_.follow_rel_nofollow) {
      ++links->links_seen;
      continue;
    }
    size_t i = Fnv1a64(link.href) & (slots - 1);
    int32_t first = -2;  // -2: a new href
    for (; seen[i] != 0; i = (i + 1) & (slots - 1)) {
      if (info.links[seen[i] - 1].href == link.href) {
        first = handed[seen[i] - 1];
        break;
      }
    }
    if (first != -2) {
      ++links->links_seen;
      if (first >= 0) ++links->links[first].times;
      continue;
    }
    seen[i] = static_cast<uint32_t>(k + 1);
    if (AddLink(link.href, base, false, false, links)) {
      handed[k] = static_cast<int32_t>(links->links.size() - 1);
    }
  }
}

}  // namespace harvest::crawl
