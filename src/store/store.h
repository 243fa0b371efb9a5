// store: Harvest's archive — WARC/1.1 files with one gzip member per record, a CDXJ index
// beside them, and a hardened reader for random access by (file, offset).
//
// Standard: WARC/1.1 (ISO 28500:2017, https://iipc.github.io/warc-specifications/), revisit
// profile "identical-payload-digest" of WARC/1.1; record-at-a-time gzip (WARC/1.1 Annex D);
// CDXJ as written and read by pywb; digests as "<algo>:<BASE32>" (RFC 4648 §6 alphabet,
// upper case, with '=' padding as RFC 4648 requires: sha256 is 52 chars + "====", sha1 is
// 32 chars and needs none). warcio (JS and Python) writes and verifies this same form.
//
// Deliberate departures, documented in docs/warc.md:
//  - The fetcher hands us bodies already de-chunked. A `Transfer-Encoding` header in the
//    stored response head is therefore renamed to `X-Harvest-Original-Transfer-Encoding`
//    so that readers do not try to de-chunk the stored body again. The body is otherwise
//    stored as received (not content-decoded); the payload digest covers exactly those bytes.
//  - One CDXJ file per WARC file (`<warc name without .warc.gz>.cdxj`): several writers can
//    share a directory, and a torn WARC only affects its own index. Lines are appended in
//    write order while the WARC is written, and the file is sorted (whole lines, byte order,
//    as `LC_ALL=C sort`) when the WARC is closed, as pywb and OutbackCDX expect; crash
//    recovery sorts it too. MergeCdxjFiles (`harvest warc index`) merges the sorted files
//    into one index.
//
// Entry points: WarcWriter (append), WarcReader / ReadRecordAt / ParseHttpResponse (read),
// ListCaptures / GetLatestCapture (lookup by URL), RepairWarcTail / RecoverWarc (crash
// recovery: cut a torn tail, index complete records whose CDXJ lines were never written),
// SortCdxjFile / ListCdxjFiles / CheckCdxjSorted / MergeCdxjFiles (the sorted index).
//
// Thread-safety: the free functions are thread-safe (they share no state; RepairWarcTail
// and RecoverWarc must not run on a file a writer has open). A WarcWriter or WarcReader belongs to
// one thread at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace harvest::store {

enum class DigestAlgorithm { kSha256, kSha1 };

struct WarcOptions {
  // Output directory; created (with parents) if missing.
  std::filesystem::path dir;
  // File name prefix: files are `<prefix>-<UTC YYYYmmddHHMMSS>-<serial 5 digits>.warc.gz`.
  std::string prefix = "harvest";
  // Rotate to a new file when appending a fetch's records would make the file exceed this.
  // A single fetch larger than the limit still goes into one (fresh) file. Default 1 GiB.
  uint64_t max_file_bytes = 1ull << 30;
  // gzip level, 1 (fast) … 12 (small). Default 1 (ISA-L igzip): on web pages ~2x faster
  // than libdeflate's level 1 for ~3% more bytes, records of at most 4 KB with a prebuilt
  // Huffman code; 2..12: libdeflate (docs/benchmarks.md "WARC writing").
  int gzip_level = 1;
  // Algorithm of WARC-Block-Digest / WARC-Payload-Digest. Default sha256 (sha1 for old tools).
  DigestAlgorithm digest = DigestAlgorithm::kSha256;
  // warcinfo fields. Default software "Harvest/<version> (+<project url>)".
  std::string software;
  std::string operator_contact;
  std::string description;
  // Write the `<warc>.cdxj` index beside each WARC. Default true.
  bool write_cdxj = true;
  // Flush() fsyncs the WARC and CDXJ files. Default true (docs/architecture.md §1.3: done only when
  // durable).
  bool fsync_on_flush = true;
  // Wall clock for file names and warcinfo dates. nullptr = SystemClock::Default().
  const Clock* clock = nullptr;
  // Hostname written to warcinfo; "" = gethostname().
  std::string hostname;
};

