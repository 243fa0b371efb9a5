// TEMPORARY stand-in for admin/prometheus.h (written on another branch): exactly the
// PromWriter interface metrics_text.cc is written against, with a minimal text output, so
// the crawl side builds and is tested meanwhile. Drop this file and the HARVEST_PROM_STUB
// define in src/crawl/CMakeLists.txt when admin/prometheus.h is merged.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harvest::admin {

class PromWriter {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;
  void Counter(std::string_view name, std::string_view help, double value, Labels labels = {}) {
    Family(name, help, "counter");
    Sample(name, "", labels, value);
  }
  void Gauge(std::string_view name, std::string_view help, double value, Labels labels = {}) {
    Family(name, help, "gauge");
    Sample(name, "", labels, value);
  }
  void Histogram(std::string_view name, std::string_view help,
                 const std::vector<double>& upper_bounds,
                 const std::vector<uint64_t>& bucket_counts, double sum, Labels labels = {}) {
    Family(name, help, "histogram");
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= upper_bounds.size() && i < bucket_counts.size(); ++i) {
      cumulative += bucket_counts[i];
      Labels l = labels;
      l.emplace_back("le", i < upper_bounds.size() ? Number(upper_bounds[i]) : "+Inf");
      Sample(name, "_bucket", l, static_cast<double>(cumulative));
    }
    Sample(name, "_sum", labels, sum);
    Sample(name, "_count", labels, static_cast<double>(cumulative));
  }
  std::string Take() { return std::exchange(out_, std::string()); }

 private:
  static std::string Number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
  }
  void Family(std::string_view name, std::string_view help, std::string_view type) {
    if (name == last_family_) return;
    last_family_ = std::string(name);
    out_ += "# HELP " + last_family_ + " " + std::string(help) + "\n# TYPE " + last_family_ + " " +
            std::string(type) + "\n";
  }
  void Sample(std::string_view name, std::string_view suffix, const Labels& labels, double v) {
    out_ += std::string(name) + std::string(suffix);
    if (!labels.empty()) {
      out_ += "{";
      for (size_t i = 0; i < labels.size(); ++i) {
        out_ += (i ? "," : "") + labels[i].first + "=\"" + labels[i].second + "\"";
      }
      out_ += "}";
    }
    out_ += " " + Number(v) + "\n";
  }
  std::string out_;
  std::string last_family_;
};

}  // namespace harvest::admin
