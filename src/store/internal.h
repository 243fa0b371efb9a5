// Private helpers of src/store shared between the writer, the reader and their tests.
// Not part of the component's public API (see store.h).
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

#include "base/status.h"
#include "store/store.h"

namespace harvest::store::internal {

// RFC 4648 §6 base32 (upper case, '=' padded).
std::string Base32Encode(std::string_view bytes);
// The same, appended to `*out`.
void AppendBase32(std::string_view bytes, std::string* out);
// Lower-case hex.
std::string HexEncode(std::string_view bytes);

// Raw digest bytes of `data`.
std::string RawDigest(std::string_view data, DigestAlgorithm algo);
// "sha256" / "sha1".
std::string_view DigestPrefix(DigestAlgorithm algo);

// Incremental digests with one reused context: the algorithm is fetched once (OpenSSL 3
// looks it up on every EVP_Digest call otherwise) and nothing is allocated per digest.
// The writer digests three or four blocks per fetch. One thread at a time.
class Digester {
 public:
  explicit Digester(DigestAlgorithm algo);
  ~Digester();
  Digester(const Digester&) = delete;
  Digester& operator=(const Digester&) = delete;
  void Update(std::string_view data);
  // Appends "<prefix>:<BASE32>" (as PayloadDigest) of the data given since the last call
  // and starts a new digest.
  void AppendLabelAndReset(std::string* out);

 private:
  void Start();
  DigestAlgorithm algo_;
  struct evp_md_st* md_ = nullptr;  // fetched once
  struct evp_md_ctx_st* ctx_ = nullptr;
  bool started_ = false;
  bool failed_ = false;
};

// A Huffman code for the bytes of records coded as literals only: gzip members of one
// dynamic-Huffman deflate block, no LZ77 matches (literal_code.cc). Made from byte counts;
// every byte value gets a code, so any data can be coded, bytes the counts did not show
// only with longer codes. Read-only after Build.
class LiteralCode {
 public:
  // Makes the code from the counts of each byte value over `records` records; false when
  // ISA-L could not (then the code must not be used).
  bool Build(const uint64_t byte_counts[256], uint64_t records);
  // The bits these counts of bytes take with this code.
  uint64_t CodedBits(const uint64_t byte_counts[256]) const;
  // The size of a member whose bytes code to `coded_bits`.
  size_t MemberBytes(uint64_t coded_bits) const;
  // Writes the gzip member of `data` to `out`, which holds `limit` + kSlack bytes; returns
  // its size, or 0 when the member would be larger than `limit` (then `out` holds garbage).
  size_t Encode(std::string_view data, char* out, size_t limit) const;

  // The gzip header and trailer.
  static constexpr size_t kGzipFraming = 18;
  // Input bytes coded between two checks of the output's size, and the room Encode needs
  // past its limit.
  static constexpr size_t kChunk = 4096;
  static constexpr size_t kSlack = 2 * kChunk + 64;

 private:
  std::vector<uint8_t> header_;  // the block header's whole bytes (BFINAL set)
  uint32_t header_tail_ = 0;     // and its last header_bits_ bits
  int header_bits_ = 0;
  uint16_t codes_[256] = {};  // bit-reversed, to be written least significant bit first
  uint8_t lengths_[256] = {};
  uint16_t end_code_ = 0;  // end of block
  uint8_t end_length_ = 0;
  // Codes of two bytes at once, indexed by a little-endian 16-bit load: first | second <<
  // length of first, and the two lengths' sum in bits 32..37 (512 KiB).
  std::unique_ptr<uint64_t[]> pairs_;
};

// Produces one gzip member per call at a fixed level (clamped to 1..12): level 1 with ISA-L's
// igzip (level 1: the same ratio as libdeflate's level 1 on web pages at about twice the
// speed, docs/benchmarks.md "WARC writing"), levels 2..12 with libdeflate. Keeps its
// compressor state and its output buffer between calls (allocating either costs more than
// compressing a small record).
class GzipCompressor {
 public:
  explicit GzipCompressor(int level);
  ~GzipCompressor();
  GzipCompressor(const GzipCompressor&) = delete;
  GzipCompressor& operator=(const GzipCompressor&) = delete;
  // Appends the gzip member of `data` to `*out`.
  Status AppendMember(std::string_view data, std::string* out);
  Result<std::string> Member(std::string_view data);
  // Appends one gzip member of `head` + `stored` + `tail` to `*out`, where `stored` is
  // already compressed (a payload with a Content-Encoding): `head` is deflated (zlib at
  // the same level, at most 9) and `stored` and `tail` go into stored deflate blocks, which
  // cost a memcpy and a CRC instead of a futile search for matches — about half the
  // time of compressing the whole record, and no bigger (docs/benchmarks.md "WARC
  // writing"). A standard member: any gzip reader inflates it to the three concatenated.
  Status AppendMemberStored(std::string_view head, std::string_view stored, std::string_view tail,
                            std::string* out);

