// The embedded dashboard assets: lookup by request path, content types by file extension.
#include "dashboard/dashboard.h"

#include <string>
#include <vector>

#include "dashboard/embedded.h"

namespace harvest::dashboard {
namespace {

std::string_view ContentType(std::string_view name) {
  struct Type {
    std::string_view ext;
    std::string_view type;
  };
  static constexpr Type kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".txt", "text/plain; charset=utf-8"},
  };
  for (const Type& t : kTypes) {
    if (name.ends_with(t.ext)) return t.type;
  }
  return "application/octet-stream";
}

struct Table {
  std::vector<std::string> paths;  // owns the "/<name>" strings the assets point into
  std::vector<Asset> assets;
};

const Table& Assets() {
  static const Table* table = [] {
    auto* t = new Table;
    t->paths.reserve(internal::kEmbeddedCount);
    for (size_t i = 0; i < internal::kEmbeddedCount; ++i) {
      t->paths.push_back("/" + std::string(internal::kEmbedded[i].name));
    }
    for (size_t i = 0; i < internal::kEmbeddedCount; ++i) {
      const internal::EmbeddedFile& f = internal::kEmbedded[i];
      t->assets.push_back({t->paths[i], ContentType(f.name),
                           std::string_view(reinterpret_cast<const char*>(f.bytes), f.size)});
    }
    return t;
  }();
  return *table;
}

}  // namespace

const Asset* Find(std::string_view path) {
  path = path.substr(0, path.find_first_of("?#"));
  if (path == "/") path = "/index.html";
  for (const Asset& a : Assets().assets) {
    if (a.path == path) return &a;
  }
  return nullptr;
}

std::span<const Asset> All() { return Assets().assets; }

}  // namespace harvest::dashboard
