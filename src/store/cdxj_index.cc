// The sorted CDXJ index: sorting one file (when its WARC is closed, after recovery),
// checking the order, and the k-way merge behind `harvest warc index`.
#include <algorithm>
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

Status SortCdxjFile(const std::filesystem::path& cdxj, bool sync) {
  std::error_code ec;
  if (!std::filesystem::exists(cdxj, ec)) {
    return Status::NotFound(cdxj.string() + ": no such file");
  }
  // Read at its size (no doubling growth), sorted as views into it, written back through a
  // bounded buffer: about the file's size in memory, once (docs/warc.md, "CDXJ").
  const uintmax_t size = std::filesystem::file_size(cdxj, ec);
  if (ec) return Status::IOError(cdxj.string() + ": " + ec.message());
  std::ifstream in(cdxj, std::ios::binary);
  if (!in) return Status::IOError(cdxj.string() + ": cannot open");
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad() || static_cast<uintmax_t>(in.gcount()) != size) {
    return Status::IOError(cdxj.string() + ": read failed");
  }
  if (internal::LinesSorted(text) && (text.empty() || text.back() == '\n')) return Status::Ok();
  return internal::ReplaceFileWithLines(cdxj, internal::SortedLineViews(text), sync,
                                        /*newlines=*/true);
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
