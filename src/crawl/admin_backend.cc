// admin::Backend over a running crawl (commands posted to the I/O thread) and over a crawl
// directory read-only (`harvest serve`). See admin_backend.h.
#include "crawl/admin_backend.h"

#include <charconv>
#include <chrono>
#include <future>

#include "base/ascii.h"
#include "crawl/crawler_impl.h"
#include "extract/extract.h"
#include "store/store.h"

namespace harvest::crawl {
namespace admin_internal {

namespace {

constexpr size_t kMaxContentBytes = 50u << 20;  // decoded payload served by /content

}  // namespace

admin::PageRecord ToRecord(const state::PageEntry& p) {
  return {.id = p.id,
          .url = p.url,
          .status = p.status,
          .fetched_at_unix_ms = p.fetched_at_us / 1000,
          .mime = p.mime,
          .title = p.title,
          .digest = p.digest,
          .warc_file = p.warc_file,
          .warc_offset = p.warc_offset,
          .warc_length = p.warc_length,
          .outcome = p.outcome,
          .reason = p.reason};
}

Result<state::PageFilter> ToFilter(const admin::PageQuery& q) {
  state::PageFilter f;
  if (q.limit < 1 || q.limit > 1000) {
    return Status::InvalidArgument("limit must be 1..1000, got " + std::to_string(q.limit));
  }
  f.limit = static_cast<size_t>(q.limit);
  if (q.cursor) {
    const std::string& c = *q.cursor;
    auto [end, ec] = std::from_chars(c.data(), c.data() + c.size(), f.after_id);
    if (c.empty() || ec != std::errc() || end != c.data() + c.size()) {
      return Status::InvalidArgument("bad cursor '" + c + "': use next_cursor of a listing");
    }
  }
  if (q.host) {
    f.host = ToLowerAscii(*q.host);
  }
  f.status = q.status;
  if (q.since_unix_ms) f.since_us = *q.since_unix_ms * 1000;
  return f;
}

admin::PageList ToList(state::PageScan scan) {
  admin::PageList list;
  list.pages.reserve(scan.pages.size());
  for (const state::PageEntry& p : scan.pages) list.pages.push_back(ToRecord(p));
  if (scan.next_after_id) list.next_cursor = std::to_string(*scan.next_after_id);
  return list;
}

Result<admin::PageContent> ReadContent(const std::filesystem::path& out_dir,
                                       const state::PageEntry& page) {
  if (page.attempt()) {
    return Status::NotFound("page " + std::to_string(page.id) + " is an attempt (" + page.outcome +
                            "): the request left no WARC record");
  }
  Result<store::WarcRecord> rec = store::ReadRecordAt(out_dir / page.warc_file, page.warc_offset);
  if (!rec.ok()) return rec.status();
  Result<store::HttpResponse> http = store::ParseHttpResponse(rec->block);
  if (!http.ok()) return http.status();
  admin::PageContent out;
  out.content_type = http->header("Content-Type");
  std::string encoding = http->header("Content-Encoding");
  std::string body = std::move(http->body);
  if (rec->type == "revisit") {
    // The payload is in the response the revisit refers to (same payload digest).
    const std::string uri = rec->header("WARC-Refers-To-Target-URI");
    const std::string digest = rec->header("WARC-Payload-Digest");
    Result<std::vector<store::CaptureRef>> captures = store::ListCaptures(out_dir, uri);
    if (!captures.ok()) return captures.status();
    const store::CaptureRef* original = nullptr;
    for (const store::CaptureRef& c : *captures) {
      if (!c.revisit && (digest.empty() || c.digest == digest)) original = &c;
    }
    if (original == nullptr) {
      return Status::NotFound("page " + std::to_string(page.id) + " is a revisit of " + uri +
                              ", whose response is not in " + out_dir.string());
    }
    Result<store::WarcRecord> orig = store::ReadRecordAt(original->file, original->offset);
    if (!orig.ok()) return orig.status();
    Result<store::HttpResponse> orig_http = store::ParseHttpResponse(orig->block);
    if (!orig_http.ok()) return orig_http.status();
    encoding = orig_http->header("Content-Encoding");
    if (out.content_type.empty() || http->status == 304) {
      out.content_type = orig_http->header("Content-Type");
    }
    body = std::move(orig_http->body);
  }
  extract::DecodeResult decoded = extract::DecodeContent(encoding, body, kMaxContentBytes);
  if (!decoded.ok) {
    return Status::Corruption("page " + std::to_string(page.id) +
                              ": cannot decode the payload: " + decoded.error);
  }
  out.body = std::move(decoded.body);
  return out;
}

}  // namespace admin_internal

namespace {

using admin_internal::ReadContent;
using admin_internal::ToFilter;
using admin_internal::ToList;
using admin_internal::ToRecord;

constexpr auto kCommandTimeout = std::chrono::seconds(10);

Status NotRunning() { return Status::Unavailable("no crawl running"); }

}  // namespace

class LiveAdminBackend final : public admin::Backend {
 public:
  explicit LiveAdminBackend(Crawler::Impl* impl) : impl_(impl) {}

