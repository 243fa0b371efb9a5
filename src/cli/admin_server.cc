#include "cli/admin_server.h"

#include <spdlog/spdlog.h>

#include <fstream>
#include <sstream>

#include "dashboard/dashboard.h"

namespace harvest::cli {
namespace {

Result<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("--admin-token-file: cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ' ||
                            token.back() == '\t')) {
    token.pop_back();
  }
  if (token.empty()) return Status::InvalidArgument("--admin-token-file: " + path + " is empty");
  return token;
}

}  // namespace

Result<std::unique_ptr<admin::Server>> StartAdminServer(const AdminFlags& flags,
                                                        admin::Backend* backend) {
  admin::ServerOptions o;
  o.listen = flags.listen;
  if (!flags.token_file.empty()) {
    Result<std::string> token = ReadToken(flags.token_file);
    if (!token.ok()) return token.status();
    o.token = std::move(*token);
  }
  o.assets = [](std::string_view path) -> std::optional<admin::StaticAsset> {
    const dashboard::Asset* a = dashboard::Find(path);
    if (a == nullptr) return std::nullopt;
    return admin::StaticAsset{std::string(a->content_type), a->body};
  };
  Result<std::unique_ptr<admin::Server>> server = admin::Server::Start(std::move(o), backend);
  if (server.ok()) {
    spdlog::info("admin API listening on http://{}/ (dashboard at /)", (*server)->address());
  }
  return server;
}

}  // namespace harvest::cli