struct Capture {
  std::string target_uri;
  int64_t fetch_time_us = 0;    // wall clock, microseconds since epoch (WARC-Date)
  std::string ip;               // WARC-IP-Address ("" to omit)
  std::string request_header;   // raw request head as sent (request line + headers + CRLF CRLF)
  std::string response_header;  // raw response head as received (status line + headers + CRLF CRLF)
  std::string payload;          // body as received (de-chunked, not content-decoded)
  std::string truncated;        // "" or "length" / "time" / "disconnect"
  int status = 0;
  std::string mime;                   // Content-Type without params, for CDXJ
  std::string payload_digest;         // optional precomputed "sha256:BASE32" (else computed)
  std::vector<std::string> outlinks;  // metadata record lines (empty, no via: no metadata record)
  std::string via;                    // optional metadata field `via:`
  int hops = 0;                       // metadata field `hopsFromSeed:` (written when > 0)
  std::string surt;                   // optional precomputed SURT key (else computed here)
  // The earlier capture this page is a near-duplicate of (SimHash within a small Hamming
  // distance, different payload), or nullopt. Given, the metadata record carries
  // `nearDuplicateOf:`, `nearDuplicateRecord:`, `nearDuplicateDate:`, `simhashDistance:`
  // and the CDXJ line a "near_dup_of" field (docs/warc.md "Near-duplicates").
  struct NearDuplicate {
    std::string uri;        // target URI of the earlier capture
    std::string record_id;  // its "<urn:uuid:...>" ("" to omit)
    int64_t date_us = 0;    // its WARC-Date (0 to omit)
    int distance = 0;       // SimHash Hamming distance
  };
  std::optional<NearDuplicate> near_duplicate_of;
};

// WARC/1.1 revisit profiles (WARC-Profile).
enum class RevisitProfile {
  // The payload is identical to an earlier capture's (same WARC-Payload-Digest).
  kIdenticalPayloadDigest,
  // A conditional request answered 304 Not Modified: the earlier capture is still current.
  kServerNotModified,
};
inline constexpr std::string_view kIdenticalPayloadDigestProfile =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
inline constexpr std::string_view kServerNotModifiedProfile =
    "http://netpreserve.org/warc/1.1/revisit/server-not-modified";

struct Revisit {
  std::string refers_to_uri;
  int64_t refers_to_date_us = 0;
  std::string refers_to_record_id;  // "<urn:uuid:...>" of the original response ("" to omit)
  RevisitProfile profile = RevisitProfile::kIdenticalPayloadDigest;
  // kServerNotModified: the payload digest of the original response, written as
  // WARC-Payload-Digest and CDXJ "digest" ("" = unknown: both omitted). Ignored for
  // kIdenticalPayloadDigest, whose digest is the capture's own payload digest.
  std::string refers_to_digest;
};

struct RecordLocation {
  std::string filename;   // base name of the WARC file (as in CDXJ)
  uint64_t offset = 0;    // of the record's gzip member
  uint64_t length = 0;    // compressed length of the member
  std::string record_id;  // "<urn:uuid:...>"
};

// Formats "sha256:BASE32" (or "sha1:BASE32") for a payload. Thread-safe, pure.
std::string PayloadDigest(std::string_view payload,
                          DigestAlgorithm algo = DigestAlgorithm::kSha256);

// Appends fetches to rotating WARC files. NOT thread-safe: one writer thread owns it.
// Every record is one gzip member appended with a single write(2), so a crash leaves at
// most one torn member at the tail. Records are durable after Flush() (with fsync_on_flush).
// A fetch's response record, serialised and compressed ahead of its write
// (WarcWriter::PrepareResponse), so that the writer thread only appends it: the gzip
// member and its SHA-256 block digest are the largest part of writing a page
// (docs/benchmarks.md "Peers").
struct PreparedResponse {
  std::string record_id;       // "<urn:uuid:...>"
  std::string date;            // WARC-Date as written
  std::string warcinfo_id;     // the WARC-Warcinfo-ID it names ("" when none)
  std::string payload_digest;  // WARC-Payload-Digest as written
  std::string member;          // the record's gzip member
};

class WarcWriter {
 public:
  static Result<std::unique_ptr<WarcWriter>> Open(WarcOptions options);
  ~WarcWriter();
  WarcWriter(const WarcWriter&) = delete;
  WarcWriter& operator=(const WarcWriter&) = delete;

