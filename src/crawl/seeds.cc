#include <fstream>
#include <sstream>

#include "crawl/crawl.h"
#include "url/url.h"

namespace harvest::crawl {

Result<std::vector<std::string>> ParseSeeds(std::string_view text, std::string_view source) {
  std::vector<std::string> seeds;
  std::string errors;
  int bad = 0;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.remove_suffix(1);
    }
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || line.front() == '#') continue;
    std::optional<url::Url> u = url::Parse(line);
    std::string why;
    if (!u) {
      why = "not a valid URL";
    } else if (u->scheme() != "http" && u->scheme() != "https") {
      why = "scheme '" + std::string(u->scheme()) + "' is not http or https";
    } else if (u->host().empty()) {
      why = "no host";
    }
    if (!why.empty()) {
      if (++bad <= 20) {
        errors += std::string(source) + ":" + std::to_string(line_no) + ": " + why + ": " +
                  std::string(line.substr(0, 200)) + "\n";
      }
      continue;
    }
    seeds.emplace_back(line);
  }
  if (bad > 0) {
    if (bad > 20) errors += "... and " + std::to_string(bad - 20) + " more bad lines\n";
    errors.pop_back();
    return Status::InvalidArgument(errors);
  }
  if (seeds.empty()) return Status::InvalidArgument(std::string(source) + ": no seed URLs");
  return seeds;
}

std::filesystem::path DefaultOutDir(std::string_view seed) {
  std::optional<url::Url> u = url::Parse(seed);
  if (!u || u->host().empty()) return "crawl";
  std::string name(u->host());
  if (u->port() >= 0) name += "_" + std::to_string(u->port());
  for (char& c : name) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-';
    if (!keep) c = '_';
  }
  return name;
}

Result<std::vector<std::string>> ReadSeedsFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read seed file " + path.string());
  std::stringstream buf;
  buf << in.rdbuf();
  return ParseSeeds(buf.str(), path.string());
}

}  // namespace harvest::crawl
