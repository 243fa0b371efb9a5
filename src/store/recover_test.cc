// Tests of RecoverWarc: a WARC written by WarcWriter and "crashed" (its bytes copied before
// Flush wrote the index lines, then torn) must come back with exactly the CDXJ lines an
// uninterrupted writer produces for its complete records.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "store/internal.h"
#include "store/store.h"
#include "store/store_test_util.h"
#include "url/url.h"

namespace harvest::store {
namespace {

using testing::ReadAll;
using testing::ReadFile;
using testing::SampleCapture;
using testing::TempDir;
using testing::WriteFile;

constexpr int64_t kT0 = 1795663201123456;  // 2026-11-26T03:20:01.123456Z

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t eol = text.find('\n', start);
    out.push_back(text.substr(start, eol - start));
    if (eol == std::string::npos) break;
    start = eol + 1;
  }
  return out;
}

// The index lines without the one of the last fetch ("http://example.com/last"), which
// does not come last in the sorted index.
std::vector<std::string> WithoutLastFetch(std::vector<std::string> lines) {
  size_t before = lines.size();
  std::erase_if(lines, [](const std::string& l) {
    return l.find("{\"url\":\"http://example.com/last\",") != std::string::npos;
  });
  EXPECT_EQ(lines.size() + 1, before);
  return lines;
}

std::filesystem::path CdxjOf(const std::filesystem::path& warc) {
  std::string n = warc.filename().string();
  return warc.parent_path() / (n.substr(0, n.size() - 8) + ".cdxj");
}

// One writer run: 3 fetches flushed, then 4 more not flushed. `crash_*` are the file bytes
// as a kill -9 before the second Flush leaves them; `ref_cdxj` is the index after Close.
struct WriterRun {
  std::filesystem::path file;  // the reference (closed) WARC
  std::string crash_warc;
  std::string crash_cdxj;
  std::string open_cdxj;  // after a Flush of everything, before Close: write order
  std::string ref_cdxj;   // after Close: sorted
  std::vector<Capture> captures;
  std::vector<RecordLocation> locations;  // of each capture's response/revisit
  std::vector<WarcRecord> records;        // of the reference WARC
  uint64_t flushed_end = 0;               // end of the last response flushed before the crash

  // Writes the crash image into `dir` under the same file name; returns its path.
  std::filesystem::path CrashCopy(const std::filesystem::path& dir) const {
    std::filesystem::create_directories(dir);
    std::filesystem::path warc = dir / file.filename();
    WriteFile(warc, crash_warc);
    WriteFile(CdxjOf(warc), crash_cdxj);
    return warc;
  }
  // A copy of the reference (closed) WARC and its CDXJ into `dir`.
  std::filesystem::path CleanCopy(const std::filesystem::path& dir) const {
    std::filesystem::create_directories(dir);
    std::filesystem::path warc = dir / file.filename();
    std::filesystem::copy_file(file, warc);
    WriteFile(CdxjOf(warc), ref_cdxj);
    return warc;
  }
  const WarcRecord& Last() const { return records.back(); }
};

