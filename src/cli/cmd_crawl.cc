// harvest crawl: crawl from seed URLs into a WARC directory.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>

#include "base/log.h"
#include "cli/command.h"
#include "crawl/crawl.h"

namespace harvest::cli {
namespace {

std::atomic<crawl::Crawler*> g_crawler{nullptr};
std::atomic<int> g_signals{0};

extern "C" void OnStopSignal(int) {
  if (g_signals.fetch_add(1) > 0) _exit(130);  // second signal: stop now
  if (crawl::Crawler* c = g_crawler.load()) c->RequestStop();
}

struct CrawlFlags {
  std::string seeds, out, config, user_agent, summary_json;
  std::vector<std::string> connect_to;
  int64_t delay_ms = -1, max_depth = -1, max_pages = -1, workers = -1;
  bool no_progress = false;
  bool fresh = false;
};

int RunCrawl(const CrawlFlags& f) {
  crawl::CrawlOptions options;
  if (!f.config.empty()) {
    if (Status s = crawl::LoadConfigFile(f.config, &options); !s.ok()) {
      std::fprintf(stderr, "harvest crawl: config error: %s\n", s.message().c_str());
      return kExitUsage;
    }
  }
  options.out_dir = f.out;
  if (f.delay_ms >= 0) options.politeness.default_delay = std::chrono::milliseconds(f.delay_ms);
  if (f.max_depth >= 0) options.scope.max_depth = static_cast<int>(f.max_depth);
  if (f.max_pages >= 0) options.max_pages = f.max_pages;
  if (f.workers >= 0) options.workers = static_cast<int>(f.workers);
  if (!f.user_agent.empty()) options.fetch.user_agent = f.user_agent;
  for (const auto& c : f.connect_to) options.fetch.connect_to.push_back(c);
  if (f.no_progress) options.progress = false;
  if (f.fresh) options.fresh = true;

  Result<std::vector<std::string>> seeds = crawl::ReadSeedsFile(f.seeds);
  if (!seeds.ok()) {
    std::fprintf(stderr, "harvest crawl: bad seeds:\n%s\n", seeds.status().message().c_str());
    return kExitUsage;
  }

  crawl::Crawler crawler(std::move(options));
  g_crawler.store(&crawler);
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A file-size limit (ulimit -f) must fail the write with EFBIG, which pauses the crawl
  // like a full disk, rather than kill the process.
  std::signal(SIGXFSZ, SIG_IGN);
  spdlog::info("crawling {} seeds into {}", seeds->size(), f.out);
  Status s = crawler.Run(*seeds);
  g_crawler.store(nullptr);
  crawl::CrawlStats stats = crawler.stats();
  std::fputs(crawl::FormatSummary(stats).c_str(), stdout);
  std::fflush(stdout);
  if (!f.summary_json.empty()) {
    std::ofstream out(f.summary_json);
    out << "{\"complete\":" << (stats.complete ? "true" : "false")
        << ",\"interrupted\":" << (stats.interrupted ? "true" : "false")
        << ",\"elapsed_s\":" << stats.elapsed_s << ",\"seeds\":" << stats.seeds
        << ",\"admitted\":" << stats.admitted << ",\"fetches\":" << stats.fetches
        << ",\"pages\":" << stats.pages << ",\"robots_fetches\":" << stats.robots_fetches
        << ",\"disallowed\":" << stats.disallowed << ",\"http_2xx\":" << stats.http_2xx
        << ",\"http_3xx\":" << stats.http_3xx << ",\"http_4xx\":" << stats.http_4xx
        << ",\"http_5xx\":" << stats.http_5xx << ",\"fetch_errors\":" << stats.fetch_errors
        << ",\"retries\":" << stats.retries << ",\"gave_up\":" << stats.gave_up
        << ",\"truncated\":" << stats.truncated
        << ",\"responses_stored\":" << stats.responses_stored
        << ",\"revisits_stored\":" << stats.revisits_stored
        << ",\"near_duplicates\":" << stats.near_duplicates
        << ",\"bytes_downloaded\":" << stats.bytes_downloaded
        << ",\"warc_bytes\":" << stats.warc_bytes << ",\"outcomes\":" << stats.outcomes << "}\n";
  }
  if (!s.ok()) {
    spdlog::error("crawl failed: {}", s.ToString());
    return s.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  if (stats.interrupted) return 3;
  return kExitOk;
}

CommandRegistration reg(
    "crawl", "Crawl from seed URLs, politely, into WARC files",
    [](CLI::App* app) -> CommandRunner {
      auto f = std::make_shared<CrawlFlags>();
      app->add_option("--seeds", f->seeds, "File of seed URLs, one per line")->required();
      app->add_option("--out", f->out,
                      "Crawl directory (WARC files, index, outcomes, state/); an existing one "
                      "is resumed")
          ->required();
      app->add_flag("--fresh", f->fresh,
                    "Refuse an existing --out directory instead of resuming its crawl");
      app->add_option("--config", f->config, "TOML config file (docs/configuration.md)");
      app->add_option("--delay-ms", f->delay_ms, "Default per-host delay in ms (default 1000)");
      app->add_option("--max-depth", f->max_depth, "Maximum link depth from a seed (default 10)");
      app->add_option("--max-pages", f->max_pages, "Stop after this many page fetches (0 = none)");
      app->add_option("--user-agent", f->user_agent,
                      "User-Agent; its product token is matched in robots.txt");
      app->add_option("--connect-to", f->connect_to,
                      "HOST:PORT:ADDR:PORT as curl's --connect-to (empty HOST = every host)");
      app->add_option("--workers", f->workers, "Process threads (default: cores)");
      app->add_flag("--no-progress", f->no_progress, "No live progress line");
      app->add_option("--summary-json", f->summary_json, "Also write the summary as JSON here");
      app->footer(
          "Running the same command again after any stop (SIGTERM, kill -9, crash) resumes the "
          "crawl in --out.\nExit status: 0 crawl complete (or page limit reached), 1 fatal "
          "error, 2 usage or input error, 3 stopped by SIGINT/SIGTERM.");
      return [f]() { return RunCrawl(*f); };
    });

}  // namespace
}  // namespace harvest::cli
