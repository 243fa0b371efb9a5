// Database (metadata.h): the only file that includes <libpq-fe.h>.
#include <libpq-fe.h>

#include <string>

#include "metadata/metadata.h"
#include "metadata/schema.h"

namespace harvest::metadata {
namespace {

// Key of the advisory lock that serialises Migrate() between processes.
constexpr long long kMigrateLockKey = 0x68617276'16;
// Columns of `pages` in the order WriteBatch sends them.
constexpr std::string_view kColumns =
    "fetch_key, url, host, domain, status, fetched_at, mime, title, digest, warc_file, "
    "warc_offset, warc_length, outlinks, outcome, reason, worker, page_id";

std::string ErrorOf(PGconn* c) {
  std::string e = PQerrorMessage(c);
  while (!e.empty() && (e.back() == '\n' || e.back() == ' ')) e.pop_back();
  return e;
}

}  // namespace

namespace internal {

// Length of the valid UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, at most
// U+10FFFF) at the start of `v`, or 0.
size_t Utf8Length(std::string_view v) {
  const auto b = [&v](size_t i) { return static_cast<unsigned char>(v[i]); };
  const unsigned char c = b(0);
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (v.size() < n) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (b(i) < 0x80 || b(i) > 0xBF) return 0;
  }
  return n;
}

void AppendCopyField(std::string_view v, std::string* out) {
  while (!v.empty()) {
    const size_t n = Utf8Length(v);
    if (n == 0) {
      *out += "\xEF\xBF\xBD";  // U+FFFD for a byte that is not UTF-8 (text must be valid)
      v.remove_prefix(1);
      continue;
    }
    if (n > 1) {
      out->append(v.data(), n);
      v.remove_prefix(n);
      continue;
    }
    switch (const char ch = v[0]) {
      case '\\':
        *out += "\\\\";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\0':
        break;  // PostgreSQL text cannot hold NUL
      default:
        *out += ch;
    }
    v.remove_prefix(1);
  }
}

std::string CopyText(const std::vector<PageRow>& rows) {
  std::string out;
  auto field = [&out](std::string_view v, bool null_if_empty, bool last = false) {
    if (null_if_empty && v.empty()) {
      out += "\\N";
    } else {
      AppendCopyField(v, &out);
    }
    out += last ? '\n' : '\t';
  };
  for (const PageRow& r : rows) {
    field(r.fetch_key, false);
    field(r.url, false);
    field(r.host, false);
    field(r.domain, true);
    field(r.status == 0 ? "" : std::to_string(r.status), true);  // 0: no response
    field(TimestampLiteral(r.fetched_at_us), false);
    field(r.mime, true);
    field(r.title, true);
    field(r.digest, true);
    // An attempt has no WARC record: no file, offset or length.
    const bool stored = !r.warc_file.empty();
    field(r.warc_file, true);
    field(stored ? std::to_string(r.warc_offset) : "", true);
    field(stored ? std::to_string(r.warc_length) : "", true);
    field(r.outlinks ? std::to_string(*r.outlinks) : "", true);
    field(r.outcome, false);
    field(r.reason, true);
    field(r.worker, false);
    field(std::to_string(r.page_id), false, true);
  }
  return out;
}

}  // namespace internal

