#include <gtest/gtest.h>

#include "store/internal.h"
#include "store/store.h"
#include "store/store_test_util.h"

namespace harvest::store {
namespace {

using testing::ReadFile;
using testing::SampleCapture;
using testing::TempDir;
using testing::WriteFile;

// Writes two fetches and returns the WARC file's bytes.
std::string TwoFetchWarc(const TempDir& dir) {
  FakeClock clock;
  WarcOptions o;
  o.dir = dir.path() / "w";
  o.clock = &clock;
  auto w = WarcWriter::Open(o);
  EXPECT_TRUE(w.ok());
  EXPECT_TRUE((*w)->WriteResponse(SampleCapture("http://example.com/1", "one")).ok());
  EXPECT_TRUE((*w)->WriteResponse(SampleCapture("http://example.com/2", "two")).ok());
  std::filesystem::path f = (*w)->current_file();
  EXPECT_TRUE((*w)->Close().ok());
  return ReadFile(f);
}

// Counts records until the end or an error; returns the error (ok at clean end).
Status Drain(WarcReader* r, int* count) {
  *count = 0;
  while (true) {
    auto rec = r->Next();
    if (!rec.ok()) return rec.status();
    if (!rec->has_value()) return Status::Ok();
    ++*count;
  }
}

const char kPlainRecord[] =
    "WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: http://x/\r\n"
    "Content-Length: 5\r\n\r\nhello\r\n\r\n";

TEST(WarcReader, ReadsPlainWarcWithBlankLinesBetweenRecords) {
  std::string data = std::string(kPlainRecord) + "\r\n" + kPlainRecord;
  auto r = WarcReader::FromBuffer(data);
  auto a = r->Next();
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(a->has_value());
  EXPECT_EQ((*a)->type, "resource");
  EXPECT_EQ((*a)->version, "WARC/1.0");
  EXPECT_EQ((*a)->block, "hello");
  EXPECT_EQ((*a)->offset, 0u);
  EXPECT_EQ((*a)->length, sizeof(kPlainRecord) - 1);
  auto b = r->Next();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_TRUE(b->has_value());
  EXPECT_EQ((*b)->offset, sizeof(kPlainRecord) + 1);
  auto end = r->Next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());
}

TEST(WarcReader, MixedGzipAndPlain) {
  TempDir dir;
  std::string data = TwoFetchWarc(dir) + kPlainRecord;
  auto r = WarcReader::FromBuffer(data);
  int n = 0;
  EXPECT_TRUE(Drain(r.get(), &n).ok());
  EXPECT_EQ(n, 6);
}

TEST(WarcReader, TruncatedGzipFileGivesCorruptionWithOffset) {
  TempDir dir;
  std::string data = TwoFetchWarc(dir);
  // Find the last member's offset by reading everything once.
  auto full = WarcReader::FromBuffer(data);
  uint64_t last_offset = 0;
  while (true) {
    auto rec = full->Next();
    ASSERT_TRUE(rec.ok());
    if (!rec->has_value()) break;
    last_offset = (*rec)->offset;
  }
  for (size_t cut : {data.size() - 1, data.size() - 9, static_cast<size_t>(last_offset) + 3,
                     static_cast<size_t>(last_offset) + 1}) {
    auto r = WarcReader::FromBuffer(data.substr(0, cut), "cut.warc.gz");
    int n = 0;
    Status s = Drain(r.get(), &n);
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << cut << " " << s.ToString();
    EXPECT_NE(s.message().find("cut.warc.gz: offset " + std::to_string(last_offset)),
              std::string::npos)
        << s.message();
    EXPECT_EQ(n, 4);
    // The error is sticky.
    EXPECT_EQ(r->Next().status().code(), Status::Code::kCorruption);
  }
}

TEST(WarcReader, CorruptGzipDataGivesCorruption) {
  TempDir dir;
  std::string data = TwoFetchWarc(dir);
  for (size_t pos = 20; pos < data.size(); pos += 37) {
    std::string bad = data;
    bad[pos] = static_cast<char>(bad[pos] ^ 0x55);
    auto r = WarcReader::FromBuffer(bad);
    int n = 0;
    Status s = Drain(r.get(), &n);  // must not crash; usually an error (CRC catches the rest)
    if (s.ok()) {
      EXPECT_EQ(n, 5);
    }
  }
}

TEST(WarcReader, TruncatedPlainRecord) {
  std::string rec = kPlainRecord;
  for (size_t cut : {size_t{3}, size_t{30}, rec.size() - 8, rec.size() - 1}) {
    auto r = WarcReader::FromBuffer(rec.substr(0, cut));
    auto out = r->Next();
    EXPECT_EQ(out.status().code(), Status::Code::kCorruption) << cut;
    EXPECT_NE(out.status().message().find("offset 0"), std::string::npos);
  }
}

TEST(WarcReader, BadHeaders) {
  for (std::string bad :
       {std::string("HTTP/1.1 200 OK\r\n\r\n"), std::string("WARC/1.1\r\nWARC-Type: x\r\n\r\n"),
        std::string("WARC/1.1\r\nContent-Length: -1\r\n\r\n"),
        std::string("WARC/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n"),
        std::string("WARC/1.1\r\nContent-Length: 2\r\n\r\nabXY")}) {
    auto r = WarcReader::FromBuffer(bad);
    EXPECT_FALSE(r->Next().ok()) << bad;
  }
}

TEST(WarcReader, RecordSizeLimit) {
  std::string big = "WARC/1.1\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'x') + "\r\n\r\n";
  WarcReaderOptions o;
  o.max_record_bytes = 50;
  auto r = WarcReader::FromBuffer(big, "big", o);
  EXPECT_EQ(r->Next().status().code(), Status::Code::kResourceExhausted);
  internal::GzipCompressor gz(6);
  auto member = gz.Member(big);
  ASSERT_TRUE(member.ok());
  auto rz = WarcReader::FromBuffer(*member, "big.gz", o);
  EXPECT_EQ(rz->Next().status().code(), Status::Code::kResourceExhausted);
}

TEST(WarcReader, MultiRecordMemberIsReported) {
  internal::GzipCompressor gz(6);
  auto member = gz.Member(std::string(kPlainRecord) + kPlainRecord);
  ASSERT_TRUE(member.ok());
  auto r = WarcReader::FromBuffer(*member);
  auto out = r->Next();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("more than one record"), std::string::npos);
}