 private:
  // Makes buf_ hold at least `size` bytes, keeping its first `keep` bytes.
  void Reserve(size_t size, size_t keep);
  // Runs deflate with `flush` over the input set in z_ until it is consumed (Z_FINISH: until
  // the end of the stream), growing buf_ as needed.
  Status Deflate(int flush);

  // One member with igzip into buf_; false when it did not fit (then libdeflate). Records
  // of at most kSmallRecord bytes take igzip's level 0 with a Huffman code made for WARC
  // headers (SmallRecordTables in gzip.cc); larger ones level 1 until this compressor has
  // learnt a code from the records it compressed, then level 0 with that code (LearnedCode).
  // Large records take the learnt literal-only code instead while it is chosen (*lz false).
  bool IgzipMember(std::string_view data, size_t* size, bool* lz);
  // The igzip part of IgzipMember (LZ77 and Huffman): into buf_, its size in *size.
  bool LzMember(std::string_view data, size_t* size);
  // Feeds a large record just compressed into `size` bytes (with LZ77 or as literals) to the
  // learnt codes (gzip.cc). Uses buf_.
  void Learn(std::string_view data, size_t size, bool lz);

 public:
  // The request and metadata records of a fetch (~0.5-2 KB of WARC and HTTP headers, links)
  // are at most this long. At level 1 most of their cost is building a Huffman code for a
  // few hundred bytes; a prebuilt one compresses them ~5x faster, ~10% larger
  // (docs/benchmarks.md "WARC writing").
  static constexpr size_t kSmallRecord = 4096;
  // Larger records: igzip's level 1 spends ~20% of its time building a Huffman code for
  // each record. Instead the compressor learns one code from the byte and match frequencies
  // of its own records (the first kLearnFirst compressible ones, then one in kLearnEvery),
  // rebuilt after every kLearnFirst samples with the older counts halved, and uses it at
  // level 0: ~19% faster for 1-2% more bytes than level 1 on HTML (docs/benchmarks.md
  // "WARC writing"). A record the code does not suit costs at most a stored block.
  static constexpr uint32_t kLearnFirst = 8;
  static constexpr uint32_t kLearnEvery = 64;
  // From the same samples the compressor also learns a literal-only code (LiteralCode) and
  // takes it for large records while LZ77 made the sampled records less than this fraction
  // smaller than it would: on text whose words barely repeat (the random words of
  // scripts/bench-peers' web: LZ77 7-9% smaller) LZ77 costs ~3x the time for little; on
  // HTML it makes records half the size or less, and stays (docs/benchmarks.md "WARC
  // writing").
  static constexpr double kLzMinGain = 0.125;
  // Whether large records now take the learnt code, and whether that is the literal-only one
  // (for tests).
  bool learnt() const;
  bool literals_only() const;

