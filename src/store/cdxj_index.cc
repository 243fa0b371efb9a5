// The sorted CDXJ index: sorting one file (when its WARC is closed, after recovery),
// checking the order, and the k-way merge behind `harvest warc index`.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <queue>
#include <system_error>

#include "store/internal.h"
#include "store/store.h"

namespace harvest::store {
namespace {

// Splits `text` into lines (without their '\n'); a last line without '\n' counts too.
std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    lines.push_back(text.substr(0, eol));
    if (eol == std::string_view::npos) break;
    text.remove_prefix(eol + 1);
  }
  return lines;
}

Status NotSorted(const std::filesystem::path& file, uint64_t line) {
  return Status::InvalidArgument(file.string() + ":" + std::to_string(line) +
                                 ": not sorted: the line sorts before the line above it (CDXJ "
                                 "must be in `LC_ALL=C sort` order; sort the file with "
                                 "`LC_ALL=C sort -o FILE FILE`)");
}

// Reads the lines of one input one at a time, checking their order.
class LineSource {
 public:
  explicit LineSource(std::filesystem::path path) : path_(std::move(path)) {}

  Status Open() {
    in_.open(path_, std::ios::binary);
    if (!in_) return Status::IOError(path_.string() + ": cannot open");
    return Status::Ok();
  }

  // Advances to the next non-empty line; false at the end (or on an error: see status()).
  bool Next() {
    std::string line;
    while (std::getline(in_, line)) {
      ++line_no_;
      if (line.empty()) continue;
      if (has_line_ && line < line_) {
        status_ = NotSorted(path_, line_no_);
        return false;
      }
      line_ = std::move(line);
      has_line_ = true;
      return true;
    }
    if (in_.bad()) status_ = Status::IOError(path_.string() + ": read failed");
    return false;
  }

  const std::string& line() const { return line_; }
  const Status& status() const { return status_; }

 private:
  std::filesystem::path path_;
  std::ifstream in_;
  std::string line_;
  bool has_line_ = false;
  uint64_t line_no_ = 0;
  Status status_;
};

// Reads a file in pieces of whole lines of about `budget` bytes: each piece ends with a
// '\n' (the last one may end at the end of the file without one). A line longer than the
// budget makes a piece of its own, as long as the line.
class LinePieces {
 public:
  LinePieces(std::filesystem::path path, size_t budget)
      : path_(std::move(path)), budget_(std::max<size_t>(budget, 1)) {}
  ~LinePieces() {
    if (fd_ >= 0) ::close(fd_);
  }
  LinePieces(const LinePieces&) = delete;
  LinePieces& operator=(const LinePieces&) = delete;

  Status Open() {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return Status::IOError(path_.string() + ": open: " + internal::ErrnoText(errno));
    buf_.resize(budget_);
    return Status::Ok();
  }

  // Sets `*piece` to the next piece (valid until the next call); false at the end.
  Result<bool> Next(std::string_view* piece) {
    // Keep the unfinished line after the previous piece.
    std::memmove(buf_.data(), buf_.data() + start_, end_ - start_);
    end_ -= start_;
    start_ = 0;
    if (buf_.size() > budget_ && end_ <= budget_) {  // back to the budget after a long line
      buf_.resize(budget_);
      buf_.shrink_to_fit();
    }
    for (;;) {
      while (!eof_ && end_ < buf_.size()) {
        ssize_t n = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
        if (n < 0) {
          if (errno == EINTR) continue;
          return Status::IOError(path_.string() + ": read: " + internal::ErrnoText(errno));
        }
        if (n == 0) eof_ = true;
        end_ += static_cast<size_t>(n);
      }
      std::string_view data(buf_.data(), end_);
      size_t nl = data.rfind('\n');
      if (nl != std::string_view::npos) {
        *piece = data.substr(0, nl + 1);
        start_ = nl + 1;
        return true;
      }
      if (eof_) {
        if (end_ == 0) return false;
        *piece = data;
        start_ = end_;
        return true;
      }
      buf_.resize(buf_.size() * 2);  // one line fills the budget: read on to its end
    }
  }

 private:
  std::filesystem::path path_;
  size_t budget_;
  int fd_ = -1;
  std::string buf_;
  size_t start_ = 0;  // [start_, end_) of buf_ is read but not yet returned
  size_t end_ = 0;
  bool eof_ = false;
};

