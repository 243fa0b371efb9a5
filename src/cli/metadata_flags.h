// `harvest crawl --metadata URL`: the crawl's metadata writer (docs/metadata.md), defined in
// cmd_metadata.cc beside `harvest metadata migrate|export`.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "admin/backend.h"
#include "base/status.h"
#include "crawl/crawl.h"

namespace harvest::cli {

struct MetadataFlags {
  std::string url;           // --metadata
  std::string wait = "60s";  // --metadata-wait
};
void AddMetadataFlags(CLI::App* app, MetadataFlags* f);

// The writer thread of a running crawl: it reads the crawl's page records from the crawler
// (Crawler::ScanPageRecords, any thread) while the crawl runs, and from the crawl state opened
// read-only once it has stopped — the same records either way, times in microseconds.
class CrawlMetadata {
 public:
  // Starts the writer thread. `worker` names the rows' worker ("" = the host name).
  static Result<std::unique_ptr<CrawlMetadata>> Start(const MetadataFlags& flags,
                                                      const std::filesystem::path& out,
                                                      const std::string& worker,
                                                      const crawl::Crawler* crawler);
  virtual ~CrawlMetadata() = default;
  // After Crawler::Run: writes every row left, waiting for the database up to --metadata-wait.
  virtual Status Finish() = 0;
  // "metadata: ..." summary line, and the same figures as JSON fields (",\"metadata_...\":N").
  virtual std::string Summary() const = 0;
  virtual std::string JsonFields() const = 0;
  // The crawl's admin backend with the writer's figures appended to /metrics
  // (harvest_metadata_*); everything else is `backend`'s. Valid while both live.
  virtual admin::Backend* WrapBackend(admin::Backend* backend) = 0;
};

}  // namespace harvest::cli