  // request + response (+ metadata when outlinks/via given); returns the response's location.
  Result<RecordLocation> WriteResponse(const Capture& capture);
  // The same with the response record prepared by PrepareResponse(capture) for this same
  // capture (unchanged since): appended as it is when the file it named is still the one
  // being written, else serialised again here (a rotation came between; same id and date).
  // nullptr: as WriteResponse(capture).
  Result<RecordLocation> WriteResponse(const Capture& capture, const PreparedResponse* prepared);
  // Thread-safe: any thread, also while the writer's thread writes. The response record
  // WriteResponse would write for `capture`, naming the warcinfo record of the file being
  // written now. InvalidArgument without a response head.
  Result<PreparedResponse> PrepareResponse(const Capture& capture) const;
  // Whether the response record of `capture` keeps its payload in stored deflate blocks (a
  // payload of at least 512 bytes with a Content-Encoding: compressed already), which costs
  // a copy and a CRC: not worth preparing on another thread.
  static bool StoresPayloadAsIs(const Capture& capture);
  // request + revisit (+ metadata); the revisit block holds the HTTP response head only
  // (for kServerNotModified: the 304 head as received). CDXJ: mime "warc/revisit", status
  // Capture::status, digest as in the record's WARC-Payload-Digest.
  Result<RecordLocation> WriteRevisit(const Capture& capture, const Revisit& original);
  // The store-metadata-only policy for near-duplicates: no request, no response, one
  // `metadata` record (WARC-Target-URI = the page, WARC-Refers-To = the near duplicate's
  // record id when known) whose block holds the near-duplicate fields, `payloadDigest:`,
  // `httpStatus:` and the usual via/hopsFromSeed/outlink lines; its CDXJ line has mime
  // "warc/metadata". InvalidArgument without capture.near_duplicate_of.
  Result<RecordLocation> WriteNearDuplicateMetadata(const Capture& capture);
  // Writes pending index lines and fsyncs when options say so.
  [[nodiscard]] Status Flush();
  // Flushes and closes; further writes fail. Idempotent. Closing a WARC file (here, or when
  // the writer rotates to a new one) sorts its CDXJ (SortCdxjFile; fsynced when
  // fsync_on_flush).
  [[nodiscard]] Status Close();

  uint64_t bytes_written() const;    // compressed bytes appended over all files
  uint64_t records_written() const;  // WARC records (incl. warcinfo) over all files
  // Path of the file currently written ("" before the first record / after Close).
  std::filesystem::path current_file() const;

  class Impl;

 private:
  explicit WarcWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---- Reading ----

struct WarcRecord {
  uint64_t offset = 0;  // of the record (gzip member, or first byte of "WARC/" when plain)
  uint64_t length = 0;  // compressed member length (raw length for plain WARC)
  std::string version;  // "WARC/1.1"
  std::string type;     // WARC-Type
  std::string target_uri;
  std::string date;                                          // WARC-Date as written
  std::vector<std::pair<std::string, std::string>> headers;  // in file order
  std::string block;
  // First header of that name (case-insensitive), "" when absent.
  std::string header(std::string_view name) const;
};

struct WarcReaderOptions {
  // Largest decompressed record (headers + block) accepted; larger ones give
  // ResourceExhausted with the offset. Bounds memory on hostile input. Default 1 GiB.
  uint64_t max_record_bytes = 1ull << 30;
  // Offset of the first record to read: must be where a record starts (or the end of one,
  // e.g. a CDXJ line's offset + length), else Next() reports Corruption. Lets crash
  // recovery read only the tail of a large file. Default 0 (the whole file).
  uint64_t start_offset = 0;
};

// Iterates the records of a .warc.gz (record-at-a-time gzip) or plain .warc file; a file may
// mix both. A truncated or corrupt record gives a Corruption status naming the file and
// offset; the error is sticky (Next() keeps returning it).
class WarcReader {
 public:
  static Result<std::unique_ptr<WarcReader>> Open(const std::filesystem::path& file,
                                                  WarcReaderOptions options = {});
  // Reads from memory (fuzzing, tests); `name` is used in messages.
  static std::unique_ptr<WarcReader> FromBuffer(std::string data, std::string name = "buffer",
                                                WarcReaderOptions options = {});
  ~WarcReader();
  // The next record, std::nullopt at a clean end of file.
  Result<std::optional<WarcRecord>> Next();

  class Source;

