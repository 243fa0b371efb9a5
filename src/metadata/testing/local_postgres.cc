// LocalPostgres (local_postgres.h).
#include "metadata/testing/local_postgres.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

namespace harvest::metadata::testing {
namespace {

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Runs `command` (sh -c); its exit status, stdout and stderr into *output.
int RunCommand(const std::string& command, std::string* output) {
  output->clear();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    *output = "popen failed";
    return -1;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) output->append(buf, n);
  int status = pclose(pipe);
  if (status == -1) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string LastLine(const std::string& s) {
  size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

}  // namespace

Result<std::unique_ptr<LocalPostgres>> LocalPostgres::Start() {
  const char* env = getenv("HARVEST_SOURCE_DIR");
  std::string source = env != nullptr && *env != '\0' ? env : HARVEST_DEFAULT_SOURCE_DIR;
  std::string script = source + "/scripts/pg-local";
  std::error_code ec;
  if (!std::filesystem::exists(script, ec)) {
    return Status::NotFound(script + " not found (set HARVEST_SOURCE_DIR to the source tree)");
  }
  std::string tmpl = (std::filesystem::temp_directory_path(ec) / "harvest-pg-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    return Status::IOError("cannot create a temporary directory from " + tmpl);
  }
  std::unique_ptr<LocalPostgres> pg(new LocalPostgres(script, tmpl));
  std::string output;
  int rc = RunCommand("bash " + Quote(script) + " start " + Quote(tmpl) + " --owner-pid " +
                          std::to_string(getpid()),
                      &output);
  if (rc != 0) {
    return Status::Unavailable("scripts/pg-local start failed (exit " + std::to_string(rc) +
                               "): " + Trim(output));
  }
  pg->url_ = LastLine(Trim(output));
  if (pg->url_.rfind("postgresql://", 0) != 0) {
    return Status::Internal("scripts/pg-local printed no URL: " + Trim(output));
  }
  return pg;
}

LocalPostgres::~LocalPostgres() {
  std::string output;
  (void)RunCommand("bash " + Quote(script_) + " stop " + Quote(dir_), &output);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

Status LocalPostgres::Stop() {
  std::string output;
  int rc = RunCommand("bash " + Quote(script_) + " stop " + Quote(dir_), &output);
  if (rc != 0) return Status::Unavailable("scripts/pg-local stop failed: " + Trim(output));
  return Status::Ok();
}

Status LocalPostgres::Restart() {
  std::string output;
  int rc = RunCommand("bash " + Quote(script_) + " restart " + Quote(dir_), &output);
  if (rc != 0) return Status::Unavailable("scripts/pg-local restart failed: " + Trim(output));
  return Status::Ok();
}

}  // namespace harvest::metadata::testing
