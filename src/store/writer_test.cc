#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "store/internal.h"
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

TEST(WarcWriter, RoundTripRequestResponseMetadata) {
  TempDir dir;
  FakeClock clock(1795663201000000);
  auto w = OpenWriter(dir, &clock);
  Capture c = SampleCapture("http://example.com/", "<html>hi</html>");
  c.outlinks = {"http://example.com/a", "http://example.com/b"};
  c.via = "http://example.com/seed";
  c.hops = 2;
  auto loc = w->WriteResponse(c);
  ASSERT_TRUE(loc.ok()) << loc.status().ToString();
  ASSERT_TRUE(w->Flush().ok());
  EXPECT_EQ(w->records_written(), 4u);  // warcinfo, request, response, metadata
  std::filesystem::path file = w->current_file();
  EXPECT_EQ(file.filename().string(), "harvest-20261126032001-00000.warc.gz");
  EXPECT_EQ(loc->filename, file.filename().string());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ(w->bytes_written(), std::filesystem::file_size(file));

  std::vector<WarcRecord> recs = ReadAll(file);
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[0].type, "warcinfo");
  EXPECT_EQ(recs[0].version, "WARC/1.1");
  EXPECT_NE(recs[0].block.find("operator: ops@example.com\r\n"), std::string::npos);
  EXPECT_NE(recs[0].block.find("hostname: testhost\r\n"), std::string::npos);
  EXPECT_NE(recs[0].block.find("software: Harvest/"), std::string::npos);
  EXPECT_EQ(recs[0].header("WARC-Filename"), file.filename().string());
  EXPECT_EQ(recs[1].type, "request");
  EXPECT_EQ(recs[1].block, c.request_header);
  EXPECT_EQ(recs[1].header("Content-Type"), "application/http;msgtype=request");
  const WarcRecord& resp = recs[2];
  EXPECT_EQ(resp.type, "response");
  EXPECT_EQ(resp.offset, loc->offset);
  EXPECT_EQ(resp.length, loc->length);
  EXPECT_EQ(resp.header("WARC-Record-ID"), loc->record_id);
  EXPECT_EQ(recs[1].header("WARC-Concurrent-To"), loc->record_id);
  EXPECT_EQ(recs[3].header("WARC-Concurrent-To"), loc->record_id);
  EXPECT_EQ(resp.header("WARC-Warcinfo-ID"), recs[0].header("WARC-Record-ID"));
  EXPECT_EQ(resp.date, "2026-11-26T03:20:01.123456Z");
  EXPECT_EQ(resp.target_uri, "http://example.com/");
  EXPECT_EQ(resp.header("WARC-IP-Address"), "127.0.0.1");
  EXPECT_EQ(resp.header("WARC-Payload-Digest"), PayloadDigest("<html>hi</html>"));
  EXPECT_EQ(resp.header("WARC-Block-Digest"), PayloadDigest(resp.block));
  EXPECT_EQ(resp.header("WARC-Truncated"), "");
  EXPECT_EQ(resp.block, c.response_header + c.payload);
  auto http = ParseHttpResponse(resp.block);
  ASSERT_TRUE(http.ok());
  EXPECT_EQ(http->status, 200);
  EXPECT_EQ(http->body, "<html>hi</html>");
  EXPECT_EQ(recs[3].type, "metadata");
  EXPECT_EQ(recs[3].header("Content-Type"), "application/warc-fields");
  EXPECT_EQ(recs[3].block,
            "via: http://example.com/seed\r\nhopsFromSeed: 2\r\n"
            "outlink: http://example.com/a\r\noutlink: http://example.com/b\r\n");
  // Every record id is distinct.
  std::vector<std::string> ids;
  for (const auto& r : recs) ids.push_back(r.header("WARC-Record-ID"));
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end());

  auto at = ReadRecordAt(file, loc->offset);
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  EXPECT_EQ(at->block, resp.block);
}

