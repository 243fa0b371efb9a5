// RepairWarcTail: cut a torn record off the end of a WARC after a crash.
#include <fstream>

#include "store/internal.h"
#include "store/store.h"

namespace harvest::store {
namespace {

// A torn tail is at most one group of records (one write); more than this many bytes
// after the last good record suggests mid-file corruption rather than a torn append.
constexpr uint64_t kMaxTornTailBytes = 64ull << 20;

Status FilterCdxj(const std::filesystem::path& cdxj, uint64_t end) {
  std::error_code ec;
  if (!std::filesystem::exists(cdxj, ec)) return Status::Ok();
  std::ifstream in(cdxj);
  std::string line;
  std::string kept;
  while (std::getline(in, line)) {
    Result<internal::CdxjEntry> e = internal::ParseCdxjLine(line);
    if (e.ok() && e->offset + e->length > end) continue;
    kept += line;
    kept += '\n';
  }
  in.close();
  std::filesystem::path tmp = cdxj;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << kept;
    if (!out.flush()) return Status::IOError(tmp.string() + ": write failed");
  }
  std::filesystem::rename(tmp, cdxj, ec);
  if (ec) return Status::IOError(cdxj.string() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

Result<uint64_t> RepairWarcTail(const std::filesystem::path& file, bool force) {
  Result<std::unique_ptr<WarcReader>> reader = WarcReader::Open(file);
  if (!reader.ok()) return reader.status();
  uint64_t good_end = 0;
  Status error;
  while (true) {
    Result<std::optional<WarcRecord>> r = (*reader)->Next();
    if (!r.ok()) {
      error = r.status();
      break;
    }
    if (!r->has_value()) break;
    good_end = (*r)->offset + (*r)->length;
  }
  std::error_code ec;
  uint64_t size = std::filesystem::file_size(file, ec);
  if (ec) return Status::IOError(file.string() + ": " + ec.message());
  if (error.ok()) return uint64_t{0};  // intact (at most line ends after the last record)
  if (error.code() != Status::Code::kCorruption) return error;
  if (!force && size - good_end > kMaxTornTailBytes) return error;
  std::filesystem::resize_file(file, good_end, ec);
  if (ec) return Status::IOError(file.string() + ": truncate: " + ec.message());
  std::string name = file.filename().string();
  size_t cut = name.size() >= 8 && name.ends_with(".warc.gz") ? 8 : (name.ends_with(".warc") ? 5 : 0);
  if (cut > 0) {
    Status s = FilterCdxj(file.parent_path() / (name.substr(0, name.size() - cut) + ".cdxj"),
                          good_end);
    if (!s.ok()) return s;
  }
  return size - good_end;
}

}  // namespace harvest::store
