// ParseRestartTimes: the restart-times file of `harvest audit --restarts` (audit.h).
#include <charconv>
#include <istream>
#include <string>
#include <string_view>

#include "audit/audit.h"
#include "base/ascii.h"

namespace harvest::audit {
namespace {

// A line longer than this is not a time; quoting it whole would flood the error message.
constexpr size_t kMaxQuoted = 40;

std::string Quote(std::string_view s) {
  if (s.size() <= kMaxQuoted) return "'" + std::string(s) + "'";
  return "'" + std::string(s.substr(0, kMaxQuoted)) + "...'";
}

}  // namespace

Result<std::vector<int64_t>> ParseRestartTimes(std::istream& in, std::string_view source) {
  std::vector<int64_t> out;
  std::string line;
  int64_t number = 0;
  auto where = [&] {
    return source.empty() ? "line " + std::to_string(number)
                          : std::string(source) + ":" + std::to_string(number);
  };
  while (std::getline(in, line)) {
    ++number;
    std::string_view text(line);
    if (size_t hash = text.find('#'); hash != std::string_view::npos) text = text.substr(0, hash);
    text = TrimCSpace(text);  // a getline() line: no '\n' in it
    if (text.empty()) continue;
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range)
      return Status::InvalidArgument(where() + ": " + Quote(text) +
                                     " is out of range for a microsecond time");
    if (ec != std::errc() || end != text.data() + text.size())
      return Status::InvalidArgument(where() + ": " + Quote(text) +
                                     " is not an integer microsecond time");
    out.push_back(value);
  }
  if (in.bad()) return Status::IOError("reading restart times failed after " + where());
  return out;
}

}  // namespace harvest::audit