 private:
  struct LearnedCode;
  int level_;
  struct libdeflate_compressor* c_;
  struct isal_zstream* igzip_ = nullptr;  // level 1 only
  std::unique_ptr<unsigned char[]> igzip_level_buf_;
  std::unique_ptr<LearnedCode> learned_;  // level 1 only
  struct z_stream_s* z_ = nullptr;        // for AppendMemberStored, made on first use
  std::unique_ptr<char[]> buf_;           // scratch output, buf_size_ bytes
  size_t buf_size_ = 0;
};

// The system's message for an errno value ("No space left on device").
std::string ErrnoText(int err);
// Writes all of `data` to `fd`, resuming after short writes and EINTR. IOError names `path`
// and the cause; bytes written before an error stay written.
Status WriteAll(int fd, std::string_view data, const std::filesystem::path& path);

// Writes a new file (created or truncated, mode 0644) through a buffer of `buffer_bytes`:
// one write(2) per buffer, not per piece. One thread at a time.
class BufferedFileWriter {
 public:
  explicit BufferedFileWriter(std::filesystem::path path, size_t buffer_bytes = size_t{1} << 20);
  ~BufferedFileWriter();  // closes the file if Close() was not called (no flush)
  BufferedFileWriter(const BufferedFileWriter&) = delete;
  BufferedFileWriter& operator=(const BufferedFileWriter&) = delete;
  Status Open();
  // A piece at least as large as the buffer is written directly, without a copy.
  Status Append(std::string_view data);
  // Writes the buffer, fsyncs when `sync`, closes. Call once, after a successful Open().
  Status Close(bool sync);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  size_t capacity_;
  std::string buffer_;
  int fd_ = -1;
};

// Fsyncs the directory holding `file` (after a rename into it).
Status SyncParentDir(const std::filesystem::path& file);

// Replaces `path` by what `fill` writes so that a crash leaves either the old or the new
// content: `fill` writes `<path>.tmp` (1 MiB buffer), which is fsynced and renamed over
// `path`, then the directory is fsynced (the fsyncs only when `sync`). On an error (also
// one returned by `fill`) the temporary file is removed and `path` is left as it was.
Status ReplaceFileFrom(const std::filesystem::path& path, bool sync,
                       const std::function<Status(BufferedFileWriter* out)>& fill);

// Replaces `path` by `text` so that a crash leaves either the old or the new content:
// temporary file `<path>.tmp`, fsync, rename, fsync of the directory (the fsyncs only when
// `sync`).
Status ReplaceFile(const std::filesystem::path& path, std::string_view text, bool sync = true);
// ReplaceFile with the concatenation of `pieces`, each followed by '\n' when `newlines`.
Status ReplaceFileWithLines(const std::filesystem::path& path,
                            const std::vector<std::string_view>& pieces, bool sync, bool newlines);

// CDXJ text (lines ending in '\n'; a missing last '\n' is added) sorted by whole line in
// byte order, as `LC_ALL=C sort` orders it. Equal keys keep a deterministic order: the rest
// of the line (timestamp, then the JSON) decides.
std::string SortedLines(std::string_view text);
// The lines of `text` (views into it, without their '\n'), sorted like SortedLines.
std::vector<std::string_view> SortedLineViews(std::string_view text);
// Whether `text` is in that order (what `LC_ALL=C sort -c` accepts). On false, `*bad_line`
// (if given) is the 1-based number of the first line that sorts before its predecessor.
bool LinesSorted(std::string_view text, uint64_t* bad_line = nullptr);

// SortCdxjFile's memory budget: a file up to this size is sorted in memory; a larger one in
// sorted runs of about this size, written to `<cdxj>.run<N>` and merged (an 80 MB index
// of a 1 GiB WARC would otherwise cost ~80 MB of RSS at every rotation).
inline constexpr size_t kCdxjSortRunBytes = size_t{8} << 20;
// At most this many runs are merged at once (one open file each); more are merged in
// rounds into larger runs first.
inline constexpr size_t kCdxjSortMaxFanIn = 64;
// SortCdxjFile with runs of about `run_bytes` (tests use a small budget to force many runs).
Status SortCdxjFileWithBudget(const std::filesystem::path& cdxj, bool sync, size_t run_bytes);
// Removes the run files `<cdxj>.run<N>` a sort interrupted by a crash left beside `cdxj`.
void RemoveCdxjSortRuns(const std::filesystem::path& cdxj);

// Sorts the CDXJ index of one WARC file while the writer appends lines to it, so that
// closing the file does not read the index back (docs/architecture.md §[store]): the lines
// added since the last run stay in memory up to `budget` bytes, then are sorted into a run
// file `<cdxj>.run<N>` (as SortCdxjFile's runs); Finish replaces the file by every line
// added, in SortCdxjFile's order, merging the runs with the lines in memory. Given exactly
// the lines the file holds, the result is SortCdxjFile's. The runs are removed by Finish or
// the destructor (a crash leaves them to RemoveCdxjSortRuns).
class CdxjSorter {
 public:
  explicit CdxjSorter(std::filesystem::path cdxj, size_t budget = kCdxjSortRunBytes);
  ~CdxjSorter();
  CdxjSorter(const CdxjSorter&) = delete;
  CdxjSorter& operator=(const CdxjSorter&) = delete;

  // `lines`: whole lines, each ending in '\n', as they were appended to the file.
  Status Add(std::string_view lines);
  // Writes the sorted index in place of the file (ReplaceFileFrom: fsynced when `sync`).
  Status Finish(bool sync);

