#include <gtest/gtest.h>

#include "store/internal.h"
#include "store/store.h"
#include "store/store_test_util.h"

namespace harvest::store {
namespace {

using testing::FilesWithSuffix;
using testing::SampleCapture;
using testing::TempDir;

class LookupTest : public ::testing::TestWithParam<bool> {};  // param: write_cdxj

TEST_P(LookupTest, NewestCaptureAndRevisitFollowed) {
  TempDir dir;
  FakeClock clock;
  WarcOptions o;
  o.dir = dir.path();
  o.clock = &clock;
  o.write_cdxj = GetParam();
  o.max_file_bytes = 2000;  // several files: lookup crosses them
  auto w = WarcWriter::Open(o);
  ASSERT_TRUE(w.ok());
  auto v1 =
      (*w)->WriteResponse(SampleCapture("http://example.com/p", "version one", 1795663201000000));
  ASSERT_TRUE(v1.ok());
  auto v2 =
      (*w)->WriteResponse(SampleCapture("http://example.com/p", "version two", 1795663301000000));
  ASSERT_TRUE(v2.ok());
  // Newest capture of /p is a revisit of /q's payload.
  auto q = (*w)->WriteResponse(SampleCapture("http://example.com/q", "shared", 1795663302000000));
  ASSERT_TRUE(q.ok());
  Capture again = SampleCapture("http://example.com/p", "shared", 1795663401000000);
  again.response_header = "HTTP/1.1 200 OK\r\nX-New: yes\r\n\r\n";
  ASSERT_TRUE(
      (*w)->WriteRevisit(again, {"http://example.com/q", 1795663302000000, q->record_id}).ok());
  ASSERT_TRUE((*w)->Close().ok());
  EXPECT_EQ(FilesWithSuffix(dir.path(), ".cdxj").empty(), !GetParam());

  auto caps = ListCaptures(dir.path(), "http://example.com/p");
  ASSERT_TRUE(caps.ok()) << caps.status().ToString();
  ASSERT_EQ(caps->size(), 3u);
  EXPECT_FALSE((*caps)[0].revisit);
  EXPECT_EQ((*caps)[0].offset, v1->offset);
  EXPECT_TRUE((*caps)[2].revisit);
  // SURT match: www. and case do not matter.
  auto by_surt = ListCaptures(dir.path(), "http://WWW.example.com/p");
  ASSERT_TRUE(by_surt.ok());
  EXPECT_EQ(by_surt->size(), 3u);

  auto page = GetLatestCapture(dir.path(), "http://example.com/p");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->record.type, "revisit");
  ASSERT_TRUE(page->original.has_value());
  EXPECT_EQ(page->original->target_uri, "http://example.com/q");
  EXPECT_EQ(page->http.body, "shared");
  EXPECT_EQ(page->http.header("X-New"), "yes");

  auto q_page = GetLatestCapture(dir.path(), "http://example.com/q");
  ASSERT_TRUE(q_page.ok());
  EXPECT_EQ(q_page->http.body, "shared");
  EXPECT_FALSE(q_page->original.has_value());

  EXPECT_EQ(GetLatestCapture(dir.path(), "http://example.com/none").status().code(),
            Status::Code::kNotFound);
  EXPECT_EQ(GetLatestCapture(dir.path() / "missing", "http://example.com/p").status().code(),
            Status::Code::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutCdxj, LookupTest, ::testing::Bool());

TEST(Lookup, RevisitWhoseOriginalIsMissing) {
  TempDir dir;
  FakeClock clock;
  WarcOptions o;
  o.dir = dir.path();
  o.clock = &clock;
  auto w = WarcWriter::Open(o);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(
      (*w)->WriteRevisit(SampleCapture("http://a/", "x"), {"http://elsewhere/", 0, ""}).ok());
  ASSERT_TRUE((*w)->Close().ok());
  auto page = GetLatestCapture(dir.path(), "http://a/");
  EXPECT_EQ(page.status().code(), Status::Code::kNotFound);
  EXPECT_NE(page.status().message().find("http://elsewhere/"), std::string::npos);
}

}  // namespace
}  // namespace harvest::store