 private:
  WarcReader(std::unique_ptr<Source> source, std::string name, WarcReaderOptions options);
  std::unique_ptr<Source> source_;
  std::string name_;
  WarcReaderOptions options_;
  uint64_t offset_ = 0;
  Status error_;
};

// Reads the single record at `offset` of `file`.
Result<WarcRecord> ReadRecordAt(const std::filesystem::path& file, uint64_t offset);

struct HttpResponse {
  int status = 0;
  std::string reason;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // First header of that name (case-insensitive), "" when absent.
  std::string header(std::string_view name) const;
};

// Parses an `application/http;msgtype=response` block (status line, headers, CRLF, body).
// Accepts bare LF line ends and obs-fold continuation lines; never throws.
Result<HttpResponse> ParseHttpResponse(std::string_view block);

// Crash recovery: cuts a WARC file back to the end of its last complete, readable record
// (a kill -9 during an append leaves a torn member at the tail) and drops lines of its
// CDXJ that point past the new end. Returns the number of bytes cut (0 when intact).
// Corruption in the middle of the file is not "repaired": everything after it would be
// lost, so that is returned as the reader's Corruption status unless `force`.
// REQUIRES: no writer has the file open.
Result<uint64_t> RepairWarcTail(const std::filesystem::path& file, bool force = false);

// One record found in a WARC by RecoverWarc beyond what its CDXJ index covered.
struct RecoveredRecord {
  std::string type;            // WARC-Type: "response", "revisit", "request", "metadata", ...
  std::string target_uri;      // WARC-Target-URI
  int64_t date_us = 0;         // WARC-Date parsed to microseconds since the epoch (0 if malformed)
  std::string record_id;       // WARC-Record-ID, "<urn:uuid:...>"
  std::string payload_digest;  // WARC-Payload-Digest ("" when absent)
  uint64_t offset = 0, length = 0;
};

struct RecoveryReport {
  uint64_t bytes_cut = 0;         // torn tail removed (RepairWarcTail)
  uint64_t cdxj_lines_added = 0;  // index lines written for records that had none
  // Every record (all types) after the last indexed one, in file order.
  std::vector<RecoveredRecord> unindexed;
};

struct RecoverOptions {
  // Passed to RepairWarcTail: also cut more than 64 MiB after the last readable record.
  // Default false.
  bool force = false;
};

// Crash recovery of one WARC written by WarcWriter: RepairWarcTail, then reconcile its CDXJ
// with the WARC: records after the end of the last record the CDXJ covers (the largest
// offset + length of its lines naming this file) get their CDXJ lines appended (response and
// revisit records, the line WarcWriter writes: same key, timestamp and JSON fields, built by
// the same code), and are returned in `unindexed` (all record types, including the request
// and metadata records around them) so the caller can restore state it derives from them
// (payload digests). A `request` with no `response`/`revisit` after it is a fetch whose
// main record was torn off: it was not stored.
// The CDXJ is also cleaned: an unterminated last line (a crash while Flush() wrote the
// index) and lines of this file pointing past its end are dropped (their records, when
// complete, are re-indexed). A missing CDXJ file is created (unless the WARC has no record
// to index). Idempotent: a second call cuts and adds nothing (its `unindexed` lists again
// the records after the last indexed one, e.g. the metadata record of the last fetch).
// Only the part after the last indexed record is read (the torn-tail check too) once that
// record reads back at the offset and length its line gives; otherwise the whole file is
// checked, so a wrong index never decides where the file is cut.
// The CDXJ is left sorted (as SortCdxjFile leaves it: the file is no longer written);
// any change is one atomic rewrite (temporary file, fsync, rename, fsync of the directory).
//
// Byte-identical lines, departures: the key is SurtKey() of the target URI, where the
// writer used Capture::surt when given; mime and status come from the record's HTTP head
// (Content-Type without parameters; the status line), where the writer used Capture::mime /
// Capture::status when given. Callers that fill those from the same response (as the
// crawler does: its key is url::Surt() of the parsed URL, which is SurtKey()) get the same
// values.
// Errors: NotFound (no WARC), InvalidArgument (name not *.warc.gz / *.warc), Corruption
// (from RepairWarcTail, or when the CDXJ's last indexed end is not a record boundary),
// IOError.
// REQUIRES: no writer has the file (or its CDXJ) open.
Result<RecoveryReport> RecoverWarc(const std::filesystem::path& warc);
Result<RecoveryReport> RecoverWarc(const std::filesystem::path& warc,
                                   const RecoverOptions& options);

// ---- Lookup over an output directory (CLI `warc get`, replay) ----

// One capture (response or revisit record) of a URL. Near-duplicate metadata records
// (CDXJ mime "warc/metadata") hold no page and are not captures: lookup skips them.
struct CaptureRef {
  std::filesystem::path file;
  uint64_t offset = 0;
  std::string timestamp;  // 14 digits
  std::string url;
  bool revisit = false;
  std::string digest;  // WARC-Payload-Digest
};

// The captures of `url` in the WARCs of `dir` (or in the single WARC file `dir`), oldest
// first. Uses each WARC's CDXJ when present, else scans the WARC. A URL matches exactly or
// by SURT key. NotFound when `dir` does not exist; an empty list when nothing matches.
Result<std::vector<CaptureRef>> ListCaptures(const std::filesystem::path& dir,
                                             std::string_view url);

struct StoredPage {
  WarcRecord record;                   // the newest capture (response or revisit)
  std::optional<WarcRecord> original;  // for a revisit: the response holding the payload
  HttpResponse http;                   // head of `record`, body from the payload's record
};

// The newest capture of `url`, following a revisit to its original response: for profile
// identical-payload-digest the newest response of WARC-Refers-To-Target-URI with the same
// payload digest; for server-not-modified (a 304) the response of that URI written at
// WARC-Refers-To-Date (and, when present, with record id WARC-Refers-To and payload digest
// WARC-Payload-Digest). `http` then has the 304 head and the original's body. NotFound with
// a clear message when absent.
Result<StoredPage> GetLatestCapture(const std::filesystem::path& dir, std::string_view url);

// ---- The sorted CDXJ index (CLI `warc index`, replay tools) ----

// Sorts the CDXJ file `cdxj` in place by whole line in byte order — what `LC_ALL=C sort`
// produces and `LC_ALL=C sort -c` accepts: by SURT key, then timestamp, then the JSON, so
// lines of equal key keep a deterministic order. Atomic: the sorted text goes to
// `<cdxj>.tmp`, which is fsynced and renamed over the file, then the directory is fsynced
// (the fsyncs only when `sync`). Nothing is written when the file is already sorted. A
// missing final newline is added. Memory is bounded: a file up to 8 MiB is sorted in
// memory; a larger one (~80 MB for a 1 GiB WARC) by an external merge sort — sorted runs
// of about 8 MiB written to `<cdxj>.run<N>` beside it, then merged (one line per run in
// memory) into `<cdxj>.tmp`; the runs are removed, also on an error, and a crash's
// leftovers are overwritten or removed by the next sort (and by RecoverWarc). NotFound
// when the file does not exist; IOError naming the file.
// REQUIRES: no writer appends to the file.
Status SortCdxjFile(const std::filesystem::path& cdxj, bool sync = true);

// The CDXJ files a crawl wrote under `path`: `path` itself when it is a file, else the
// `*.cdxj` files directly in the directory (as `warc ls` finds WARCs), sorted by name.
// NotFound when `path` does not exist or holds no CDXJ file (the message says which).
Result<std::vector<std::filesystem::path>> ListCdxjFiles(const std::filesystem::path& path);

// OK when `cdxj` is sorted as SortCdxjFile leaves it (empty lines aside); else
// InvalidArgument "<file>:<line>: not sorted: ..." naming the first line that sorts before
// the previous one. Streams the file.
Status CheckCdxjSorted(const std::filesystem::path& cdxj);

// k-way merge of sorted CDXJ files into one sorted stream: `emit` receives each line
// (without '\n') in byte order; ties between files go to the earlier input. Empty lines
// are skipped. Memory: one line per input. An input found out of order gives
// InvalidArgument "<file>:<line>: not sorted ..." (lines before it were already emitted:
// run CheckCdxjSorted first to write nothing); an error from `emit` stops the merge and is
// returned.
Status MergeCdxjFiles(const std::vector<std::filesystem::path>& inputs,
                      const std::function<Status(std::string_view line)>& emit);

// ---- Helpers shared with the CLI and the lead's code ----

// The CDXJ key of a URI: url::Surt() of the URI parsed by url::Parse() (the crawler's URL
// parser), e.g. "com,example)/path?a=1&b=2" — the key the crawl writes, so index lines
// rebuilt from a WARC (RecoverWarc) match the writer's. Never fails: a URI that does not
// parse as an absolute URL yields itself, lower-cased and without its fragment.
std::string SurtKey(std::string_view uri);

// "YYYY-MM-DDThh:mm:ss.ffffffZ" (WARC/1.1 allows sub-second precision).
std::string WarcDate(int64_t micros_since_epoch);
// "YYYYmmddHHMMSS" (CDXJ timestamp, file names).
std::string Timestamp14(int64_t micros_since_epoch);

}  // namespace harvest::store
