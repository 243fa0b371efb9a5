// harvest metadata migrate|export, and the `harvest crawl --metadata` glue (metadata_flags.h).
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "base/duration.h"
#include "cli/command.h"
#include "cli/metadata_flags.h"
#include "metadata/metadata.h"

namespace harvest::cli {
namespace {

constexpr std::chrono::milliseconds kMaxWait{int64_t{7} * 86'400'000};

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

metadata::MetadataOptions Options(const std::string& url, const std::filesystem::path& out,
                                  const std::string& worker) {
  metadata::MetadataOptions o;
  o.url = url;
  o.worker = worker.empty() ? HostName() : worker;
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(out, ec);
  o.out_dir = ec ? out : abs.lexically_normal();
  o.source = o.worker + ":" + o.out_dir.string();
  return o;
}

// The page records of a running crawl, as its state holds them (microsecond times, the
// host as recorded); "no crawl running" (not yet started or already stopped) reads as
// nothing new.
metadata::PageSource CrawlerSource(const crawl::Crawler* crawler) {
  return [crawler](uint64_t after, size_t limit) -> Result<std::vector<state::PageEntry>> {
    state::PageFilter filter;
    filter.after_id = after;
    filter.limit = std::min<size_t>(limit, 1000);
    filter.max_scanned = std::max(filter.max_scanned, filter.limit);  // no filter: all match
    Result<state::PageScan> scan = crawler->ScanPageRecords(filter);
    if (!scan.ok()) {
      if (scan.status().code() == Status::Code::kUnavailable) {
        return std::vector<state::PageEntry>{};
      }
      return scan.status();
    }
    return std::move(scan->pages);
  };
}

Result<metadata::PageSource> ReaderSource(const std::filesystem::path& out) {
  Result<std::unique_ptr<state::StateReader>> reader = state::StateReader::Open(out / "state");
  if (!reader.ok()) return reader.status();
  return metadata::StateReaderSource(std::shared_ptr<state::StateReader>(std::move(*reader)));
}

double OutageSeconds(const metadata::WriterStats& s) {
  auto now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  return s.outage_since_us == 0 ? 0.0 : static_cast<double>(now_us - s.outage_since_us) / 1e6;
}

// The admin API's /status "metadata" object (docs/metadata.md "Outage").
admin::MetadataStatus StatusOf(const metadata::WriterStats& s) {
  return {.database_up = s.connected,
          .outage_seconds = OutageSeconds(s),
          .rows_written = s.rows_written,
          .failures = s.failures,
          .cursor = s.cursor,
          .last_error = s.last_error};
}

// Prometheus lines for the writer's figures (docs/metadata.md "Outage").
std::string MetricsOf(const metadata::WriterStats& s) {
  const double outage_s = OutageSeconds(s);
  std::string out;
  auto metric = [&out](const char* name, const char* type, const char* help,
                       const std::string& value) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
           name + " " + value + "\n";
  };
  metric("harvest_metadata_database_up", "gauge",
         "1 while the metadata writer is connected to PostgreSQL.", s.connected ? "1" : "0");
  metric("harvest_metadata_outage_seconds", "gauge",
         "Seconds since the current database outage began (0: none).", std::to_string(outage_s));
  metric("harvest_metadata_rows_written_total", "counter", "New rows committed to PostgreSQL.",
         std::to_string(s.rows_written));
  metric("harvest_metadata_failures_total", "counter",
         "Failed connections or transactions (each retried).", std::to_string(s.failures));
  metric("harvest_metadata_cursor", "gauge", "Highest page record id committed to PostgreSQL.",
         std::to_string(s.cursor));
  return out;
}

// Forwards to the crawl's backend; /status gains the writer's state, /metrics its lines.
class MetricsBackend : public admin::Backend {
 public:
  MetricsBackend(admin::Backend* inner, const metadata::MetadataWriter* writer)
      : inner_(inner), writer_(writer) {}
  Result<admin::SeedResult> InjectSeeds(const admin::SeedRequest& r) override {
    return inner_->InjectSeeds(r);
  }
  admin::StatusSnapshot GetStatus() override {
    admin::StatusSnapshot s = inner_->GetStatus();
    s.metadata = StatusOf(writer_->stats());
    return s;
  }
  Status SetPolicy(std::string_view host, const admin::HostPolicy& p) override {
    return inner_->SetPolicy(host, p);
  }
  Result<nlohmann::json> GetHost(std::string_view host) override { return inner_->GetHost(host); }
  Status SetBlocked(std::string_view host, bool blocked) override {
    return inner_->SetBlocked(host, blocked);
  }
  Result<admin::PageList> ListPages(const admin::PageQuery& q) override {
    return inner_->ListPages(q);
  }
  Result<admin::PageRecord> GetPage(uint64_t id) override { return inner_->GetPage(id); }
  Result<admin::PageContent> GetPageContent(uint64_t id) override {
    return inner_->GetPageContent(id);
  }
  Status Pause() override { return inner_->Pause(); }
  Status Resume() override { return inner_->Resume(); }
  std::string MetricsText() override { return inner_->MetricsText() + MetricsOf(writer_->stats()); }
  bool read_only() const override { return inner_->read_only(); }

