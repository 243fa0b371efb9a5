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
constexpr int kParamsPerRow = 17;

std::string ErrorOf(PGconn* c) {
  std::string e = PQerrorMessage(c);
  while (!e.empty() && (e.back() == '\n' || e.back() == ' ')) e.pop_back();
  return e;
}

}  // namespace

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
    // Text values of every row, kept alive while the statement runs.
    std::vector<std::string> text;
    text.reserve(rows.size() * kParamsPerRow);
    std::vector<const char*> params;
    params.reserve(rows.size() * kParamsPerRow);
    std::string sql = "INSERT INTO pages (" + std::string(kColumns) + ") VALUES ";
    int n = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      const PageRow& row = rows[i];
      text.push_back(row.fetch_key);
      text.push_back(row.url);
      text.push_back(row.host);
      text.push_back(row.domain);
      text.push_back(std::to_string(row.status));
      text.push_back(TimestampLiteral(row.fetched_at_us));
      text.push_back(row.mime);
      text.push_back(row.title);
      text.push_back(row.digest);
      text.push_back(row.warc_file);
      text.push_back(std::to_string(row.warc_offset));
      text.push_back(std::to_string(row.warc_length));
      text.push_back(row.outlinks ? std::to_string(*row.outlinks) : "");
      text.push_back(row.outcome);
      text.push_back(row.reason);
      text.push_back(row.worker);
      text.push_back(std::to_string(row.page_id));
      sql += i == 0 ? "(" : ",(";
      for (int k = 0; k < kParamsPerRow; ++k) {
        sql += k == 0 ? "$" : ",$";
        sql += std::to_string(++n);
      }
      sql += ")";
    }
    // Empty optional text columns are NULL; pointers are taken once `text` stops growing.
    for (size_t i = 0; i < text.size(); ++i) {
      const size_t col = i % kParamsPerRow;
      const bool nullable = col == 3 || col == 6 || col == 7 || col == 8 || col == 12 || col == 14;
      params.push_back(nullable && text[i].empty() ? nullptr : text[i].c_str());
    }
    sql += " ON CONFLICT (fetch_key) DO NOTHING";
    Result<PGresult*> r = conn_->Exec(sql, params);
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
