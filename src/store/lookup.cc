// Finding captures of a URL in an output directory: CDXJ first, WARC scan as fallback.
#include <algorithm>
#include <fstream>

#include "store/internal.h"
#include "store/store.h"

namespace harvest::store {
namespace {

bool IsWarc(const std::filesystem::path& p) {
  std::string n = p.filename().string();
  return n.ends_with(".warc.gz") || n.ends_with(".warc");
}

std::filesystem::path CdxjFor(const std::filesystem::path& warc) {
  std::string n = warc.filename().string();
  n = n.substr(0, n.size() - (n.ends_with(".warc.gz") ? 8 : 5));
  return warc.parent_path() / (n + ".cdxj");
}

bool Matches(std::string_view candidate, std::string_view url, const std::string& surt) {
  return candidate == url || SurtKey(candidate) == surt;
}

Status FromCdxj(const std::filesystem::path& warc, const std::filesystem::path& cdxj,
                std::string_view url, const std::string& surt, std::vector<CaptureRef>* out) {
  std::ifstream in(cdxj);
  if (!in) return Status::IOError(cdxj.string() + ": cannot open");
  std::string line;
  while (std::getline(in, line)) {
    Result<internal::CdxjEntry> e = internal::ParseCdxjLine(line);
    // Near-duplicate notes hold no page (docs/warc.md "Near-duplicates").
    if (!e.ok() || e->mime == "warc/metadata" || !Matches(e->url, url, surt)) continue;
    out->push_back({warc.parent_path() / e->filename, e->offset, e->timestamp, e->url,
                    e->mime == "warc/revisit", e->digest});
  }
  return Status::Ok();
}

Status FromScan(const std::filesystem::path& warc, std::string_view url, const std::string& surt,
                std::vector<CaptureRef>* out) {
  Result<std::unique_ptr<WarcReader>> reader = WarcReader::Open(warc);
  if (!reader.ok()) return reader.status();
  while (true) {
    Result<std::optional<WarcRecord>> r = (*reader)->Next();
    if (!r.ok()) return r.status();
    if (!r->has_value()) return Status::Ok();
    const WarcRecord& rec = **r;
    if (rec.type != "response" && rec.type != "revisit") continue;
    if (!Matches(rec.target_uri, url, surt)) continue;
    out->push_back({warc, rec.offset, internal::Timestamp14FromWarcDate(rec.date), rec.target_uri,
                    rec.type == "revisit", rec.header("WARC-Payload-Digest")});
  }
}

}  // namespace

Result<std::vector<CaptureRef>> ListCaptures(const std::filesystem::path& dir,
                                             std::string_view url) {
  std::error_code ec;
  std::vector<std::filesystem::path> warcs;
  if (std::filesystem::is_regular_file(dir, ec)) {
    warcs.push_back(dir);
  } else if (std::filesystem::is_directory(dir, ec)) {
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      if (e.is_regular_file() && IsWarc(e.path())) warcs.push_back(e.path());
    }
    if (ec) return Status::IOError(dir.string() + ": " + ec.message());
  } else {
    return Status::NotFound(dir.string() + ": no such file or directory");
  }
  std::sort(warcs.begin(), warcs.end());
  std::string surt = SurtKey(url);
  std::vector<CaptureRef> out;
  for (const auto& warc : warcs) {
    std::filesystem::path cdxj = CdxjFor(warc);
    Status s = std::filesystem::exists(cdxj, ec) ? FromCdxj(warc, cdxj, url, surt, &out)
                                                 : FromScan(warc, url, surt, &out);
    if (!s.ok()) return s;
  }
  // Oldest first; within a second, file order then offset (the write order).
  std::stable_sort(out.begin(), out.end(), [](const CaptureRef& a, const CaptureRef& b) {
    if (a.timestamp != b.timestamp) return a.timestamp < b.timestamp;
    if (a.file != b.file) return a.file < b.file;
    return a.offset < b.offset;
  });
  return out;
}

Result<StoredPage> GetLatestCapture(const std::filesystem::path& dir, std::string_view url) {
  Result<std::vector<CaptureRef>> caps = ListCaptures(dir, url);
  if (!caps.ok()) return caps.status();
  if (caps->empty()) {
    return Status::NotFound("no capture of " + std::string(url) + " in " + dir.string());
  }
  StoredPage page;
  Result<WarcRecord> rec = ReadRecordAt(caps->back().file, caps->back().offset);
  if (!rec.ok()) return rec.status();
  page.record = std::move(rec).value();
  Result<HttpResponse> head = ParseHttpResponse(page.record.block);
  if (!head.ok()) return head.status();
  page.http = std::move(head).value();
  if (page.record.type != "revisit") return page;

  std::string target = page.record.header("WARC-Refers-To-Target-URI");
  std::string digest = page.record.header("WARC-Payload-Digest");
  // A 304 (server-not-modified) names its original by URI and date (and record id when
  // known); its digest, when present, must agree. Otherwise the payload digest decides.
  const bool not_modified = page.record.header("WARC-Profile") == kServerNotModifiedProfile;
  const std::string refers_date = page.record.header("WARC-Refers-To-Date");
  const std::string refers_id = page.record.header("WARC-Refers-To");
  const std::optional<int64_t> refers_us = internal::ParseWarcDate(refers_date);
  Result<std::vector<CaptureRef>> originals = ListCaptures(dir, target);
  if (!originals.ok()) return originals.status();
  for (auto it = originals->rbegin(); it != originals->rend(); ++it) {
    if (it->revisit || it->url != target) continue;
    if (not_modified) {
      if (!refers_us || it->timestamp != Timestamp14(*refers_us)) continue;
    } else if (!it->digest.empty() && it->digest != digest) {
      continue;
    }
    Result<WarcRecord> orig = ReadRecordAt(it->file, it->offset);
    if (!orig.ok()) return orig.status();
    if (not_modified) {
      if (orig->date != refers_date && internal::ParseWarcDate(orig->date) != refers_us) continue;
      if (!refers_id.empty() && orig->header("WARC-Record-ID") != refers_id) continue;
      if (!digest.empty() && orig->header("WARC-Payload-Digest") != digest) continue;
    } else if (orig->header("WARC-Payload-Digest") != digest) {
      continue;
    }
    Result<HttpResponse> body = ParseHttpResponse(orig->block);
    if (!body.ok()) return body.status();
    page.http.body = std::move(body->body);
    page.original = std::move(orig).value();
    return page;
  }
  if (not_modified) {
    return Status::NotFound("304 revisit of " + std::string(url) + " refers to " + target + " at " +
                            refers_date + ", which is not in " + dir.string());
  }
  return Status::NotFound("revisit of " + std::string(url) + " refers to " + target + " (" +
                          digest + "), which is not in " + dir.string());
}

}  // namespace harvest::store