 private:
  struct Runs;
  Status Spill();
  std::filesystem::path cdxj_;
  size_t budget_;
  std::string lines_;
  std::unique_ptr<Runs> runs_;  // none until the first spill
  uint64_t empty_lines_ = 0;    // in the runs (they sort first)
};

// "<urn:uuid:xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx>" from 16 random bytes (v4, RFC 9562).
// The bytes come from a per-thread pool refilled from OpenSSL's CSPRNG 16 ids at a time.
std::string NewRecordId();

// Returns the response head with every `Transfer-Encoding:` header renamed to
// `X-Harvest-Original-Transfer-Encoding:` and ending in exactly one empty line (CRLF CRLF).
std::string RewriteResponseHead(std::string_view head);
// The same, appended to `*out`.
void AppendRewrittenResponseHead(std::string_view head, std::string* out);

// Parses "Name: value" header lines (CRLF or LF, obs-fold continuation) from `text`, which
// holds the lines after the first line up to (not including) the empty line.
void ParseHeaderLines(std::string_view text,
                      std::vector<std::pair<std::string, std::string>>* headers);

// Digits-only 14-digit timestamp for CDXJ from a WARC-Date ("2026-11-26T03:20:01.1Z" →
// "20261126032001"); "" when malformed.
std::string Timestamp14FromWarcDate(std::string_view warc_date);

// One CDXJ entry (pywb format) and its text form
// `<surt> <ts14> {"url":…,"mime":…,"status":"200","digest":…,"length":N,"offset":N,"filename":…}`.
struct CdxjEntry {
  std::string surt;
  std::string timestamp;  // 14 digits
  std::string url;
  std::string mime;
  std::string status;  // "" for records without one (omitted from JSON)
  std::string digest;
  uint64_t length = 0;
  uint64_t offset = 0;
  std::string filename;
  std::string near_dup_of;  // "" = omitted
};
std::string FormatCdxjLine(const CdxjEntry& e);
// Appends `s` as a JSON string (quotes included) exactly as nlohmann::json's
// dump(-1, ' ', false, error_handler_t::replace) writes it — the CDXJ lines were written
// that way before, and replay tools compare them byte for byte with recovered ones:
// `"` `\` and \b \f \n \r \t as two-character escapes, other controls below 0x20 as
// \u00xx (lower-case hex), well-formed UTF-8 (and DEL) as is, each ill-formed sequence as
// one U+FFFD.
void AppendJsonString(std::string_view s, std::string* out);
// Appends the decimal digits of `v` (no allocation).
void AppendDecimal(uint64_t v, std::string* out);
// Appends `v` to a WARC header value or warc-fields line: header values must stay on one
// line, so bytes below 0x20 and DEL (and, in a URI, the space) are percent-encoded and outside
// data cannot inject WARC headers. Runs without such bytes (all of them, normally) are copied
// at once; the scan takes 16 bytes a step (SSE2).
void AppendSafe(std::string_view v, bool is_uri, std::string* out);

// What the index says about one response or revisit record. WarcWriter fills it from the
// Capture, RecoverWarc from the record read back, and both format it with CdxjLineFor(), so
// a recovered line is byte-identical to the one the writer would have written (as long as
// the writer's caller passed no `surt`/`mime`/`status` that disagrees with the record).
struct CdxjSource {
  std::string_view target_uri;      // as written in WARC-Target-URI
  std::string_view surt;            // "" = SurtKey(target_uri)
  std::string_view warc_date;       // WARC-Date as written
  bool revisit = false;             // mime is then "warc/revisit"
  bool metadata = false;            // a near-duplicate metadata record: "warc/metadata"
  std::string_view near_dup_of;     // "near_dup_of" field ("" = omitted)
  std::string_view mime;            // "" = MimeFromHead(response_head), else "unk"
  std::string_view response_head;   // the HTTP response head (status line + headers)
  int status = 0;                   // HTTP status code; <= 0 = omitted
  std::string_view payload_digest;  // WARC-Payload-Digest
  uint64_t offset = 0;              // of the record's gzip member
  uint64_t length = 0;              // of the record's gzip member
  std::string_view filename;        // base name of the WARC file
};
// The CDXJ line (without the trailing newline) for `s`.
std::string CdxjLineFor(const CdxjSource& s);
// The same, appended to `*out`.
void AppendCdxjLine(const CdxjSource& s, std::string* out);

// Content-Type of an HTTP response head without parameters, lower case, optional
// whitespace trimmed ("" when absent). `head` may continue with the body: only the lines up
// to the first empty line are read.
std::string MimeFromHead(std::string_view head);

// The HTTP head at the start of a response block, through its empty line (CRLF CRLF or
// LF LF); the whole block when it has no empty line.
std::string_view HttpHeadOf(std::string_view block);

// Microseconds since the epoch of a WARC-Date ("2026-11-26T03:20:01.123456Z", fraction
// optional, 1-9 digits, truncated to microseconds); std::nullopt when malformed.
std::optional<int64_t> ParseWarcDate(std::string_view warc_date);
// Parses one line; InvalidArgument when it is not CDXJ.
Result<CdxjEntry> ParseCdxjLine(std::string_view line);

}  // namespace harvest::store::internal
