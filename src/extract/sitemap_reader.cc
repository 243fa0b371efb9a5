// SitemapReader: the streaming sitemap parser (sitemaps.org protocol 0.9). A byte-level state
// machine over the uncompressed stream, behind up to two gzip layers; see extract.h.
#include <zlib.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "extract/char_ref.h"
#include "extract/extract.h"

namespace harvest::extract {
namespace {

// A .xml.gz served with Content-Encoding: gzip is gzip twice; more layers are not a sitemap.
constexpr size_t kMaxGzipLayers = 2;
// Inflated bytes handed on at a time.
constexpr size_t kInflateBlock = 64 * 1024;
// Element nesting deeper than this is not a sitemap; stops a hostile document from growing
// the element stack without bound.
constexpr size_t kMaxXmlDepth = 64;
// Element names are cut here (a sitemap's are a few bytes; a cut name matches nothing).
constexpr size_t kMaxNameBytes = 128;
// Raw text kept of one <loc> (or text line): room for leading whitespace and entities
// around a URL of kMaxSitemapUrlBytes. Longer: the URL is skipped.
constexpr size_t kMaxRawUrlText = 8 * 1024;
// Raw text kept of one <lastmod>, <changefreq> or <priority>; longer: the hint is ignored.
constexpr size_t kMaxHintText = 256;

// Decodes XML entities (&amp; &lt; &gt; &quot; &apos; and numeric) in text.
void AppendXmlText(std::string_view s, std::string* out) {
  size_t i = 0;
  while (i < s.size()) {
    const size_t amp = s.find('&', i);
    if (amp == std::string_view::npos) {
      out->append(s.substr(i));
      return;
    }
    out->append(s.substr(i, amp - i));
    i = amp;
    const size_t semi = s.find(';', i);
    std::string_view name;
    if (semi != std::string_view::npos && semi - i <= 12) name = s.substr(i + 1, semi - i - 1);
    const char* named = name == "amp"    ? "&"
                        : name == "lt"   ? "<"
                        : name == "gt"   ? ">"
                        : name == "quot" ? "\""
                        : name == "apos" ? "'"
                                         : nullptr;
    if (named != nullptr) {
      out->append(named);
      i = semi + 1;
      continue;
    }
    if (!name.empty() && name[0] == '#') {
      std::string tmp;
      const size_t used = internal::DecodeCharRef(s, i, false, &tmp);
      if (used != 0) {
        out->append(tmp);
        i += used;
        continue;
      }
    }
    out->push_back('&');
    ++i;
  }
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

// One gzip layer: sniffs the gzip magic in its first two bytes and then inflates (members
// one after another are one file, as gzip(1) reads them), or passes the bytes on as they are.
class GzipLayer {
 public:
  GzipLayer() = default;
  ~GzipLayer() {
    if (mode_ == Mode::kGzip) inflateEnd(&zs_);
  }
  GzipLayer(const GzipLayer&) = delete;
  GzipLayer& operator=(const GzipLayer&) = delete;

  // Hands what `in` gives to out(std::string_view) -> bool (false: stop). Returns false when
  // out stopped or the stream is corrupt (*error set).
  template <class Out>
  bool Feed(std::string_view in, std::string* error, Out&& out) {
    if (mode_ == Mode::kSniff) {
      if (!have_first_) {
        if (in.empty()) return true;
        first_ = in[0];
        have_first_ = true;
        in.remove_prefix(1);
      }
      if (in.empty()) return true;
      if (first_ == '\x1f' && in[0] == '\x8b') {
        if (inflateInit2(&zs_, 15 + 16) != Z_OK) {
          *error = "zlib init failed";
          return false;
        }
        mode_ = Mode::kGzip;
        buf_ = std::make_unique<char[]>(kInflateBlock);
        if (!Inflate(std::string_view(&first_, 1), error, out)) return false;
      } else {
        mode_ = Mode::kPlain;
        if (!out(std::string_view(&first_, 1))) return false;
      }
    }
    if (mode_ == Mode::kPlain) return out(in);
    return Inflate(in, error, out);
  }

  // The input has ended: a lone first byte is passed on; a gzip stream must have ended.
  template <class Out>
  void Finish(std::string* error, Out&& out) {
    if (mode_ == Mode::kSniff && have_first_) {
      mode_ = Mode::kPlain;
      out(std::string_view(&first_, 1));
    } else if (mode_ == Mode::kGzip && !member_done_ && error->empty()) {
      *error = "truncated gzip sitemap";
    }
  }

 private:
  enum class Mode { kSniff, kPlain, kGzip };

  template <class Out>
  bool Inflate(std::string_view in, std::string* error, Out&& out) {
    while (!in.empty()) {
      // zlib counts in uInt: feed a huge chunk in slices.
      const size_t slice = std::min<size_t>(in.size(), 1u << 30);
      zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
      zs_.avail_in = static_cast<uInt>(slice);
      in.remove_prefix(slice);
      while (zs_.avail_in > 0 || !member_done_) {
        if (member_done_) {
          if (inflateReset(&zs_) != Z_OK) break;
          member_done_ = false;
        }
        zs_.next_out = reinterpret_cast<Bytef*>(buf_.get());
        zs_.avail_out = kInflateBlock;
        const int rc = inflate(&zs_, Z_NO_FLUSH);
        const size_t got = kInflateBlock - zs_.avail_out;
        if (got > 0 && !out(std::string_view(buf_.get(), got))) return false;
        if (rc == Z_STREAM_END) {
          member_done_ = true;
          continue;
        }
        if (rc == Z_BUF_ERROR) break;  // needs more input
        if (rc != Z_OK) {
          if (error->empty()) *error = "corrupt gzip sitemap";
          return false;
        }
        if (zs_.avail_in == 0 && zs_.avail_out != 0) break;  // all given out; more input
      }
    }
    return true;
  }

  Mode mode_ = Mode::kSniff;
  char first_ = 0;
  bool have_first_ = false;
  z_stream zs_{};
  bool member_done_ = false;
  std::unique_ptr<char[]> buf_;
};

// Text kept of one element (or line), up to a cap; beyond it the text is marked cut.
struct TextBuffer {
  std::string text;
  bool cut = false;
  void Clear() {
    text.clear();
    cut = false;
  }
  void Append(std::string_view s, size_t cap) {
    if (cut) return;
    if (text.size() + s.size() > cap) {
      cut = true;
      return;
    }
    text.append(s);
  }
};

struct Element {
  std::string prefix;  // "" when unprefixed
  std::string local;
};

Element SplitName(std::string_view qname) {
  const size_t colon = qname.find(':');
  if (colon == std::string_view::npos) return {"", std::string(qname)};
  return {std::string(qname.substr(0, colon)), std::string(qname.substr(colon + 1))};
}

}  // namespace

class SitemapReader::Impl {
 public:
  Impl(Callback on_url, bool maybe_gzip)
      : on_url_(std::move(on_url)), layers_(maybe_gzip ? kMaxGzipLayers : 0) {}

