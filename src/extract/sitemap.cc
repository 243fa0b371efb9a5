// Sitemaps (sitemaps.org protocol 0.9): XML urlset / sitemapindex, text, gzip.
#include <zlib.h>

#include <string>
#include <vector>

#include "extract/char_ref.h"
#include "extract/extract.h"

namespace harvest::extract {
namespace {

// sitemaps.org: "no more than 50,000 URLs and must be no larger than 50MB (52,428,800
// bytes)" uncompressed.
constexpr size_t kMaxSitemapUrls = 50000;
constexpr size_t kMaxSitemapBytes = 50 * 1024 * 1024;
// Element nesting deeper than this is not a sitemap; stops a hostile document from growing
// the element stack without bound.
constexpr size_t kMaxXmlDepth = 64;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Inflates a gzip body into *out, at most kMaxSitemapBytes. Returns "" or an error.
std::string Gunzip(std::string_view in, std::string* out, bool* truncated) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return "zlib init failed";
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  char buf[64 * 1024];
  std::string error;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    int rc = inflate(&zs, Z_NO_FLUSH);
    size_t got = sizeof(buf) - zs.avail_out;
    if (out->size() + got > kMaxSitemapBytes) {
      out->append(buf, kMaxSitemapBytes - out->size());
      *truncated = true;
      error = "gzip sitemap exceeds 50 MiB uncompressed";
      break;
    }
    out->append(buf, got);
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members are one file.
      if (zs.avail_in > 0 && inflateReset(&zs) == Z_OK) continue;
      break;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      error = "truncated gzip sitemap";
      break;
    }
    if (rc != Z_OK) {
      error = "corrupt gzip sitemap";
      break;
    }
  }
  inflateEnd(&zs);
  return error;
}

// Decodes XML entities (&amp; &lt; &gt; &quot; &apos; and numeric) in text.
void AppendXmlText(std::string_view s, std::string* out) {
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c != '&') {
      out->push_back(c);
      ++i;
      continue;
    }
    size_t semi = s.find(';', i);
    if (semi == std::string_view::npos || semi - i > 12) {
      out->push_back(c);
      ++i;
      continue;
    }
    std::string_view name = s.substr(i + 1, semi - i - 1);
    if (name == "amp") {
      out->push_back('&');
    } else if (name == "lt") {
      out->push_back('<');
    } else if (name == "gt") {
      out->push_back('>');
    } else if (name == "quot") {
      out->push_back('"');
    } else if (name == "apos") {
      out->push_back('\'');
    } else if (!name.empty() && name[0] == '#') {
      std::string tmp;
      size_t used = internal::DecodeCharRef(s, i, false, &tmp);
      if (used == 0) {
        out->push_back(c);
        ++i;
        continue;
      }
      out->append(tmp);
      i += used;
      continue;
    } else {
      out->push_back(c);
      ++i;
      continue;
    }
    i = semi + 1;
  }
}

struct Element {
  std::string prefix;  // "" when unprefixed
  std::string local;
};

Element SplitName(std::string_view qname) {
  size_t colon = qname.find(':');
  if (colon == std::string_view::npos) return {"", std::string(qname)};
  return {std::string(qname.substr(0, colon)), std::string(qname.substr(colon + 1))};
}

class XmlSitemapParser {
 public:
  XmlSitemapParser(std::string_view in, SitemapResult* result) : in_(in), r_(result) {}

  void Run() {
    size_t i = 0;
    const size_t n = in_.size();
    while (i < n && !stop_) {
      size_t lt = in_.find('<', i);
      if (lt == std::string_view::npos) lt = n;
      if (in_loc_) AppendXmlText(in_.substr(i, lt - i), &loc_);
      if (lt >= n) break;
      i = Markup(lt);
    }
    if (root_.empty()) {
      r_->error = "not a sitemap: no root element";
    } else if (root_ != "urlset" && root_ != "sitemapindex") {
      r_->error = "not a sitemap: root element <" + root_ + ">";
    }
  }