WriterRun WriteRun(const std::filesystem::path& dir, bool crawler_surt = false) {
  FakeClock clock(kT0);
  WarcOptions o;
  o.dir = dir;
  o.clock = &clock;
  o.fsync_on_flush = false;
  o.hostname = "testhost";
  auto w = WarcWriter::Open(o);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  WriterRun run;
  std::vector<Capture>& cs = run.captures;
  cs.push_back(SampleCapture("http://www.Example.com/page?b=1&a=2", "one", kT0));
  cs.back().outlinks = {"http://example.com/x"};
  cs.push_back(SampleCapture("http://example.com/2", "two", kT0 + 1'000'000));
  cs.push_back(SampleCapture("https://example.org:8443/three", "three", kT0 + 2'000'000));
  cs.back().outlinks = {"http://example.com/y"};
  cs.back().via = "http://example.com/";
  // Unflushed: a revisit of "one", a 404 without Content-Type, a response whose capture has
  // no mime (taken from the head), a URL the writer must escape, a response with metadata.
  cs.push_back(SampleCapture("http://example.com/dup", "one", kT0 + 3'000'000));
  cs.back().outlinks = {"http://example.com/z"};
  Capture nf = SampleCapture("http://example.com/missing", "gone", kT0 + 4'000'000);
  nf.response_header = "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\n";
  nf.status = 404;
  nf.mime = "";
  cs.push_back(nf);
  Capture te = SampleCapture("http://example.com/chunked", "data", kT0 + 5'000'000);
  te.response_header =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: Text/Plain ; "
      "charset=UTF-8\r\n\r\n";
  te.mime = "";
  cs.push_back(te);
  cs.push_back(SampleCapture("http://example.com/a b", "spaced", kT0 + 6'000'000));
  cs.push_back(SampleCapture("http://example.com/last", "last page", kT0 + 7'000'000));
  cs.back().outlinks = {"http://example.com/1", "http://example.com/2"};
  if (crawler_surt) {
    // As the crawler does: the key is url::Surt() of the URL its parser returned.
    for (Capture& c : cs) {
      std::optional<url::Url> parsed = url::Parse(c.target_uri);
      EXPECT_TRUE(parsed) << c.target_uri;
      if (parsed) c.surt = url::Surt(*parsed);
    }
  }
  for (size_t i = 0; i < cs.size(); ++i) {
    Result<RecordLocation> loc = Status::Internal("unset");
    if (i == 3) {
      loc = (*w)->WriteRevisit(cs[i],
                               {cs[0].target_uri, cs[0].fetch_time_us, run.locations[0].record_id});
    } else {
      loc = (*w)->WriteResponse(cs[i]);
    }
    EXPECT_TRUE(loc.ok()) << loc.status().ToString();
    run.locations.push_back(loc.ok() ? *loc : RecordLocation{});
    if (i == 2) {
      EXPECT_TRUE((*w)->Flush().ok());
      run.flushed_end = loc->offset + loc->length;
    }
  }
  run.file = (*w)->current_file();
  run.crash_warc = ReadFile(run.file);
  run.crash_cdxj = ReadFile(CdxjOf(run.file));
  EXPECT_TRUE((*w)->Flush().ok());
  run.open_cdxj = ReadFile(CdxjOf(run.file));
  EXPECT_TRUE((*w)->Close().ok());
  run.ref_cdxj = ReadFile(CdxjOf(run.file));
  run.records = ReadAll(run.file);
  return run;
}

class RecoverWarcTest : public ::testing::Test {
 protected:
  void SetUp() override { run_ = WriteRun(dir_.path() / "ref"); }
  TempDir dir_;
  WriterRun run_;
};

TEST_F(RecoverWarcTest, CrashImageHasUnindexedRecords) {
  // The premise of the other tests: before the crash only 3 of 8 lines were written.
  EXPECT_EQ(Lines(run_.crash_cdxj).size(), 3u);
  ASSERT_EQ(Lines(run_.ref_cdxj).size(), 8u);
  EXPECT_EQ(run_.crash_warc, ReadFile(run_.file));
  EXPECT_EQ(run_.Last().type, "metadata");
  // The index is in write order while the file is written and sorted once it is closed.
  std::vector<std::string> open_lines = Lines(run_.open_cdxj);
  EXPECT_FALSE(std::is_sorted(open_lines.begin(), open_lines.end()));
  std::sort(open_lines.begin(), open_lines.end());
  EXPECT_EQ(open_lines, Lines(run_.ref_cdxj));
}