  Result<admin::SeedResult> InjectSeeds(const admin::SeedRequest& request) override {
    return Call<admin::SeedResult>([this, request] { return impl_->AdminInjectSeeds(request); });
  }
  admin::StatusSnapshot GetStatus() override {
    Result<admin::StatusSnapshot> s =
        Call<admin::StatusSnapshot>([this] { return Result(impl_->AdminStatus()); });
    if (s.ok()) return std::move(*s);
    if (std::optional<admin::StatusSnapshot> f = impl_->FinalStatus()) return *f;
    admin::StatusSnapshot none;
    none.state = "starting";
    return none;
  }
  Status SetPolicy(std::string_view host, const admin::HostPolicy& policy) override {
    return CallStatus(
        [this, h = std::string(host), policy] { return impl_->AdminSetPolicy(h, policy); });
  }
  Result<nlohmann::json> GetHost(std::string_view host) override {
    return Call<nlohmann::json>([this, h = std::string(host)] { return impl_->AdminHost(h); });
  }
  Status SetBlocked(std::string_view host, bool blocked) override {
    return CallStatus(
        [this, h = std::string(host), blocked] { return impl_->AdminSetBlocked(h, blocked); });
  }
  Result<admin::PageList> ListPages(const admin::PageQuery& query) override {
    Result<state::PageFilter> f = ToFilter(query);
    if (!f.ok()) return f.status();
    Result<state::PageScan> scan = impl_->ScanPageRecords(*f);
    if (!scan.ok()) return scan.status();
    return ToList(std::move(*scan));
  }
  Result<admin::PageRecord> GetPage(uint64_t id) override {
    Result<state::PageEntry> p = impl_->GetPageRecord(id);
    if (!p.ok()) return p.status();
    return ToRecord(*p);
  }
  Result<admin::PageContent> GetPageContent(uint64_t id) override {
    Result<state::PageEntry> p = impl_->GetPageRecord(id);
    if (!p.ok()) return p.status();
    return ReadContent(impl_->out_dir(), *p);
  }
  Status Pause() override {
    return CallStatus([this] {
      impl_->AdminPause(true);
      return Status::Ok();
    });
  }
  Status Resume() override {
    return CallStatus([this] {
      impl_->AdminPause(false);
      return Status::Ok();
    });
  }
  std::string MetricsText() override {
    Result<MetricsSnapshot> m =
        Call<MetricsSnapshot>([this] { return Result(impl_->AdminMetrics()); });
    if (m.ok()) return RenderMetrics(*m);
    if (std::optional<MetricsSnapshot> f = impl_->FinalMetrics()) return RenderMetrics(*f);
    return RenderMetrics(MetricsSnapshot{});
  }
  bool read_only() const override { return false; }

 private:
  // Runs fn on the I/O thread (at once when already there) and waits for its answer. fn
  // owns copies of its arguments: after a timeout it is skipped if it has not started.
  template <typename T, typename Fn>
  Result<T> Call(Fn fn) {
    if (impl_->OnIoThread()) return fn();
    auto promise = std::make_shared<std::promise<Result<T>>>();
    std::future<Result<T>> answer = promise->get_future();
    auto abandoned = std::make_shared<std::atomic<bool>>(false);
    const bool posted =
        impl_->PostCommand([promise, abandoned, fn = std::move(fn)](bool run) mutable {
          if (!run || abandoned->load()) {
            promise->set_value(NotRunning());
            return;
          }
          promise->set_value(fn());
        });
    if (!posted) return NotRunning();
    if (answer.wait_for(kCommandTimeout) != std::future_status::ready) {
      abandoned->store(true);
      return Status::Unavailable("the crawl did not answer within 10 s");
    }
    return answer.get();
  }
  template <typename Fn>
  Status CallStatus(Fn fn) {
    Result<bool> r = Call<bool>([fn = std::move(fn)]() -> Result<bool> {
      Status s = fn();
      if (!s.ok()) return s;
      return true;
    });
    return r.ok() ? Status::Ok() : r.status();
  }

  Crawler::Impl* impl_;
};

namespace {

class ReadOnlyBackend final : public admin::Backend {
 public:
  ReadOnlyBackend(std::filesystem::path out_dir, std::unique_ptr<state::StateReader> reader)
      : out_dir_(std::move(out_dir)), reader_(std::move(reader)) {}