  bool Feed(std::string_view chunk) {
    if (!stopped_ && !finished_) FeedLayer(0, chunk);
    return !stopped_;
  }

  void Finish(bool input_cut) {
    if (finished_) return;
    for (size_t k = 0; k < layers_.size() && !stopped_; ++k) {
      layers_[k].Finish(&error_, [this, k](std::string_view out) {
        FeedLayer(k + 1, out);
        return !stopped_;
      });
    }
    finished_ = true;
    if (!error_.empty() && !stopped_) stopped_ = true;
    if (state_ == State::kLine && !stopped_ && !input_cut) EndLine();
    if (xml_) {
      FlushPending();
      if (root_.empty() && error_.empty()) error_ = "not a sitemap: no root element";
    }
  }

  bool is_index() const { return is_index_; }
  bool truncated() const { return truncated_; }
  const std::string& error() const { return error_; }
  size_t urls() const { return emitted_; }
  size_t skipped() const { return skipped_; }
  uint64_t bytes() const { return bytes_; }

 private:
  enum class State {
    kStart,    // before the first byte that is not a BOM or whitespace
    kLine,     // a text sitemap's line
    kText,     // XML character data
    kMarkup,   // after '<'
    kBang,     // after "<!": comment, CDATA section or declaration?
    kComment,  // inside <!-- -->
    kCdata,    // inside <![CDATA[ ]]>
    kPi,       // inside <? ?>
    kDecl,     // inside <!DOCTYPE ...> (internal subsets are not supported)
    kTagName,  // a tag's name
    kTagRest,  // a tag's attributes, up to '>'
  };

