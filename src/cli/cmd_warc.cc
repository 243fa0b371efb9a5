// `harvest warc`: inspect the WARC files Harvest wrote (ls, get, cat, repair) and merge their
// CDXJ indexes into one (index). See docs/warc.md.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "extract/extract.h"
#include "store/store.h"

namespace harvest::cli {
namespace {

// `warc get --decode` refuses larger decoded payloads (a decompression bomb guard).
constexpr size_t kMaxDecodedBytes = size_t{1} << 30;

struct WarcOpts {
  std::string path;
  std::string url;
  std::string location;
  bool headers = false;
  bool decode = false;
  bool force = false;
  std::string out;
};

void Write(std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); }

int Fail(const std::string& cmd, const std::string& msg) {
  std::fprintf(stderr, "harvest warc %s: %s\n", cmd.c_str(), msg.c_str());
  return kExitFailure;
}

std::vector<std::filesystem::path> WarcFiles(const std::filesystem::path& p) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  if (std::filesystem::is_regular_file(p, ec)) return {p};
  for (const auto& e : std::filesystem::directory_iterator(p, ec)) {
    std::string n = e.path().filename().string();
    if (n.ends_with(".warc.gz") || n.ends_with(".warc")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

int RunLs(const WarcOpts& o) {
  std::error_code ec;
  if (!std::filesystem::exists(o.path, ec))
    return Fail("ls", o.path + ": no such file or directory");
  int rc = kExitOk;
  for (const auto& file : WarcFiles(o.path)) {
    auto reader = store::WarcReader::Open(file);
    if (!reader.ok()) {
      rc = Fail("ls", reader.status().message());
      continue;
    }
    while (true) {
      auto rec = (*reader)->Next();
      if (!rec.ok()) {
        rc = Fail("ls", rec.status().message());
        break;
      }
      if (!rec->has_value()) break;
      const store::WarcRecord& r = **rec;
      std::string status = "-";
      if (r.type == "response" || r.type == "revisit") {
        auto http = store::ParseHttpResponse(r.block);
        if (http.ok()) status = std::to_string(http->status);
      }
      std::string digest = r.header("WARC-Payload-Digest");
      std::printf("%s\t%llu\t%s\t%s\t%s\t%s\n", file.filename().c_str(),
                  static_cast<unsigned long long>(r.offset), r.type.c_str(),
                  r.target_uri.empty() ? "-" : r.target_uri.c_str(), status.c_str(),
                  digest.empty() ? "-" : digest.c_str());
    }
  }
  return rc;
}

int RunGet(const WarcOpts& o) {
  auto page = store::GetLatestCapture(o.path, o.url);
  if (!page.ok()) return Fail("get", page.status().message());
  std::string body = page->http.body;
  if (o.decode) {
    // The encoding applies to the stored payload, i.e. the original response's head.
    std::string enc = page->http.header("Content-Encoding");
    if (page->original) {
      auto orig = store::ParseHttpResponse(page->original->block);
      if (orig.ok()) enc = orig->header("Content-Encoding");
    }
    extract::DecodeResult decoded = extract::DecodeContent(enc, body, kMaxDecodedBytes);
    if (!decoded.ok) return Fail("get", o.url + ": cannot decode payload: " + decoded.error);
    body = std::move(decoded.body);
  }
  if (o.headers) {
    const std::string& block = page->record.block;
    size_t end = block.find("\r\n\r\n");
    Write(end == std::string::npos ? block : std::string_view(block).substr(0, end + 4));
  }
  Write(body);
  return kExitOk;
}

int RunCat(const WarcOpts& o) {
  size_t colon = o.location.rfind(':');
  if (colon == std::string::npos || colon + 1 == o.location.size()) {
    return UsageError("warc cat", "expected FILE:OFFSET, got '" + o.location + "'");
  }
  std::string file = o.location.substr(0, colon);
  uint64_t offset = 0;
  for (char c : o.location.substr(colon + 1)) {
    if (c < '0' || c > '9' || offset > (UINT64_MAX - 9) / 10) {
      return UsageError("warc cat", "bad offset in '" + o.location + "'");
    }
    offset = offset * 10 + static_cast<uint64_t>(c - '0');
  }
  auto rec = store::ReadRecordAt(file, offset);
  if (!rec.ok()) return Fail("cat", rec.status().message());
  std::string out = rec->version + "\r\n";
  for (const auto& [k, v] : rec->headers) out += k + ": " + v + "\r\n";
  out += "\r\n";
  Write(out);
  Write(rec->block);
  Write("\r\n\r\n");
  return kExitOk;
}

// Crash recovery of each WARC (RecoverWarc): cut a torn tail, index the complete records
// that have no CDXJ line. One line per file: bytes cut and CDXJ lines added.
int RunRepair(const WarcOpts& o) {
  std::error_code ec;
  if (!std::filesystem::exists(o.path, ec)) {
    return Fail("repair", o.path + ": no such file or directory");
  }
  store::RecoverOptions options;
  options.force = o.force;
  int rc = kExitOk;
  for (const auto& file : WarcFiles(o.path)) {
    auto report = store::RecoverWarc(file, options);
    if (!report.ok()) {
      rc = Fail("repair", report.status().message());
      continue;
    }
    std::printf("%s: cut %llu bytes of torn tail, added %llu CDXJ lines\n", file.c_str(),
                static_cast<unsigned long long>(report->bytes_cut),
                static_cast<unsigned long long>(report->cdxj_lines_added));
  }
  return rc;
}

// Merges the sorted CDXJ files of a crawl into one sorted index (store::MergeCdxjFiles), on
// stdout or atomically into --out. Every input is checked first, so an unsorted one stops
// the command before anything is written.
int RunIndex(const WarcOpts& o) {
  auto files = store::ListCdxjFiles(o.path);
  if (!files.ok()) return Fail("index", files.status().message());
  if (!o.out.empty()) {
    // An earlier index written into the crawl directory is not an input.
    std::erase_if(*files, [&o](const std::filesystem::path& f) {
      std::error_code ec;
      return std::filesystem::equivalent(f, o.out, ec);
    });
    if (files->empty()) return Fail("index", o.path + ": no CDXJ files besides --out");
  }
  for (const auto& f : *files) {
    Status s = store::CheckCdxjSorted(f);
    if (!s.ok()) return Fail("index", s.message());
  }
  std::string tmp = o.out.empty() ? "" : o.out + ".tmp";
  std::FILE* out = o.out.empty() ? stdout : std::fopen(tmp.c_str(), "wb");
  if (out == nullptr) return Fail("index", tmp + ": " + std::strerror(errno));
  uint64_t lines = 0;
  Status s = store::MergeCdxjFiles(*files, [&](std::string_view line) {
    if (std::fwrite(line.data(), 1, line.size(), out) != line.size() ||
        std::fputc('\n', out) == EOF) {
      return Status::IOError((o.out.empty() ? std::string("stdout") : tmp) +
                             ": write failed: " + std::strerror(errno));
    }
    ++lines;
    return Status::Ok();
  });
  if (o.out.empty()) {
    if (s.ok() && std::fflush(stdout) != 0) s = Status::IOError("stdout: write failed");
    return s.ok() ? kExitOk : Fail("index", s.message());
  }
  if (s.ok() && (std::fflush(out) != 0 || ::fsync(fileno(out)) != 0)) {
    s = Status::IOError(tmp + ": " + std::strerror(errno));
  }
  if (std::fclose(out) != 0 && s.ok()) s = Status::IOError(tmp + ": " + std::strerror(errno));
  if (s.ok() && std::rename(tmp.c_str(), o.out.c_str()) != 0) {
    s = Status::IOError(o.out + ": rename: " + std::strerror(errno));
  }
  if (!s.ok()) {
    std::remove(tmp.c_str());
    return Fail("index", s.message());
  }
  std::printf("%s: %llu lines from %zu CDXJ files\n", o.out.c_str(),
              static_cast<unsigned long long>(lines), files->size());
  return kExitOk;
}

CommandRegistration reg(
    "warc", "Inspect WARC files: list records, get a page, print a record, repair, index",
    [](CLI::App* app) -> CommandRunner {
      auto o = std::make_shared<WarcOpts>();
      app->require_subcommand(1);
      auto ls =
          app->add_subcommand("ls", "One line per record: file, offset, type, URI, status, digest");
      ls->add_option("DIR", o->path, "Output directory (or one WARC file)")->required();
      auto get =
          app->add_subcommand("get", "Print the newest stored payload of URL (follows revisits)");
      get->add_option("DIR", o->path, "Output directory (or one WARC file)")->required();
      get->add_option("URL", o->url, "The URL as crawled")->required();
      get->add_flag("--headers", o->headers, "Print the HTTP response head before the payload");
      get->add_flag("--decode", o->decode, "Undo Content-Encoding gzip/deflate");
      auto cat =
          app->add_subcommand("cat", "Print the record at FILE:OFFSET (WARC headers + block)");
      cat->add_option("LOCATION", o->location, "FILE:OFFSET, e.g. out/x.warc.gz:1234")->required();
      auto repair = app->add_subcommand("repair",
                                        "Crash recovery: cut a torn record off the end of each "
                                        "WARC and index its unindexed records");
      repair->add_option("DIR", o->path, "Output directory (or one WARC file)")->required();
      repair->add_flag("--force", o->force, "Also cut after corruption far from the end");
      auto index = app->add_subcommand(
          "index",
          "Merge the crawl's sorted CDXJ files into one sorted index (for pywb, OutbackCDX)");
      index->add_option("DIR", o->path, "Output directory (or one CDXJ file)")->required();
      index->add_option("--out", o->out, "Write the index to FILE (atomically) instead of stdout");
      return [o, ls, get, cat, repair, index]() -> int {
        if (ls->parsed()) return RunLs(*o);
        if (repair->parsed()) return RunRepair(*o);
        if (get->parsed()) return RunGet(*o);
        if (cat->parsed()) return RunCat(*o);
        if (index->parsed()) return RunIndex(*o);
        return UsageError("warc", "expected a subcommand: ls, get, cat, repair or index");
      };
    });

}  // namespace
}  // namespace harvest::cli