struct Database::Conn {
  PGconn* c = nullptr;
  ~Conn() {
    if (c != nullptr) PQfinish(c);
  }
  // Runs `sql` with text parameters (nullptr = NULL); the result when its status is ok.
  Result<PGresult*> Exec(const std::string& sql, const std::vector<const char*>& params = {}) {
    // Without parameters the simple protocol, which runs several statements (migrations).
    PGresult* r = params.empty() ? PQexec(c, sql.c_str())
                                 : PQexecParams(c, sql.c_str(), static_cast<int>(params.size()),
                                                nullptr, params.data(), nullptr, nullptr, 0);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      std::string msg = r != nullptr ? PQresultErrorMessage(r) : ErrorOf(c);
      while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
      PQclear(r);
      if (PQstatus(c) != CONNECTION_OK) return Status::Unavailable("postgresql: " + msg);
      return Status::Internal("postgresql: " + msg);
    }
    return r;
  }
  Status Run(const std::string& sql, const std::vector<const char*>& params = {}) {
    Result<PGresult*> r = Exec(sql, params);
    if (!r.ok()) return r.status();
    PQclear(*r);
    return Status::Ok();
  }
  void Rollback() { (void)Run("ROLLBACK"); }
  // COPY ... FROM STDIN of `data` (COPY text format).
  Status CopyIn(const std::string& sql, const std::string& data) {
    PGresult* r = PQexec(c, sql.c_str());
    const bool started = PQresultStatus(r) == PGRES_COPY_IN;
    std::string msg = r != nullptr ? PQresultErrorMessage(r) : "";
    PQclear(r);
    if (!started) return Failure(msg);
    if (PQputCopyData(c, data.data(), static_cast<int>(data.size())) != 1 ||
        PQputCopyEnd(c, nullptr) != 1) {
      return Failure(ErrorOf(c));
    }
    Status status;
    while (PGresult* res = PQgetResult(c)) {
      if (PQresultStatus(res) != PGRES_COMMAND_OK && status.ok()) {
        status = Failure(PQresultErrorMessage(res));
      }
      PQclear(res);
    }
    return status;
  }
  Status Failure(std::string msg) {
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    if (msg.empty()) msg = ErrorOf(c);
    if (PQstatus(c) != CONNECTION_OK) return Status::Unavailable("postgresql: " + msg);
    return Status::Internal("postgresql: " + msg);
  }
};

Database::Database(std::unique_ptr<Conn> conn) : conn_(std::move(conn)) {}
Database::~Database() = default;

Result<std::unique_ptr<Database>> Database::Connect(const MetadataOptions& options) {
  if (options.url.empty()) return Status::InvalidArgument("no PostgreSQL URL given");
  const std::string timeout = std::to_string(options.connect_timeout.count());
  const std::string pg_options =
      "-c statement_timeout=" +
      std::to_string(std::chrono::milliseconds(options.statement_timeout).count());
  const char* keys[] = {"dbname", "connect_timeout", "application_name", "options", nullptr};
  const char* values[] = {options.url.c_str(), timeout.c_str(), "harvest", pg_options.c_str(),
                          nullptr};
  auto conn = std::make_unique<Conn>();
  conn->c = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn->c == nullptr) return Status::ResourceExhausted("libpq: out of memory");
  if (PQstatus(conn->c) != CONNECTION_OK) {
    return Status::Unavailable("cannot connect to the metadata database: " + ErrorOf(conn->c));
  }
  if (Status s = conn->Run("SET client_min_messages = warning"); !s.ok()) return s;
  return std::unique_ptr<Database>(new Database(std::move(conn)));
}

Status Database::CheckUrl(const std::string& url) {
  if (url.rfind("postgresql://", 0) != 0 && url.rfind("postgres://", 0) != 0) {
    return Status::InvalidArgument("not a postgresql:// URL: " + url);
  }
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (opts == nullptr) {
    std::string msg = err != nullptr ? err : "out of memory";
    PQfreemem(err);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    return Status::InvalidArgument("bad PostgreSQL URL " + url + ": " + msg);
  }
  PQconninfoFree(opts);
  return Status::Ok();
}