// Torn inside the last member (the metadata record of the last fetch): every response and
// revisit survives and gets the very line the writer wrote at Close.
TEST_F(RecoverWarcTest, TornLastMemberAllUnflushedCapturesIndexed) {
  std::filesystem::path warc = run_.CrashCopy(dir_.path() / "crash");
  uint64_t cut_at = run_.Last().offset + run_.Last().length / 2;
  std::filesystem::resize_file(warc, cut_at);
  auto report = RecoverWarc(warc);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->bytes_cut, cut_at - run_.Last().offset);
  EXPECT_EQ(std::filesystem::file_size(warc), run_.Last().offset);
  EXPECT_EQ(report->cdxj_lines_added, 5u);
  EXPECT_EQ(ReadFile(CdxjOf(warc)), run_.ref_cdxj);  // byte-identical to an uninterrupted run

  // unindexed: every record from the end of the last flushed response up to the cut.
  std::vector<const WarcRecord*> expected;
  for (const WarcRecord& r : run_.records) {
    if (r.offset >= run_.flushed_end && r.offset + r.length <= run_.Last().offset) {
      expected.push_back(&r);
    }
  }
  ASSERT_EQ(report->unindexed.size(), expected.size());
  // The metadata record of #2, then fetches #3..#7 without the torn metadata of #7.
  ASSERT_EQ(expected.size(), 1u + 3u + 2u + 2u + 2u + 2u);
  for (size_t i = 0; i < expected.size(); ++i) {
    const RecoveredRecord& got = report->unindexed[i];
    const WarcRecord& want = *expected[i];
    EXPECT_EQ(got.type, want.type) << i;
    EXPECT_EQ(got.target_uri, want.target_uri) << i;
    EXPECT_EQ(got.record_id, want.header("WARC-Record-ID")) << i;
    EXPECT_EQ(got.payload_digest, want.header("WARC-Payload-Digest")) << i;
    EXPECT_EQ(got.offset, want.offset) << i;
    EXPECT_EQ(got.length, want.length) << i;
  }
  EXPECT_EQ(report->unindexed[0].type, "metadata");
  // The main records carry the writer's locations, digests and fetch times.
  std::vector<const RecoveredRecord*> mains;
  for (const RecoveredRecord& r : report->unindexed) {
    if (r.type == "response" || r.type == "revisit") mains.push_back(&r);
  }
  ASSERT_EQ(mains.size(), 5u);
  for (size_t k = 0; k < mains.size(); ++k) {
    const Capture& c = run_.captures[3 + k];
    const RecordLocation& loc = run_.locations[3 + k];
    EXPECT_EQ(mains[k]->type, k == 0 ? "revisit" : "response");
    EXPECT_EQ(mains[k]->record_id, loc.record_id);
    EXPECT_EQ(mains[k]->offset, loc.offset);
    EXPECT_EQ(mains[k]->length, loc.length);
    EXPECT_EQ(mains[k]->date_us, c.fetch_time_us);
    EXPECT_EQ(mains[k]->payload_digest, PayloadDigest(c.payload));
  }
  EXPECT_EQ(mains[3]->target_uri, "http://example.com/a%20b");
  // Lookup now finds the recovered captures through the CDXJ.
  auto caps = ListCaptures(dir_.path() / "crash", "http://example.com/last");
  ASSERT_TRUE(caps.ok());
  ASSERT_EQ(caps->size(), 1u);
  EXPECT_EQ((*caps)[0].offset, run_.locations.back().offset);
}

// Torn inside the response of the last fetch: its request survives, unindexed ends with it.
TEST_F(RecoverWarcTest, TornResponseLeavesRequestWithoutLine) {
  std::filesystem::path warc = run_.CrashCopy(dir_.path() / "crash");
  const RecordLocation& last = run_.locations.back();
  std::filesystem::resize_file(warc, last.offset + last.length / 2);
  auto report = RecoverWarc(warc);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->bytes_cut, last.length / 2);
  EXPECT_EQ(report->cdxj_lines_added, 4u);
  std::vector<std::string> ref = WithoutLastFetch(Lines(run_.ref_cdxj));
  EXPECT_EQ(Lines(ReadFile(CdxjOf(warc))), ref);
  ASSERT_FALSE(report->unindexed.empty());
  EXPECT_EQ(report->unindexed.back().type, "request");
  EXPECT_EQ(report->unindexed.back().target_uri, "http://example.com/last");
  EXPECT_EQ(report->unindexed.back().payload_digest, "");
}

TEST_F(RecoverWarcTest, SecondCallAddsNothing) {
  std::filesystem::path warc = run_.CrashCopy(dir_.path() / "crash");
  std::filesystem::resize_file(warc, run_.Last().offset + 7);
  auto first = RecoverWarc(warc);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_GT(first->bytes_cut, 0u);
  EXPECT_EQ(first->cdxj_lines_added, 5u);
  std::string warc_bytes = ReadFile(warc);
  std::string cdxj = ReadFile(CdxjOf(warc));
  auto second = RecoverWarc(warc);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->bytes_cut, 0u);
  EXPECT_EQ(second->cdxj_lines_added, 0u);
  EXPECT_EQ(ReadFile(warc), warc_bytes);
  EXPECT_EQ(ReadFile(CdxjOf(warc)), cdxj);
  // Nothing after the last indexed record: the last fetch lost its metadata record.
  EXPECT_TRUE(second->unindexed.empty());
}

