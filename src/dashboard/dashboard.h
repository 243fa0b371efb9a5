// dashboard: the admin web page (`GET /` of the admin API), embedded in the binary.
//
// The files of src/dashboard/assets/ (index.html, app.js, style.css) are turned into byte
// arrays at build time (embed_assets.cmake), so the binary serves the page with no files
// beside it and no network access: plain JavaScript, charts drawn on <canvas>, no external
// libraries or CDNs. What the page shows and which endpoints it calls: docs/dashboard.md.
//
// Usage by the admin HTTP server, for a GET whose path matches no API route:
//   if (const dashboard::Asset* a = dashboard::Find(path)) reply 200, a->content_type, a->body
//
// Thread-safety: Find() and All() are thread-safe; the assets are immutable for the life
// of the process.
#pragma once

#include <span>
#include <string_view>

namespace harvest::dashboard {

struct Asset {
  std::string_view path;          // "/index.html", "/app.js", "/style.css"
  std::string_view content_type;  // e.g. "text/html; charset=utf-8"
  std::string_view body;          // the file's bytes as they are in src/dashboard/assets/
};

// The asset served at `path` (an HTTP request path): "/" and "/index.html" → index.html,
// "/app.js" → app.js, ...; a query string ("/app.js?v=2") is ignored. nullptr when unknown
// (no directory traversal: only the exact names of the embedded files match).
const Asset* Find(std::string_view path);

// Every embedded asset, sorted by path.
std::span<const Asset> All();

}  // namespace harvest::dashboard
