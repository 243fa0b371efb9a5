// Private to src/metadata: the schema migrations (schema.cc) and the COPY encoding
// (database.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "metadata/metadata.h"

namespace harvest::metadata::internal {

// Migrations()[i] upgrades version i to i + 1; its size is kSchemaVersion.
const std::vector<std::string_view>& Migrations();

// The rows in PostgreSQL's COPY text format, columns as `pages` lists them (database.cc):
// backslash, tab, newline and carriage return escaped, NUL dropped, bytes that are not UTF-8
// replaced by U+FFFD; empty optional fields as \N (NULL).
std::string CopyText(const std::vector<PageRow>& rows);
void AppendCopyField(std::string_view value, std::string* out);
// Length of the valid UTF-8 sequence (RFC 3629) starting `v` (non-empty), or 0.
size_t Utf8Length(std::string_view v);

}  // namespace harvest::metadata::internal