  void FeedLayer(size_t k, std::string_view in) {
    if (stopped_) return;
    if (k == layers_.size()) {
      Parse(in);
      return;
    }
    const bool ok = layers_[k].Feed(in, &error_, [this, k](std::string_view out) {
      FeedLayer(k + 1, out);
      return !stopped_;
    });
    if (!ok) stopped_ = true;
  }

  // The uncompressed stream, up to kMaxSitemapBytes.
  void Parse(std::string_view in) {
    bool over = false;
    if (bytes_ + in.size() > kMaxSitemapBytes) {
      in = in.substr(0, kMaxSitemapBytes - bytes_);
      over = true;
    }
    bytes_ += in.size();
    size_t i = 0;
    while (i < in.size() && !stopped_) i = Step(in, i);
    if (over && !stopped_) {
      truncated_ = true;
      stopped_ = true;
      if (error_.empty()) error_ = "sitemap exceeds 50 MiB uncompressed";
    }
  }

  // Consumes input from in[i] in the current state; returns the position after it.
  size_t Step(std::string_view in, size_t i) {
    const char c = in[i];
    switch (state_) {
      case State::kStart:
        return Start(c, i);
      case State::kLine:
        return Line(in, i);
      case State::kText:
        return Text(in, i);
      case State::kMarkup:
        return Markup(c) ? i + 1 : i;
      case State::kBang:
        Bang(c);
        return i + 1;
      case State::kComment:
        if (c == '>' && dashes_ >= 2) state_ = State::kText;
        dashes_ = c == '-' ? dashes_ + 1 : 0;
        return i + 1;
      case State::kCdata:
        return Cdata(in, i);
      case State::kPi:
        if (c == '>' && prev_ == '?') state_ = State::kText;
        prev_ = c;
        return i + 1;
      case State::kDecl:
        if (c == '>') state_ = State::kText;
        return i + 1;
      case State::kTagName:
        if (IsHtmlSpace(c) || c == '>' || c == '/') {
          state_ = State::kTagRest;
          quote_ = 0;
          prev_ = 0;
          return i;  // '/' and '>' are the rest's
        }
        if (name_.size() < kMaxNameBytes) name_.push_back(c);
        return i + 1;
      case State::kTagRest:
        return TagRest(in, i);
    }
    return i + 1;
  }

  // Skips a UTF-8 BOM and whitespace; the first other byte decides XML ('<') or text.
  size_t Start(char c, size_t i) {
    static constexpr char kBom[] = "\xEF\xBB\xBF";
    if (seen_ < 3 && bom_run_ == seen_ && c == kBom[seen_]) {
      ++bom_run_;
      ++seen_;
      return i + 1;
    }
    ++seen_;
    if (IsHtmlSpace(c)) return i + 1;
    if (c == '<') {
      xml_ = true;
      state_ = State::kMarkup;
      return i + 1;
    }
    state_ = State::kLine;
    return i;
  }

  size_t Line(std::string_view in, size_t i) {
    const void* nl = std::memchr(in.data() + i, '\n', in.size() - i);
    const size_t end = nl == nullptr ? in.size() : static_cast<const char*>(nl) - in.data();
    capture_loc_.Append(in.substr(i, end - i), kMaxRawUrlText);
    if (nl == nullptr) return end;
    EndLine();
    return end + 1;
  }

  void EndLine() {
    const std::string_view line = TrimHtmlSpace(capture_loc_.text);
    if (!line.empty() || capture_loc_.cut) {
      if (capture_loc_.cut || line.size() > kMaxSitemapUrlBytes) {
        ++skipped_;
      } else if (emitted_ >= kMaxSitemapUrls) {
        truncated_ = true;
        stopped_ = true;
      } else {
        ++emitted_;
        on_url_(line, SitemapHint{});
      }
    }
    capture_loc_.Clear();
  }

  size_t Text(std::string_view in, size_t i) {
    const void* lt = std::memchr(in.data() + i, '<', in.size() - i);
    const size_t end = lt == nullptr ? in.size() : static_cast<const char*>(lt) - in.data();
    if (capture_ != nullptr) capture_->Append(in.substr(i, end - i), cap_);
    if (lt == nullptr) return end;
    state_ = State::kMarkup;
    return end + 1;
  }

