// Private to src/dashboard: the table the build generates from assets/ (embed_assets.cmake).
#pragma once

#include <cstddef>

namespace harvest::dashboard::internal {

struct EmbeddedFile {
  const char* name;  // file name in assets/, e.g. "app.js"
  const unsigned char* bytes;
  size_t size;
};

extern const EmbeddedFile kEmbedded[];
extern const size_t kEmbeddedCount;

}  // namespace harvest::dashboard::internal
