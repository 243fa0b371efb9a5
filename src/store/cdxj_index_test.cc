// The sorted CDXJ index: SortCdxjFile, the writer sorting on close, ListCdxjFiles,
// CheckCdxjSorted and MergeCdxjFiles. `LC_ALL=C sort -c` is the judge of the order.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>

#include "store/internal.h"
#include "store/store.h"
#include "store/store_test_util.h"

namespace harvest::store {
namespace {

using testing::FilesWithSuffix;
using testing::ReadFile;
using testing::SampleCapture;
using testing::TempDir;

void WriteText(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// What coreutils says: 0 when `LC_ALL=C sort -c` accepts the file.
int SortCheck(const std::filesystem::path& p) {
  std::string cmd = "LC_ALL=C sort -c '" + p.string() + "' 2>/dev/null";
  return std::system(cmd.c_str());
}

ino_t Inode(const std::filesystem::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_ino;
}

TEST(SortedLines, ByteOrderOfWholeLines) {
  // Bytes >= 0x80 sort after ASCII (unsigned, as `LC_ALL=C sort`); a prefix first; equal
  // keys ordered by the rest of the line.
  std::string text =
      "org,example)/ 2 {}\n"
      "com,example)/\xc3\xa9 1 {}\n"
      "com,example)/z 1 {}\n"
      "com,example)/ 3 {\"b\"}\n"
      "com,example)/ 3 {\"a\"}\n"
      "com,example)/a 1 {}";  // no final newline
  std::string sorted = internal::SortedLines(text);
  EXPECT_EQ(sorted,
            "com,example)/ 3 {\"a\"}\n"
            "com,example)/ 3 {\"b\"}\n"
            "com,example)/a 1 {}\n"
            "com,example)/z 1 {}\n"
            "com,example)/\xc3\xa9 1 {}\n"
            "org,example)/ 2 {}\n");
  EXPECT_TRUE(internal::LinesSorted(sorted));
  uint64_t bad = 0;
  EXPECT_FALSE(internal::LinesSorted(text, &bad));
  EXPECT_EQ(bad, 2u);
  EXPECT_TRUE(internal::LinesSorted(""));
  EXPECT_EQ(internal::SortedLines(""), "");
}

TEST(SortCdxjFile, SortsAtomicallyAndAgreesWithSort) {
  TempDir dir;
  std::filesystem::path p = dir.path() / "a.cdxj";
  WriteText(p, "com,b)/ 1 {}\ncom,a)/ 1 {}\ncom,a)/ 0 {}\n");
  EXPECT_NE(SortCheck(p), 0);  // the check can fail
  ASSERT_TRUE(SortCdxjFile(p).ok());
  EXPECT_EQ(ReadFile(p), "com,a)/ 0 {}\ncom,a)/ 1 {}\ncom,b)/ 1 {}\n");
  EXPECT_EQ(SortCheck(p), 0);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "a.cdxj.tmp"));
  // Already sorted: left as it is (not rewritten).
  ino_t before = Inode(p);
  ASSERT_TRUE(SortCdxjFile(p).ok());
  EXPECT_EQ(Inode(p), before);
  // A missing last newline is added.
  WriteText(p, "com,a)/ 0 {}");
  ASSERT_TRUE(SortCdxjFile(p, /*sync=*/false).ok());
  EXPECT_EQ(ReadFile(p), "com,a)/ 0 {}\n");
  EXPECT_EQ(SortCdxjFile(dir.path() / "none.cdxj").code(), Status::Code::kNotFound);
}

// A file larger than the writer's 1 MiB buffer, with a line longer than it: written back
// through the buffer, byte for byte what SortedLines builds.
TEST(SortCdxjFile, FileLargerThanTheWriteBuffer) {
  TempDir dir;
  std::filesystem::path p = dir.path() / "big.cdxj";
  std::string text;
  uint64_t x = 12345;
  for (int i = 0; i < 30000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    text += "com,h" + std::to_string(x >> 40) + ")/ 2026 {\"url\": \"" +
            std::string(40 + (x >> 58), 'a') + "\"}\n";
  }
  text += "com,z)/ 1 {\"u\": \"" + std::string(size_t{3} << 20, 'b') + "\"}\n";
  text += "com,a)/ 0 {}\n";
  WriteText(p, text);
  ASSERT_TRUE(SortCdxjFile(p, /*sync=*/false).ok());
  const std::string sorted = ReadFile(p);
  EXPECT_EQ(sorted.size(), text.size());
  EXPECT_TRUE(sorted == internal::SortedLines(text));
  EXPECT_EQ(SortCheck(p), 0);
}

// The names of the files in `dir`, sorted.
std::vector<std::string> DirNames(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// What `LC_ALL=C sort` makes of `in` (the judge, independent of our code).
std::string CoreutilsSort(const std::filesystem::path& in, const std::filesystem::path& out) {
  std::string cmd = "LC_ALL=C sort '" + in.string() + "' > '" + out.string() + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return ReadFile(out);
}

// A budget of 1 KiB forces the external merge sort: runs written beside the file and merged.
// The result is byte for byte the in-memory sort's and coreutils': duplicates, equal keys,
// empty lines (first, as `sort` puts them), bytes >= 0x80, lines longer than the budget (also
// the last one, without its newline).
TEST(SortCdxjFile, InRunsEqualsTheSortInMemory) {
  std::mt19937 rng(2026);
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(variant);
    TempDir dir;
    TempDir judge;
    std::filesystem::path p = dir.path() / "a.cdxj";
    std::string text;
    if (variant == 1) text += "\n\n";  // empty lines first: sorted, but the rest is not
    for (int i = 0; i < 300; ++i) {
      std::string line = "com,h" + std::to_string(rng() % 20) + ")/p" + std::to_string(rng() % 7) +
                         " 2026112603200" + std::to_string(rng() % 3) +
                         " {\"i\":" + std::to_string(rng() % 4) + "}";
      if (i % 37 == 5) line += "\xc3\xa9";
      text += line + "\n";
      if (i % 50 == 7) text += line + "\n";  // a duplicate
      if (i % 90 == 11) text += "\n";        // an empty line
      if (i == 150) text += "com,long)/ 1 {\"u\":\"" + std::string(3000, 'x') + "\"}\n";
    }
    if (variant == 2) {
      text += "com,last)/ 1 {\"u\":\"" + std::string(2500, 'y') + "\"}";  // longer than 1 KiB
    } else {
      text += "com,a)/ 0 {}";  // no final newline
    }
    WriteText(judge.path() / "in", text);
    const std::string expected = internal::SortedLines(text);
    ASSERT_EQ(CoreutilsSort(judge.path() / "in", judge.path() / "out"), expected);
    WriteText(p, text);
    Status s = internal::SortCdxjFileWithBudget(p, /*sync=*/variant == 0, 1024);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(ReadFile(p) == expected);
    EXPECT_EQ(SortCheck(p), 0);
    EXPECT_EQ(DirNames(dir.path()), std::vector<std::string>{"a.cdxj"});  // no runs, no .tmp
  }
}

// 20,000 lines in runs of 4 KiB: a few hundred runs, more than one merge takes at once
// (internal::kCdxjSortMaxFanIn), so runs are merged in rounds.
TEST(SortCdxjFile, ManyRunsMergedInRounds) {
  TempDir dir;
  std::filesystem::path p = dir.path() / "many.cdxj";
  std::mt19937_64 rng(99);
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    text += "com,host" + std::to_string(rng() % 500) + ")/" + std::to_string(rng() % 100) + " " +
            std::to_string(20260000000000 + rng() % 1000000) + " {\"n\":" + std::to_string(i % 7) +
            "}\n";
  }
  ASSERT_GT(text.size() / 4096, 2 * internal::kCdxjSortMaxFanIn);
  WriteText(p, text);
  Status s = internal::SortCdxjFileWithBudget(p, /*sync=*/false, 4096);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(ReadFile(p) == internal::SortedLines(text));
  EXPECT_EQ(SortCheck(p), 0);
  EXPECT_EQ(DirNames(dir.path()), std::vector<std::string>{"many.cdxj"});
}