TEST(WarcWriter, NoMetadataRecordWithoutOutlinks) {
  TempDir dir;
  FakeClock clock;
  auto w = OpenWriter(dir, &clock);
  ASSERT_TRUE(w->WriteResponse(SampleCapture("http://example.com/", "x")).ok());
  EXPECT_EQ(w->records_written(), 3u);
  std::filesystem::path file = w->current_file();
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ(ReadAll(file).size(), 3u);
}

TEST(WarcWriter, TransferEncodingRenamedAndDocumentedDigest) {
  TempDir dir;
  FakeClock clock;
  auto w = OpenWriter(dir, &clock);
  Capture c = SampleCapture("http://example.com/", "hello");
  c.response_header = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  auto loc = w->WriteResponse(c);
  ASSERT_TRUE(loc.ok());
  ASSERT_TRUE(w->Flush().ok());
  auto rec = ReadRecordAt(w->current_file(), loc->offset);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->block,
            "HTTP/1.1 200 OK\r\nX-Harvest-Original-Transfer-Encoding: chunked\r\n\r\nhello");
  EXPECT_EQ(rec->header("WARC-Payload-Digest"), PayloadDigest("hello"));
  auto http = ParseHttpResponse(rec->block);
  ASSERT_TRUE(http.ok());
  EXPECT_EQ(http->header("Transfer-Encoding"), "");
}

// A payload with a Content-Encoding is already compressed: its record's member keeps it in
// stored deflate blocks (about its size, where deflating it again would cost time for
// nothing); readers see the same record either way.
TEST(WarcWriter, ContentEncodedPayloadStoredAndReadBack) {
  TempDir dir;
  FakeClock clock;
  auto w = OpenWriter(dir, &clock);
  std::mt19937 rng(5);
  std::string noise(20000, '\0');
  for (char& ch : noise) ch = static_cast<char>(rng());
  for (std::string encoding : {"gzip", " BR ", "identity", ""}) {
    Capture c = SampleCapture("http://example.com/" + encoding, noise);
    if (!encoding.empty()) {
      c.response_header =
          "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\ncontent-encoding:" + encoding +
          "\r\nContent-Length: 20000\r\n\r\n";
    }
    auto loc = w->WriteResponse(c);
    ASSERT_TRUE(loc.ok()) << loc.status().ToString();
    ASSERT_TRUE(w->Flush().ok());
    auto rec = ReadRecordAt(w->current_file(), loc->offset);
    ASSERT_TRUE(rec.ok()) << rec.status().ToString();
    EXPECT_EQ(rec->block, internal::RewriteResponseHead(c.response_header) + noise);
    EXPECT_EQ(rec->header("WARC-Block-Digest"),
              PayloadDigest(internal::RewriteResponseHead(c.response_header) + noise));
    EXPECT_GT(loc->length, noise.size());
    EXPECT_LT(loc->length, noise.size() + 700);
    if (encoding == "gzip" || encoding == " BR ") {
      // Stored blocks hold the payload verbatim.
      EXPECT_NE(ReadFile(w->current_file()).find(noise.substr(0, 1000)), std::string::npos);
    }
  }
  std::filesystem::path file = w->current_file();
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ(ReadAll(file).size(), 1u + 4 * 2);  // warcinfo + 4 x (request, response)
}

TEST(WarcWriter, TruncatedFlag) {
  TempDir dir;
  FakeClock clock;
  auto w = OpenWriter(dir, &clock);
  Capture c = SampleCapture("http://example.com/big", "partial");
  c.truncated = "length";
  auto loc = w->WriteResponse(c);
  ASSERT_TRUE(loc.ok());
  auto rec = ReadRecordAt(w->current_file(), loc->offset);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->header("WARC-Truncated"), "length");
}

