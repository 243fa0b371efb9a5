#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "dedup/dedup.h"

namespace harvest::dedup {
namespace {

TEST(DigestIndex, FirstWriterWins) {
  DigestIndex index;
  EXPECT_FALSE(index.Find("sha256:AAA").has_value());
  EXPECT_TRUE(index.InsertIfAbsent("sha256:AAA", {"http://a.test/", 100, "<urn:uuid:1>"}));
  EXPECT_FALSE(index.InsertIfAbsent("sha256:AAA", {"http://b.test/", 200, "<urn:uuid:2>"}));
  auto found = index.Find("sha256:AAA");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->uri, "http://a.test/");
  EXPECT_EQ(found->date_us, 100);
  EXPECT_EQ(found->record_id, "<urn:uuid:1>");
  EXPECT_EQ(index.size(), 1u);
}

// Many threads race to insert overlapping digests: exactly one insert per digest wins and
// every reader sees the winner's location.
TEST(DigestIndex, ConcurrentUse) {
  DigestIndex index;
  constexpr int kThreads = 8;
  constexpr int kDigests = 2000;
  std::atomic<int> wins{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kDigests; ++i) {
        const std::string digest = "sha256:" + std::to_string(i);
        if (index.InsertIfAbsent(digest, {"http://t" + std::to_string(t) + ".test/", t, "id"})) {
          ++wins;
        }
        auto found = index.Find(digest);
        ASSERT_TRUE(found.has_value());
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wins.load(), kDigests);
  EXPECT_EQ(index.size(), static_cast<size_t>(kDigests));
  for (int i = 0; i < kDigests; ++i) {
    auto found = index.Find("sha256:" + std::to_string(i));
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->uri, "http://t" + std::to_string(found->date_us) + ".test/");
  }
}

}  // namespace
}  // namespace harvest::dedup
