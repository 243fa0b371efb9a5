// The schema of the metadata database and its migrations (Database::Migrate, metadata.h).
#include "metadata/schema.h"

namespace harvest::metadata::internal {

// Migration N brings a database from version N-1 to N. Never edit a released step: add one.
const std::vector<std::string_view>& Migrations() {
  static const std::vector<std::string_view> steps = {
      // 1: pages, their indexes, and the writers' cursors.
      R"sql(
CREATE TABLE pages (
  fetch_key   text PRIMARY KEY,          -- "<warc_file>:<warc_offset>", one per stored fetch
  url         text NOT NULL,
  host        text NOT NULL,             -- host[:port]
  domain      text,                      -- registrable domain (NULL for an IP address)
  status      integer NOT NULL,
  fetched_at  timestamptz NOT NULL,
  mime        text,
  title       text,
  digest      text,                      -- WARC-Payload-Digest, "sha256:<base32>"
  warc_file   text NOT NULL,
  warc_offset bigint NOT NULL,
  warc_length bigint,
  outlinks    integer,                   -- links sent to admission (NULL: unknown)
  outcome     text NOT NULL,             -- fetched | revisit | not-modified
  reason      text,
  worker      text NOT NULL,
  page_id     bigint NOT NULL            -- the page record's id in its crawl state
);
CREATE INDEX pages_host_fetched_at ON pages (host, fetched_at);
CREATE INDEX pages_digest ON pages (digest);
CREATE TABLE metadata_cursors (
  source     text PRIMARY KEY,           -- a crawl directory (worker:path)
  page_id    bigint NOT NULL,            -- every page record up to it is in pages
  updated_at timestamptz NOT NULL DEFAULT now()
);
)sql",
      // 2: attempts — requests that left no WARC record (a retried answer, no response) —
      // have a row too: no status when there was no response, no WARC location.
      R"sql(
ALTER TABLE pages ALTER COLUMN status DROP NOT NULL,
                  ALTER COLUMN warc_file DROP NOT NULL,
                  ALTER COLUMN warc_offset DROP NOT NULL;
COMMENT ON COLUMN pages.fetch_key IS
  '<warc_file>:<warc_offset> of a stored fetch; <source>#<page_id> of an attempt';
)sql",
  };
  return steps;
}

}  // namespace harvest::metadata::internal