TEST(WarcWriter, Revisit) {
  TempDir dir;
  FakeClock clock;
  auto w = OpenWriter(dir, &clock);
  Capture first = SampleCapture("http://example.com/a", "same body", 1795663201000000);
  auto orig = w->WriteResponse(first);
  ASSERT_TRUE(orig.ok());
  Capture again = SampleCapture("http://example.com/b", "same body", 1795663262000000);
  again.outlinks = {"http://example.com/c"};
  auto loc = w->WriteRevisit(again, {"http://example.com/a", 1795663201000000, orig->record_id});
  ASSERT_TRUE(loc.ok()) << loc.status().ToString();
  ASSERT_TRUE(w->Flush().ok());
  auto rec = ReadRecordAt(w->current_file(), loc->offset);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->type, "revisit");
  EXPECT_EQ(rec->header("WARC-Profile"),
            "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest");
  EXPECT_EQ(rec->header("WARC-Refers-To-Target-URI"), "http://example.com/a");
  EXPECT_EQ(rec->header("WARC-Refers-To-Date"), "2026-11-26T03:20:01.000000Z");
  EXPECT_EQ(rec->header("WARC-Refers-To"), orig->record_id);
  EXPECT_EQ(rec->header("WARC-Payload-Digest"), PayloadDigest("same body"));
  EXPECT_EQ(rec->block, again.response_header);  // HTTP head only
  EXPECT_EQ(rec->header("WARC-Block-Digest"), PayloadDigest(again.response_header));
  EXPECT_EQ(w->records_written(), 1u + 2u + 3u);  // warcinfo, req+resp, req+revisit+metadata
}

TEST(WarcWriter, PrecomputedDigestUsedAndSha1Option) {
  TempDir dir;
  FakeClock clock;
  WarcOptions o;
  o.dir = dir.path();
  o.clock = &clock;
  o.digest = DigestAlgorithm::kSha1;
  auto w = WarcWriter::Open(o);
  ASSERT_TRUE(w.ok());
  Capture c = SampleCapture("http://example.com/", "hello world");
  c.payload_digest = "sha256:SOMETHINGELSE";  // other algorithm: recomputed
  auto loc = (*w)->WriteResponse(c);
  ASSERT_TRUE(loc.ok());
  auto rec = ReadRecordAt((*w)->current_file(), loc->offset);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->header("WARC-Payload-Digest"), "sha1:FKXGYNOJJ7H3IFO35FPUBC445EPOQRXN");
  EXPECT_EQ(rec->header("WARC-Block-Digest").substr(0, 5), "sha1:");
}

TEST(WarcWriter, RotatesAtSizeLimit) {
  TempDir dir;
  FakeClock clock;
  auto w = OpenWriter(dir, &clock, 4096);
  std::string body(3000, 'x');
  for (int i = 0; i < 20; ++i) {
    // Incompressible-ish body so each fetch takes real space.
    for (char& ch : body) ch = static_cast<char>('a' + (std::rand() % 26));
    auto loc = w->WriteResponse(SampleCapture("http://example.com/" + std::to_string(i), body));
    ASSERT_TRUE(loc.ok()) << loc.status().ToString();
  }
  ASSERT_TRUE(w->Close().ok());
  auto files = FilesWithSuffix(dir.path() / "out", ".warc.gz");
  ASSERT_GT(files.size(), 3u);
  size_t responses = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    char serial[32];
    std::snprintf(serial, sizeof(serial), "%05zu", i);
    EXPECT_NE(files[i].filename().string().find(serial), std::string::npos) << files[i];
    auto recs = ReadAll(files[i]);
    ASSERT_FALSE(recs.empty());
    EXPECT_EQ(recs[0].type, "warcinfo");  // warcinfo first in every file
    for (const auto& r : recs) responses += r.type == "response";
    // Only a file holding a single fetch may pass the limit.
    if (recs.size() > 3) {
      EXPECT_LE(std::filesystem::file_size(files[i]), 4096u);
    }
  }
  EXPECT_EQ(responses, 20u);
  EXPECT_EQ(FilesWithSuffix(dir.path() / "out", ".cdxj").size(), files.size());
}