 private:
  admin::Backend* inner_;
  const metadata::MetadataWriter* writer_;
};

class CrawlMetadataImpl : public CrawlMetadata {
 public:
  CrawlMetadataImpl(metadata::MetadataOptions options, std::chrono::milliseconds wait,
                    const crawl::Crawler* crawler)
      : out_(options.out_dir), wait_(wait), writer_(std::move(options), CrawlerSource(crawler)) {
    writer_.Start();
  }
  Status Finish() override {
    Result<metadata::PageSource> source = ReaderSource(out_);
    if (!source.ok()) return source.status();
    return writer_.Finish(std::move(*source), wait_);
  }
  std::string Summary() const override {
    metadata::WriterStats s = writer_.stats();
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "metadata: %llu rows written (%llu already present) in %llu batches; %llu "
                  "database failures retried; cursor at page %llu\n",
                  static_cast<unsigned long long>(s.rows_written),
                  static_cast<unsigned long long>(s.rows_existing),
                  static_cast<unsigned long long>(s.batches),
                  static_cast<unsigned long long>(s.failures),
                  static_cast<unsigned long long>(s.cursor));
    return buf;
  }
  std::string JsonFields() const override {
    metadata::WriterStats s = writer_.stats();
    return ",\"metadata_rows\":" + std::to_string(s.rows_written) +
           ",\"metadata_rows_existing\":" + std::to_string(s.rows_existing) +
           ",\"metadata_batches\":" + std::to_string(s.batches) +
           ",\"metadata_failures\":" + std::to_string(s.failures);
  }
  admin::Backend* WrapBackend(admin::Backend* backend) override {
    wrapped_ = std::make_unique<MetricsBackend>(backend, &writer_);
    return wrapped_.get();
  }

 private:
  std::filesystem::path out_;
  std::chrono::milliseconds wait_;
  metadata::MetadataWriter writer_;
  std::unique_ptr<MetricsBackend> wrapped_;
};

int RunMigrate(const std::string& url) {
  if (Status s = metadata::Database::CheckUrl(url); !s.ok()) {
    return UsageError("metadata migrate", s.message());
  }
  metadata::MetadataOptions o;
  o.url = url;
  Result<std::unique_ptr<metadata::Database>> db = metadata::Database::Connect(o);
  if (!db.ok()) {
    std::fprintf(stderr, "harvest metadata migrate: %s\n", db.status().message().c_str());
    return kExitFailure;
  }
  Result<int> found = (*db)->Migrate();
  if (!found.ok()) {
    std::fprintf(stderr, "harvest metadata migrate: %s\n", found.status().message().c_str());
    return kExitFailure;
  }
  if (*found == metadata::kSchemaVersion) {
    std::printf("schema version %d: up to date\n", *found);
  } else {
    std::printf("schema version %d -> %d\n", *found, metadata::kSchemaVersion);
  }
  return kExitOk;
}

