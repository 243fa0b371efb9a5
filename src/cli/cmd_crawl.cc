// harvest crawl: crawl from seed URLs into a WARC directory.
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <optional>

#include "base/duration.h"
#include "base/log.h"
#include "cli/admin_server.h"
#include "cli/cluster_flags.h"
#include "cli/command.h"
#include "cli/metadata_flags.h"
#include "crawl/crawl.h"

namespace harvest::cli {
namespace {

std::atomic<crawl::Crawler*> g_crawler{nullptr};
std::atomic<int> g_signals{0};

extern "C" void OnStopSignal(int) {
  if (g_signals.fetch_add(1) > 0) _exit(130);  // second signal: stop now
  if (crawl::Crawler* c = g_crawler.load()) c->RequestStop();
}

// Ranges of the numeric flags: those of the config keys they override (src/crawl/config.cc).
constexpr int64_t kMaxDelayMs = 3'600'000;       // politeness.delay_ms
constexpr int64_t kMaxDepth = 100'000;           // scope.max_depth
constexpr int64_t kMaxPages = int64_t{1} << 50;  // crawl.max_pages
constexpr int64_t kMaxWorkers = 256;             // crawl.workers
constexpr int64_t kMaxPerIpLimit = 1 << 20;      // politeness.per_ip_limit
// The recrawl durations (recrawl.* keys): 1 s to ten years.
constexpr std::chrono::milliseconds kMinDuration{1000};
constexpr std::chrono::milliseconds kMaxDuration{int64_t{10} * 365 * 86'400'000};

// A flag not given (nullopt) leaves the config file's value or the default.
struct CrawlFlags {
  std::vector<std::string> urls;  // seed URLs given as arguments
  std::string seeds, out, config, user_agent, summary_json, resolve_file, ca_file;
  std::vector<std::string> connect_to;
  std::vector<std::string> allow_addresses;
  AdminFlags admin;
  ClusterFlags cluster;
  MetadataFlags metadata;  // --metadata (docs/metadata.md)
  std::optional<int64_t> delay_ms, max_depth, max_pages, workers, per_ip_limit;
  std::optional<int64_t> host_daily_quota, max_backlog;
  std::optional<std::string> scope;  // "any", "host" or "site" (checked when parsed)
  // Durations (checked when parsed).
  std::optional<std::string> refresh_window, stop_after, max_interval;
  bool recrawl = false;
  bool no_progress = false;
  bool fresh = false;
  bool sitemap_probe = false;
};

// --scope: refused at parse time unless frontier::ParseScopeMode knows it.
CLI::Validator ScopeModeCheck() {
  return CLI::Validator(
      [](std::string& in) -> std::string {
        frontier::ScopeMode mode;
        if (frontier::ParseScopeMode(in, &mode)) return "";
        return "must be any, host or site, got " + in;
      },
      "any|host|site", "ScopeMode");
}

void WriteSummaryJson(const std::string& path, const crawl::CrawlStats& stats,
                      const std::string& extra) {
  std::ofstream out(path);
  out << "{\"complete\":" << (stats.complete ? "true" : "false")
      << ",\"interrupted\":" << (stats.interrupted ? "true" : "false")
      << ",\"elapsed_s\":" << stats.elapsed_s << ",\"seeds\":" << stats.seeds
      << ",\"admitted\":" << stats.admitted << ",\"fetches\":" << stats.fetches
      << ",\"pages\":" << stats.pages << ",\"robots_fetches\":" << stats.robots_fetches
      << ",\"disallowed\":" << stats.disallowed << ",\"http_2xx\":" << stats.http_2xx
      << ",\"http_3xx\":" << stats.http_3xx << ",\"http_4xx\":" << stats.http_4xx
      << ",\"http_5xx\":" << stats.http_5xx << ",\"fetch_errors\":" << stats.fetch_errors
      << ",\"retries\":" << stats.retries << ",\"gave_up\":" << stats.gave_up
      << ",\"truncated\":" << stats.truncated << ",\"responses_stored\":" << stats.responses_stored
      << ",\"revisits_stored\":" << stats.revisits_stored
      << ",\"near_duplicates\":" << stats.near_duplicates << ",\"recrawls\":" << stats.recrawls
      << ",\"conditional\":" << stats.conditional << ",\"not_modified\":" << stats.not_modified
      << ",\"changed\":" << stats.changed << ",\"unchanged\":" << stats.unchanged
      << ",\"scheduled\":" << stats.scheduled
      << ",\"stopped_after\":" << (stats.stopped_after ? "true" : "false")
      << ",\"bytes_downloaded\":" << stats.bytes_downloaded
      << ",\"warc_bytes\":" << stats.warc_bytes << ",\"outcomes\":" << stats.outcomes
      << ",\"hosts_resident_peak\":" << stats.hosts_resident_peak
      << ",\"hosts_evicted\":" << stats.hosts_evicted << ",\"unparked\":" << stats.unparked
      << ",\"deferred\":" << stats.deferred << ",\"released\":" << stats.released
      << ",\"deferred_waiting\":" << stats.deferred_waiting
      << ",\"backlog_refused\":" << stats.backlog_refused
      << ",\"hosts_deferred\":" << stats.hosts_deferred
      << ",\"hosts_over_quota\":" << stats.hosts_over_quota
      << ",\"quota_waits\":" << stats.quota_waits << ",\"depth_lowered\":" << stats.depth_lowered
      << ",\"lease_waits\":" << stats.lease_waits << ",\"upgraded\":" << stats.upgraded
      << ",\"hsts_hosts\":" << stats.hsts_hosts << ",\"learnt_hosts\":" << stats.learnt_hosts
      << ",\"still_queued\":" << stats.still_queued << extra << "}\n";
}

// A crawl holds a socket per transfer in flight and per idle host connection kept (in two
// pools of up to fetch.max_idle_connections each: the own HTTP/1.1 client's and libcurl's,
// docs/fetching.md), plus the crawl state's files; Debian's default soft limit (1,024) is
// below that. Raises the
// soft open-file limit to what the configuration needs (at most the hard limit), and warns
// when the hard limit is too low: the crawl then runs, but connects fail with EMFILE.
void RaiseOpenFileLimit(const crawl::CrawlOptions& o) {
  constexpr uint64_t kStateAndOutputFiles = 1000 + 128;  // RocksDB max_open_files, WARC, logs
  const uint64_t want =
      o.fetch.max_concurrent == 0
          ? RLIM_INFINITY
          : o.fetch.max_concurrent + 2 * o.fetch.max_idle_connections + kStateAndOutputFiles;
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= want) return;
  const rlim_t raised = lim.rlim_max == RLIM_INFINITY ? want : std::min<rlim_t>(lim.rlim_max, want);
  if (raised > lim.rlim_cur) {
    rlimit next = lim;
    next.rlim_cur = raised;
    if (setrlimit(RLIMIT_NOFILE, &next) == 0) lim = next;
  }
  if (lim.rlim_cur < want && want != RLIM_INFINITY) {
    spdlog::warn(
        "open-file limit {} is below the {} this configuration may use (fetch.max_concurrent + "
        "2 x fetch.max_idle_connections + {} for the crawl state and outputs): raise `ulimit -n` "
        "or lower them",
        static_cast<uint64_t>(lim.rlim_cur), want, kStateAndOutputFiles);
  }
}

// The seed file's URLs, then those given as arguments (bad ones reported by line or by
// argument number).
Result<std::vector<std::string>> Seeds(const CrawlFlags& f) {
  std::vector<std::string> seeds;
  if (!f.seeds.empty()) {
    Result<std::vector<std::string>> from_file = crawl::ReadSeedsFile(f.seeds);
    if (!from_file.ok()) return from_file.status();
    seeds = std::move(*from_file);
  }
  if (!f.urls.empty()) {
    std::string text;
    for (const std::string& u : f.urls) text += u + "\n";
    Result<std::vector<std::string>> args = crawl::ParseSeeds(text, "seed argument");
    if (!args.ok()) return args.status();
    seeds.insert(seeds.end(), args->begin(), args->end());
  }
  return seeds;
}

int RunCrawl(const CrawlFlags& f) {
  if (f.seeds.empty() && f.urls.empty()) {
    return UsageError("crawl", "no seeds: give seed URLs or --seeds FILE");
  }
  crawl::CrawlOptions options;
  if (!f.config.empty()) {
    if (Status s = crawl::LoadConfigFile(f.config, &options); !s.ok()) {
      std::fprintf(stderr, "harvest crawl: config error: %s\n", s.message().c_str());
      return kExitUsage;
    }
  }
  Result<std::vector<std::string>> seeds = Seeds(f);
  if (!seeds.ok()) {
    std::fprintf(stderr, "harvest crawl: bad seeds:\n%s\n", seeds.status().message().c_str());
    return kExitUsage;
  }
  // Without --out: a directory named after the first seed's host, in the working directory.
  const std::string out = !f.out.empty() ? f.out : crawl::DefaultOutDir(seeds->front()).string();
  options.out_dir = out;
  if (f.delay_ms) options.frontier.default_delay = std::chrono::milliseconds(*f.delay_ms);
  if (f.max_depth) options.scope.max_depth = static_cast<int>(*f.max_depth);
  if (f.host_daily_quota)
    options.traps.host_daily_quota = static_cast<uint64_t>(*f.host_daily_quota);
  if (f.max_backlog) options.traps.max_backlog = static_cast<uint64_t>(*f.max_backlog);
  if (f.max_pages) options.max_pages = static_cast<uint64_t>(*f.max_pages);
  if (f.workers) options.workers = static_cast<int>(*f.workers);
  if (f.scope && !frontier::ParseScopeMode(*f.scope, &options.scope.mode)) {
    return UsageError("crawl", "--scope: must be any, host or site, got " + *f.scope);
  }
  if (!f.user_agent.empty()) options.fetch.user_agent = f.user_agent;
  for (const auto& c : f.connect_to) options.fetch.connect_to.push_back(c);
  for (const auto& a : f.allow_addresses) options.allow_addresses.push_back(a);
  if (!f.resolve_file.empty()) options.resolve_file = f.resolve_file;
  if (!f.ca_file.empty()) options.fetch.ca_file = f.ca_file;
  if (f.per_ip_limit) options.frontier.per_ip_limit = static_cast<size_t>(*f.per_ip_limit);
  if (f.recrawl) options.freshness.recrawl = true;
  if (f.refresh_window) options.freshness.refresh_window = *ParseDuration(*f.refresh_window);
  if (f.max_interval) options.freshness.max_interval = *ParseDuration(*f.max_interval);
  if (f.stop_after) options.freshness.stop_after = *ParseDuration(*f.stop_after);
  if (f.no_progress) options.progress = false;
  if (f.fresh) options.fresh = true;
  if (f.sitemap_probe) options.sitemap_probe = true;

  std::unique_ptr<cluster::RedisCrawl> worker;
  if (!f.cluster.redis.empty()) {
    if (f.cluster.worker_id.empty()) {
      return UsageError("crawl", "--redis needs --worker-id (this worker's name)");
    }
    Result<std::unique_ptr<cluster::RedisCrawl>> w = MakeWorker(f.cluster, options);
    if (!w.ok()) {
      std::fprintf(stderr, "harvest crawl: %s\n", w.status().message().c_str());
      return w.status().code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
    }
    worker = std::move(*w);
    options.shared = worker.get();
    options.warc.prefix = "harvest-" + f.cluster.worker_id;
  } else if (!f.cluster.worker_id.empty()) {
    return UsageError("crawl", "--worker-id is for a shared crawl: give --redis too");
  }

  RaiseOpenFileLimit(options);
  crawl::Crawler crawler(std::move(options));
  std::unique_ptr<CrawlMetadata> metadata;
  if (!f.metadata.url.empty()) {
    Result<std::unique_ptr<CrawlMetadata>> m =
        CrawlMetadata::Start(f.metadata, out, f.cluster.worker_id, &crawler);
    if (!m.ok()) return UsageError("crawl", "--metadata: " + m.status().message());
    metadata = std::move(*m);
  }
  std::unique_ptr<admin::Server> admin_server;
  if (!f.admin.listen.empty()) {
    Result<std::unique_ptr<admin::Server>> started =
        StartAdminServer(f.admin, metadata ? metadata->WrapBackend(crawler.admin_backend())
                                           : crawler.admin_backend());
    if (!started.ok()) {
      std::fprintf(stderr, "harvest crawl: --admin: %s\n", started.status().message().c_str());
      return started.status().code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
    }
    admin_server = std::move(*started);
  }
  g_crawler.store(&crawler);
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A file-size limit (ulimit -f) must fail the write with EFBIG, which pauses the crawl
  // like a full disk, rather than kill the process.
  std::signal(SIGXFSZ, SIG_IGN);
  spdlog::info("crawling {} seeds into {}", seeds->size(), out);
  Status s = crawler.Run(*seeds);
  g_crawler.store(nullptr);
  if (admin_server) admin_server->Stop();  // before the crawler (and its backend) goes
  crawl::CrawlStats stats = crawler.stats();
  if (!s.ok() && !stats.started) {
    // Setup failed (--out unusable, state database, fetcher): there is nothing to summarize.
    std::fprintf(stderr, "harvest crawl: cannot start the crawl: %s\n", s.ToString().c_str());
    return s.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  std::fputs(crawl::FormatSummary(stats).c_str(), stdout);
  std::string extra;
  if (worker) {
    const cluster::WorkerStats w = worker->stats();
    std::printf(
        "shared crawl: worker %s: %llu URLs sent for admission (%llu new), %llu taken, %llu "
        "done; partitions taken %llu (%llu from dead workers, %llu URLs served again), given "
        "up %llu; Redis %llu requests in %llu round trips, %llu bytes out, %llu bytes in, %llu "
        "redirects, %llu reconnects, %llu retry rounds\n",
        f.cluster.worker_id.c_str(), static_cast<unsigned long long>(w.admitted_sent),
        static_cast<unsigned long long>(w.admitted_new), static_cast<unsigned long long>(w.taken),
        static_cast<unsigned long long>(w.done),
        static_cast<unsigned long long>(w.partitions_owned),
        static_cast<unsigned long long>(w.partitions_taken_over),
        static_cast<unsigned long long>(w.requeued),
        static_cast<unsigned long long>(w.partitions_given_up),
        static_cast<unsigned long long>(w.redis.requests),
        static_cast<unsigned long long>(w.redis.round_trips),
        static_cast<unsigned long long>(w.redis.bytes_out),
        static_cast<unsigned long long>(w.redis.bytes_in),
        static_cast<unsigned long long>(w.redis.redirects),
        static_cast<unsigned long long>(w.redis.reconnects),
        static_cast<unsigned long long>(w.redis.retries));
    extra = ",\"worker\":\"" + f.cluster.worker_id +
            "\",\"redis_requests\":" + std::to_string(w.redis.requests) +
            ",\"redis_round_trips\":" + std::to_string(w.redis.round_trips) +
            ",\"redis_bytes_out\":" + std::to_string(w.redis.bytes_out) +
            ",\"redis_bytes_in\":" + std::to_string(w.redis.bytes_in) +
            ",\"redis_redirects\":" + std::to_string(w.redis.redirects) +
            ",\"redis_reconnects\":" + std::to_string(w.redis.reconnects) +
            ",\"redis_retries\":" + std::to_string(w.redis.retries) +
            ",\"shared_taken\":" + std::to_string(w.taken) +
            ",\"shared_done\":" + std::to_string(w.done);
  }
  Status metadata_status;
  if (metadata) {
    std::fflush(stdout);
    metadata_status = metadata->Finish();
    std::fputs(metadata->Summary().c_str(), stdout);
    extra += metadata->JsonFields();
  }
  std::fflush(stdout);
  if (!f.summary_json.empty()) WriteSummaryJson(f.summary_json, stats, extra);
  if (!metadata_status.ok()) {
    std::fprintf(stderr, "harvest crawl: %s\n", metadata_status.message().c_str());
    return kExitFailure;
  }
  if (!s.ok()) {
    std::fprintf(stderr, "harvest crawl: crawl failed: %s\n", s.ToString().c_str());
    return s.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  if (stats.interrupted) return 3;
  return kExitOk;
}

CommandRegistration reg(
    "crawl", "Crawl from seed URLs, politely, into WARC files", [](CLI::App* app) -> CommandRunner {
      auto f = std::make_shared<CrawlFlags>();
      app->add_option("urls", f->urls,
                      "Seed URLs (with or instead of --seeds), e.g. harvest crawl "
                      "https://example.com/");
      app->add_option("--seeds", f->seeds, "File of seed URLs, one per line");
      app->add_option("--out", f->out,
                      "Crawl directory (WARC files, index, outcomes, state/); an existing one "
                      "is resumed. Default: the first seed's host name (e.g. example.com) in "
                      "the working directory");
      app->add_flag("--fresh", f->fresh,
                    "Refuse an existing --out directory instead of resuming its crawl");
      app->add_option("--config", f->config, "TOML config file (docs/configuration.md)");
      app->add_option("--delay-ms", f->delay_ms, "Default per-host delay in ms (default 1000)")
          ->check(IntRange(0, kMaxDelayMs));
      app->add_option("--max-depth", f->max_depth, "Maximum link depth from a seed (default 10)")
          ->check(IntRange(0, kMaxDepth));
      app->add_option("--max-pages", f->max_pages, "Stop after this many page fetches (0 = none)")
          ->check(IntRange(0, kMaxPages));
      app->add_option("--host-daily-quota", f->host_daily_quota,
                      "Pages fetched per host name per UTC day; a host at it waits for the "
                      "next day, its new URLs deferred on disk (default 100000, 0 = none)")
          ->check(IntRange(0, kMaxPages));
      app->add_option("--max-backlog", f->max_backlog,
                      "Deferred URLs a host over its budget may have waiting on disk; beyond, "
                      "its new URLs are refused as trap-backlog-cap (default 1000000)")
          ->check(IntRange(0, kMaxPages));
      app->add_option("--scope", f->scope,
                      "Hosts to follow links to: any, host (the seeds' host names) or site "
                      "(the seeds' registrable domains) (default any)")
          ->check(ScopeModeCheck());
      app->add_option("--user-agent", f->user_agent,
                      "User-Agent; its product token is matched in robots.txt");
      // One value per --connect-to: what follows is a seed URL, not another route.
      app->add_option("--connect-to", f->connect_to,
                      "HOST:PORT:ADDR:PORT as curl's --connect-to (empty HOST = every host)")
          ->allow_extra_args(false);
      app->add_option("--allow-address", f->allow_addresses,
                      "CIDR the crawl may connect to although it is private or special "
                      "(loopback, RFC 1918, link-local...; repeatable), e.g. 10.0.0.0/8")
          ->allow_extra_args(false);
      app->add_option("--ca-file", f->ca_file,
                      "PEM file of extra root certificates trusted for https, beside the "
                      "system's (fetch.ca_file)");
      app->add_option("--resolve-file", f->resolve_file,
                      "Pinned addresses, lines 'HOST ADDRESS[:PORT]' (HOST may be *.suffix); "
                      "pinned hosts are not looked up in DNS");
      app->add_option("--per-ip-limit", f->per_ip_limit,
                      "Requests in flight per IP address (default 10; 0 = no per-IP limits)")
          ->check(IntRange(0, kMaxPerIpLimit));
      app->add_option("--workers", f->workers, "Process threads (default 0: cores)")
          ->check(IntRange(0, kMaxWorkers));
      app->add_flag("--sitemap-probe", f->sitemap_probe,
                    "Fetch /sitemap.xml of a host whose robots.txt names no sitemap "
                    "(crawl.sitemap_probe; default off)");
      app->add_flag("--recrawl", f->recrawl,
                    "Keep running when the frontier runs dry: recrawl URLs as they come due, "
                    "until stopped (docs/freshness.md)");
      app->add_option("--refresh-window", f->refresh_window,
                      "No URL is fetched twice within this duration, e.g. 30s, 12h, 30d "
                      "(default 1d)")
          ->check(DurationRange(kMinDuration, kMaxDuration));
      app->add_option("--max-interval", f->max_interval,
                      "Longest recrawl interval of an unchanging page (default 30d)")
          ->check(DurationRange(kMinDuration, kMaxDuration));
      app->add_option("--stop-after", f->stop_after,
                      "Stop after this duration (exit 0, state saved, resumable), e.g. 70s")
          ->check(DurationRange(kMinDuration, kMaxDuration));
      app->add_flag("--no-progress", f->no_progress, "No live progress line");
      app->add_option("--admin", f->admin.listen,
                      "Serve the admin API and dashboard on ADDR:PORT while crawling, e.g. "
                      "127.0.0.1:8080 (port 0 picks one; docs/admin-api.md)");
      app->add_option("--admin-token-file", f->admin.token_file,
                      "Require 'Authorization: Bearer TOKEN' (TOKEN read from FILE); needed "
                      "for a non-loopback --admin address");
      app->add_option("--summary-json", f->summary_json, "Also write the summary as JSON here");
      AddRedisFlags(app, &f->cluster);
      AddWorkerFlags(app, &f->cluster);
      AddMetadataFlags(app, &f->metadata);
      app->footer(
          "Running the same command again after any stop (SIGTERM, kill -9, crash) resumes the "
          "crawl in --out.\nExit status: 0 crawl complete (or page limit reached, or "
          "--stop-after reached), 1 fatal error, 2 usage or input error, 3 stopped by "
          "SIGINT/SIGTERM.");
      return [f]() { return RunCrawl(*f); };
    });

}  // namespace
}  // namespace harvest::cli