TEST_F(RecoverWarcTest, IntactFileAndIndexAddNothing) {
  std::filesystem::path warc = run_.CleanCopy(dir_.path() / "clean");
  auto report = RecoverWarc(warc);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->bytes_cut, 0u);
  EXPECT_EQ(report->cdxj_lines_added, 0u);
  EXPECT_EQ(ReadFile(CdxjOf(warc)), run_.ref_cdxj);
  EXPECT_EQ(ReadFile(warc), ReadFile(run_.file));
  // Only the metadata record that follows the last indexed response.
  ASSERT_EQ(report->unindexed.size(), 1u);
  EXPECT_EQ(report->unindexed[0].type, "metadata");
  EXPECT_EQ(report->unindexed[0].offset, run_.Last().offset);
}

TEST_F(RecoverWarcTest, MissingCdxjIsCreated) {
  std::filesystem::path warc = run_.CleanCopy(dir_.path() / "clean");
  std::filesystem::remove(CdxjOf(warc));
  auto report = RecoverWarc(warc);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->cdxj_lines_added, 8u);
  EXPECT_EQ(ReadFile(CdxjOf(warc)), run_.ref_cdxj);
  ASSERT_EQ(report->unindexed.size(), run_.records.size());  // all, warcinfo first
  EXPECT_EQ(report->unindexed[0].type, "warcinfo");
  EXPECT_EQ(report->unindexed[0].offset, 0u);
  EXPECT_EQ(report->unindexed[0].date_us, kT0);  // the FakeClock at open
}

TEST_F(RecoverWarcTest, EmptyCdxjIsFilled) {
  std::filesystem::path warc = run_.CleanCopy(dir_.path() / "clean");
  WriteFile(CdxjOf(warc), "");
  auto report = RecoverWarc(warc);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->cdxj_lines_added, 8u);
  EXPECT_EQ(ReadFile(CdxjOf(warc)), run_.ref_cdxj);
}

// A crash while Flush() appended index lines leaves half a line: it is dropped and its
// record indexed again.
TEST_F(RecoverWarcTest, TornCdxjLineIsReplaced) {
  std::filesystem::path warc = run_.CleanCopy(dir_.path() / "clean");
  // Only the index of the file being written is appended to (in write order); a closed
  // file's is replaced whole when sorted.
  std::string torn = run_.open_cdxj.substr(0, run_.open_cdxj.size() - 20);
  WriteFile(CdxjOf(warc), torn);
  auto report = RecoverWarc(warc);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->bytes_cut, 0u);
  EXPECT_EQ(report->cdxj_lines_added, 1u);
  EXPECT_EQ(ReadFile(CdxjOf(warc)), run_.ref_cdxj);
  EXPECT_FALSE(std::filesystem::exists(CdxjOf(warc).string() + ".tmp"));
}

// Index lines were flushed but the WARC lost its tail (no fsync before a power cut): the
// line of the torn record goes, no line is added.
TEST_F(RecoverWarcTest, FlushedLineOfTornRecordIsDropped) {
  std::filesystem::path warc = run_.CleanCopy(dir_.path() / "clean");
  const RecordLocation& last = run_.locations.back();
  std::filesystem::resize_file(warc, last.offset + 10);
  auto report = RecoverWarc(warc);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->bytes_cut, 10u);
  EXPECT_EQ(report->cdxj_lines_added, 0u);
  std::vector<std::string> ref = WithoutLastFetch(Lines(run_.ref_cdxj));
  EXPECT_EQ(Lines(ReadFile(CdxjOf(warc))), ref);
}

// After a power loss the file can keep its size with zeros where the last data was: the
// last indexed record does not read back, so the whole file is checked, cut at the damaged
// record, and its line dropped.
TEST_F(RecoverWarcTest, ZeroedTailAfterPowerLoss) {
  std::filesystem::path warc = run_.CleanCopy(dir_.path() / "clean");
  std::string bytes = ReadFile(warc);
  const RecordLocation& last = run_.locations.back();
  std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(last.offset + last.length / 2), bytes.end(),
            '\0');
  WriteFile(warc, bytes);
  auto report = RecoverWarc(warc);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->bytes_cut, bytes.size() - last.offset);
  EXPECT_EQ(report->cdxj_lines_added, 0u);
  std::vector<std::string> ref = WithoutLastFetch(Lines(run_.ref_cdxj));
  EXPECT_EQ(Lines(ReadFile(CdxjOf(warc))), ref);
  ASSERT_EQ(report->unindexed.size(), 1u);
  EXPECT_EQ(report->unindexed[0].type, "request");
  EXPECT_EQ(report->unindexed[0].target_uri, "http://example.com/last");
}