TEST(WarcWriter, CdxjLines) {
  TempDir dir;
  FakeClock clock;
  auto w = OpenWriter(dir, &clock);
  Capture c = SampleCapture("http://www.Example.com/page?b=1&a=2", "body");
  auto l1 = w->WriteResponse(c);
  ASSERT_TRUE(l1.ok());
  Capture r = SampleCapture("http://example.com/other", "body", 1795663262000000);
  r.surt = "precomputed)/key";
  auto l2 = w->WriteRevisit(r, {"http://www.Example.com/page?b=1&a=2", c.fetch_time_us, ""});
  ASSERT_TRUE(l2.ok());
  // Before Flush the index lines are pending (written only once the records are durable).
  auto cdxj = FilesWithSuffix(dir.path() / "out", ".cdxj");
  ASSERT_EQ(cdxj.size(), 1u);
  EXPECT_EQ(ReadFile(cdxj[0]), "");
  ASSERT_TRUE(w->Flush().ok());
  std::string text = ReadFile(cdxj[0]);
  std::string expected =
      "com,example)/page?a=2&b=1 20261126032001 {\"url\":\"http://www.Example.com/page?b=1&a=2\","
      "\"mime\":\"text/html\",\"status\":\"200\",\"digest\":\"" +
      PayloadDigest("body") + "\",\"length\":" + std::to_string(l1->length) +
      ",\"offset\":" + std::to_string(l1->offset) + ",\"filename\":\"" + l1->filename +
      "\"}\n"
      "precomputed)/key 20261126032102 {\"url\":\"http://example.com/other\","
      "\"mime\":\"warc/revisit\",\"status\":\"200\",\"digest\":\"" +
      PayloadDigest("body") + "\",\"length\":" + std::to_string(l2->length) +
      ",\"offset\":" + std::to_string(l2->offset) + ",\"filename\":\"" + l2->filename + "\"}\n";
  EXPECT_EQ(text, expected);
}

TEST(WarcWriter, HeaderInjectionIsEscaped) {
  TempDir dir;
  FakeClock clock;
  auto w = OpenWriter(dir, &clock);
  Capture c = SampleCapture("http://example.com/a b\r\nWARC-Type: evil", "x");
  c.outlinks = {"http://x/\r\noutlink: injected"};
  auto loc = w->WriteResponse(c);
  ASSERT_TRUE(loc.ok());
  std::filesystem::path file = w->current_file();
  ASSERT_TRUE(w->Close().ok());
  auto recs = ReadAll(file);
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[2].type, "response");
  EXPECT_EQ(recs[2].target_uri, "http://example.com/a%20b%0D%0AWARC-Type:%20evil");
  EXPECT_EQ(recs[3].block, "outlink: http://x/%0D%0Aoutlink:%20injected\r\n");
}

TEST(WarcWriter, ExistingFileNamesAreNotOverwritten) {
  TempDir dir;
  FakeClock clock(1795663201000000);
  auto w1 = OpenWriter(dir, &clock);
  ASSERT_TRUE(w1->WriteResponse(SampleCapture("http://a/", "1")).ok());
  auto w2 = OpenWriter(dir, &clock);
  ASSERT_TRUE(w2->WriteResponse(SampleCapture("http://b/", "2")).ok());
  EXPECT_NE(w1->current_file(), w2->current_file());
  EXPECT_EQ(w2->current_file().filename().string(), "harvest-20261126032001-00001.warc.gz");
}

