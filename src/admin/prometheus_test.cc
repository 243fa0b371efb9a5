#include "admin/prometheus.h"

#include <gtest/gtest.h>

#include <limits>

namespace harvest::admin {
namespace {

TEST(PromWriter, CounterAndGaugeFamiliesOnce) {
  PromWriter w;
  w.Counter("x_fetches_total", "Fetches.", 3, {{"class", "2xx"}});
  w.Counter("x_fetches_total", "Fetches.", 1, {{"class", "5xx"}});
  w.Gauge("x_queue_depth", "Queued URLs.", 12.5);
  EXPECT_EQ(w.Take(),
            "# HELP x_fetches_total Fetches.\n"
            "# TYPE x_fetches_total counter\n"
            "x_fetches_total{class=\"2xx\"} 3\n"
            "x_fetches_total{class=\"5xx\"} 1\n"
            "# HELP x_queue_depth Queued URLs.\n"
            "# TYPE x_queue_depth gauge\n"
            "x_queue_depth 12.5\n");
  EXPECT_EQ(w.Take(), "");
}

TEST(PromWriter, Escaping) {
  PromWriter w;
  w.Gauge("g", "line one\nback\\slash", 1, {{"a", "q\"uote\\back\nnl"}, {"b", "plain"}});
  EXPECT_EQ(w.Take(),
            "# HELP g line one\\nback\\\\slash\n"
            "# TYPE g gauge\n"
            "g{a=\"q\\\"uote\\\\back\\nnl\",b=\"plain\"} 1\n");
}

TEST(PromWriter, Values) {
  EXPECT_EQ(PromWriter::FormatValue(0), "0");
  EXPECT_EQ(PromWriter::FormatValue(1e21), "1e+21");
  EXPECT_EQ(PromWriter::FormatValue(0.1), "0.1");
  EXPECT_EQ(PromWriter::FormatValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(PromWriter::FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(PromWriter::FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(PromWriter::FormatValue(18446744073709551615.0), "18446744073709551616");
}

TEST(PromWriter, Names) {
  EXPECT_TRUE(PromWriter::ValidMetricName("harvest_fetches_total"));
  EXPECT_TRUE(PromWriter::ValidMetricName("a:b_1"));
  EXPECT_FALSE(PromWriter::ValidMetricName("1abc"));
  EXPECT_FALSE(PromWriter::ValidMetricName("a-b"));
  EXPECT_FALSE(PromWriter::ValidMetricName(""));
  EXPECT_TRUE(PromWriter::ValidLabelName("kind"));
  EXPECT_FALSE(PromWriter::ValidLabelName("__name__"));
  EXPECT_FALSE(PromWriter::ValidLabelName("a:b"));
}

TEST(PromWriter, HistogramIsCumulative) {
  PromWriter w;
  w.Histogram("h_seconds", "H.", {0.5, 1}, {1, 2, 3}, 9.25, {{"k", "v"}});
  EXPECT_EQ(w.Take(),
            "# HELP h_seconds H.\n"
            "# TYPE h_seconds histogram\n"
            "h_seconds_bucket{k=\"v\",le=\"0.5\"} 1\n"
            "h_seconds_bucket{k=\"v\",le=\"1\"} 3\n"
            "h_seconds_bucket{k=\"v\",le=\"+Inf\"} 6\n"
            "h_seconds_sum{k=\"v\"} 9.25\n"
            "h_seconds_count{k=\"v\"} 6\n");
}

TEST(LatencyHistogram, BucketsByUpperBoundInclusive) {
  LatencyHistogram h;
  h.Observe(0.005);  // == first bound: first bucket
  h.Observe(0.0051);
  h.Observe(-1);  // clamped to 0
  h.Observe(31);  // +Inf
  EXPECT_EQ(h.count(), 4u);
  EXPECT_EQ(h.buckets()[0], 2u);
  EXPECT_EQ(h.buckets()[1], 1u);
  EXPECT_EQ(h.buckets().back(), 1u);
  EXPECT_DOUBLE_EQ(h.sum(), 0.005 + 0.0051 + 31);
  PromWriter w;
  h.Render(w, "lat_seconds", "Latency.");
  std::string text = w.Take();
  EXPECT_NE(text.find("lat_seconds_bucket{le=\"0.005\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("lat_seconds_bucket{le=\"30\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("lat_seconds_bucket{le=\"+Inf\"} 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("lat_seconds_count 4\n"), std::string::npos) << text;
}

#ifndef NDEBUG
TEST(PromWriterDeathTest, SplitFamilyAndBadCounterNameAssert) {
  EXPECT_DEATH(
      {
        PromWriter w;
        w.Gauge("a", "A.", 1);
        w.Gauge("b", "B.", 1);
        w.Gauge("a", "A.", 2);
      },
      "come together");
  EXPECT_DEATH(
      {
        PromWriter w;
        w.Counter("fetches", "F.", 1);
      },
      "_total");
}
#endif

}  // namespace
}  // namespace harvest::admin
