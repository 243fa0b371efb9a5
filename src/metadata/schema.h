// Private to src/metadata: the schema migrations (schema.cc).
#pragma once

#include <string_view>
#include <vector>

namespace harvest::metadata::internal {

// Migrations()[i] upgrades version i to i + 1; its size is kSchemaVersion.
const std::vector<std::string_view>& Migrations();

}  // namespace harvest::metadata::internal
