// fetch_bench: fetches N small pages from an in-process server with C transfers in flight
// and reports pages/s and the fetcher's CPU time per page (CPU time of the loop thread only;
// the server runs on other threads and is not counted).
//
//   fetch_bench [--pages N] [--concurrency C] [--hosts H] [--body BYTES] [--own 0|1]
//               [--tls 0|1] [--reuse 0|1]
// --own 1: HttpFetcher (the own HTTP/1.1 client for http and https) instead of CurlFetcher;
// --tls 1: https against a test CA (testing/TestPki); --reuse 0: a new connection per request
// (handshakes, resumed after the first per host).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include <memory>

#include "fetch/fetch.h"
#include "fetch/testing/raw_http_server.h"
#include "fetch/testing/test_pki.h"

namespace {

using harvest::fetch::CurlFetcher;
using harvest::fetch::Fetcher;
using harvest::fetch::FetchOptions;
using harvest::fetch::FetchOutcome;
using harvest::fetch::FetchResult;
using harvest::fetch::HttpFetcher;
using harvest::fetch::testing::MakeResponse;
using harvest::fetch::testing::RawHttpServer;
using harvest::fetch::testing::RawReply;
using harvest::fetch::testing::RawRequest;
using harvest::fetch::testing::TestPki;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

struct Args {
  long pages = 20000;
  long concurrency = 100;
  long hosts = 100;
  long body = 2048;
  long own = 0;
  long tls = 0;
  long reuse = 1;
};

bool ParseArgs(int argc, char** argv, Args* a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const long v = std::strtol(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--own") == 0) {
      a->own = v;
      continue;
    }
    if (std::strcmp(argv[i], "--tls") == 0) {
      a->tls = v;
      continue;
    }
    if (std::strcmp(argv[i], "--reuse") == 0) {
      a->reuse = v;
      continue;
    }
    if (v <= 0) return false;
    if (std::strcmp(argv[i], "--pages") == 0)
      a->pages = v;
    else if (std::strcmp(argv[i], "--concurrency") == 0)
      a->concurrency = v;
    else if (std::strcmp(argv[i], "--hosts") == 0)
      a->hosts = v;
    else if (std::strcmp(argv[i], "--body") == 0)
      a->body = v;
    else
      return false;
  }
  return argc % 2 == 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!ParseArgs(argc, argv, &args)) {
    std::fprintf(stderr,
                 "usage: fetch_bench [--pages N] [--concurrency C] [--hosts H] [--body B] "
                 "[--own 0|1] [--tls 0|1] [--reuse 0|1]\n");
    return 2;
  }
  const std::string reply =
      MakeResponse(200, "OK", {{"Content-Type", "text/html"}}, std::string(args.body, 'x'));
  RawHttpServer server([&reply](const RawRequest&) { return RawReply{.bytes = reply}; });
  std::unique_ptr<TestPki> pki;
  if (args.tls != 0) {
    pki = TestPki::Make({"*.bench.test"}, {});
    if (pki == nullptr) {
      std::fprintf(stderr, "cannot make the test CA\n");
      return 1;
    }
    server.UseTls(pki->server_ctx());
  }
  if (!server.Start()) {
    std::fprintf(stderr, "cannot start the server\n");
    return 1;
  }
  FetchOptions options;
  options.connect_to = {"::127.0.0.1:" + std::to_string(server.port())};
  options.max_concurrent = static_cast<size_t>(args.concurrency);
  if (pki != nullptr) options.ca_file = pki->ca_file();
  std::unique_ptr<Fetcher> owned;
  if (args.own != 0) {
    owned = std::make_unique<HttpFetcher>(options);
  } else {
    owned = std::make_unique<CurlFetcher>(options);
  }
  Fetcher& fetcher = *owned;
  if (!fetcher.status().ok()) {
    std::fprintf(stderr, "fetcher: %s\n", fetcher.status().ToString().c_str());
    return 1;
  }
  const std::string scheme = args.tls != 0 ? "https://" : "http://";

  long started = 0, completed = 0, failed = 0;
  std::function<void(FetchResult &&)> on_done;
  auto start_next = [&] {
    const long i = started++;
    fetcher.Start(
        {.id = static_cast<uint64_t>(i),
         .url = scheme + "h" + std::to_string(i % args.hosts) + ".bench.test/p" + std::to_string(i),
         .reuse_connection = args.reuse != 0},
        on_done);
  };
  on_done = [&](FetchResult&& r) {
    ++completed;
    if (r.outcome != FetchOutcome::kOk || r.body.size() != static_cast<size_t>(args.body)) ++failed;
    if (started < args.pages) start_next();
  };

  const double cpu0 = ThreadCpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  while (started < std::min(args.pages, args.concurrency)) start_next();
  while (completed < args.pages) fetcher.Poll(std::chrono::milliseconds(100));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = ThreadCpuSeconds() - cpu0;
  server.Stop();
  std::printf(
      "%s %s pages=%ld concurrency=%ld hosts=%ld body=%ld failed=%ld connections=%d "
      "resumed=%d\n",
      args.own != 0 ? "HttpFetcher" : "CurlFetcher", args.tls != 0 ? "https" : "http", args.pages,
      args.concurrency, args.hosts, args.body, failed, server.connections(), server.resumed());
  std::printf("wall=%.3f s  pages/s=%.0f  fetcher_cpu=%.3f s  cpu_ms/page=%.4f\n", wall,
              static_cast<double>(args.pages) / wall, cpu, cpu * 1000.0 / args.pages);
  return failed == 0 ? 0 : 1;
}