// Whether `cdxj` is already as SortCdxjFile leaves it (internal::LinesSorted, ending in
// '\n'), read in pieces of about `budget` bytes; stops at the first line out of order.
Result<bool> SortedOnDisk(const std::filesystem::path& cdxj, size_t budget) {
  LinePieces in(cdxj, budget);
  Status s = in.Open();
  if (!s.ok()) return s;
  std::string last;  // the last line of the previous piece
  std::string_view piece;
  for (;;) {
    Result<bool> more = in.Next(&piece);
    if (!more.ok()) return more.status();
    if (!*more) return true;
    if (piece.back() != '\n') return false;
    if (piece.substr(0, piece.find('\n')) < last || !internal::LinesSorted(piece)) return false;
    std::string_view body = piece.substr(0, piece.size() - 1);
    size_t prev_nl = body.rfind('\n');
    last.assign(prev_nl == std::string_view::npos ? body : body.substr(prev_nl + 1));
  }
}

std::filesystem::path RunPath(const std::filesystem::path& cdxj, size_t n) {
  std::filesystem::path p = cdxj;
  p += ".run" + std::to_string(n);
  return p;
}

// The run files of one sort; removed when it ends, also on an error.
class RunFiles {
 public:
  explicit RunFiles(std::filesystem::path cdxj) : cdxj_(std::move(cdxj)) {}
  ~RunFiles() {
    std::error_code ec;
    for (const auto& p : made_) std::filesystem::remove(p, ec);
  }
  RunFiles(const RunFiles&) = delete;
  RunFiles& operator=(const RunFiles&) = delete;
  std::filesystem::path New() {
    made_.push_back(RunPath(cdxj_, made_.size()));
    return made_.back();
  }

 private:
  std::filesystem::path cdxj_;
  std::vector<std::filesystem::path> made_;
};

Status AppendLine(internal::BufferedFileWriter* out, std::string_view line) {
  Status s = out->Append(line);
  return s.ok() ? out->Append("\n") : s;
}

// Merges the sorted run files `inputs` into `out`.
Status MergeRuns(const std::vector<std::filesystem::path>& inputs,
                 internal::BufferedFileWriter* out) {
  return MergeCdxjFiles(inputs, [out](std::string_view line) { return AppendLine(out, line); });
}

// Writes the sorted `lines` (views, without their '\n') as a new run of `files`; empty
// lines are counted in `*empty_lines`, not written (they sort first).
Status WriteRun(const std::vector<std::string_view>& lines, RunFiles* files,
                std::vector<std::filesystem::path>* runs, uint64_t* empty_lines) {
  internal::BufferedFileWriter out(files->New());
  Status s = out.Open();
  for (std::string_view line : lines) {
    if (!s.ok()) break;
    if (line.empty()) {
      ++*empty_lines;
    } else {
      s = AppendLine(&out, line);
    }
  }
  Status closed = out.Close(/*sync=*/false);  // a run outlives no crash: never synced
  if (!s.ok()) return s;
  if (!closed.ok()) return closed;
  runs->push_back(out.path());
  return Status::Ok();
}

// Replaces `cdxj` by `empty_lines` empty lines and the merge of the sorted `runs`, merged
// in rounds of at most kCdxjSortMaxFanIn runs, the last round into the file's replacement.
Status MergeRunsInto(const std::filesystem::path& cdxj, bool sync, RunFiles* files,
                     std::vector<std::filesystem::path> runs, uint64_t empty_lines) {
  while (runs.size() > internal::kCdxjSortMaxFanIn) {
    std::vector<std::filesystem::path> merged;
    for (size_t i = 0; i < runs.size(); i += internal::kCdxjSortMaxFanIn) {
      std::vector<std::filesystem::path> group(
          runs.begin() + static_cast<ptrdiff_t>(i),
          runs.begin() +
              static_cast<ptrdiff_t>(std::min(runs.size(), i + internal::kCdxjSortMaxFanIn)));
      if (group.size() == 1) {
        merged.push_back(group[0]);
        continue;
      }
      internal::BufferedFileWriter out(files->New());
      Status s = out.Open();
      if (s.ok()) s = MergeRuns(group, &out);
      Status closed = out.Close(/*sync=*/false);
      if (!s.ok()) return s;
      if (!closed.ok()) return closed;
      std::error_code ec;
      for (const auto& p : group) std::filesystem::remove(p, ec);
      merged.push_back(out.path());
    }
    runs = std::move(merged);
  }
  return internal::ReplaceFileFrom(cdxj, sync, [&](internal::BufferedFileWriter* out) {
    for (uint64_t i = 0; i < empty_lines; ++i) {
      Status s = out->Append("\n");
      if (!s.ok()) return s;
    }
    return MergeRuns(runs, out);
  });
}