TEST(WarcWriter, RejectsMissingHeadAndEmptyDir) {
  TempDir dir;
  FakeClock clock;
  auto w = OpenWriter(dir, &clock);
  Capture c = SampleCapture("http://a/", "body");
  c.response_header.clear();
  EXPECT_EQ(w->WriteResponse(c).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(w->WriteRevisit(c, {"http://b/", 0, ""}).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(w->records_written(), 0u);
  EXPECT_EQ(WarcWriter::Open(WarcOptions{}).status().code(), Status::Code::kInvalidArgument);
}

TEST(WarcWriter, WriteAfterCloseFails) {
  TempDir dir;
  FakeClock clock;
  auto w = OpenWriter(dir, &clock);
  ASSERT_TRUE(w->Close().ok());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_FALSE(w->WriteResponse(SampleCapture("http://a/", "1")).ok());
}

Capture NotModifiedCapture(const std::string& url, int64_t time_us) {
  Capture c = SampleCapture(url, "", time_us);
  c.request_header = "GET / HTTP/1.1\r\nHost: example.com\r\nIf-None-Match: \"v1\"\r\n\r\n";
  c.response_header = "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n\r\n";
  c.status = 304;
  c.mime.clear();
  return c;
}

TEST(WarcWriter, ServerNotModifiedRevisit) {
  TempDir dir;
  FakeClock clock;
  auto w = OpenWriter(dir, &clock);
  auto orig = w->WriteResponse(SampleCapture("http://example.com/a", "v1 body", 1795663201000000));
  ASSERT_TRUE(orig.ok());
  Revisit r{"http://example.com/a", 1795663201000000, orig->record_id,
            RevisitProfile::kServerNotModified, PayloadDigest("v1 body")};
  Capture again = NotModifiedCapture("http://example.com/a", 1795663262000000);
  auto with_digest = w->WriteRevisit(again, r);
  ASSERT_TRUE(with_digest.ok()) << with_digest.status().ToString();
  r.refers_to_digest.clear();
  r.refers_to_record_id.clear();
  auto without_digest = w->WriteRevisit(again, r);
  ASSERT_TRUE(without_digest.ok());
  ASSERT_TRUE(w->Flush().ok());

  auto rec = ReadRecordAt(w->current_file(), with_digest->offset);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->type, "revisit");
  EXPECT_EQ(rec->header("WARC-Profile"),
            "http://netpreserve.org/warc/1.1/revisit/server-not-modified");
  EXPECT_EQ(rec->header("WARC-Refers-To-Target-URI"), "http://example.com/a");
  EXPECT_EQ(rec->header("WARC-Refers-To-Date"), "2026-11-26T03:20:01.000000Z");
  EXPECT_EQ(rec->header("WARC-Refers-To"), orig->record_id);
  EXPECT_EQ(rec->header("WARC-Payload-Digest"), PayloadDigest("v1 body"));
  EXPECT_EQ(rec->block, again.response_header);  // the 304 head only
  EXPECT_EQ(rec->header("WARC-Block-Digest"), PayloadDigest(again.response_header));
  auto bare = ReadRecordAt(w->current_file(), without_digest->offset);
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->header("WARC-Payload-Digest"), "");
  EXPECT_EQ(bare->header("WARC-Refers-To"), "");
  EXPECT_EQ(bare->header("WARC-Profile"),
            "http://netpreserve.org/warc/1.1/revisit/server-not-modified");

  auto cdxj = FilesWithSuffix(dir.path() / "out", ".cdxj");
  ASSERT_EQ(cdxj.size(), 1u);
  std::string text = ReadFile(cdxj[0]);
  const std::string prefix =
      "com,example)/a 20261126032102 {\"url\":\"http://example.com/a\","
      "\"mime\":\"warc/revisit\",\"status\":\"304\",";
  EXPECT_NE(text.find(prefix + "\"digest\":\"" + PayloadDigest("v1 body") +
                      "\",\"length\":" + std::to_string(with_digest->length) +
                      ",\"offset\":" + std::to_string(with_digest->offset) + ","),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(prefix + "\"length\":" + std::to_string(without_digest->length) +
                      ",\"offset\":" + std::to_string(without_digest->offset) + ","),
            std::string::npos)
      << text;
}

Capture::NearDuplicate SampleNearDuplicate() {
  return {"http://example.com/first", "<urn:uuid:11111111-2222-4333-8444-555555555555>",
          1795663201000000, 2};
}

