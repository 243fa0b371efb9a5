// Text helpers shared by writer and reader: dates, header lines, the Transfer-Encoding
// rewrite.
#include <ctime>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/ascii.h"
#include "store/internal.h"
#include "store/store.h"

namespace harvest::store {
namespace {

std::tm UtcTm(int64_t micros) {
  int64_t secs = micros / 1'000'000;
  if (micros < 0 && micros % 1'000'000 != 0) --secs;
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return tm;
}

}  // namespace

std::string WarcDate(int64_t micros) {
  std::tm tm = UtcTm(micros);
  int64_t frac = micros % 1'000'000;
  if (frac < 0) frac += 1'000'000;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(frac));
  return buf;
}

std::string Timestamp14(int64_t micros) {
  std::tm tm = UtcTm(micros);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04d%02d%02d%02d%02d%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

namespace internal {

namespace {

bool NeedsEscape(unsigned char c, bool is_uri) {
  return c < 0x20 || c == 0x7f || (is_uri && c == ' ');
}

// Index of the first byte of v[from, v.size()) that needs an escape, or v.size().
size_t FirstToEscape(std::string_view v, size_t from, bool is_uri) {
  size_t i = from;
#if defined(__SSE2__)
  // Signed compares on bytes biased by 0x80: c < limit (unsigned) <=> (c ^ 0x80) < (limit ^
  // 0x80) (signed). The limit is 0x21 for a URI (the space escaped too), else 0x20.
  const __m128i bias = _mm_set1_epi8(static_cast<char>(0x80));
  const __m128i limit = _mm_set1_epi8(static_cast<char>((is_uri ? 0x21 : 0x20) ^ 0x80));
  const __m128i del = _mm_set1_epi8(0x7f);
  for (; i + 16 <= v.size(); i += 16) {
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v.data() + i));
    const __m128i bad =
        _mm_or_si128(_mm_cmplt_epi8(_mm_xor_si128(c, bias), limit), _mm_cmpeq_epi8(c, del));
    const int mask = _mm_movemask_epi8(bad);
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#endif
  for (; i < v.size(); ++i) {
    if (NeedsEscape(static_cast<unsigned char>(v[i]), is_uri)) return i;
  }
  return v.size();
}

}  // namespace

void AppendSafe(std::string_view v, bool is_uri, std::string* out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  size_t start = 0;
  for (size_t i = FirstToEscape(v, 0, is_uri); i < v.size(); i = FirstToEscape(v, i + 1, is_uri)) {
    const unsigned char c = static_cast<unsigned char>(v[i]);
    out->append(v.data() + start, i - start);
    const char esc[3] = {'%', kHex[c >> 4], kHex[c & 15]};
    out->append(esc, sizeof(esc));
    start = i + 1;
  }
  out->append(v.data() + start, v.size() - start);
}

void ParseHeaderLines(std::string_view text,
                      std::vector<std::pair<std::string, std::string>>* headers) {
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if ((line.front() == ' ' || line.front() == '\t') && !headers->empty()) {
      // obs-fold: a continuation of the previous header's value.
      std::string& value = headers->back().second;
      value += ' ';
      value += TrimHttpOwsAndCr(line);
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // not a header: skipped, as browsers do
    headers->emplace_back(std::string(TrimHttpOwsAndCr(line.substr(0, colon))),
                          std::string(TrimHttpOwsAndCr(line.substr(colon + 1))));
  }
}

void AppendRewrittenResponseHead(std::string_view head, std::string* out) {
  static constexpr std::string_view kTe = "transfer-encoding:";
  static constexpr std::string_view kRenamed = "X-Harvest-Original-Transfer-Encoding:";
  // Drop the trailing empty line(s); they are re-added once below.
  while (!head.empty() && (head.back() == '\n' || head.back() == '\r')) head.remove_suffix(1);
  if (head.empty()) return;
  out->reserve(out->size() + head.size() + 64);
  bool first = true;
  while (true) {
    size_t eol = head.find('\n');
    std::string_view line = head.substr(0, eol);
    bool is_te = !first && line.size() >= kTe.size() &&
                 EqualsIgnoreAsciiCase(line.substr(0, kTe.size()), kTe);
    if (is_te) {
      out->append(kRenamed);
      out->append(line.substr(kTe.size()));
    } else {
      out->append(line);
    }
    first = false;
    if (eol == std::string_view::npos) break;
    out->push_back('\n');
    head = head.substr(eol + 1);
  }
  if (out->back() != '\r') out->push_back('\r');  // last line as received had no CR
  out->append("\n\r\n");
}

std::string RewriteResponseHead(std::string_view head) {
  std::string out;
  AppendRewrittenResponseHead(head, &out);
  return out;
}

std::string Timestamp14FromWarcDate(std::string_view d) {
  std::string out;
  for (char c : d) {
    if (c == '.' || c == 'Z') break;
    if (c >= '0' && c <= '9') out.push_back(c);
  }
  return out.size() == 14 ? out : std::string();
}

std::optional<int64_t> ParseWarcDate(std::string_view d) {
  // YYYY-MM-DDThh:mm:ss[.f{1,9}]Z (WARC/1.1 §5.4: W3C-ISO8601 in UTC).
  auto digits = [&d](size_t pos, size_t n, int* out) {
    if (pos + n > d.size()) return false;
    int v = 0;
    for (size_t i = pos; i < pos + n; ++i) {
      if (d[i] < '0' || d[i] > '9') return false;
      v = v * 10 + (d[i] - '0');
    }
    *out = v;
    return true;
  };
  int y = 0, mo = 0, da = 0, h = 0, mi = 0, s = 0;
  if (d.size() < 20 || !digits(0, 4, &y) || d[4] != '-' || !digits(5, 2, &mo) || d[7] != '-' ||
      !digits(8, 2, &da) || d[10] != 'T' || !digits(11, 2, &h) || d[13] != ':' ||
      !digits(14, 2, &mi) || d[16] != ':' || !digits(17, 2, &s)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || da < 1 || da > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  size_t pos = 19;
  int64_t frac = 0;
  if (d[pos] == '.') {
    size_t n = 0;
    for (++pos; pos < d.size() && d[pos] >= '0' && d[pos] <= '9'; ++pos, ++n) {
      if (n < 6) frac = frac * 10 + (d[pos] - '0');
    }
    if (n == 0 || n > 9) return std::nullopt;
    for (; n < 6; ++n) frac *= 10;
  }
  if (pos + 1 != d.size() || d[pos] != 'Z') return std::nullopt;
  // Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
  int64_t yy = y - (mo <= 2 ? 1 : 0);
  int64_t era = (yy >= 0 ? yy : yy - 399) / 400;
  int64_t yoe = yy - era * 400;
  int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + da - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  int64_t days = era * 146097 + doe - 719468;
  int64_t secs = days * 86400 + h * 3600 + mi * 60 + s;
  return secs * 1'000'000 + frac;
}

}  // namespace internal

std::string WarcRecord::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreAsciiCase(k, name)) return v;
  }
  return {};
}

std::string HttpResponse::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreAsciiCase(k, name)) return v;
  }
  return {};
}

}  // namespace harvest::store