// Sorted already (checked in pieces, without reading the file whole): nothing is written.
// A line out of order only at the end, an empty line inside or a missing last newline are
// found there and rewritten.
TEST(SortCdxjFile, SortedFileLargerThanTheBudgetIsNotRewritten) {
  TempDir dir;
  std::filesystem::path p = dir.path() / "s.cdxj";
  std::vector<std::string> lines;
  for (int i = 0; i < 1000; ++i) {
    lines.push_back("com,h" + std::to_string(1000 + i) + ")/ 20260101000000 {}");
  }
  std::string sorted;
  for (const auto& l : lines) sorted += l + "\n";
  WriteText(p, "\n" + sorted);  // empty lines first are in order
  ino_t before = Inode(p);
  ASSERT_TRUE(internal::SortCdxjFileWithBudget(p, true, 1024).ok());
  EXPECT_EQ(Inode(p), before);
  EXPECT_EQ(ReadFile(p), "\n" + sorted);
  EXPECT_EQ(DirNames(dir.path()), std::vector<std::string>{"s.cdxj"});

  std::string last_swapped = sorted.substr(0, sorted.size() - 2 * (lines.back().size() + 1)) +
                             lines.back() + "\n" + lines[lines.size() - 2] + "\n";
  std::string empty_inside = sorted;
  empty_inside.insert(sorted.size() / 2 + 1 + sorted.substr(sorted.size() / 2).find('\n'), "\n");
  for (const std::string& text :
       {last_swapped, empty_inside, sorted.substr(0, sorted.size() - 1)}) {
    WriteText(p, text);
    before = Inode(p);
    ASSERT_TRUE(internal::SortCdxjFileWithBudget(p, false, 1024).ok());
    EXPECT_NE(Inode(p), before);
    EXPECT_TRUE(ReadFile(p) == internal::SortedLines(text));
    EXPECT_EQ(DirNames(dir.path()), std::vector<std::string>{"s.cdxj"});
  }
}