// The external merge sort: sorted runs of about `run_bytes` (their empty lines counted,
// not written: they sort first), then merged (MergeRunsInto).
Status SortInRuns(const std::filesystem::path& cdxj, bool sync, size_t run_bytes) {
  internal::RemoveCdxjSortRuns(cdxj);  // of an earlier sort cut short by a crash
  RunFiles files(cdxj);
  std::vector<std::filesystem::path> runs;
  uint64_t empty_lines = 0;
  {
    LinePieces in(cdxj, run_bytes);
    Status s = in.Open();
    if (!s.ok()) return s;
    std::string_view piece;
    for (;;) {
      Result<bool> more = in.Next(&piece);
      if (!more.ok()) return more.status();
      if (!*more) break;
      s = WriteRun(internal::SortedLineViews(piece), &files, &runs, &empty_lines);
      if (!s.ok()) return s;
    }
  }
  return MergeRunsInto(cdxj, sync, &files, std::move(runs), empty_lines);
}

}  // namespace

namespace internal {

std::vector<std::string_view> SortedLineViews(std::string_view text) {
  std::vector<std::string_view> lines = SplitLines(text);
  // std::string_view compares like memcmp (char_traits<char>::lt is unsigned), which is the
  // byte order of `LC_ALL=C sort`; a prefix sorts first, as there.
  std::sort(lines.begin(), lines.end());
  return lines;
}

std::string SortedLines(std::string_view text) {
  const std::vector<std::string_view> lines = SortedLineViews(text);
  std::string out;
  out.reserve(text.size() + 1);
  for (std::string_view l : lines) {
    out += l;
    out += '\n';
  }
  return out;
}

bool LinesSorted(std::string_view text, uint64_t* bad_line) {
  std::vector<std::string_view> lines = SplitLines(text);
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i] < lines[i - 1]) {
      if (bad_line != nullptr) *bad_line = i + 1;
      return false;
    }
  }
  return true;
}

}  // namespace internal

namespace internal {

void RemoveCdxjSortRuns(const std::filesystem::path& cdxj) {
  const std::string prefix = cdxj.filename().string() + ".run";
  const std::filesystem::path dir =
      cdxj.parent_path().empty() ? std::filesystem::path(".") : cdxj.parent_path();
  std::error_code ec;
  std::vector<std::filesystem::path> stale;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > prefix.size() && name.starts_with(prefix) &&
        std::all_of(name.begin() + static_cast<ptrdiff_t>(prefix.size()), name.end(),
                    [](char c) { return c >= '0' && c <= '9'; })) {
      stale.push_back(e.path());
    }
  }
  for (const auto& p : stale) std::filesystem::remove(p, ec);
}

Status SortCdxjFileWithBudget(const std::filesystem::path& cdxj, bool sync, size_t run_bytes) {
  std::error_code ec;
  if (!std::filesystem::exists(cdxj, ec)) {
    return Status::NotFound(cdxj.string() + ": no such file");
  }
  const uintmax_t size = std::filesystem::file_size(cdxj, ec);
  if (ec) return Status::IOError(cdxj.string() + ": " + ec.message());
  if (size > run_bytes) {
    // Bounded memory (docs/warc.md, "CDXJ"): a piece of about `run_bytes` at a time, and
    // in the merge one line per run.
    Result<bool> sorted = SortedOnDisk(cdxj, run_bytes);
    if (!sorted.ok()) return sorted.status();
    if (*sorted) return Status::Ok();
    return SortInRuns(cdxj, sync, run_bytes);
  }
  // Small: read at its size (no doubling growth), sorted as views into it, written back
  // through a bounded buffer.
  std::ifstream in(cdxj, std::ios::binary);
  if (!in) return Status::IOError(cdxj.string() + ": cannot open");
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad() || static_cast<uintmax_t>(in.gcount()) != size) {
    return Status::IOError(cdxj.string() + ": read failed");
  }
  if (LinesSorted(text) && (text.empty() || text.back() == '\n')) return Status::Ok();
  return ReplaceFileWithLines(cdxj, SortedLineViews(text), sync, /*newlines=*/true);
}

