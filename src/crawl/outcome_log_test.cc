#include "crawl/outcome_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace harvest::crawl {
namespace {

std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh log file under the temporary directory, unique to this process.
std::filesystem::path FreshLogPath(const std::string& name) {
  auto path =
      std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()) + ".jsonl");
  std::filesystem::remove(path);
  return path;
}

TEST(OutcomeLog, EachRecordIsInTheFileAtOnce) {
  const auto path = FreshLogPath("outcomes_test");
  OutcomeLog log;
  ASSERT_TRUE(log.Open(path).ok());
  log.Record("http://a.test/", "fetched", 200, "", 5);
  // No Flush: a kill -9 now must not lose the line.
  EXPECT_EQ(ReadAll(path),
            "{\"url\":\"http://a.test/\",\"outcome\":\"fetched\",\"status\":200,\"time_us\":5}\n");
  EXPECT_EQ(log.count(), 1u);
  std::filesystem::remove(path);
}

TEST(OutcomeLog, DeferredLinesWaitForFlushAndKeepTheirOrder) {
  const auto path = FreshLogPath("outcomes_deferred");
  OutcomeLog log;
  ASSERT_TRUE(log.Open(path).ok());
  const auto line = [](const std::string& url, int t) {
    return "{\"url\":\"" + url +
           "\",\"outcome\":\"fetched\",\"status\":200,\"time_us\":" + std::to_string(t) + "}\n";
  };
  log.Record("http://a.test/1", "fetched", 200, "", 1, OutcomeLog::Write::kWithFlush);
  log.Record("http://a.test/2", "fetched", 200, "", 2, OutcomeLog::Write::kWithFlush);
  EXPECT_EQ(ReadAll(path), "");  // not written yet
  EXPECT_EQ(log.count(), 2u);
  ASSERT_TRUE(log.Flush().ok());
  EXPECT_EQ(ReadAll(path), line("http://a.test/1", 1) + line("http://a.test/2", 2));
  // A line written at once takes the deferred ones before it, in order.
  log.Record("http://a.test/3", "fetched", 200, "", 3, OutcomeLog::Write::kWithFlush);
  log.Record("http://a.test/4", "fetched", 200, "", 4);
  EXPECT_EQ(ReadAll(path), line("http://a.test/1", 1) + line("http://a.test/2", 2) +
                               line("http://a.test/3", 3) + line("http://a.test/4", 4));
  // Deferred lines are written once kMaxDeferredBytes of them wait.
  const std::string before = ReadAll(path);
  size_t recorded = 0, bytes = 0;
  while (ReadAll(path) == before) {
    const std::string url = "http://b.test/" + std::to_string(recorded);
    log.Record(url, "fetched", 200, "", 5, OutcomeLog::Write::kWithFlush);
    bytes += line(url, 5).size();
    ++recorded;
    ASSERT_LE(bytes, OutcomeLog::kMaxDeferredBytes + 200) << "deferred lines never written";
  }
  EXPECT_GE(bytes, OutcomeLog::kMaxDeferredBytes);
  EXPECT_EQ(ReadAll(path).size(), before.size() + bytes);
  std::filesystem::remove(path);
}

TEST(OutcomeLog, OpenCutsATornLastLineAndAppends) {
  const auto path = FreshLogPath("outcomes_torn");  // then written by hand, truncating
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << "{\"url\":\"http://a.test/\"}\n{\"url\":\"http://b.te";  // killed mid-line
  }
  {
    OutcomeLog log;
    ASSERT_TRUE(log.Open(path).ok());
    log.Record("http://c.test/", "revisit", 200, "d", 7);
    ASSERT_TRUE(log.Flush().ok());
  }
  EXPECT_EQ(ReadAll(path),
            "{\"url\":\"http://a.test/\"}\n"
            "{\"url\":\"http://c.test/\",\"outcome\":\"revisit\",\"status\":200,\"detail\":\"d\","
            "\"time_us\":7}\n");
  // A file without any complete line is emptied; an intact one is kept as is.
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << std::string(10000, 'x');
  }
  {
    OutcomeLog log;
    ASSERT_TRUE(log.Open(path).ok());
  }
  EXPECT_EQ(ReadAll(path), "");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace harvest::crawl