TEST(WarcReader, MissingFile) {
  auto r = WarcReader::Open("/nonexistent/file.warc.gz");
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  auto rec = ReadRecordAt("/nonexistent/file.warc.gz", 0);
  EXPECT_EQ(rec.status().code(), Status::Code::kNotFound);
}

TEST(ReadRecordAt, EndOfFileAndBadOffset) {
  TempDir dir;
  std::string data = TwoFetchWarc(dir);
  std::filesystem::path f = dir.path() / "x.warc.gz";
  WriteFile(f, data);
  EXPECT_EQ(ReadRecordAt(f, data.size()).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(ReadRecordAt(f, 5).status().code(), Status::Code::kCorruption);
  auto first = ReadRecordAt(f, 0);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->type, "warcinfo");
}

}  // namespace
}  // namespace harvest::store

namespace harvest::store {
namespace {

TEST(RepairWarcTail, CutsTornTailAndStaleIndexLines) {
  TempDir dir;
  FakeClock clock;
  WarcOptions o;
  o.dir = dir.path();
  o.clock = &clock;
  o.fsync_on_flush = false;
  auto w = WarcWriter::Open(o);
  ASSERT_TRUE(w.ok());
  auto a = (*w)->WriteResponse(SampleCapture("http://example.com/1", "one"));
  auto b = (*w)->WriteResponse(SampleCapture("http://example.com/2", "two"));
  ASSERT_TRUE(a.ok() && b.ok());
  std::filesystem::path file = (*w)->current_file();
  ASSERT_TRUE((*w)->Close().ok());
  uint64_t size = std::filesystem::file_size(file);
  EXPECT_EQ(*RepairWarcTail(file), 0u);  // intact
  EXPECT_EQ(std::filesystem::file_size(file), size);

  // Simulate a crash in the middle of the last append (the response of /2).
  std::filesystem::resize_file(file, b->offset + b->length / 2);
  auto cut = RepairWarcTail(file);
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_EQ(*cut, b->length / 2);
  EXPECT_EQ(std::filesystem::file_size(file), b->offset);  // request of /2 kept
  auto reader = WarcReader::Open(file);
  int n = 0;
  while (true) {
    auto r = (*reader)->Next();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (!r->has_value()) break;
    ++n;
  }
  EXPECT_EQ(n, 4);  // warcinfo, request+response of /1, request of /2
  auto caps = ListCaptures(dir.path(), "http://example.com/2");
  ASSERT_TRUE(caps.ok());
  EXPECT_TRUE(caps->empty());  // its CDXJ line was dropped
  auto caps1 = ListCaptures(dir.path(), "http://example.com/1");
  ASSERT_TRUE(caps1.ok());
  EXPECT_EQ(caps1->size(), 1u);
}

}  // namespace
}  // namespace harvest::store