// A sort cut short by a crash leaves runs and a .tmp: the next sort overwrites or removes
// them (only this file's: another index's runs stay).
TEST(SortCdxjFile, LeftoversOfACrashedSortDoNotMatter) {
  TempDir dir;
  std::filesystem::path p = dir.path() / "c.cdxj";
  std::string text;
  for (int i = 0; i < 400; ++i) text += "com,h" + std::to_string((i * 7919) % 400) + ")/ 1 {}\n";
  WriteText(p, text);
  for (const char* junk : {"c.cdxj.run0", "c.cdxj.run1", "c.cdxj.run977", "c.cdxj.tmp"}) {
    WriteText(dir.path() / junk, "zzz junk\na junk\n");
  }
  WriteText(dir.path() / "d.cdxj.run0", "another sort's run\n");
  WriteText(dir.path() / "c.cdxj.runx", "not a run\n");
  Status s = internal::SortCdxjFileWithBudget(p, false, 1024);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(ReadFile(p) == internal::SortedLines(text));
  EXPECT_EQ(DirNames(dir.path()),
            (std::vector<std::string>{"c.cdxj", "c.cdxj.runx", "d.cdxj.run0"}));
}

// An error names the file and leaves the index as it was and no run behind: here a
// directory stands where the second run or the temporary file would go.
TEST(SortCdxjFile, ErrorsLeaveTheFileAsItWas) {
  std::string text;
  for (int i = 0; i < 400; ++i) text += "com,h" + std::to_string((i * 7919) % 400) + ")/ 1 {}\n";
  for (const char* blocked : {"e.cdxj.run1", "e.cdxj.tmp"}) {
    SCOPED_TRACE(blocked);
    TempDir dir;
    std::filesystem::path p = dir.path() / "e.cdxj";
    WriteText(p, text);
    std::filesystem::create_directories(dir.path() / blocked / "x");
    Status s = internal::SortCdxjFileWithBudget(p, false, 1024);
    EXPECT_EQ(s.code(), Status::Code::kIOError);
    EXPECT_NE(s.message().find((dir.path() / blocked).string()), std::string::npos) << s.message();
    EXPECT_EQ(ReadFile(p), text);
    EXPECT_EQ(DirNames(dir.path()), (std::vector<std::string>{"e.cdxj", blocked}));
  }
}

std::unique_ptr<WarcWriter> OpenWriter(const std::filesystem::path& dir, FakeClock* clock,
                                       uint64_t max_bytes) {
  WarcOptions o;
  o.dir = dir;
  o.clock = clock;
  o.max_file_bytes = max_bytes;
  o.hostname = "testhost";
  auto w = WarcWriter::Open(o);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return std::move(w).value();
}