 private:
  // Handles the markup at lt; returns the position after it.
  size_t Markup(size_t lt) {
    const size_t n = in_.size();
    if (in_.compare(lt, 4, "<!--") == 0) {
      size_t end = in_.find("-->", lt + 4);
      return end == std::string_view::npos ? n : end + 3;
    }
    if (in_.compare(lt, 9, "<![CDATA[") == 0) {
      size_t end = in_.find("]]>", lt + 9);
      size_t text_end = end == std::string_view::npos ? n : end;
      if (in_loc_) loc_.append(in_.substr(lt + 9, text_end - lt - 9));
      return end == std::string_view::npos ? n : end + 3;
    }
    if (in_.compare(lt, 2, "<?") == 0) {
      size_t end = in_.find("?>", lt + 2);
      return end == std::string_view::npos ? n : end + 2;
    }
    if (in_.compare(lt, 2, "<!") == 0) {  // DOCTYPE (internal subsets are not supported)
      size_t end = in_.find('>', lt + 2);
      return end == std::string_view::npos ? n : end + 1;
    }
    bool is_end = lt + 1 < n && in_[lt + 1] == '/';
    size_t name_start = lt + (is_end ? 2 : 1);
    size_t i = name_start;
    while (i < n && !IsSpace(in_[i]) && in_[i] != '>' && in_[i] != '/') ++i;
    std::string_view qname = in_.substr(name_start, i - name_start);
    // Skip attributes, honouring quotes (a '>' may sit inside one).
    char quote = 0;
    while (i < n && (quote != 0 || in_[i] != '>')) {
      if (quote != 0) {
        if (in_[i] == quote) quote = 0;
      } else if (in_[i] == '"' || in_[i] == '\'') {
        quote = in_[i];
      }
      ++i;
    }
    bool self_closing = i > lt && i < n && in_[i - 1] == '/';
    if (qname.empty()) return i < n ? i + 1 : n;
    if (is_end) {
      EndElement(SplitName(qname));
    } else {
      StartElement(SplitName(qname));
      if (self_closing) EndElement(SplitName(qname));
    }
    return i < n ? i + 1 : n;
  }

  void StartElement(Element e) {
    if (stack_.empty() && root_.empty()) {
      root_ = e.local;
      r_->is_index = root_ == "sitemapindex";
    }
    if (stack_.size() >= kMaxXmlDepth) {
      r_->error = "sitemap nesting too deep";
      stop_ = true;
      return;
    }
    // <loc> counts only as a direct child of <url> (urlset) or <sitemap> (sitemapindex),
    // with the same namespace prefix: <image:loc> etc. are ignored.
    if (e.local == "loc" && stack_.size() == 2 && stack_[1].prefix == e.prefix &&
        ((root_ == "urlset" && stack_[1].local == "url") ||
         (root_ == "sitemapindex" && stack_[1].local == "sitemap"))) {
      in_loc_ = true;
      loc_.clear();
    }
    stack_.push_back(std::move(e));
  }

  void EndElement(const Element& e) {
    if (in_loc_ && e.local == "loc") {
      in_loc_ = false;
      std::string_view url = Trim(loc_);
      if (!url.empty()) AddUrl(url);
    }
    // Pop to the matching element (tolerates unclosed children).
    for (size_t k = stack_.size(); k > 0; --k) {
      if (stack_[k - 1].local == e.local && stack_[k - 1].prefix == e.prefix) {
        stack_.resize(k - 1);
        break;
      }
    }
  }

  void AddUrl(std::string_view url) {
    if (r_->urls.size() >= kMaxSitemapUrls) {
      r_->truncated = true;
      stop_ = true;
      return;
    }
    r_->urls.emplace_back(url);
  }

  std::string_view in_;
  SitemapResult* r_;
  std::vector<Element> stack_;
  std::string root_;
  bool in_loc_ = false;
  bool stop_ = false;
  std::string loc_;
};

void ParseTextSitemap(std::string_view body, SitemapResult* r) {
  size_t i = 0;
  while (i < body.size()) {
    size_t end = body.find('\n', i);
    if (end == std::string_view::npos) end = body.size();
    std::string_view line = Trim(body.substr(i, end - i));
    i = end + 1;
    if (line.empty()) continue;
    if (r->urls.size() >= kMaxSitemapUrls) {
      r->truncated = true;
      return;
    }
    r->urls.emplace_back(line);
  }
}

}  // namespace

SitemapResult ParseSitemap(std::string_view body, bool maybe_gzip) {
  SitemapResult result;
  std::string inflated;
  if (maybe_gzip && body.size() >= 2 && body[0] == '\x1f' && body[1] == '\x8b') {
    result.error = Gunzip(body, &inflated, &result.truncated);
    body = inflated;
  } else if (body.size() > kMaxSitemapBytes) {
    body = body.substr(0, kMaxSitemapBytes);
    result.truncated = true;
    result.error = "sitemap exceeds 50 MiB";
  }
  std::string error = result.error;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);
  std::string_view start = Trim(body);
  if (!start.empty() && start.front() == '<') {
    XmlSitemapParser(body, &result).Run();
  } else {
    ParseTextSitemap(body, &result);
  }
  // A decompression fault is the first cause; keep it.
  if (!error.empty()) result.error = error;
  return result;
}

}  // namespace harvest::extract
