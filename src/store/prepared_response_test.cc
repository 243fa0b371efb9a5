// WarcWriter::PrepareResponse: a response record serialised and compressed off the writer
// thread, appended as it is, or built again when a rotation came between.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "store/store.h"
#include "store/store_test_util.h"

namespace harvest::store {
namespace {

using testing::FilesWithSuffix;
using testing::OpenWriter;
using testing::ReadAll;
using testing::ReadFile;
using testing::SampleCapture;
using testing::TempDir;

// A page of `n` pseudo-random words (compressible like text, not trivially).
std::string Body(size_t n, unsigned seed) {
  std::string s = "<html><body>";
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    s += "word" + std::to_string((seed >> 16) % 500) + ' ';
  }
  return s + "</body></html>";
}

// Every record's block digest is the digest of its block; every response's payload digest
// that of its payload (SampleCapture's bodies carry no Content-Encoding).
void ExpectDigestsHold(const std::vector<WarcRecord>& recs) {
  for (const WarcRecord& r : recs) {
    EXPECT_EQ(r.header("WARC-Block-Digest"), PayloadDigest(r.block)) << r.type;
    if (r.type != "response") continue;
    const size_t body_at = r.block.find("\r\n\r\n");
    ASSERT_NE(body_at, std::string::npos);
    EXPECT_EQ(r.header("WARC-Payload-Digest"), PayloadDigest(r.block.substr(body_at + 4)));
  }
}

TEST(PreparedResponse, IsAppendedAsPrepared) {
  TempDir dir;
  FakeClock clock(1795663201000000);
  auto w = OpenWriter(dir, &clock);
  ASSERT_TRUE(w->WriteResponse(SampleCapture("http://example.com/1", Body(300, 1))).ok());
  Capture c = SampleCapture("http://example.com/2", Body(2000, 2));
  c.outlinks = {"http://example.com/a"};
  Result<PreparedResponse> p = w->PrepareResponse(c);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  Result<RecordLocation> loc = w->WriteResponse(c, &*p);
  ASSERT_TRUE(loc.ok()) << loc.status().ToString();
  EXPECT_EQ(loc->record_id, p->record_id);
  EXPECT_EQ(loc->length, p->member.size());
  const std::filesystem::path file = w->current_file();
  ASSERT_TRUE(w->Close().ok());

  // The member in the file is the prepared one, byte for byte.
  const std::string bytes = ReadFile(file);
  ASSERT_LE(loc->offset + loc->length, bytes.size());
  EXPECT_EQ(bytes.substr(loc->offset, loc->length), p->member);

  std::vector<WarcRecord> recs = ReadAll(file);
  ASSERT_EQ(recs.size(), 6u);  // warcinfo, 2 x (request, response), metadata
  ExpectDigestsHold(recs);
  const WarcRecord& resp = recs[4];
  EXPECT_EQ(resp.type, "response");
  EXPECT_EQ(resp.target_uri, "http://example.com/2");
  EXPECT_EQ(resp.header("WARC-Record-ID"), p->record_id);
  EXPECT_EQ(resp.header("WARC-Warcinfo-ID"), recs[0].header("WARC-Record-ID"));
  EXPECT_EQ(resp.header("WARC-Date"), p->date);
  EXPECT_EQ(resp.header("WARC-Payload-Digest"), p->payload_digest);
  EXPECT_EQ(resp.header("WARC-IP-Address"), "127.0.0.1");
  EXPECT_EQ(resp.block, c.response_header + c.payload);
  // The request and metadata records of the fetch point at the prepared record.
  EXPECT_EQ(recs[3].header("WARC-Concurrent-To"), p->record_id);
  EXPECT_EQ(recs[5].header("WARC-Concurrent-To"), p->record_id);
  EXPECT_EQ(recs[5].type, "metadata");
  EXPECT_EQ(recs[3].header("WARC-Date"), p->date);
}

// The same record as WriteResponse alone writes, up to the record id.
TEST(PreparedResponse, SameRecordAsWrittenDirectly) {
  TempDir a, b;
  FakeClock clock(1795663201000000);
  auto wa = OpenWriter(a, &clock);
  auto wb = OpenWriter(b, &clock);
  Capture c = SampleCapture("http://example.com/x?q=1", Body(800, 3));
  c.truncated = "length";
  ASSERT_TRUE(wa->WriteResponse(SampleCapture("http://example.com/0", "zero")).ok());
  ASSERT_TRUE(wb->WriteResponse(SampleCapture("http://example.com/0", "zero")).ok());
  Result<PreparedResponse> p = wa->PrepareResponse(c);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(wa->WriteResponse(c, &*p).ok());
  ASSERT_TRUE(wb->WriteResponse(c).ok());
  const std::filesystem::path fa = wa->current_file(), fb = wb->current_file();
  ASSERT_TRUE(wa->Close().ok());
  ASSERT_TRUE(wb->Close().ok());
  std::vector<WarcRecord> ra = ReadAll(fa), rb = ReadAll(fb);
  ASSERT_EQ(ra.size(), 5u);
  ASSERT_EQ(rb.size(), 5u);
  const WarcRecord& x = ra[4];
  const WarcRecord& y = rb[4];
  EXPECT_EQ(x.block, y.block);
  ASSERT_EQ(x.headers.size(), y.headers.size());
  for (size_t i = 0; i < x.headers.size(); ++i) {
    EXPECT_EQ(x.headers[i].first, y.headers[i].first);
    if (x.headers[i].first == "WARC-Record-ID" || x.headers[i].first == "WARC-Warcinfo-ID") {
      continue;  // random ids
    }
    EXPECT_EQ(x.headers[i].second, y.headers[i].second) << x.headers[i].first;
  }
  EXPECT_EQ(x.header("WARC-Truncated"), "length");
}

// Prepared before the first file was opened, and before a rotation: the record is built
// again, naming the new file's warcinfo record, with the prepared id and date.
TEST(PreparedResponse, RebuiltAfterRotation) {
  TempDir dir;
  FakeClock clock(1795663201000000);
  auto w = OpenWriter(dir, &clock, 4096);
  Capture c1 = SampleCapture("http://example.com/1", Body(600, 4));
  Result<PreparedResponse> p1 = w->PrepareResponse(c1);  // no file open yet
  ASSERT_TRUE(p1.ok());
  EXPECT_EQ(p1->warcinfo_id, "");
  ASSERT_TRUE(w->WriteResponse(c1, &*p1).ok());
  Capture c2 = SampleCapture("http://example.com/2", Body(600, 5));
  Result<PreparedResponse> p2 = w->PrepareResponse(c2);  // names file 1's warcinfo
  ASSERT_TRUE(p2.ok());
  EXPECT_NE(p2->warcinfo_id, "");
  Result<RecordLocation> l2 = w->WriteResponse(c2, &*p2);  // too big for file 1: rotates
  ASSERT_TRUE(l2.ok());
  EXPECT_EQ(l2->record_id, p2->record_id);
  ASSERT_TRUE(w->Close().ok());

  auto files = FilesWithSuffix(dir.path() / "out", ".warc.gz");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[1].filename().string(), l2->filename);
  for (size_t i = 0; i < 2; ++i) {
    std::vector<WarcRecord> recs = ReadAll(files[i]);
    ASSERT_EQ(recs.size(), 3u);
    ExpectDigestsHold(recs);
    const PreparedResponse& p = i == 0 ? *p1 : *p2;
    EXPECT_EQ(recs[2].header("WARC-Record-ID"), p.record_id);
    EXPECT_EQ(recs[2].header("WARC-Date"), p.date);
    EXPECT_EQ(recs[2].header("WARC-Warcinfo-ID"), recs[0].header("WARC-Record-ID"));
    EXPECT_NE(recs[2].header("WARC-Warcinfo-ID"), p.warcinfo_id);
  }
}