// A crawl-like run: many hosts and paths in shuffled (not key) order, revisits and
// near-duplicate notes among them, rotating files. Every CDXJ of a closed WARC is sorted.
// Lines as a crawl appends them (hosts interleaved), with duplicates, empty lines and bytes
// above 0x7f, each ending in '\n'.
std::vector<std::string> CrawlOrderLines(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> lines;
  for (int i = 0; i < n; ++i) {
    std::string line = "com,host" + std::to_string(i % 97) + ")/p/" + std::to_string(rng() % 300) +
                       " " + std::to_string(20260000000000 + rng() % 1000) +
                       " {\"n\":" + std::to_string(i % 7) + "}\n";
    if (i % 41 == 3) line.insert(line.find(' '), "\xc3\xa9");
    lines.push_back(line);
    if (i % 53 == 9) lines.push_back(line);  // a duplicate
    if (i % 71 == 5) lines.push_back("\n");  // an empty line
  }
  return lines;
}

// Whatever the budget (a run per Add, runs merged in rounds, everything in memory), the
// sorter leaves the file exactly as SortCdxjFile leaves the appended file, and no run.
TEST(CdxjSorter, EqualsSortingTheAppendedFile) {
  for (size_t budget : {size_t{1}, size_t{4096}, size_t{1} << 20}) {
    SCOPED_TRACE(budget);
    TempDir dir;
    const std::filesystem::path p = dir.path() / "w.cdxj";
    const std::filesystem::path oracle = dir.path() / "oracle.cdxj";
    const std::vector<std::string> lines = CrawlOrderLines(budget == 1 ? 300 : 20000, budget);
    std::string text;
    internal::CdxjSorter sorter(p, budget);
    std::mt19937 rng(5);
    for (size_t i = 0; i < lines.size();) {
      std::string chunk;  // a flush's worth of lines
      for (size_t n = 1 + rng() % 40; n > 0 && i < lines.size(); --n) chunk += lines[i++];
      text += chunk;
      ASSERT_TRUE(sorter.Add(chunk).ok());
    }
    if (budget == 4096) {
      ASSERT_GT(text.size() / budget, 2 * internal::kCdxjSortMaxFanIn);
    }
    WriteText(p, text);
    WriteText(oracle, text);
    ASSERT_TRUE(SortCdxjFile(oracle, /*sync=*/false).ok());
    Status s = sorter.Finish(/*sync=*/budget == 1);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(ReadFile(p) == ReadFile(oracle));
    EXPECT_TRUE(ReadFile(p) == internal::SortedLines(text));
    EXPECT_EQ(SortCheck(p), 0);
    EXPECT_EQ(DirNames(dir.path()), (std::vector<std::string>{"oracle.cdxj", "w.cdxj"}));
  }
}

// Runs left by a crashed sort of the same name are removed, not merged; the sorter's own
// runs go with it when it is dropped without Finish (the file stays as appended).
TEST(CdxjSorter, StaleRunsAreIgnoredAndItsOwnRunsRemoved) {
  TempDir dir;
  const std::filesystem::path p = dir.path() / "w.cdxj";
  WriteText(dir.path() / "w.cdxj.run0", "zzz stale\n");
  WriteText(dir.path() / "w.cdxj.run9999", "aaa stale\n");
  std::string text;
  {
    internal::CdxjSorter sorter(p, 64);
    for (const std::string& line : CrawlOrderLines(50, 1)) {
      text += line;
      ASSERT_TRUE(sorter.Add(line).ok());
    }
    const std::vector<std::string> names = DirNames(dir.path());
    EXPECT_GT(names.size(), 1u);  // its runs
    EXPECT_EQ(std::count(names.begin(), names.end(), "w.cdxj.run9999"), 0);
  }
  EXPECT_TRUE(DirNames(dir.path()).empty());
  WriteText(p, text);
  internal::CdxjSorter sorter(p, 64);
  for (const std::string& line : CrawlOrderLines(50, 1)) ASSERT_TRUE(sorter.Add(line).ok());
  ASSERT_TRUE(sorter.Finish(false).ok());
  EXPECT_TRUE(ReadFile(p) == internal::SortedLines(text));
  EXPECT_EQ(DirNames(dir.path()), std::vector<std::string>{"w.cdxj"});
}

