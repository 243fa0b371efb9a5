// Tests only: a fresh directory under the system's temporary directory, removed with
// everything in it when the object goes out of scope.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace harvest::test_util {

class TempDir {
 public:
  // `name` tells a left-over directory's test; the path is unique per process and object.
  explicit TempDir(std::string_view name = "test")
      : path_(std::filesystem::temp_directory_path() /
              ("harvest_" + std::string(name) + "_" + std::to_string(::getpid()) + "_" +
               std::to_string(counter_++))) {
    std::filesystem::remove_all(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  static inline std::atomic<int> counter_{0};
  std::filesystem::path path_;
};

}  // namespace harvest::test_util
