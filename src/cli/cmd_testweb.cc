// `harvest testweb`: serve the deterministic synthetic web (src/testweb, docs/testweb.md).
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "base/duration.h"
#include "cli/command.h"
#include "testweb/testweb.h"

namespace harvest::cli {
namespace {

// Ranges of the numeric options (checked when parsed: a usage error naming the value).
constexpr int64_t kMaxHosts = 1'000'000;  // testweb::kMaxHosts
constexpr int64_t kMaxPages = 1'000'000;  // the manifest lists every page of every host
constexpr int64_t kMaxLinks = 10'000;     // per page
constexpr int64_t kMaxThreads = 256;
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
// A schedule slower than a year is a typo rather than a test.
constexpr std::chrono::milliseconds kMaxChangeEvery = std::chrono::hours(24 * 366);

struct TestWebCliOptions {
  testweb::TestWebOptions web;
  std::string seeds_path;
  std::string manifest_path;
  std::string resolve_path;
  bool seeds_only = false;
  std::vector<std::string> corpus_dirs;
  std::string export_dir;
  std::string export_domain = "test";
  int export_port = 0;
};

// Writes `data` to a temporary file beside `path` and renames it into place, so that a
// script polling for `path` never reads it half-written.
bool WriteFile(const std::string& path, const std::string& data) {
  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out << data;
  out.close();
  std::error_code ec;
  if (out) std::filesystem::rename(tmp, path, ec);
  if (!out || ec) {
    std::filesystem::remove(tmp, ec);
    std::fprintf(stderr, "harvest testweb: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

// `web` is null with --seeds-only (no addresses, so no resolve file).
bool WriteOutputs(const TestWebCliOptions& o, const testweb::Site& site,
                  const testweb::TestWeb* web) {
  if (web != nullptr && !o.resolve_path.empty() &&
      !WriteFile(o.resolve_path, testweb::ResolveFileText(site, web->addresses()))) {
    return false;
  }
  if (!o.seeds_path.empty()) {
    std::string seeds;
    for (std::string url : site.SeedUrls()) {
      // With TLS the seeds are the https:// roots; the pages still link http:// (old pages
      // do), so a crawler meets both schemes.
      if (o.web.tls && url.rfind("http://", 0) == 0) url.replace(0, 4, "https");
      seeds += url + "\n";
    }
    if (!WriteFile(o.seeds_path, seeds)) return false;
  }
  if (!o.manifest_path.empty() && !WriteFile(o.manifest_path, site.ManifestJson())) return false;
  return true;
}

// Loads --corpus into o.web.site.corpus and says what was used; false (after the message) on
// an error.
bool LoadCorpusDirs(TestWebCliOptions& o) {
  testweb::CorpusStats stats;
  auto corpus = testweb::LoadCorpus(o.corpus_dirs, &stats);
  if (!corpus.ok()) {
    std::fprintf(stderr, "harvest testweb: %s\n", corpus.status().ToString().c_str());
    return false;
  }
  o.web.site.corpus = *corpus;
  std::string dirs;
  for (const std::string& d : o.corpus_dirs) dirs += (dirs.empty() ? "" : " ") + d;
  std::printf(
      "corpus: %zu of %zu HTML files under %s (skipped: %zu not HTML, %zu under 1 KiB, %zu over "
      "1 MiB); %.1f KB and %.1f links per file on average\n",
      stats.used, stats.found, dirs.c_str(), stats.not_html, stats.too_small, stats.too_large,
      static_cast<double>(stats.bytes) / 1024.0 / static_cast<double>(stats.used),
      static_cast<double>(stats.links) / static_cast<double>(stats.used));
  std::fflush(stdout);
  return true;
}

// --export: the real-pages web as files for a static server, then exit.
int RunExport(TestWebCliOptions& o) {
  const char* conflict = o.seeds_only               ? "--seeds-only"
                         : !o.seeds_path.empty()    ? "--seeds"
                         : !o.manifest_path.empty() ? "--manifest"
                         : !o.resolve_path.empty()  ? "--resolve-out"
                         : !o.web.log_path.empty()  ? "--log"
                         : o.web.site.big_site > 0  ? "--big-site"
                         : o.web.site.trap_host     ? "--trap-host"
                         : o.web.http_redirect      ? "--http-redirect"
                         : o.web.hsts               ? "--hsts"
                                                    : nullptr;
  if (conflict != nullptr) {
    return UsageError("testweb", std::string(conflict) +
                                     " is about serving: not with --export (which writes "
                                     "DIR/seeds.txt itself)");
  }
  // The export has the normal hosts only: nothing may link the hostile ones.
  o.web.site.hostile = false;
  if (!LoadCorpusDirs(o)) return kExitFailure;
  const testweb::Site site(o.web.site);
  testweb::StaticExportOptions e;
  e.dir = o.export_dir;
  e.domain = o.export_domain;
  e.port = o.export_port;
  e.https = o.web.tls;
  auto stats = testweb::ExportStaticWeb(site, e);
  if (!stats.ok()) {
    std::fprintf(stderr, "harvest testweb: %s\n", stats.status().ToString().c_str());
    return kExitFailure;
  }
  const double pages = static_cast<double>(std::max<size_t>(stats->pages, 1));
  std::printf(
      "export: %d hosts x %d pages = %zu pages in %s/www from %zu distinct corpus files; %.1f KB "
      "and %.1f links per page on average\n",
      o.web.site.hosts, o.web.site.pages, stats->pages, o.export_dir.c_str(), stats->distinct_files,
      static_cast<double>(stats->bytes) / 1024.0 / pages,
      static_cast<double>(stats->links) / pages);
  if (o.web.tls) {
    const std::string dir = o.web.tls_dir.empty() ? o.export_dir + "/tls" : o.web.tls_dir;
    const std::string cert = dir + "/server.pem", key = dir + "/server.key";
    const Status s =
        testweb::WriteServerCertificate(dir, {"*." + o.export_domain, o.export_domain}, cert, key);
    if (!s.ok()) {
      std::fprintf(stderr, "harvest testweb: %s\n", s.ToString().c_str());
      return kExitFailure;
    }
    std::printf("tls: ca %s/ca.pem, certificate %s and key %s for *.%s\n", dir.c_str(),
                cert.c_str(), key.c_str(), o.export_domain.c_str());
  }
  return kExitOk;
}

int Run(TestWebCliOptions& o) {
  if (!o.export_dir.empty() && o.corpus_dirs.empty()) {
    return UsageError("testweb", "--export needs --corpus (only a real-pages web is exported)");
  }
  if (o.export_dir.empty() && (o.export_domain != "test" || o.export_port != 0)) {
    return UsageError("testweb", "--domain and --port need --export");
  }
  if (!o.corpus_dirs.empty() && o.web.site.near_dup_percent > 0) {
    return UsageError("testweb",
                      "--near-dup-percent: real pages are not labelled near-copies "
                      "(not with --corpus)");
  }
  if (!o.export_dir.empty()) {
    if (!o.web.tls_dir.empty() && !o.web.tls) return UsageError("testweb", "--tls-dir needs --tls");
    return RunExport(o);
  }
  if ((o.web.http_redirect || o.web.hsts) && !o.web.tls) {
    return UsageError("testweb", std::string(o.web.http_redirect ? "--http-redirect" : "--hsts") +
                                     " needs --tls");
  }
  if (!o.web.tls_dir.empty() && !o.web.tls) return UsageError("testweb", "--tls-dir needs --tls");
  // big.test's sitemaps name the scheme the seeds have.
  o.web.site.big_site_https = o.web.tls;
  if (o.web.tls && o.web.tls_dir.empty()) {
    // Beside the manifest when there is one: a test's files stay together.
    o.web.tls_dir =
        o.manifest_path.empty()
            ? std::string("testweb-tls")
            : (std::filesystem::path(o.manifest_path).parent_path() / "testweb-tls").string();
  }
  if (!o.corpus_dirs.empty() && !LoadCorpusDirs(o)) return kExitFailure;
  if (o.seeds_only) {
    if (o.seeds_path.empty() && o.manifest_path.empty()) {
      return UsageError("testweb", "--seeds-only needs --seeds and/or --manifest");
    }
    if (!o.resolve_path.empty()) {
      return UsageError("testweb", "--resolve-out needs the listening port: not with --seeds-only");
    }
    return WriteOutputs(o, testweb::Site(o.web.site), nullptr) ? kExitOk : kExitFailure;
  }
  // Block the stop signals before the event-loop threads start so that only sigwait sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  auto web = testweb::TestWeb::Start(o.web);
  if (!web.ok()) {
    std::fprintf(stderr, "harvest testweb: %s\n", web.status().ToString().c_str());
    return kExitFailure;
  }
  if (!WriteOutputs(o, (*web)->site(), web->get())) return kExitFailure;
  // Before "listening on": a script that waits for that line has the CA's path already.
  if (o.web.tls) std::printf("ca: %s/ca.pem\n", o.web.tls_dir.c_str());
  // Scripts grep this line; the next lists every address when there are several.
  std::printf("listening on %s\n", (*web)->address().c_str());
  const std::vector<std::string> addresses = (*web)->addresses();
  if (addresses.size() > 1) {
    std::printf("all addresses (%zu): %s ... %s\n", addresses.size(), addresses.front().c_str(),
                addresses.back().c_str());
  }
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop_signals, &sig);
  (*web)->Stop();
  return kExitOk;
}

CommandRegistration reg(
    "testweb", "Serve a deterministic synthetic multi-host web for tests and benchmarks",
    [](CLI::App* app) -> CommandRunner {
      auto o = std::make_shared<TestWebCliOptions>();
      app->add_option("--listen", o->web.listen,
                      "ADDR:PORT to listen on; port 0 picks a free port (default 127.0.0.1:0)");
      app->add_option("--addresses", o->web.addresses,
                      "listen on N loopback addresses from the --listen one counting up "
                      "(127.0.0.1, 127.0.0.2, ...), all on one port (default 1)")
          ->check(IntRange(1, testweb::kMaxAddresses));
      app->add_option("--resolve-out", o->resolve_path,
                      "write 'HOST ADDR:PORT' per host to FILE: normal host i on address "
                      "i mod N, the special hosts on the first (for harvest crawl --resolve-file)");
      app->add_option("--hosts", o->web.site.hosts, "normal hosts h0000.test... (default 100)")
          ->check(IntRange(1, kMaxHosts));
      app->add_option("--pages", o->web.site.pages, "pages per host (default 50)")
          ->check(IntRange(1, kMaxPages));
      app->add_option("--links", o->web.site.links, "links per page (default 20)")
          ->check(IntRange(0, kMaxLinks));
      app->add_option("--cross-host-share", o->web.site.cross_host_share,
                      "share of links to other hosts (default 0.2)")
          ->check(RealRange(0, 1));
      app->add_option("--seed", o->web.site.seed, "generator seed (default 1)")
          ->check(IntRange(0, kMaxInt64));
      app->add_option("--seeds", o->seeds_path, "write one root URL per normal host to FILE");
      app->add_flag("--seeds-only", o->seeds_only, "write --seeds/--manifest and exit");
      app->add_option("--log", o->web.log_path, "request log FILE (JSON lines)");
      app->add_option("--manifest", o->manifest_path, "write the manifest JSON to FILE");
      app->add_flag("--hostile,!--no-hostile", o->web.site.hostile,
                    "include the hostile/edge hosts (default on)");
      app->add_option("--crawl-delay-percent", o->web.site.crawl_delay_percent,
                      "percentage of hosts with a robots.txt Crawl-delay (default 1)")
          ->check(IntRange(0, 100));
      app->add_option("--threads", o->web.threads, "event-loop threads (default 1)")
          ->check(IntRange(1, kMaxThreads));
      app->add_option("--epoch", o->web.epoch, "initial version of the changing pages (default 0)")
          ->check(IntRange(0, kMaxInt64));
      app->add_option_function<std::string>(
             "--change-every",
             [o](const std::string& text) { o->web.change_every = *ParseDuration(text); },
             "advance the epoch every DURATION of wall-clock time, e.g. 10s (default 0s: only "
             "POST /__testweb/epoch changes it)")
          ->type_name("DURATION")
          ->check(DurationRange(std::chrono::milliseconds(0), kMaxChangeEvery));
      app->add_option("--change-percent", o->web.site.change_percent,
                      "percentage of a host's pages /p/N that change with the epoch (default 10: "
                      "N % 10 == 3)")
          ->check(IntRange(0, 100));
      app->add_option("--near-dup-percent", o->web.site.near_dup_percent,
                      "percentage of the hosts' non-changing pages /p/N served as near-copies of "
                      "another page, listed in the manifest's near_duplicates (default 0)")
          ->check(IntRange(0, 50));
      app->add_option("--big-site", o->web.site.big_site,
                      "add big.test, a news site of N articles with archive pages and a sitemap "
                      "index of sitemaps of 5,000 URLs, seeded (default 0: none)")
          ->check(IntRange(0, testweb::kMaxBigSiteArticles));
      app->add_flag("--trap-host", o->web.site.trap_host,
                    "add sessions.test, seeded: every page links new session-id URLs forever "
                    "(marked \"trap\": true in the manifest)");
      app->add_flag("--tls", o->web.tls,
                    "also serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) on the same port, with a CA "
                    "kept in --tls-dir");
      app->add_option("--tls-dir", o->web.tls_dir,
                      "the CA's directory (ca.pem, ca.key; made when absent, reused when "
                      "present; default: testweb-tls beside --manifest, else in the working "
                      "directory)");
      app->add_flag("--http-redirect", o->web.http_redirect,
                    "answer every plain-HTTP request (robots.txt too) with 301 to https:// "
                    "(needs --tls)");
      app->add_flag("--hsts", o->web.hsts,
                    "HTTPS responses carry Strict-Transport-Security: max-age=31536000 (needs "
                    "--tls)");
      app->add_option("--corpus", o->corpus_dirs,
                      "serve real HTML files (*.html, *.htm of 1 KiB to 1 MiB found under DIR, "
                      "sorted by path; repeatable) as the hosts' pages, their links rewired to "
                      "this web (docs/testweb.md \"Real pages\")")
          ->type_name("DIR");
      app->add_option("--export", o->export_dir,
                      "with --corpus: write the normal hosts' pages, permissive robots.txt, "
                      "seeds.txt and hosts.txt under DIR for a static web server, then exit")
          ->type_name("DIR");
      app->add_option("--domain", o->export_domain,
                      "with --export: host names hNNNN.DOMAIN (default test)");
      app->add_option("--port", o->export_port,
                      "with --export: the port written in the URLs (default none)")
          ->check(IntRange(0, 65535));
      return [o]() -> int { return Run(*o); };
    });

}  // namespace
}  // namespace harvest::cli