TEST_F(RecoverWarcTest, LinesOfOtherFilesAndGarbageAreKept) {
  std::filesystem::path warc = run_.CrashCopy(dir_.path() / "crash");
  std::string other =
      "com,example)/ 20261126032001 {\"url\":\"http://example.com/\",\"length\":5,"
      "\"offset\":999999999,\"filename\":\"other.warc.gz\"}\nnot a cdxj line\n";
  WriteFile(CdxjOf(warc), run_.crash_cdxj + other);
  auto report = RecoverWarc(warc);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->cdxj_lines_added, 5u);
  // Kept and added lines, sorted together.
  std::vector<std::string> expected = Lines(run_.ref_cdxj);
  expected.push_back(Lines(other)[0]);
  expected.push_back(Lines(other)[1]);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(Lines(ReadFile(CdxjOf(warc))), expected);
}

TEST_F(RecoverWarcTest, IndexThatDoesNotMatchTheWarcIsCorruption) {
  std::filesystem::path warc = run_.CleanCopy(dir_.path() / "clean");
  const RecordLocation& first = run_.locations[0];
  internal::CdxjEntry e;
  e.surt = "com,example)/";
  e.timestamp = "20261126032001";
  e.url = "http://example.com/";
  e.offset = first.offset;
  e.length = first.length / 2;  // ends inside a record
  e.filename = first.filename;
  std::string before = internal::FormatCdxjLine(e) + "\n";
  WriteFile(CdxjOf(warc), before);
  auto report = RecoverWarc(warc);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), Status::Code::kCorruption);
  EXPECT_NE(report.status().message().find("does not match"), std::string::npos)
      << report.status().message();
  EXPECT_EQ(ReadFile(CdxjOf(warc)), before);  // left alone
}

// A wrong index must not decide where the file is cut: the torn tail is found by reading
// the whole file, and the mismatch is reported.
TEST_F(RecoverWarcTest, WrongIndexDoesNotMoveTheCut) {
  std::filesystem::path warc = run_.CleanCopy(dir_.path() / "clean");
  std::filesystem::resize_file(warc, run_.Last().offset + 5);
  const RecordLocation& first = run_.locations[0];
  internal::CdxjEntry e;
  e.surt = "com,example)/";
  e.timestamp = "20261126032001";
  e.url = "http://example.com/";
  e.offset = first.offset + 3;  // not a record
  e.length = first.length;
  e.filename = first.filename;
  WriteFile(CdxjOf(warc), internal::FormatCdxjLine(e) + "\n");
  auto report = RecoverWarc(warc);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), Status::Code::kCorruption);
  EXPECT_EQ(std::filesystem::file_size(warc), run_.Last().offset);
}

// Only the part after the last indexed record is read: damage inside an indexed record
// (bit rot, not a crash) is neither noticed nor "repaired" by cutting the file there.
TEST_F(RecoverWarcTest, IndexedPartIsNotRead) {
  std::filesystem::path warc = run_.CrashCopy(dir_.path() / "crash");
  std::string bytes = ReadFile(warc);
  bytes[run_.locations[1].offset + run_.locations[1].length / 2] ^= 0x55;
  WriteFile(warc, bytes.substr(0, run_.Last().offset + 5));
  auto report = RecoverWarc(warc);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->bytes_cut, 5u);
  EXPECT_EQ(report->cdxj_lines_added, 5u);
  EXPECT_EQ(ReadFile(CdxjOf(warc)), run_.ref_cdxj);
  size_t pos = run_.locations[1].offset + run_.locations[1].length / 2;
  EXPECT_EQ(ReadFile(warc)[pos], bytes[pos]);  // still there: not cut
}