Result<int> Database::Migrate() {
  if (Status s = conn_->Run("BEGIN"); !s.ok()) return s;
  auto fail = [this](Status s) -> Result<int> {
    conn_->Rollback();
    return s;
  };
  if (Status s =
          conn_->Run("SELECT pg_advisory_xact_lock(" + std::to_string(kMigrateLockKey) + ")");
      !s.ok()) {
    return fail(s);
  }
  if (Status s =
          conn_->Run("CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, "
                     "applied_at timestamptz NOT NULL DEFAULT now())");
      !s.ok()) {
    return fail(s);
  }
  Result<PGresult*> r = conn_->Exec("SELECT coalesce(max(version), 0) FROM schema_version");
  if (!r.ok()) return fail(r.status());
  const int found = atoi(PQgetvalue(*r, 0, 0));
  PQclear(*r);
  if (found > kSchemaVersion) {
    return fail(Status::InvalidArgument("the metadata database has schema version " +
                                        std::to_string(found) + ", newer than this harvest's " +
                                        std::to_string(kSchemaVersion) + ": upgrade harvest"));
  }
  const auto& steps = internal::Migrations();
  for (int v = found + 1; v <= kSchemaVersion; ++v) {
    if (Status s = conn_->Run(std::string(steps[static_cast<size_t>(v - 1)])); !s.ok()) {
      return fail(Status::Internal("migration to schema version " + std::to_string(v) + ": " +
                                   s.message()));
    }
    const std::string version = std::to_string(v);
    if (Status s =
            conn_->Run("INSERT INTO schema_version (version) VALUES ($1)", {version.c_str()});
        !s.ok()) {
      return fail(s);
    }
  }
  if (Status s = conn_->Run("COMMIT"); !s.ok()) return fail(s);
  return found;
}

Result<uint64_t> Database::ReadCursor(const std::string& source) {
  Result<PGresult*> r =
      conn_->Exec("SELECT page_id FROM metadata_cursors WHERE source = $1", {source.c_str()});
  if (!r.ok()) return r.status();
  uint64_t cursor = PQntuples(*r) > 0 ? strtoull(PQgetvalue(*r, 0, 0), nullptr, 10) : 0;
  PQclear(*r);
  return cursor;
}

Result<uint64_t> Database::WriteBatch(const std::vector<PageRow>& rows, const std::string& source,
                                      uint64_t cursor) {
  if (Status s = conn_->Run("BEGIN"); !s.ok()) return s;
  uint64_t inserted = 0;
  if (!rows.empty()) {
    // COPY into a temporary table (emptied at commit), then one INSERT ... SELECT that skips
    // rows already present: cheaper for the server than a statement with 17 parameters a row.
    if (Status s = conn_->Run("CREATE TEMP TABLE IF NOT EXISTS pages_in "
                              "(LIKE pages INCLUDING DEFAULTS) ON COMMIT DELETE ROWS");
        !s.ok()) {
      conn_->Rollback();
      return s;
    }
    if (Status s = conn_->CopyIn("COPY pages_in (" + std::string(kColumns) + ") FROM STDIN",
                                 internal::CopyText(rows));
        !s.ok()) {
      conn_->Rollback();
      return s;
    }
    Result<PGresult*> r =
        conn_->Exec("INSERT INTO pages (" + std::string(kColumns) + ") SELECT " +
                    std::string(kColumns) + " FROM pages_in ON CONFLICT (fetch_key) DO NOTHING");
    if (!r.ok()) {
      conn_->Rollback();
      return r.status();
    }
    inserted = strtoull(PQcmdTuples(*r), nullptr, 10);
    PQclear(*r);
  }
  const std::string c = std::to_string(cursor);
  if (Status s = conn_->Run(
          "INSERT INTO metadata_cursors (source, page_id) VALUES ($1, $2) ON CONFLICT (source) "
          "DO UPDATE SET page_id = greatest(metadata_cursors.page_id, excluded.page_id), "
          "updated_at = now()",
          {source.c_str(), c.c_str()});
      !s.ok()) {
    conn_->Rollback();
    return s;
  }
  if (Status s = conn_->Run("COMMIT"); !s.ok()) return s;
  return inserted;
}

Result<std::vector<std::vector<std::string>>> Database::Query(const std::string& sql) {
  Result<PGresult*> r = conn_->Exec(sql);
  if (!r.ok()) return r.status();
  std::vector<std::vector<std::string>> out;
  const int rows = PQntuples(*r), cols = PQnfields(*r);
  for (int i = 0; i < rows; ++i) {
    std::vector<std::string> row;
    for (int j = 0; j < cols; ++j) row.emplace_back(PQgetvalue(*r, i, j));
    out.push_back(std::move(row));
  }
  PQclear(*r);
  return out;
}

}  // namespace harvest::metadata
