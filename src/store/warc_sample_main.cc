// Writes sample WARCs for the independent-reader test (tests/e2e/warcio_verify.js):
//   OUT/good-sha256/  varied fetches (chunked head, content-encoded (stored), binary, empty,
//                     truncated, revisits (both profiles), metadata, near-duplicate tags
//                     and metadata-only records, rotation) with sha256 digests
//   OUT/good-sha1/    the same with sha1 digests
//   OUT/bad/          one response with a wrong payload digest (the checker must reject it)
//   OUT/torn/         a file whose last gzip member is cut short (the checker must reject it)
#include <cstdio>
#include <random>
#include <string>

#include "store/store.h"

namespace harvest::store {
namespace {

Capture Make(const std::string& url, std::string head, std::string body, int64_t t) {
  Capture c;
  c.target_uri = url;
  c.fetch_time_us = t;
  c.ip = "192.0.2.1";
  c.request_header = "GET " + url + " HTTP/1.1\r\nHost: example.com\r\nUser-Agent: Harvest\r\n\r\n";
  c.response_header = std::move(head);
  c.payload = std::move(body);
  c.status = 200;
  c.mime = "text/html";
  return c;
}

Status WriteSet(const std::filesystem::path& dir, DigestAlgorithm algo) {
  WarcOptions o;
  o.dir = dir;
  o.digest = algo;
  o.max_file_bytes = 64 * 1024;  // small, so the set spans several files
  o.operator_contact = "test@example.com";
  o.description = "warcio interoperability sample";
  Result<std::unique_ptr<WarcWriter>> w = WarcWriter::Open(o);
  if (!w.ok()) return w.status();
  std::mt19937 rng(42);
  int64_t t = 1795663201123456;
  const std::string html = "<html><body><a href=\"/a\">a</a></body></html>";
  for (int i = 0; i < 40; ++i, t += 1000) {
    std::string url = "http://example.com/page" + std::to_string(i);
    std::string body;
    std::string head;
    switch (i % 5) {
      case 0:
        body = html;
        head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n";
        break;
      case 1:  // de-chunked by the fetcher: the head must be rewritten
        body = html + std::to_string(i);
        head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n";
        break;
      case 2: {  // binary payload with CR LF bytes inside
        body.resize(20000);
        for (char& ch : body) ch = static_cast<char>(rng());
        head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n";
        // Half with a Content-Encoding: the writer keeps such a payload in stored deflate
        // blocks; readers must not see a difference.
        if (i % 10 == 2) {
          head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: br\r\n\r\n";
        }
        break;
      }
      case 3:  // empty body
        head = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
        break;
      case 4:  // truncated, HTTP/2 status line as libcurl reports it
        body = std::string(5000, 'z');
        head = "HTTP/2 200\r\ncontent-type: text/plain\r\ncontent-length: 999999\r\n\r\n";
        break;
    }
    Capture c = Make(url, head, body, t);
    if (i % 5 == 3) c.status = 404;
    if (i % 5 == 4) c.truncated = "length";
    if (i % 3 == 0) c.outlinks = {url + "/a", url + "/b"};
    if (i % 7 == 0) {
      c.via = "http://example.com/";
      c.hops = 1;
    }
    if (i % 4 == 1) {  // a near-duplicate of the previous page, tagged in metadata and CDXJ
      c.near_duplicate_of =
          Capture::NearDuplicate{"http://example.com/page" + std::to_string(i - 1),
                                 "<urn:uuid:00000000-0000-4000-8000-000000000000>", t - 1000, 2};
    }
    Result<RecordLocation> loc = (*w)->WriteResponse(c);
    if (!loc.ok()) return loc.status();
    if (i % 5 == 0) {  // the same payload again: a revisit
      Capture again = Make(url + "?again", head, body, t + 500);
      Result<RecordLocation> r = (*w)->WriteRevisit(again, {url, t, loc->record_id});
      if (!r.ok()) return r.status();
    }
    if (i % 6 == 0) {  // recrawl answered 304 Not Modified: a server-not-modified revisit
      Capture not_modified =
          Make(url, "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n", "", t + 700);
      not_modified.status = 304;
      Revisit r{url, t, loc->record_id, RevisitProfile::kServerNotModified,
                PayloadDigest(body, algo)};
      Result<RecordLocation> rl = (*w)->WriteRevisit(not_modified, r);
      if (!rl.ok()) return rl.status();
    }
    if (i % 8 == 2) {  // the store-metadata-only policy for a near-duplicate
      Capture note = Make(url + "?near", head, body, t + 800);
      note.near_duplicate_of = Capture::NearDuplicate{url, loc->record_id, t, 1};
      Result<RecordLocation> rl = (*w)->WriteNearDuplicateMetadata(note);
      if (!rl.ok()) return rl.status();
    }
  }
  return (*w)->Close();
}

Status WriteBad(const std::filesystem::path& dir) {
  WarcOptions o;
  o.dir = dir;
  Result<std::unique_ptr<WarcWriter>> w = WarcWriter::Open(o);
  if (!w.ok()) return w.status();
  Capture c = Make("http://example.com/bad", "HTTP/1.1 200 OK\r\n\r\n", "body", 1795663201000000);
  c.payload_digest = PayloadDigest("a different body");
  Result<RecordLocation> loc = (*w)->WriteResponse(c);
  if (!loc.ok()) return loc.status();
  return (*w)->Close();
}

// A fetch whose last gzip member was cut short, as a crash during the append leaves it.
Status WriteTorn(const std::filesystem::path& dir) {
  WarcOptions o;
  o.dir = dir;
  Result<std::unique_ptr<WarcWriter>> w = WarcWriter::Open(o);
  if (!w.ok()) return w.status();
  Capture c = Make("http://example.com/torn", "HTTP/1.1 200 OK\r\n\r\n", "body", 1795663201000000);
  Result<RecordLocation> loc = (*w)->WriteResponse(c);
  if (!loc.ok()) return loc.status();
  std::filesystem::path file = (*w)->current_file();
  Status s = (*w)->Close();
  if (!s.ok()) return s;
  std::error_code ec;
  std::filesystem::resize_file(file, loc->offset + loc->length - 10, ec);
  return ec ? Status::IOError(ec.message()) : Status::Ok();
}

}  // namespace
}  // namespace harvest::store

int main(int argc, char** argv) {
  using harvest::store::DigestAlgorithm;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
    return 2;
  }
  std::filesystem::path out = argv[1];
  std::error_code ec;
  std::filesystem::remove_all(out, ec);
  for (const auto& s :
       {harvest::store::WriteSet(out / "good-sha256", DigestAlgorithm::kSha256),
        harvest::store::WriteSet(out / "good-sha1", DigestAlgorithm::kSha1),
        harvest::store::WriteBad(out / "bad"), harvest::store::WriteTorn(out / "torn")}) {
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
  }
  std::printf("wrote samples under %s\n", out.c_str());
  return 0;
}