// More than 64 MiB after the last good record is not a torn append: refused unless forced.
TEST_F(RecoverWarcTest, LargeGarbageTailIsNotCutUnlessForced) {
  std::filesystem::path warc = run_.CleanCopy(dir_.path() / "clean");
  std::string bytes = ReadFile(warc);
  WriteFile(warc, bytes + std::string((64u << 20) + 1, 'x'));
  auto report = RecoverWarc(warc);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), Status::Code::kCorruption);
  EXPECT_EQ(std::filesystem::file_size(warc), bytes.size() + (64u << 20) + 1);
  RecoverOptions force;
  force.force = true;
  report = RecoverWarc(warc, force);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->bytes_cut, (64u << 20) + 1);
  EXPECT_EQ(ReadFile(warc), bytes);
  EXPECT_EQ(ReadFile(CdxjOf(warc)), run_.ref_cdxj);
}

TEST(RecoverWarc, OnlyWarcinfo) {
  TempDir dir;
  FakeClock clock(kT0);
  WarcOptions o;
  o.dir = dir.path();
  o.clock = &clock;
  o.fsync_on_flush = false;
  auto w = WarcWriter::Open(o);
  ASSERT_TRUE(w.ok());
  auto loc = (*w)->WriteResponse(SampleCapture("http://example.com/", "x"));
  ASSERT_TRUE(loc.ok());
  std::filesystem::path warc = (*w)->current_file();
  ASSERT_TRUE((*w)->Close().ok());
  std::vector<WarcRecord> recs = ReadAll(warc);
  ASSERT_EQ(recs.size(), 3u);
  uint64_t warcinfo_end = recs[0].length;
  // Torn inside the request: the file keeps only its warcinfo record.
  std::filesystem::resize_file(warc, warcinfo_end + recs[1].length / 2);
  std::filesystem::remove(CdxjOf(warc));
  auto report = RecoverWarc(warc);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->bytes_cut, recs[1].length / 2);
  EXPECT_EQ(report->cdxj_lines_added, 0u);
  ASSERT_EQ(report->unindexed.size(), 1u);
  EXPECT_EQ(report->unindexed[0].type, "warcinfo");
  EXPECT_EQ(report->unindexed[0].record_id, recs[0].header("WARC-Record-ID"));
  EXPECT_FALSE(std::filesystem::exists(CdxjOf(warc)));  // nothing to index: not created
  // An existing (empty) index stays empty.
  WriteFile(CdxjOf(warc), "");
  report = RecoverWarc(warc);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->cdxj_lines_added, 0u);
  EXPECT_EQ(ReadFile(CdxjOf(warc)), "");
}

// The crawler passes Capture::surt (its parser's url::Surt()), which the record does not
// store: the recovered keys must still be the writer's.
TEST(RecoverWarc, KeysMatchTheCrawlersSurt) {
  TempDir dir;
  WriterRun run = WriteRun(dir.path() / "ref", /*crawler_surt=*/true);
  std::filesystem::path warc = run.CrashCopy(dir.path() / "crash");
  auto report = RecoverWarc(warc);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->bytes_cut, 0u);
  EXPECT_EQ(report->cdxj_lines_added, 5u);
  EXPECT_EQ(ReadFile(CdxjOf(warc)), run.ref_cdxj);
}

TEST(RecoverWarc, BadNames) {
  TempDir dir;
  auto missing = RecoverWarc(dir.path() / "nope.warc.gz");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  WriteFile(dir.path() / "notes.txt", "hello");
  auto other = RecoverWarc(dir.path() / "notes.txt");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), Status::Code::kInvalidArgument);
}

