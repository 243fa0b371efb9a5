// admin::Backend over a running crawl (commands posted to the I/O thread) and over a crawl
// directory read-only (`harvest serve`). See admin_backend.h.
#include "crawl/admin_backend.h"

#include <charconv>
#include <chrono>
#include <future>

#include "base/ascii.h"
#include "crawl/crawler_impl.h"
#include "crawl/live_admin_backend.h"
#include "crawl/operator_control.h"
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

LiveAdminBackend::LiveAdminBackend(std::filesystem::path out_dir) : out_dir_(std::move(out_dir)) {}

template <typename T, typename Fn>
Result<T> LiveAdminBackend::Call(Fn fn) {
  if (channel_.OnIoThread()) {
    OperatorControl* control = channel_.control();
    if (control == nullptr) return NotRunning();
    return fn(control);
  }
  auto promise = std::make_shared<std::promise<Result<T>>>();
  std::future<Result<T>> answer = promise->get_future();
  auto abandoned = std::make_shared<std::atomic<bool>>(false);
  const bool posted =
      channel_.Post([promise, abandoned, fn = std::move(fn)](OperatorControl* control) mutable {
        if (control == nullptr || abandoned->load()) {
          promise->set_value(NotRunning());
          return;
        }
        promise->set_value(fn(control));
      });
  if (!posted) return NotRunning();
  if (answer.wait_for(kCommandTimeout) != std::future_status::ready) {
    abandoned->store(true);
    return Status::Unavailable("the crawl did not answer within 10 s");
  }
  return answer.get();
}

template <typename Fn>
Status LiveAdminBackend::CallStatus(Fn fn) {
  Result<bool> r = Call<bool>([fn = std::move(fn)](OperatorControl* c) -> Result<bool> {
    Status s = fn(c);
    if (!s.ok()) return s;
    return true;
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<admin::SeedResult> LiveAdminBackend::InjectSeeds(const admin::SeedRequest& request) {
  return Call<admin::SeedResult>([request](OperatorControl* c) { return c->InjectSeeds(request); });
}

admin::StatusSnapshot LiveAdminBackend::GetStatus() {
  Result<admin::StatusSnapshot> s =
      Call<admin::StatusSnapshot>([](OperatorControl* c) { return Result(c->GetStatus()); });
  if (s.ok()) return std::move(*s);
  {
    MutexLock lock(&final_mu_);
    if (final_status_) return *final_status_;
  }
  admin::StatusSnapshot none;
  none.state = "starting";
  return none;
}

Status LiveAdminBackend::SetPolicy(std::string_view host, const admin::HostPolicy& policy) {
  return CallStatus(
      [h = std::string(host), policy](OperatorControl* c) { return c->SetPolicy(h, policy); });
}

Result<nlohmann::json> LiveAdminBackend::GetHost(std::string_view host) {
  return Call<nlohmann::json>(
      [h = std::string(host)](OperatorControl* c) { return c->GetHost(h); });
}

Status LiveAdminBackend::SetBlocked(std::string_view host, bool blocked) {
  return CallStatus(
      [h = std::string(host), blocked](OperatorControl* c) { return c->SetBlocked(h, blocked); });
}

Result<admin::PageList> LiveAdminBackend::ListPages(const admin::PageQuery& query) {
  Result<state::PageFilter> f = ToFilter(query);
  if (!f.ok()) return f.status();
  Result<state::PageScan> scan = ScanPageRecords(*f);
  if (!scan.ok()) return scan.status();
  return ToList(std::move(*scan));
}

Result<admin::PageRecord> LiveAdminBackend::GetPage(uint64_t id) {
  Result<state::PageEntry> p = GetPageRecord(id);
  if (!p.ok()) return p.status();
  return ToRecord(*p);
}

Result<admin::PageContent> LiveAdminBackend::GetPageContent(uint64_t id) {
  Result<state::PageEntry> p = GetPageRecord(id);
  if (!p.ok()) return p.status();
  return ReadContent(out_dir_, *p);
}

Status LiveAdminBackend::Pause() {
  return CallStatus([](OperatorControl* c) {
    c->Pause(true);
    return Status::Ok();
  });
}

Status LiveAdminBackend::Resume() {
  return CallStatus([](OperatorControl* c) {
    c->Pause(false);
    return Status::Ok();
  });
}

std::string LiveAdminBackend::MetricsText() {
  Result<MetricsSnapshot> m =
      Call<MetricsSnapshot>([](OperatorControl* c) { return Result(c->Metrics()); });
  if (m.ok()) return RenderMetrics(*m);
  {
    MutexLock lock(&final_mu_);
    if (final_metrics_) return RenderMetrics(*final_metrics_);
  }
  return RenderMetrics(MetricsSnapshot{});
}

void LiveAdminBackend::OpenPages(state::StateDb* db) {
  WriterLock lock(&pages_mu_);
  pages_db_ = db;
}

void LiveAdminBackend::ClosePages() {
  WriterLock lock(&pages_mu_);
  pages_db_ = nullptr;
}

Result<state::PageEntry> LiveAdminBackend::GetPageRecord(uint64_t id) const {
  ReaderLock lock(&pages_mu_);
  if (pages_db_ == nullptr) return NotRunning();
  std::optional<state::PageEntry> p = pages_db_->GetPage(id);
  if (!p) return Status::NotFound("no page " + std::to_string(id));
  return *p;
}

Result<state::PageScan> LiveAdminBackend::ScanPageRecords(const state::PageFilter& filter) const {
  ReaderLock lock(&pages_mu_);
  if (pages_db_ == nullptr) return NotRunning();
  return pages_db_->ScanPages(filter);
}

void LiveAdminBackend::PublishFinal(admin::StatusSnapshot status, MetricsSnapshot metrics) {
  MutexLock lock(&final_mu_);
  final_status_ = std::move(status);
  final_metrics_ = std::move(metrics);
}

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

}  // namespace harvest::crawl