// The run files of a CdxjSorter (RunFiles is private to this file).
struct CdxjSorter::Runs {
  explicit Runs(const std::filesystem::path& cdxj) : files(cdxj) {}
  RunFiles files;
  std::vector<std::filesystem::path> paths;
};

CdxjSorter::CdxjSorter(std::filesystem::path cdxj, size_t budget)
    : cdxj_(std::move(cdxj)), budget_(std::max<size_t>(budget, 1)) {}

CdxjSorter::~CdxjSorter() = default;

Status CdxjSorter::Add(std::string_view lines) {
  lines_ += lines;
  if (lines_.size() < budget_) return Status::Ok();
  return Spill();
}

Status CdxjSorter::Spill() {
  if (runs_ == nullptr) {
    RemoveCdxjSortRuns(cdxj_);  // of an earlier sort of this name cut short by a crash
    runs_ = std::make_unique<Runs>(cdxj_);
  }
  Status s = WriteRun(SortedLineViews(lines_), &runs_->files, &runs_->paths, &empty_lines_);
  lines_.clear();  // keeps its capacity: the budget, for the next run
  return s;
}

Status CdxjSorter::Finish(bool sync) {
  if (runs_ == nullptr) {
    return ReplaceFileWithLines(cdxj_, SortedLineViews(lines_), sync, /*newlines=*/true);
  }
  if (!lines_.empty()) {
    if (Status s = Spill(); !s.ok()) return s;
  }
  Status s = MergeRunsInto(cdxj_, sync, &runs_->files, runs_->paths, empty_lines_);
  runs_.reset();  // removes the runs
  return s;
}

}  // namespace internal

Status SortCdxjFile(const std::filesystem::path& cdxj, bool sync) {
  return internal::SortCdxjFileWithBudget(cdxj, sync, internal::kCdxjSortRunBytes);
}

Result<std::vector<std::filesystem::path>> ListCdxjFiles(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return std::vector<std::filesystem::path>{path};
  if (!std::filesystem::is_directory(path, ec)) {
    return Status::NotFound(path.string() + ": no such file or directory");
  }
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
    if (e.is_regular_file(ec) && e.path().filename().string().ends_with(".cdxj")) {
      out.push_back(e.path());
    }
  }
  if (ec) return Status::IOError(path.string() + ": " + ec.message());
  if (out.empty()) {
    return Status::NotFound(path.string() +
                            ": no CDXJ files (*.cdxj) in it: is it a crawl's --out directory?");
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status CheckCdxjSorted(const std::filesystem::path& cdxj) {
  LineSource src(cdxj);
  Status s = src.Open();
  if (!s.ok()) return s;
  while (src.Next()) {
  }
  return src.status();
}

Status MergeCdxjFiles(const std::vector<std::filesystem::path>& inputs,
                      const std::function<Status(std::string_view line)>& emit) {
  std::vector<std::unique_ptr<LineSource>> sources;
  sources.reserve(inputs.size());
  // Min-heap of input indexes by their current line; ties go to the earlier input, so the
  // output is deterministic.
  auto greater = [&sources](size_t a, size_t b) {
    const std::string& la = sources[a]->line();
    const std::string& lb = sources[b]->line();
    return la != lb ? la > lb : a > b;
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(greater)> heap(greater);
  for (const std::filesystem::path& p : inputs) {
    sources.push_back(std::make_unique<LineSource>(p));
    Status s = sources.back()->Open();
    if (!s.ok()) return s;
    if (sources.back()->Next()) {
      heap.push(sources.size() - 1);
    } else if (!sources.back()->status().ok()) {
      return sources.back()->status();
    }
  }
  while (!heap.empty()) {
    size_t i = heap.top();
    heap.pop();
    Status s = emit(sources[i]->line());
    if (!s.ok()) return s;
    if (sources[i]->Next()) {
      heap.push(i);
    } else if (!sources[i]->status().ok()) {
      return sources[i]->status();
    }
  }
  return Status::Ok();
}

}  // namespace harvest::store