// Process threads prepare while the writer thread writes (run under the sanitizers).
TEST(PreparedResponse, PreparedOnOtherThreads) {
  TempDir dir;
  FakeClock clock(1795663201000000);
  auto w = OpenWriter(dir, &clock, 64 * 1024);  // rotations while threads prepare
  constexpr int kPerThread = 40;
  std::vector<Capture> captures[2];
  std::vector<PreparedResponse> prepared[2];
  for (int t = 0; t < 2; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      captures[t].push_back(SampleCapture(
          "http://example.com/t" + std::to_string(t) + "/" + std::to_string(i), Body(400, i)));
    }
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (const Capture& c : captures[t]) {
        Result<PreparedResponse> p = w->PrepareResponse(c);
        ASSERT_TRUE(p.ok());
        prepared[t].push_back(std::move(*p));
      }
    });
  }
  for (int i = 0; i < 60; ++i) {
    ASSERT_TRUE(w->WriteResponse(
                     SampleCapture("http://example.com/w" + std::to_string(i), Body(300, 100 + i)))
                    .ok());
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 2; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      ASSERT_TRUE(w->WriteResponse(captures[t][i], &prepared[t][i]).ok());
    }
  }
  ASSERT_TRUE(w->Close().ok());
  size_t responses = 0;
  for (const auto& f : FilesWithSuffix(dir.path() / "out", ".warc.gz")) {
    std::vector<WarcRecord> recs = ReadAll(f);
    ASSERT_FALSE(recs.empty());
    ExpectDigestsHold(recs);
    for (const WarcRecord& r : recs) {
      if (r.type != "response") continue;
      ++responses;
      EXPECT_EQ(r.header("WARC-Warcinfo-ID"), recs[0].header("WARC-Record-ID"));
    }
  }
  EXPECT_EQ(responses, 60u + 2 * kPerThread);
}

TEST(PreparedResponse, NeedsAResponseHead) {
  TempDir dir;
  FakeClock clock;
  auto w = OpenWriter(dir, &clock);
  Capture c = SampleCapture("http://example.com/", "x");
  c.response_header.clear();
  Result<PreparedResponse> p = w->PrepareResponse(c);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Status::Code::kInvalidArgument);
}

// Which captures keep their payload in stored blocks (and so are not worth preparing): a
// Content-Encoding other than identity, any spelling of the name, on a payload of 512 bytes
// or more.
TEST(PreparedResponse, StoresPayloadAsIsOnlyCompressedPayloads) {
  Capture c = SampleCapture("http://example.com/", std::string(600, 'x'));
  const std::string plain = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
  c.response_header = plain;
  EXPECT_FALSE(WarcWriter::StoresPayloadAsIs(c));
  c.response_header = "HTTP/1.1 200 OK\r\ncontent-ENCODING:  gzip \r\n\r\n";
  EXPECT_TRUE(WarcWriter::StoresPayloadAsIs(c));
  c.response_header = "HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\n\r\n";
  EXPECT_FALSE(WarcWriter::StoresPayloadAsIs(c));
  c.response_header = "HTTP/1.1 200 OK\r\nX-Content-Encoding: gzip\r\n\r\n";
  EXPECT_FALSE(WarcWriter::StoresPayloadAsIs(c));
  c.response_header = "HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\n";
  EXPECT_TRUE(WarcWriter::StoresPayloadAsIs(c));
  c.payload.resize(511);  // too short for the stored path: compressed with the record
  EXPECT_FALSE(WarcWriter::StoresPayloadAsIs(c));
}

}  // namespace
}  // namespace harvest::store
