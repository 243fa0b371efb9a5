// The admin API for `harvest crawl --admin` and `harvest serve` (docs/admin-api.md): reads
// the token file, serves the dashboard's embedded assets, starts admin::Server.
#pragma once

#include <memory>
#include <string>

#include "admin/admin.h"
#include "admin/backend.h"
#include "base/status.h"

namespace harvest::cli {

struct AdminFlags {
  std::string listen;      // --admin ADDR:PORT ("" = no admin API)
  std::string token_file;  // --admin-token-file FILE
};

// InvalidArgument for a bad address, an unreadable or empty token file, or a non-loopback
// address without a token; IOError when the address cannot be bound. Logs the address.
Result<std::unique_ptr<admin::Server>> StartAdminServer(const AdminFlags& flags,
                                                        admin::Backend* backend);

}  // namespace harvest::cli