TEST(WarcReader, StartOffset) {
  TempDir dir;
  WriterRun run = WriteRun(dir.path());
  WarcReaderOptions o;
  o.start_offset = run.locations[1].offset;
  auto reader = WarcReader::Open(run.file, o);
  ASSERT_TRUE(reader.ok());
  auto r = (*reader)->Next();
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->offset, run.locations[1].offset);
  EXPECT_EQ((*r)->header("WARC-Record-ID"), run.locations[1].record_id);
  o.start_offset = run.locations[1].offset + 1;  // not a record boundary
  auto bad = WarcReader::Open(run.file, o);
  ASSERT_TRUE(bad.ok());
  auto e = (*bad)->Next();
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), Status::Code::kCorruption);
  o.start_offset = std::filesystem::file_size(run.file);  // the end: clean EOF
  auto end = WarcReader::Open(run.file, o);
  auto none = (*end)->Next();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(ParseWarcDate, RoundTripsWarcDate) {
  for (int64_t us : {int64_t{0}, kT0, int64_t{951782400000000} /* 2000-02-29 */,
                     int64_t{4107542399999999} /* 2100-02-28T23:59:59.999999 */}) {
    EXPECT_EQ(internal::ParseWarcDate(WarcDate(us)), us) << WarcDate(us);
  }
  EXPECT_EQ(internal::ParseWarcDate("2026-11-26T03:20:01Z"), 1795663201000000);
  EXPECT_EQ(internal::ParseWarcDate("2026-11-26T03:20:01.5Z"), 1795663201500000);
  EXPECT_EQ(internal::ParseWarcDate("2026-11-26T03:20:01.123456789Z"), 1795663201123456);
  for (const char* bad :
       {"", "2026-11-26", "2026-11-26T03:20:01", "2026-13-26T03:20:01Z", "2026-11-26T03:20:01.Z",
        "2026-11-26T03:20:01.1234567890Z", "2026-11-26 03:20:01Z", "2026-11-26T03:20:01Zjunk"}) {
    EXPECT_EQ(internal::ParseWarcDate(bad), std::nullopt) << bad;
  }
}

TEST(CdxjLineFor, MimeFromHeadTrimsAndStopsAtBody) {
  EXPECT_EQ(internal::MimeFromHead("HTTP/1.1 200 OK\r\nContent-Type:\tText/HTML\t; x=y\r\n\r\n"),
            "text/html");
  EXPECT_EQ(internal::MimeFromHead("HTTP/1.1 200 OK\r\n\r\nContent-Type: a/b\r\n"), "");
  EXPECT_EQ(internal::HttpHeadOf("HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody\r\n\r\n"),
            "HTTP/1.1 200 OK\r\nA: b\r\n\r\n");
  EXPECT_EQ(internal::HttpHeadOf("HTTP/1.1 200 OK\nA: b\n\nbody"), "HTTP/1.1 200 OK\nA: b\n\n");
}

// Lines of near-duplicate responses, near-duplicate metadata records and 304 revisits are
// rebuilt byte for byte from the records.
TEST(RecoverWarc, RebuildsNearDuplicateAndNotModifiedLines) {
  TempDir dir;
  FakeClock clock;
  WarcOptions o;
  o.dir = dir.path();
  o.clock = &clock;
  auto w = WarcWriter::Open(o);
  ASSERT_TRUE(w.ok());
  auto first = (*w)->WriteResponse(SampleCapture("http://example.com/a", "text one"));
  ASSERT_TRUE(first.ok());
  Capture near = SampleCapture("http://example.com/b", "text one!");
  near.near_duplicate_of =
      Capture::NearDuplicate{"http://example.com/a", first->record_id, 1795663201123456, 1};
  ASSERT_TRUE((*w)->WriteResponse(near).ok());
  Capture plain = SampleCapture("http://example.com/c", "unrelated");
  plain.outlinks = {"http://example.com/d"};
  ASSERT_TRUE((*w)->WriteResponse(plain).ok());
  near.target_uri = "http://example.com/e";
  ASSERT_TRUE((*w)->WriteNearDuplicateMetadata(near).ok());
  Capture not_modified = SampleCapture("http://example.com/a", "", 1795663301000000);
  not_modified.response_header = "HTTP/1.1 304 Not Modified\r\n\r\n";
  not_modified.status = 304;
  not_modified.mime.clear();
  ASSERT_TRUE((*w)->WriteRevisit(not_modified,
                                 {"http://example.com/a", 1795663201123456, first->record_id,
                                  RevisitProfile::kServerNotModified, PayloadDigest("text one")})
                  .ok());
  std::filesystem::path warc = (*w)->current_file();
  ASSERT_TRUE((*w)->Close().ok());
  std::filesystem::path cdxj = warc.parent_path() / (warc.stem().stem().string() + ".cdxj");
  const std::string written = ReadFile(cdxj);
  ASSERT_NE(written.find("near_dup_of"), std::string::npos);
  std::filesystem::remove(cdxj);
  auto report = RecoverWarc(warc);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->cdxj_lines_added, 5u);
  EXPECT_EQ(ReadFile(cdxj), written);
}

}  // namespace
}  // namespace harvest::store
