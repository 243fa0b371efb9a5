// LocalPostgres: a throw-away PostgreSQL server on 127.0.0.1 for tests (scripts/pg-local).
//
// Start() runs `scripts/pg-local start` in a fresh temporary directory (the source tree is
// $HARVEST_SOURCE_DIR, else the CMAKE_SOURCE_DIR this was built from); the destructor stops
// the server and removes the directory; if the test process dies first, the script's watcher
// (--owner-pid) stops the server. Needs PostgreSQL 15's server binaries (scripts/bootstrap
// installs them): without them Start() fails with the script's message — tests do not skip.
//
// Thread-safety: none; one owner.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"

namespace harvest::metadata::testing {

class LocalPostgres {
 public:
  static Result<std::unique_ptr<LocalPostgres>> Start();
  LocalPostgres(const LocalPostgres&) = delete;
  LocalPostgres& operator=(const LocalPostgres&) = delete;
  ~LocalPostgres();

  // postgresql://harvest@127.0.0.1:PORT/harvest
  const std::string& url() const { return url_; }
  // Stops the server (fast shutdown) / starts it again on the same port.
  Status Stop();
  Status Restart();

 private:
  LocalPostgres(std::string script, std::string dir) : script_(script), dir_(dir) {}
  std::string script_;
  std::string dir_;
  std::string url_;
};

}  // namespace harvest::metadata::testing
