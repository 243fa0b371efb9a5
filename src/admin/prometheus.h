// A writer for the Prometheus text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/), and a fixed-bucket latency
// histogram. The crawl renders GET /metrics with these (admin::Backend::MetricsText).
//
// Names follow Prometheus conventions so that `promtool check metrics` accepts the output
// (a ctest, promtool_check, holds us to it): snake_case, base units (`_seconds`, `_bytes`),
// counters end in `_total`, other types do not. Invalid names, a counter without `_total`,
// or a family split by another family in between are programming errors (assert).
//
// Thread-safety: PromWriter and LatencyHistogram are thread-compatible (no internal locks);
// the crawl keeps its histograms on the thread that observes them and renders there.
#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harvest::admin {

using Labels = std::vector<std::pair<std::string, std::string>>;

class PromWriter {
 public:
  // One sample of a family. Calls for one family come together; HELP and TYPE are written
  // once, before its first sample. `name` of a counter ends in "_total".
  void Counter(std::string_view name, std::string_view help, double value, Labels labels = {});
  void Gauge(std::string_view name, std::string_view help, double value, Labels labels = {});
  // `upper_bounds` ascending and finite; `bucket_counts` holds one count per bound (the
  // observations in (previous bound, bound]) plus one for +Inf, i.e. NOT cumulative.
  // Writes name_bucket{le=...} (cumulative), name_sum and name_count.
  void Histogram(std::string_view name, std::string_view help,
                 const std::vector<double>& upper_bounds,
                 const std::vector<uint64_t>& bucket_counts, double sum, Labels labels = {});

  // The exposition so far; the writer starts over empty.
  std::string Take();

  // "1", "0.25", "1e+21", "NaN", "+Inf", "-Inf".
  static std::string FormatValue(double v);
  // Escapes \, " and newline for a label value.
  static std::string EscapeLabelValue(std::string_view v);
  static bool ValidMetricName(std::string_view name);
  static bool ValidLabelName(std::string_view name);

 private:
  void Family(std::string_view name, std::string_view help, std::string_view type);
  void Sample(std::string_view name, const Labels& labels,
              const std::pair<std::string, std::string>* extra, std::string_view value);

  std::string out_;
  std::string current_;         // the family being written
  std::set<std::string> done_;  // families finished (to catch a split family)
};

// Latency observations in fixed buckets, 5 ms .. 30 s (seconds; le semantics: an
// observation equal to a bound counts in that bound's bucket).
class LatencyHistogram {
 public:
  static constexpr std::array<double, 12> kBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                     0.5,   1,    2.5,   5,    10,  30};

  void Observe(double seconds);
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  // Non-cumulative, kBounds.size() + 1 entries (the last: above 30 s).
  const std::array<uint64_t, kBounds.size() + 1>& buckets() const { return buckets_; }
  void Render(PromWriter& w, std::string_view name, std::string_view help,
              Labels labels = {}) const;

 private:
  std::array<uint64_t, kBounds.size() + 1> buckets_{};
  uint64_t count_ = 0;
  double sum_ = 0;
};

}  // namespace harvest::admin