  Result<admin::SeedResult> InjectSeeds(const admin::SeedRequest&) override { return ReadOnly(); }
  admin::StatusSnapshot GetStatus() override {
    admin::StatusSnapshot s;
    s.state = "complete";
    s.queue_depth = reader_->EstimateQueued();
    s.pages_stored = reader_->pages_added();
    s.bytes_stored = WarcBytes();
    return s;
  }
  Status SetPolicy(std::string_view, const admin::HostPolicy&) override { return ReadOnly(); }
  Result<nlohmann::json> GetHost(std::string_view host) override {
    const std::string h = ToLowerAscii(host);
    std::vector<std::string> candidates =
        h.find("://") != std::string::npos
            ? std::vector<std::string>{h}
            : std::vector<std::string>{"http://" + h, "https://" + h};
    for (const std::string& origin : candidates) {
      std::optional<state::HostPoliteness> p = reader_->GetPoliteness(origin);
      std::optional<state::RobotsRecord> r = reader_->GetRobots(origin);
      std::optional<state::HostOverride> o = reader_->GetHostOverride(origin);
      if (!p && !r && !o) continue;
      nlohmann::json j;
      j["host"] = origin;
      j["policy"] = {
          {"robots_crawl_delay_ms",
           p && p->crawl_delay_ms >= 0 ? nlohmann::json(p->crawl_delay_ms) : nlohmann::json()},
          {"override_delay_ms",
           o && o->crawl_delay_ms >= 0 ? nlohmann::json(o->crawl_delay_ms) : nlohmann::json()},
          {"weight_override", o && o->weight > 0 ? nlohmann::json(o->weight) : nlohmann::json()},
          {"max_concurrent", 1}};
      j["robots"] = r ? nlohmann::json{{"status", r->status},
                                       {"expires_at_unix_ms", r->expiry_us / 1000},
                                       {"failures", r->failures},
                                       {"bytes", r->body.size()}}
                      : nlohmann::json();
      j["blocked"] = o && o->blocked;
      j["given_up"] =
          p && !p->dead_reason.empty() ? nlohmann::json(p->dead_reason) : nlohmann::json();
      j["recent_errors"] = nlohmann::json::array();
      return j;
    }
    return Status::NotFound("unknown host " + std::string(host) + ": not in this crawl");
  }
  Status SetBlocked(std::string_view, bool) override { return ReadOnly(); }
  Result<admin::PageList> ListPages(const admin::PageQuery& query) override {
    Result<state::PageFilter> f = ToFilter(query);
    if (!f.ok()) return f.status();
    return ToList(reader_->ScanPages(*f));
  }
  Result<admin::PageRecord> GetPage(uint64_t id) override {
    std::optional<state::PageEntry> p = reader_->GetPage(id);
    if (!p) return Status::NotFound("no page " + std::to_string(id));
    return ToRecord(*p);
  }
  Result<admin::PageContent> GetPageContent(uint64_t id) override {
    std::optional<state::PageEntry> p = reader_->GetPage(id);
    if (!p) return Status::NotFound("no page " + std::to_string(id));
    return ReadContent(out_dir_, *p);
  }
  Status Pause() override { return ReadOnly(); }
  Status Resume() override { return ReadOnly(); }
  std::string MetricsText() override {
    MetricsSnapshot m;
    m.pages_stored = reader_->pages_added();
    m.warc_bytes = WarcBytes();
    m.queue_depth = reader_->EstimateQueued();
    return RenderMetrics(m);
  }
  bool read_only() const override { return true; }

 private:
  static Status ReadOnly() { return Status::Unavailable("read-only: no crawl is running"); }
  uint64_t WarcBytes() const {
    uint64_t n = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(out_dir_, ec)) {
      const std::string name = e.path().filename().string();
      if (name.ends_with(".warc.gz") || name.ends_with(".warc")) n += e.file_size(ec);
    }
    return n;
  }

  std::filesystem::path out_dir_;
  std::unique_ptr<state::StateReader> reader_;
};

}  // namespace

Result<std::unique_ptr<admin::Backend>> OpenReadOnlyBackend(const std::filesystem::path& out_dir) {
  Result<std::unique_ptr<state::StateReader>> reader = state::StateReader::Open(out_dir / "state");
  if (!reader.ok()) return reader.status();
  return std::unique_ptr<admin::Backend>(
      std::make_unique<ReadOnlyBackend>(out_dir, std::move(*reader)));
}

// ---- Crawler::Impl: the backend and page records ----

admin::Backend* Crawler::Impl::admin_backend() {
  MutexLock lock(&commands_mu_);
  if (!backend_) backend_ = std::make_unique<LiveAdminBackend>(this);
  return backend_.get();
}

Result<state::PageEntry> Crawler::Impl::GetPageRecord(uint64_t id) const {
  ReaderLock lock(&pages_mu_);
  if (!pages_open_) return NotRunning();
  std::optional<state::PageEntry> p = db_->GetPage(id);
  if (!p) return Status::NotFound("no page " + std::to_string(id));
  return *p;
}

Result<state::PageScan> Crawler::Impl::ScanPageRecords(const state::PageFilter& filter) const {
  ReaderLock lock(&pages_mu_);
  if (!pages_open_) return NotRunning();
  return db_->ScanPages(filter);
}

admin::Backend* Crawler::admin_backend() { return impl_->admin_backend(); }

Result<state::PageScan> Crawler::ScanPageRecords(const state::PageFilter& filter) const {
  return impl_->ScanPageRecords(filter);
}

}  // namespace harvest::crawl
