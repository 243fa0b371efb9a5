// Writes a sample exposition with every PromWriter feature to stdout; the ctest
// promtool_check feeds it to `promtool check metrics`.
#include <cstdio>
#include <limits>

#include "admin/prometheus.h"

int main() {
  using harvest::admin::LatencyHistogram;
  using harvest::admin::PromWriter;
  PromWriter w;
  w.Counter("harvest_fetches_total", "Fetches by status class.", 120, {{"class", "2xx"}});
  w.Counter("harvest_fetches_total", "Fetches by status class.", 3, {{"class", "5xx"}});
  w.Counter("harvest_errors_total", "Errors by kind.\nSecond line with a \\ backslash.", 2,
            {{"kind", "say \"hi\"\\n\nnewline"}, {"host", "a.test"}});
  w.Gauge("harvest_queue_depth", "URLs queued.", 4096);
  w.Gauge("harvest_hosts", "Hosts by state.", 2, {{"state", "active"}});
  w.Gauge("harvest_hosts", "Hosts by state.", 0, {{"state", "blocked"}});
  w.Gauge("harvest_ratio", "A ratio.", 0.125);
  w.Gauge("harvest_not_a_number", "NaN is allowed.", std::numeric_limits<double>::quiet_NaN());
  w.Gauge("harvest_infinite", "+Inf is allowed.", std::numeric_limits<double>::infinity());
  LatencyHistogram h;
  for (double s : {0.001, 0.005, 0.2, 0.7, 3.0, 45.0}) h.Observe(s);
  h.Render(w, "harvest_fetch_duration_seconds", "Fetch latency.", {{"scheme", "https"}});
  h.Render(w, "harvest_fetch_duration_seconds", "Fetch latency.", {{"scheme", "http"}});
  w.Histogram("harvest_politeness_wait_seconds", "Politeness wait.", {1, 10}, {1, 2, 3}, 40.5);
  std::string text = w.Take();
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}