TEST(WarcWriterCdxj, SortedWhenEachFileIsClosed) {
  TempDir dir;
  FakeClock clock(1795663201000000);
  auto w = OpenWriter(dir.path(), &clock, 64 * 1024);
  std::vector<std::string> urls;
  for (int h = 0; h < 20; ++h) {
    for (int p = 0; p < 15; ++p) {
      urls.push_back("http://host" + std::to_string(h) + ".example/page/" +
                     std::to_string(p * 7 % 15) + "?q=" + std::to_string(p));
    }
  }
  std::mt19937 rng(42);
  std::shuffle(urls.begin(), urls.end(), rng);
  std::string body(1500, 'x');
  for (size_t i = 0; i < urls.size(); ++i) {
    for (char& c : body) c = static_cast<char>('a' + rng() % 26);
    Capture c = SampleCapture(urls[i], body, 1795663201000000 + static_cast<int64_t>(i) * 1000);
    if (i % 10 == 3) {
      ASSERT_TRUE(w->WriteRevisit(c, {urls[0], 1795663201000000, ""}).ok());
    } else if (i % 10 == 7) {
      c.near_duplicate_of = Capture::NearDuplicate{urls[1], "", 1795663201000000, 2};
      ASSERT_TRUE(w->WriteNearDuplicateMetadata(c).ok());
    } else {
      ASSERT_TRUE(w->WriteResponse(c).ok());
    }
    if (i % 25 == 0) {
      ASSERT_TRUE(w->Flush().ok());
    }
  }
  ASSERT_TRUE(w->Flush().ok());
  // Rotated files are closed, hence sorted; the open one is still in write order.
  std::filesystem::path open_warc = w->current_file();
  std::string open_stem = open_warc.filename().string();
  open_stem.resize(open_stem.size() - 8);
  std::vector<std::filesystem::path> cdxjs = FilesWithSuffix(dir.path(), ".cdxj");
  ASSERT_GT(cdxjs.size(), 3u);
  for (const auto& p : cdxjs) {
    if (p.filename().string() == open_stem + ".cdxj") {
      EXPECT_NE(SortCheck(p), 0) << p << " is sorted before its WARC is closed";
    } else {
      EXPECT_EQ(SortCheck(p), 0) << p;
    }
  }
  ASSERT_TRUE(w->Close().ok());
  size_t lines = 0;
  for (const auto& p : cdxjs) {
    EXPECT_EQ(SortCheck(p), 0) << p;
    EXPECT_TRUE(CheckCdxjSorted(p).ok()) << p;
    std::string text = ReadFile(p);
    lines += static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  }
  EXPECT_EQ(lines, urls.size());  // one line per response, revisit and near-duplicate note
  // Readers do not depend on the write order.
  auto caps = ListCaptures(dir.path(), urls[5]);
  ASSERT_TRUE(caps.ok()) << caps.status().ToString();
  ASSERT_EQ(caps->size(), 1u);
  EXPECT_EQ((*caps)[0].url, urls[5]);
  auto page = GetLatestCapture(dir.path(), urls[5]);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->record.target_uri, urls[5]);
}

// A crash leaves the index of the file being written in write order: recovery sorts it.
TEST(WarcWriterCdxj, RecoverySortsTheIndexOfACrashedWriter) {
  TempDir dir;
  FakeClock clock(1795663201000000);
  auto w = OpenWriter(dir.path() / "run", &clock, 1ull << 30);
  for (std::string u : {"http://z.example/", "http://a.example/", "http://m.example/"}) {
    ASSERT_TRUE(w->WriteResponse(SampleCapture(u, "body of " + u)).ok());
  }
  ASSERT_TRUE(w->Flush().ok());
  ASSERT_TRUE(w->WriteResponse(SampleCapture("http://b.example/", "unflushed")).ok());
  std::filesystem::path warc = w->current_file();
  std::filesystem::path crash = dir.path() / "crash";
  std::filesystem::create_directories(crash);
  std::filesystem::copy_file(warc, crash / warc.filename());
  std::string stem = warc.filename().string();
  stem.resize(stem.size() - 8);
  std::filesystem::copy_file(warc.parent_path() / (stem + ".cdxj"), crash / (stem + ".cdxj"));
  ASSERT_TRUE(w->Close().ok());
  std::filesystem::path cdxj = crash / (stem + ".cdxj");
  EXPECT_NE(SortCheck(cdxj), 0);
  // A sort cut short by the crash left a run: recovery removes it.
  std::filesystem::path run = cdxj;
  run += ".run3";
  WriteText(run, "com,zzz)/ 1 {}\n");
  auto report = RecoverWarc(crash / warc.filename());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(run));
  EXPECT_EQ(report->cdxj_lines_added, 1u);
  EXPECT_EQ(SortCheck(cdxj), 0);
  // The same index as the writer's own after Close.
  EXPECT_EQ(ReadFile(cdxj), ReadFile(warc.parent_path() / (stem + ".cdxj")));
  // Already sorted and complete: a second recovery leaves the file alone.
  ino_t before = Inode(cdxj);
  ASSERT_TRUE(RecoverWarc(crash / warc.filename()).ok());
  EXPECT_EQ(Inode(cdxj), before);
}