  // The byte after '<'; false when it is the first of a tag's name (not consumed).
  bool Markup(char c) {
    if (c == '!') {
      state_ = State::kBang;
      bang_.clear();
      return true;
    }
    if (c == '?') {
      state_ = State::kPi;
      prev_ = 0;
      return true;
    }
    state_ = State::kTagName;
    is_end_ = c == '/';
    name_.clear();
    return is_end_;
  }

  void Bang(char c) {
    static constexpr std::string_view kCdataOpen = "[CDATA[";
    bang_.push_back(c);
    if (bang_ == "--") {
      state_ = State::kComment;
      dashes_ = 0;
    } else if (bang_ == kCdataOpen) {
      state_ = State::kCdata;
      brackets_ = 0;
    } else if (bang_ != "-" && !kCdataOpen.starts_with(bang_)) {
      state_ = c == '>' ? State::kText : State::kDecl;
    }
  }

  // CDATA text is kept raw: its '&' is escaped so that decoding the element's text later
  // gives it back unchanged.
  size_t Cdata(std::string_view in, size_t i) {
    const char c = in[i];
    if (c == ']') {
      ++brackets_;
      return i + 1;
    }
    if (c == '>' && brackets_ >= 2) {
      CdataText(std::string(brackets_ - 2, ']'));
      state_ = State::kText;
      return i + 1;
    }
    if (brackets_ > 0) CdataText(std::string(brackets_, ']'));
    brackets_ = 0;
    size_t end = i;
    while (end < in.size() && in[end] != ']') ++end;
    CdataText(in.substr(i, end - i));
    return end;
  }

  void CdataText(std::string_view s) {
    if (capture_ == nullptr || s.empty()) return;
    size_t i = 0;
    while (i < s.size()) {
      const size_t amp = s.find('&', i);
      capture_->Append(s.substr(i, amp == std::string_view::npos ? s.npos : amp - i), cap_);
      if (amp == std::string_view::npos) break;
      capture_->Append("&amp;", cap_);
      i = amp + 1;
    }
  }

  // Attributes are skipped, honouring quotes (a '>' may sit inside one).
  size_t TagRest(std::string_view in, size_t i) {
    for (; i < in.size(); ++i) {
      const char c = in[i];
      if (quote_ != 0) {
        if (c == quote_) quote_ = 0;
      } else if (c == '"' || c == '\'') {
        quote_ = c;
      } else if (c == '>') {
        state_ = State::kText;
        Tag(prev_ == '/');
        return i + 1;
      }
      prev_ = c;
    }
    return i;
  }

  void Tag(bool self_closing) {
    if (name_.empty()) return;
    if (is_end_) {
      EndElement(SplitName(name_));
      return;
    }
    Element e = SplitName(name_);
    if (self_closing) {
      Element copy = e;
      StartElement(std::move(copy));
      if (!stopped_) EndElement(e);
    } else {
      StartElement(std::move(e));
    }
  }

  void StartElement(Element e) {
    if (stack_.empty() && root_.empty()) {
      root_ = e.local;
      is_index_ = root_ == "sitemapindex";
      entry_ = is_index_ ? "sitemap" : "url";
      if (root_ != "urlset" && root_ != "sitemapindex") {
        error_ = "not a sitemap: root element <" + root_ + ">";
        stopped_ = true;
        return;
      }
    }
    if (stack_.size() >= kMaxXmlDepth) {
      if (error_.empty()) error_ = "sitemap nesting too deep";
      stopped_ = true;
      return;
    }
    if (stack_.size() == 1 && e.local == entry_) {
      FlushPending();  // an entry left unclosed
      lastmod_.Clear();
      changefreq_.Clear();
      priority_.Clear();
    }
    // <loc> counts only as a direct child of <url> (urlset) or <sitemap> (sitemapindex),
    // with the same namespace prefix: <image:loc> etc. are ignored. So do the hints.
    if (stack_.size() == 2 && stack_[1].local == entry_ && stack_[1].prefix == e.prefix) {
      if (e.local == "loc") {
        capture_loc_.Clear();
        CaptureInto(&capture_loc_, kMaxRawUrlText);
      } else if (!is_index_ && e.local == "lastmod") {
        CaptureInto(&lastmod_, kMaxHintText);
      } else if (!is_index_ && e.local == "changefreq") {
        CaptureInto(&changefreq_, kMaxHintText);
      } else if (!is_index_ && e.local == "priority") {
        CaptureInto(&priority_, kMaxHintText);
      }
    }
    stack_.push_back(std::move(e));
  }