int RunExport(const std::string& url, const std::string& out, const std::string& worker,
              const std::string& wait) {
  if (Status s = metadata::Database::CheckUrl(url); !s.ok()) {
    return UsageError("metadata export", s.message());
  }
  Result<metadata::PageSource> source = ReaderSource(out);
  if (!source.ok()) {
    std::fprintf(stderr, "harvest metadata export: %s\n", source.status().message().c_str());
    return kExitFailure;
  }
  metadata::MetadataWriter writer(Options(url, out, worker), *source);
  Status s = writer.Finish(*source, *ParseDuration(wait));
  metadata::WriterStats st = writer.stats();
  std::printf("exported %llu rows (%llu already present) in %llu batches; cursor at page %llu\n",
              static_cast<unsigned long long>(st.rows_written),
              static_cast<unsigned long long>(st.rows_existing),
              static_cast<unsigned long long>(st.batches),
              static_cast<unsigned long long>(st.cursor));
  if (!s.ok()) {
    std::fprintf(stderr, "harvest metadata export: %s\n", s.message().c_str());
    return kExitFailure;
  }
  return kExitOk;
}

CommandRegistration reg(
    "metadata", "Crawl metadata in PostgreSQL: create the schema, load a crawl directory",
    [](CLI::App* app) -> CommandRunner {
      app->require_subcommand(1);
      auto url = std::make_shared<std::string>();
      auto out = std::make_shared<std::string>();
      auto worker = std::make_shared<std::string>();
      auto wait = std::make_shared<std::string>("60s");
      CLI::App* migrate =
          app->add_subcommand("migrate", "Create or upgrade the schema (docs/metadata.md)");
      migrate->add_option("--to", *url, "postgresql://USER@HOST:PORT/DB")->required();
      CLI::App* exp = app->add_subcommand(
          "export",
          "Write a crawl directory's rows (its page records); resumes and never "
          "writes a row twice");
      exp->add_option("--out", *out, "The crawl directory")->required();
      exp->add_option("--to", *url, "postgresql://USER@HOST:PORT/DB")->required();
      exp->add_option("--worker", *worker, "The rows' worker column (default: the host name)");
      exp->add_option("--wait", *wait, "Wait this long for the database (default 60s)")
          ->check(DurationRange(std::chrono::milliseconds(0), kMaxWait));
      app->footer("Exit status: 0 done, 1 the database refused or stayed unreachable, 2 usage.");
      return [=]() {
        if (migrate->parsed()) return RunMigrate(*url);
        return RunExport(*url, *out, *worker, *wait);
      };
    });

}  // namespace

void AddMetadataFlags(CLI::App* app, MetadataFlags* f) {
  app->add_option("--metadata", f->url,
                  "Write one row per stored fetch to PostgreSQL, e.g. "
                  "postgresql://harvest@127.0.0.1:5432/harvest (docs/metadata.md)");
  app->add_option("--metadata-wait", f->wait,
                  "At exit, wait this long for the database to take every row (default 60s); "
                  "exit 1 if rows are left")
      ->check(DurationRange(std::chrono::milliseconds(0), kMaxWait));
}

Result<std::unique_ptr<CrawlMetadata>> CrawlMetadata::Start(const MetadataFlags& flags,
                                                            const std::filesystem::path& out,
                                                            const std::string& worker,
                                                            const crawl::Crawler* crawler) {
  if (Status s = metadata::Database::CheckUrl(flags.url); !s.ok()) return s;
  Result<std::chrono::milliseconds> wait = ParseDuration(flags.wait);
  if (!wait.ok()) return wait.status();
  return std::unique_ptr<CrawlMetadata>(
      new CrawlMetadataImpl(Options(flags.url, out, worker), *wait, crawler));
}

}  // namespace harvest::cli