TEST(ListCdxjFiles, FindsTheCrawlsIndexes) {
  TempDir dir;
  EXPECT_EQ(ListCdxjFiles(dir.path() / "missing").status().code(), Status::Code::kNotFound);
  auto none = ListCdxjFiles(dir.path());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no CDXJ files"), std::string::npos)
      << none.status().message();
  WriteText(dir.path() / "b.cdxj", "");
  WriteText(dir.path() / "a.cdxj", "");
  WriteText(dir.path() / "a.cdxj.tmp", "");
  WriteText(dir.path() / "a.cdxj.run0", "");  // a sort's run (SortCdxjFile) is no index
  WriteText(dir.path() / "x.warc.gz", "");
  std::filesystem::create_directories(dir.path() / "state.cdxj");
  auto found = ListCdxjFiles(dir.path());
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_EQ(found->size(), 2u);
  EXPECT_EQ((*found)[0].filename(), "a.cdxj");
  EXPECT_EQ((*found)[1].filename(), "b.cdxj");
  auto one = ListCdxjFiles(dir.path() / "b.cdxj");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 1u);
}

TEST(CheckCdxjSorted, NamesTheFirstLineOutOfOrder) {
  TempDir dir;
  std::filesystem::path p = dir.path() / "x.cdxj";
  WriteText(p, "a 1 {}\n\nb 1 {}\nb 1 {}\na 2 {}\nc 1 {}\n");
  Status s = CheckCdxjSorted(p);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find(p.string() + ":5: not sorted"), std::string::npos) << s.message();
  WriteText(p, "a 1 {}\nb 1 {}\n");
  EXPECT_TRUE(CheckCdxjSorted(p).ok());
  EXPECT_EQ(CheckCdxjSorted(dir.path() / "none.cdxj").code(), Status::Code::kIOError);
}

TEST(MergeCdxjFiles, KWayMergeEqualsSortOfAll) {
  TempDir dir;
  std::mt19937 rng(7);
  std::vector<std::string> all;
  std::vector<std::filesystem::path> inputs;
  for (int f = 0; f < 5; ++f) {
    std::vector<std::string> lines;
    for (int i = 0; i < 40 + f; ++i) {
      lines.push_back("com,host" + std::to_string(rng() % 9) + ")/p" + std::to_string(rng() % 50) +
                      " 2026112603200" + std::to_string(rng() % 10) +
                      " {\"f\":" + std::to_string(f) + "}");
    }
    lines.push_back(lines.front());  // an equal line within one file
    std::sort(lines.begin(), lines.end());
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    inputs.push_back(dir.path() / ("in" + std::to_string(f) + ".cdxj"));
    WriteText(inputs.back(), text);
    all.insert(all.end(), lines.begin(), lines.end());
  }
  inputs.push_back(dir.path() / "empty.cdxj");
  WriteText(inputs.back(), "");
  std::sort(all.begin(), all.end());
  std::vector<std::string> merged;
  Status s = MergeCdxjFiles(inputs, [&](std::string_view l) {
    merged.emplace_back(l);
    return Status::Ok();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(merged, all);
  std::string text;
  for (const auto& l : merged) text += l + "\n";
  WriteText(dir.path() / "merged.cdxj", text);
  EXPECT_EQ(SortCheck(dir.path() / "merged.cdxj"), 0);
}

TEST(MergeCdxjFiles, UnsortedInputAndSinkErrorsStopIt) {
  TempDir dir;
  std::filesystem::path good = dir.path() / "good.cdxj";
  std::filesystem::path bad = dir.path() / "bad.cdxj";
  WriteText(good, "a 1 {}\nc 1 {}\n");
  WriteText(bad, "b 1 {}\nd 1 {}\nb 2 {}\n");
  auto ignore = [](std::string_view) { return Status::Ok(); };
  Status s = MergeCdxjFiles({good, bad}, ignore);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(bad.string() + ":3: not sorted"), std::string::npos) << s.message();
  int calls = 0;
  s = MergeCdxjFiles({good}, [&](std::string_view) {
    ++calls;
    return Status::IOError("disk full");
  });
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(MergeCdxjFiles({dir.path() / "none.cdxj"}, ignore).code(), Status::Code::kIOError);
}

}  // namespace
}  // namespace harvest::store