  void CaptureInto(TextBuffer* into, size_t cap) {
    capture_ = into;
    cap_ = cap;
  }

  void EndElement(const Element& e) {
    if (capture_ == &capture_loc_ && e.local == "loc") {
      capture_ = nullptr;
      EndLoc();
    } else if (capture_ != nullptr && capture_ != &capture_loc_ &&
               (e.local == "lastmod" || e.local == "changefreq" || e.local == "priority")) {
      capture_ = nullptr;
    }
    // Pop to the matching element (tolerates unclosed children).
    for (size_t k = stack_.size(); k > 0; --k) {
      if (stack_[k - 1].local == e.local && stack_[k - 1].prefix == e.prefix) {
        stack_.resize(k - 1);
        if (stack_.size() < 3) capture_ = nullptr;  // an unclosed <loc> or hint is dropped
        if (stack_.size() < 2) FlushPending();      // the entry ended
        break;
      }
    }
  }

  void EndLoc() {
    decoded_.clear();
    AppendXmlText(capture_loc_.text, &decoded_);
    const std::string_view url = TrimHtmlSpace(decoded_);
    if (url.empty() && !capture_loc_.cut) return;
    if (capture_loc_.cut || url.size() > kMaxSitemapUrlBytes) {
      ++skipped_;
      return;
    }
    FlushPending();  // a second <loc> in one entry
    if (emitted_ >= kMaxSitemapUrls) {
      truncated_ = true;
      stopped_ = true;
      return;
    }
    pending_url_.assign(url);
    pending_ = true;
  }

  void FlushPending() {
    if (!pending_) return;
    pending_ = false;
    SitemapHint hint;
    if (!is_index_) {
      if (!lastmod_.cut) {
        if (auto t = ParseW3cDatetime(TrimHtmlSpace(lastmod_.text))) hint.lastmod_us = *t;
      }
      if (!changefreq_.cut) hint.changefreq_s = ChangeFreqSeconds(TrimHtmlSpace(changefreq_.text));
      if (!priority_.cut) hint.priority = SitemapPriority(TrimHtmlSpace(priority_.text));
    }
    ++emitted_;
    on_url_(pending_url_, hint);
  }

  Callback on_url_;
  std::vector<GzipLayer> layers_;
  State state_ = State::kStart;
  bool stopped_ = false;
  bool finished_ = false;
  bool xml_ = false;
  bool is_index_ = false;
  bool truncated_ = false;
  std::string error_;
  uint64_t bytes_ = 0;
  size_t emitted_ = 0;
  size_t skipped_ = 0;
  size_t seen_ = 0, bom_run_ = 0;  // kStart: bytes seen, of which the BOM's
  // Markup being read.
  std::string bang_;  // after "<!", up to 7 bytes
  std::string name_;  // the tag's name, cut at kMaxNameBytes
  bool is_end_ = false;
  char quote_ = 0;
  char prev_ = 0;
  int dashes_ = 0;
  size_t brackets_ = 0;
  // Elements and the entry being read.
  std::vector<Element> stack_;
  std::string root_;
  std::string entry_;  // "url" or "sitemap"
  TextBuffer capture_loc_, lastmod_, changefreq_, priority_;
  TextBuffer* capture_ = nullptr;  // where character data goes, if anywhere
  size_t cap_ = 0;
  std::string decoded_;
  std::string pending_url_;  // the entry's <loc>, emitted when the entry ends
  bool pending_ = false;
};

SitemapReader::SitemapReader(Callback on_url, bool maybe_gzip)
    : impl_(std::make_unique<Impl>(std::move(on_url), maybe_gzip)) {}
SitemapReader::~SitemapReader() = default;
bool SitemapReader::Feed(std::string_view chunk) { return impl_->Feed(chunk); }
void SitemapReader::Finish(bool input_cut) { impl_->Finish(input_cut); }
bool SitemapReader::is_index() const { return impl_->is_index(); }
bool SitemapReader::truncated() const { return impl_->truncated(); }
const std::string& SitemapReader::error() const { return impl_->error(); }
size_t SitemapReader::urls() const { return impl_->urls(); }
size_t SitemapReader::skipped() const { return impl_->skipped(); }
uint64_t SitemapReader::bytes() const { return impl_->bytes(); }

}  // namespace harvest::extract
