// Test helpers for src/store tests: temporary directories, sample captures, reading a WARC.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "store/store.h"

namespace harvest::store::testing {

// A fresh directory removed at scope exit.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("harvest-store-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline Capture SampleCapture(const std::string& url, const std::string& body,
                             int64_t time_us = 1795663201123456) {
  Capture c;
  c.target_uri = url;
  c.fetch_time_us = time_us;
  c.ip = "127.0.0.1";
  c.request_header = "GET / HTTP/1.1\r\nHost: example.com\r\nUser-Agent: Harvest\r\n\r\n";
  c.response_header =
      "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n";
  c.payload = body;
  c.status = 200;
  c.mime = "text/html";
  return c;
}

inline std::vector<std::filesystem::path> FilesWithSuffix(const std::filesystem::path& dir,
                                                          const std::string& suffix) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (n.size() >= suffix.size() &&
        n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void WriteFile(const std::filesystem::path& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << data;
}

// A writer into `dir`/out with test warcinfo fields, on `clock`.
inline std::unique_ptr<WarcWriter> OpenWriter(const TempDir& dir, FakeClock* clock,
                                              uint64_t max_bytes = 1ull << 30) {
  WarcOptions o;
  o.dir = dir.path() / "out";
  o.clock = clock;
  o.max_file_bytes = max_bytes;
  o.operator_contact = "ops@example.com";
  o.description = "unit test";
  o.hostname = "testhost";
  auto w = WarcWriter::Open(o);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return std::move(w).value();
}

// Every record of a WARC file, in order; a read error fails the calling test.
inline std::vector<WarcRecord> ReadAll(const std::filesystem::path& file) {
  std::vector<WarcRecord> out;
  auto reader = WarcReader::Open(file);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return out;
  while (true) {
    auto r = (*reader)->Next();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || !r->has_value()) break;
    out.push_back(std::move(**r));
  }
  return out;
}

}  // namespace harvest::store::testing
