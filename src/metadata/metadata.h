// Crawl metadata in PostgreSQL (docs/metadata.md): one row per request the crawler sent in a
// table `pages`, written off the crawl's threads from the crawl's own durable page records.
//
// Source of rows: the crawl state's page records (src/state, family `pages`, ids increasing
// over all runs): one per WARC response or revisit record, robots.txt included, and one per
// attempt — a request that left no WARC record (an answer the crawler asks again, no
// response). A stored fetch's row is built from its page record and the WARC record it names
// (the outlink count of the fetch's metadata record); an attempt's from its page record alone.
// Outcome and reason are the crawler's (page record format 2); a format-1 record's come from
// its WARC record (`fetched`, `revisit`, `not-modified`; a revisited URI, a truncation).
//
// Durability: before a batch is sent the writer fsyncs the WARC files its rows point into, so
// a row never names a record that is not durable. The batch and the source's cursor (the
// highest page id written) are committed in one transaction; after a crash, an outage or a
// restart the writer resumes after the cursor. A row's key is its WARC location
// (`fetch_key` = "<warc file>:<offset>"), or for an attempt "<source>#<page id>" (AttemptKey),
// inserted with ON CONFLICT DO NOTHING, so a replayed batch never writes a row twice.
//
// Thread-safety: Database belongs to one thread. MetadataWriter: Start/Finish from the owner,
// stats() from any thread. The only file that includes <libpq-fe.h> is database.cc.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "state/state.h"