TEST(WarcWriter, NearDuplicateTaggedInMetadataAndCdxj) {
  TempDir dir;
  FakeClock clock;
  auto w = OpenWriter(dir, &clock);
  Capture c = SampleCapture("http://example.com/second", "almost the same");
  c.near_duplicate_of = SampleNearDuplicate();
  auto loc = w->WriteResponse(c);  // no outlinks, no via: still a metadata record
  ASSERT_TRUE(loc.ok());
  std::filesystem::path file = w->current_file();
  ASSERT_TRUE(w->Close().ok());
  std::vector<WarcRecord> recs = ReadAll(file);
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[3].type, "metadata");
  EXPECT_EQ(recs[3].header("WARC-Concurrent-To"), loc->record_id);
  EXPECT_EQ(recs[3].block,
            "nearDuplicateOf: http://example.com/first\r\n"
            "nearDuplicateRecord: <urn:uuid:11111111-2222-4333-8444-555555555555>\r\n"
            "nearDuplicateDate: 2026-11-26T03:20:01.000000Z\r\n"
            "simhashDistance: 2\r\n");
  std::string text = ReadFile(FilesWithSuffix(dir.path() / "out", ".cdxj")[0]);
  EXPECT_NE(text.find("\"mime\":\"text/html\""), std::string::npos) << text;
  EXPECT_NE(text.find(",\"near_dup_of\":\"http://example.com/first\"}\n"), std::string::npos)
      << text;
}

TEST(WarcWriter, NearDuplicateMetadataOnly) {
  TempDir dir;
  FakeClock clock;
  auto w = OpenWriter(dir, &clock);
  Capture c = SampleCapture("http://example.com/second", "almost the same");
  EXPECT_EQ(w->WriteNearDuplicateMetadata(c).status().code(), Status::Code::kInvalidArgument);
  c.near_duplicate_of = SampleNearDuplicate();
  c.outlinks = {"http://example.com/x"};
  auto loc = w->WriteNearDuplicateMetadata(c);
  ASSERT_TRUE(loc.ok()) << loc.status().ToString();
  EXPECT_EQ(w->records_written(), 2u);  // warcinfo + metadata: no request, no response
  std::filesystem::path file = w->current_file();
  ASSERT_TRUE(w->Close().ok());
  std::vector<WarcRecord> recs = ReadAll(file);
  ASSERT_EQ(recs.size(), 2u);
  const WarcRecord& m = recs[1];
  EXPECT_EQ(m.type, "metadata");
  EXPECT_EQ(m.offset, loc->offset);
  EXPECT_EQ(m.length, loc->length);
  EXPECT_EQ(m.header("WARC-Record-ID"), loc->record_id);
  EXPECT_EQ(m.target_uri, "http://example.com/second");
  EXPECT_EQ(m.header("WARC-Refers-To"), "<urn:uuid:11111111-2222-4333-8444-555555555555>");
  EXPECT_EQ(m.header("WARC-Concurrent-To"), "");
  EXPECT_EQ(m.header("WARC-Payload-Digest"), "");  // the block is not the page's payload
  EXPECT_EQ(m.header("Content-Type"), "application/warc-fields");
  EXPECT_EQ(m.block,
            "nearDuplicateOf: http://example.com/first\r\n"
            "nearDuplicateRecord: <urn:uuid:11111111-2222-4333-8444-555555555555>\r\n"
            "nearDuplicateDate: 2026-11-26T03:20:01.000000Z\r\n"
            "simhashDistance: 2\r\n"
            "outlink: http://example.com/x\r\n"
            "payloadDigest: " +
                PayloadDigest("almost the same") + "\r\nhttpStatus: 200\r\n");
  EXPECT_EQ(ReadFile(FilesWithSuffix(dir.path() / "out", ".cdxj")[0]),
            "com,example)/second 20261126032001 {\"url\":\"http://example.com/second\","
            "\"mime\":\"warc/metadata\",\"status\":\"200\",\"digest\":\"" +
                PayloadDigest("almost the same") + "\",\"length\":" + std::to_string(loc->length) +
                ",\"offset\":" + std::to_string(loc->offset) + ",\"filename\":\"" + loc->filename +
                "\",\"near_dup_of\":\"http://example.com/first\"}\n");
}

}  // namespace
}  // namespace harvest::store
