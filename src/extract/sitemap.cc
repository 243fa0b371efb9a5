// Sitemaps (sitemaps.org protocol 0.9): XML urlset / sitemapindex, text, gzip.
#include <zlib.h>

#include <optional>
#include <string>
#include <vector>

#include "base/ascii.h"
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
// Whitespace is HTML's set (IsHtmlSpace): XML's S (space, tab, CR, LF) and form feed.

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

int64_t ChangeFreqSeconds(std::string_view v) {
  const std::string f = ToLowerAscii(v);
  if (f == "always") return 60;
  if (f == "hourly") return 3600;
  if (f == "daily") return 86400;
  if (f == "weekly") return 7 * 86400;
  if (f == "monthly") return 30 * 86400;
  if (f == "yearly") return 365 * 86400;
  return 0;  // "never" or unknown: no hint
}

// <priority>: a decimal 0.0..1.0 ("0.8", "1", ".5", "1.0"); -1 for anything else (also
// exponents, signs, and values out of range: a sitemap claiming 7 gets no say).
double SitemapPriority(std::string_view v) {
  if (v.empty() || v.size() > 16) return -1;
  double whole = 0, scale = 0.1, frac = 0;
  size_t i = 0;
  bool digits = false;
  for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
    whole = whole * 10 + (v[i] - '0');
    digits = true;
  }
  if (i < v.size() && v[i] == '.') {
    for (++i; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
      frac += (v[i] - '0') * scale;
      scale /= 10;
      digits = true;
    }
  }
  if (!digits || i != v.size()) return -1;
  const double p = whole + frac;
  return p <= 1.0 ? p : -1;
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
      if (in_hint_ != nullptr) AppendXmlText(in_.substr(i, lt - i), in_hint_);
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
      if (in_hint_ != nullptr) in_hint_->append(in_.substr(lt + 9, text_end - lt - 9));
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
    while (i < n && !IsHtmlSpace(in_[i]) && in_[i] != '>' && in_[i] != '/') ++i;
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
    // <url>'s <lastmod> and <changefreq>: recrawl hints for its <loc>.
    if (root_ == "urlset" && stack_.size() == 1 && e.local == "url") {
      lastmod_.clear();
      changefreq_.clear();
      priority_.clear();
      url_added_ = false;
    }
    if (root_ == "urlset" && stack_.size() == 2 && stack_[1].local == "url" &&
        stack_[1].prefix == e.prefix) {
      if (e.local == "lastmod") in_hint_ = &lastmod_;
      if (e.local == "changefreq") in_hint_ = &changefreq_;
      if (e.local == "priority") in_hint_ = &priority_;
    }
    stack_.push_back(std::move(e));
  }

  void EndElement(const Element& e) {
    if (in_loc_ && e.local == "loc") {
      in_loc_ = false;
      std::string_view url = TrimHtmlSpace(loc_);
      if (!url.empty()) url_added_ = AddUrl(url);
    }
    if (in_hint_ != nullptr &&
        (e.local == "lastmod" || e.local == "changefreq" || e.local == "priority")) {
      in_hint_ = nullptr;
    }
    if (root_ == "urlset" && e.local == "url" && stack_.size() == 2 && url_added_) {
      SitemapHint& hint = r_->hints.back();
      if (auto t = ParseW3cDatetime(TrimHtmlSpace(lastmod_))) hint.lastmod_us = *t;
      hint.changefreq_s = ChangeFreqSeconds(TrimHtmlSpace(changefreq_));
      hint.priority = SitemapPriority(TrimHtmlSpace(priority_));
      url_added_ = false;
    }
    // Pop to the matching element (tolerates unclosed children).
    for (size_t k = stack_.size(); k > 0; --k) {
      if (stack_[k - 1].local == e.local && stack_[k - 1].prefix == e.prefix) {
        stack_.resize(k - 1);
        break;
      }
    }
  }

  bool AddUrl(std::string_view url) {
    if (r_->urls.size() >= kMaxSitemapUrls) {
      r_->truncated = true;
      stop_ = true;
      return false;
    }
    r_->urls.emplace_back(url);
    r_->hints.emplace_back();
    return true;
  }

  std::string_view in_;
  SitemapResult* r_;
  std::vector<Element> stack_;
  std::string root_;
  bool in_loc_ = false;
  bool stop_ = false;
  std::string loc_;
  std::string* in_hint_ = nullptr;  // &lastmod_, &changefreq_ or &priority_ while inside one
  std::string lastmod_, changefreq_, priority_;
  bool url_added_ = false;  // the current <url>'s <loc> was added
};

void ParseTextSitemap(std::string_view body, SitemapResult* r) {
  size_t i = 0;
  while (i < body.size()) {
    size_t end = body.find('\n', i);
    if (end == std::string_view::npos) end = body.size();
    std::string_view line = TrimHtmlSpace(body.substr(i, end - i));
    i = end + 1;
    if (line.empty()) continue;
    if (r->urls.size() >= kMaxSitemapUrls) {
      r->truncated = true;
      return;
    }
    r->urls.emplace_back(line);
    r->hints.emplace_back();
  }
}

}  // namespace

std::optional<int64_t> ParseW3cDatetime(std::string_view t) {
  auto digits = [&t](size_t pos, size_t n, int* out) {
    if (pos + n > t.size()) return false;
    int v = 0;
    for (size_t i = pos; i < pos + n; ++i) {
      if (t[i] < '0' || t[i] > '9') return false;
      v = v * 10 + (t[i] - '0');
    }
    *out = v;
    return true;
  };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!digits(0, 4, &year) || t.size() < 10 || t[4] != '-' || !digits(5, 2, &month) ||
      t[7] != '-' || !digits(8, 2, &day)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31) return std::nullopt;
  size_t i = 10;
  int64_t micros = 0;
  int64_t offset_s = 0;
  if (i < t.size()) {
    if (t[i] != 'T' || !digits(i + 1, 2, &hour) || i + 3 >= t.size() || t[i + 3] != ':' ||
        !digits(i + 4, 2, &minute)) {
      return std::nullopt;
    }
    i += 6;
    if (i < t.size() && t[i] == ':') {
      if (!digits(i + 1, 2, &second)) return std::nullopt;
      i += 3;
      if (i < t.size() && t[i] == '.') {
        size_t start = ++i;
        int64_t scale = 100000;
        while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
          if (scale > 0) micros += (t[i] - '0') * scale;
          scale /= 10;
          ++i;
        }
        if (i == start) return std::nullopt;
      }
    }
    if (hour > 23 || minute > 59 || second > 60) return std::nullopt;
    // A time needs a zone (W3C datetime).
    if (i < t.size() && t[i] == 'Z') {
      ++i;
    } else if (i < t.size() && (t[i] == '+' || t[i] == '-')) {
      int oh = 0, om = 0;
      if (!digits(i + 1, 2, &oh) || i + 3 >= t.size() || t[i + 3] != ':' ||
          !digits(i + 4, 2, &om) || oh > 23 || om > 59) {
        return std::nullopt;
      }
      offset_s = (t[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
      i += 6;
    } else {
      return std::nullopt;
    }
    if (i != t.size()) return std::nullopt;
  }
  // Days since the epoch (Howard Hinnant's days_from_civil).
  const int y = year - (month <= 2 ? 1 : 0);
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = static_cast<int64_t>(era) * 146097 + doe - 719468;
  const int64_t secs = days * 86400 + hour * 3600 + minute * 60 + second - offset_s;
  return secs * 1'000'000 + micros;
}

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
  std::string_view start = TrimHtmlSpace(body);
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
