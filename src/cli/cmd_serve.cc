// harvest serve: the admin API and dashboard over a crawl directory when no crawl runs
// there (read-only: status, hosts, pages, page content, metrics; docs/admin-api.md).
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "cli/admin_server.h"
#include "cli/command.h"
#include "crawl/admin_backend.h"

namespace harvest::cli {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void OnServeSignal(int) { g_stop.store(true); }

struct ServeFlags {
  std::string out;
  AdminFlags admin;
};

int RunServe(const ServeFlags& f) {
  if (!std::filesystem::is_directory(f.out)) {
    return UsageError("serve", "--out " + f.out + " is not a crawl directory");
  }
  Result<std::unique_ptr<admin::Backend>> backend = crawl::OpenReadOnlyBackend(f.out);
  if (!backend.ok()) {
    std::fprintf(stderr, "harvest serve: %s\n", backend.status().message().c_str());
    return backend.status().code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  Result<std::unique_ptr<admin::Server>> server = StartAdminServer(f.admin, backend->get());
  if (!server.ok()) {
    std::fprintf(stderr, "harvest serve: --admin: %s\n", server.status().message().c_str());
    return server.status().code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  struct sigaction sa {};
  sa.sa_handler = OnServeSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  (*server)->Stop();
  return kExitOk;
}

CommandRegistration reg(
    "serve", "Serve the admin API and dashboard read-only over a crawl directory",
    [](CLI::App* app) -> CommandRunner {
      auto f = std::make_shared<ServeFlags>();
      app->add_option("--out", f->out, "Crawl directory (as given to harvest crawl --out)")
          ->required();
      app->add_option("--admin", f->admin.listen, "ADDR:PORT to listen on (port 0 picks one)")
          ->default_val("127.0.0.1:8080");
      app->add_option("--admin-token-file", f->admin.token_file,
                      "Require 'Authorization: Bearer TOKEN' (TOKEN read from FILE); needed "
                      "for a non-loopback address");
      app->footer("Runs until SIGINT/SIGTERM. Mutating endpoints answer 409 (read-only).");
      return [f]() { return RunServe(*f); };
    });

}  // namespace
}  // namespace harvest::cli
