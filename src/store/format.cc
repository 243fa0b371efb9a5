// Text helpers shared by writer and reader: dates, header lines, the Transfer-Encoding
// rewrite.
#include <ctime>

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

char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
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

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
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
      value += Trim(line);
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // not a header: skipped, as browsers do
    headers->emplace_back(std::string(Trim(line.substr(0, colon))),
                          std::string(Trim(line.substr(colon + 1))));
  }
}

std::string RewriteResponseHead(std::string_view head) {
  static constexpr std::string_view kTe = "transfer-encoding:";
  static constexpr std::string_view kRenamed = "X-Harvest-Original-Transfer-Encoding:";
  // Drop the trailing empty line(s); they are re-added once below.
  while (!head.empty() && (head.back() == '\n' || head.back() == '\r')) head.remove_suffix(1);
  if (head.empty()) return {};
  std::string out;
  out.reserve(head.size() + 64);
  bool first = true;
  while (true) {
    size_t eol = head.find('\n');
    std::string_view line = head.substr(0, eol);
    bool is_te = !first && line.size() >= kTe.size() &&
                 EqualsIgnoreCase(line.substr(0, kTe.size()), kTe);
    if (is_te) {
      out += kRenamed;
      out += line.substr(kTe.size());
    } else {
      out += line;
    }
    first = false;
    if (eol == std::string_view::npos) break;
    out += '\n';
    head = head.substr(eol + 1);
  }
  if (!out.empty() && out.back() != '\r') out += '\r';  // last line as received had no CR
  out += "\n\r\n";
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

}  // namespace internal

std::string WarcRecord::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (internal::EqualsIgnoreCase(k, name)) return v;
  }
  return {};
}

std::string HttpResponse::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (internal::EqualsIgnoreCase(k, name)) return v;
  }
  return {};
}

}  // namespace harvest::store