namespace harvest::metadata {

// The schema version this build creates and expects (table schema_version).
inline constexpr int kSchemaVersion = 2;

struct MetadataOptions {
  // libpq connection URL, e.g. postgresql://harvest@127.0.0.1:5432/harvest. Required.
  std::string url;
  // The `worker` column (the crawl's --worker-id; default: the host name).
  std::string worker;
  // Cursor key in metadata_cursors: one per crawl directory (default: worker + ":" + out_dir).
  std::string source;
  // The crawl directory: WARC file names of page records are relative to it.
  std::filesystem::path out_dir;
  // Rows per transaction (one COPY, one INSERT ... SELECT). Default 500: about 3 batches a
  // second at the test web's full speed; a larger batch only delays rows.
  size_t batch_rows = 500;
  // How often the source is asked again when it had nothing new. Default 200 ms.
  std::chrono::milliseconds poll_interval{200};
  // Reconnection backoff after a failure: doubles from min to max. Default 250 ms .. 5 s.
  std::chrono::milliseconds min_backoff{250};
  std::chrono::milliseconds max_backoff{5000};
  // libpq connect_timeout; statements are bounded by statement_timeout. Defaults 5 s, 30 s.
  std::chrono::seconds connect_timeout{5};
  std::chrono::seconds statement_timeout{30};
};

// One row of `pages`.
struct PageRow {
  std::string fetch_key;  // "<warc_file>:<warc_offset>", or for an attempt "<source>#<page_id>"
  uint64_t page_id = 0;   // the page record's id in its crawl state
  std::string url;
  std::string host;    // host[:port]
  std::string domain;  // registrable domain of the host ("" when none: an IP address)
  int status = 0;      // 0: no response (NULL)
  int64_t fetched_at_us = 0;
  std::string mime;
  std::string title;
  std::string digest;
  std::string warc_file;  // "" for an attempt (no WARC record): NULL, as offset and length
  uint64_t warc_offset = 0;
  uint64_t warc_length = 0;
  std::optional<int> outlinks;  // nullopt when the WARC could not be read
  std::string outcome;          // the crawler's (state::PageEntry::outcome)
  std::string reason;
  std::string worker;
};

// Builds the row of a page record, reading its WARC record under `out_dir`. Never fails:
// an unreadable WARC record leaves outlinks unknown and the outcome from the page record.
// An attempt (no WARC record) is keyed AttemptKey(source, id): `source` is the writer's
// cursor source, so a replay or an export of the same crawl directory gives the same key.
PageRow BuildRow(const state::PageEntry& page, const std::filesystem::path& out_dir,
                 std::string_view worker, std::string_view source = {});
// "<source>#<page_id>": the fetch_key of an attempt's row.
std::string AttemptKey(std::string_view source, uint64_t page_id);
// The host[:port] of an absolute URL ("" when it has none).
std::string HostOf(std::string_view url);
// "YYYY-MM-DD HH:MM:SS.ffffff+00" (a timestamptz literal).
std::string TimestampLiteral(int64_t unix_us);

// A libpq connection.
class Database {
 public:
  static Result<std::unique_ptr<Database>> Connect(const MetadataOptions& options);
  // InvalidArgument naming the problem when `url` is not a connection string libpq can parse
  // (no connection is made).
  static Status CheckUrl(const std::string& url);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Creates or upgrades the schema to kSchemaVersion (serialised between processes by an
  // advisory lock). Returns the version found before. A newer version is an error.
  Result<int> Migrate();
  // The source's cursor (0 when none).
  Result<uint64_t> ReadCursor(const std::string& source);
  // One transaction: the rows (ON CONFLICT DO NOTHING) and the source's cursor raised to
  // `cursor`. Returns how many rows were new.
  Result<uint64_t> WriteBatch(const std::vector<PageRow>& rows, const std::string& source,
                              uint64_t cursor);
  // Runs a statement; returns the rows as text (NULL as ""). For the CLI and tests.
  Result<std::vector<std::vector<std::string>>> Query(const std::string& sql);

 private:
  struct Conn;
  explicit Database(std::unique_ptr<Conn> conn);
  std::unique_ptr<Conn> conn_;
};

// Page records with ids above `after_id`, oldest first, at most `limit`.
using PageSource =
    std::function<Result<std::vector<state::PageEntry>>(uint64_t after_id, size_t limit)>;
// A source over a crawl state opened read-only (a finished crawl, `harvest metadata export`).
PageSource StateReaderSource(std::shared_ptr<state::StateReader> reader);

struct WriterStats {
  uint64_t rows_written = 0;   // new rows committed
  uint64_t rows_existing = 0;  // rows sent that the table already had (replays)
  uint64_t batches = 0;        // transactions committed
  uint64_t failures = 0;       // failed connections or transactions (each retried)
  uint64_t cursor = 0;         // highest page id committed
  bool connected = false;
  int64_t outage_since_us = 0;  // wall time of the first failure of the current outage, or 0
  std::string last_error;
};

// Copies page records into the database on its own thread (see the file comment).
class MetadataWriter {
 public:
  MetadataWriter(MetadataOptions options, PageSource source);
  ~MetadataWriter();  // stops the thread (rows not yet written stay in the crawl state)
  MetadataWriter(const MetadataWriter&) = delete;
  MetadataWriter& operator=(const MetadataWriter&) = delete;

  void Start();
  // Stops the thread, then writes on the calling thread every page `final_source` still has
  // after the cursor, retrying with backoff until none is left (Ok) or `limit` has passed
  // (Unavailable naming the rows left and the last error).
  Status Finish(PageSource final_source, std::chrono::milliseconds limit);
  WriterStats stats() const;

 private:
  // One round: connect if needed, read a batch, write it. Returns the rows read (0: the source
  // had nothing new).
  Result<size_t> Step(PageSource& source);
  void Loop();
  void Failed(const Status& s);
  bool SleepFor(std::chrono::milliseconds d);  // false when stopping

  MetadataOptions options_;
  PageSource source_;
  // db_ and backoff_: the writer's thread only (Loop, then Finish once that thread is joined).
  std::unique_ptr<Database> db_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::chrono::milliseconds backoff_{0};
  mutable Mutex stats_mu_;
  WriterStats stats_ GUARDED_BY(stats_mu_);
};

}  // namespace harvest::metadata
