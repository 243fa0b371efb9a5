// Prometheus text exposition (prometheus.h).
#include "admin/prometheus.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>

namespace harvest::admin {
namespace {

[[maybe_unused]] bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

bool PromWriter::ValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool PromWriter::ValidLabelName(std::string_view name) {
  if (name.empty() || name.substr(0, 2) == "__") return false;  // "__" is reserved
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

std::string PromWriter::FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);  // shortest round-trip form
  assert(ec == std::errc());
  (void)ec;
  return std::string(buf, end);
}

std::string PromWriter::EscapeLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void PromWriter::Family(std::string_view name, std::string_view help, std::string_view type) {
  assert(ValidMetricName(name));
  if (name == current_) return;
  if (!current_.empty()) done_.insert(current_);
  // A family's samples must be contiguous: promtool rejects a second HELP/TYPE.
  assert(!done_.count(std::string(name)) && "samples of a metric family must come together");
  current_ = std::string(name);
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  out_ += EscapeHelp(help);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void PromWriter::Sample(std::string_view name, const Labels& labels,
                        const std::pair<std::string, std::string>* extra, std::string_view value) {
  out_ += name;
  if (!labels.empty() || extra) {
    out_ += '{';
    bool first = true;
    auto add = [&](const std::string& k, const std::string& v) {
      assert(ValidLabelName(k));
      if (!first) out_ += ',';
      first = false;
      out_ += k;
      out_ += "=\"";
      out_ += EscapeLabelValue(v);
      out_ += '"';
    };
    for (const auto& [k, v] : labels) add(k, v);
    if (extra) add(extra->first, extra->second);
    out_ += '}';
  }
  out_ += ' ';
  out_ += value;
  out_ += '\n';
}

void PromWriter::Counter(std::string_view name, std::string_view help, double value,
                         Labels labels) {
  assert(EndsWith(name, "_total") && "counter names end in _total");
  Family(name, help, "counter");
  Sample(name, labels, nullptr, FormatValue(value));
}

void PromWriter::Gauge(std::string_view name, std::string_view help, double value, Labels labels) {
  assert(!EndsWith(name, "_total") && "only counters end in _total");
  Family(name, help, "gauge");
  Sample(name, labels, nullptr, FormatValue(value));
}

void PromWriter::Histogram(std::string_view name, std::string_view help,
                           const std::vector<double>& upper_bounds,
                           const std::vector<uint64_t>& bucket_counts, double sum, Labels labels) {
  assert(bucket_counts.size() == upper_bounds.size() + 1);
  assert(std::is_sorted(upper_bounds.begin(), upper_bounds.end()));
  for ([[maybe_unused]] const auto& [k, v] : labels) assert(k != "le");
  Family(name, help, "histogram");
  std::string bucket_name = std::string(name) + "_bucket";
  uint64_t cumulative = 0;
  std::pair<std::string, std::string> le{"le", ""};
  for (size_t i = 0; i < upper_bounds.size() && i < bucket_counts.size(); ++i) {
    cumulative += bucket_counts[i];
    le.second = FormatValue(upper_bounds[i]);
    Sample(bucket_name, labels, &le, std::to_string(cumulative));
  }
  if (bucket_counts.size() > upper_bounds.size()) cumulative += bucket_counts.back();
  le.second = "+Inf";
  Sample(bucket_name, labels, &le, std::to_string(cumulative));
  Sample(std::string(name) + "_sum", labels, nullptr, FormatValue(sum));
  Sample(std::string(name) + "_count", labels, nullptr, std::to_string(cumulative));
}

std::string PromWriter::Take() {
  std::string out = std::move(out_);
  out_.clear();
  current_.clear();
  done_.clear();
  return out;
}

void LatencyHistogram::Observe(double seconds) {
  if (std::isnan(seconds)) return;
  if (seconds < 0) seconds = 0;
  size_t i = std::lower_bound(kBounds.begin(), kBounds.end(), seconds) - kBounds.begin();
  ++buckets_[i];
  ++count_;
  sum_ += seconds;
}

void LatencyHistogram::Render(PromWriter& w, std::string_view name, std::string_view help,
                              Labels labels) const {
  w.Histogram(name, help, std::vector<double>(kBounds.begin(), kBounds.end()),
              std::vector<uint64_t>(buckets_.begin(), buckets_.end()), sum_, std::move(labels));
}

}  // namespace harvest::admin
