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

// A 304 revisit resolves to the capture it names by URI and date, even when another
// capture of that URI has the same payload digest, and even without a digest.
TEST_P(LookupTest, NotModifiedRevisitResolvesByUriAndDate) {
  for (bool with_digest : {false, true}) {
    SCOPED_TRACE(with_digest ? "with digest" : "without digest");
    TempDir dir;
    FakeClock clock;
    WarcOptions o;
    o.dir = dir.path();
    o.clock = &clock;
    o.write_cdxj = GetParam();
    auto w = WarcWriter::Open(o);
    ASSERT_TRUE(w.ok());
    Capture v1 = SampleCapture("http://example.com/p", "same", 1795663201000000);
    v1.response_header = "HTTP/1.1 200 OK\r\nX-Version: 1\r\n\r\n";
    auto l1 = (*w)->WriteResponse(v1);
    ASSERT_TRUE(l1.ok());
    Capture v2 = SampleCapture("http://example.com/p", "same", 1795663301000000);
    v2.response_header = "HTTP/1.1 200 OK\r\nX-Version: 2\r\n\r\n";
    ASSERT_TRUE((*w)->WriteResponse(v2).ok());
    ASSERT_TRUE(
        (*w)->WriteResponse(SampleCapture("http://example.com/p", "other", 1795663351000000)).ok());
    Capture not_modified = SampleCapture("http://example.com/p", "", 1795663401000000);
    not_modified.response_header = "HTTP/1.1 304 Not Modified\r\n\r\n";
    not_modified.status = 304;
    ASSERT_TRUE((*w)->WriteRevisit(not_modified, {"http://example.com/p", 1795663201000000, "",
                                                  RevisitProfile::kServerNotModified,
                                                  with_digest ? PayloadDigest("same") : ""})
                    .ok());
    ASSERT_TRUE((*w)->Close().ok());

    auto page = GetLatestCapture(dir.path(), "http://example.com/p");
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    EXPECT_EQ(page->record.type, "revisit");
    EXPECT_EQ(page->http.status, 304);
    ASSERT_TRUE(page->original.has_value());
    EXPECT_EQ(page->original->header("WARC-Record-ID"), l1->record_id);
    auto head = ParseHttpResponse(page->original->block);
    ASSERT_TRUE(head.ok());
    EXPECT_EQ(head->header("X-Version"), "1");
    EXPECT_EQ(page->http.body, "same");
  }
}

// The store-metadata-only policy: the note is not a capture of the page.
TEST_P(LookupTest, NearDuplicateMetadataIsNoCapture) {
  TempDir dir;
  FakeClock clock;
  WarcOptions o;
  o.dir = dir.path();
  o.clock = &clock;
  o.write_cdxj = GetParam();
  auto w = WarcWriter::Open(o);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(
      (*w)->WriteResponse(SampleCapture("http://example.com/p", "old", 1795663201000000)).ok());
  Capture near = SampleCapture("http://example.com/p", "new", 1795663301000000);
  near.near_duplicate_of = Capture::NearDuplicate{"http://example.com/q", "", 0, 1};
  ASSERT_TRUE((*w)->WriteNearDuplicateMetadata(near).ok());
  Capture only = SampleCapture("http://example.com/r", "x", 1795663301000000);
  only.near_duplicate_of = Capture::NearDuplicate{"http://example.com/q", "", 0, 1};
  ASSERT_TRUE((*w)->WriteNearDuplicateMetadata(only).ok());
  ASSERT_TRUE((*w)->Close().ok());

  auto caps = ListCaptures(dir.path(), "http://example.com/p");
  ASSERT_TRUE(caps.ok());
  EXPECT_EQ(caps->size(), 1u);
  auto page = GetLatestCapture(dir.path(), "http://example.com/p");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->record.type, "response");
  EXPECT_EQ(page->http.body, "old");
  EXPECT_EQ(GetLatestCapture(dir.path(), "http://example.com/r").status().code(),
            Status::Code::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutCdxj, LookupTest, ::testing::Bool());

}  // namespace
}  // namespace harvest::store
