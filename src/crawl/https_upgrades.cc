#include "crawl/https_upgrades.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "crawl/robots_gate.h"
#include "crawl/shared_crawl.h"
#include "url/url.h"

namespace harvest::crawl {
namespace {

constexpr int64_t kDayUs = int64_t{24} * 3600 * 1000 * 1000;

// HSTS is for domain names, never for IP literals (RFC 6797 §8.1.1, §8.3).
bool IsIpLiteral(std::string_view host) {
  if (!host.empty() && host.front() == '[') return true;
  return std::all_of(host.begin(), host.end(),
                     [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
}

bool IsPermanentRedirect(int status) { return status == 301 || status == 308; }

// The Location of a redirect response, resolved against the request URL.
std::optional<url::Url> LocationOf(const fetch::FetchResult& r, const url::Url& from) {
  std::optional<std::string_view> location = r.Header("location");
  if (!location) return std::nullopt;
  return url::Parse(*location, &from);
}

// `to` is `from` on the other scheme: same name, same path and query, default ports.
bool SameResourceOtherScheme(const url::Url& from, const url::Url& to, std::string_view to_scheme) {
  return to.scheme() == to_scheme && to.host() == from.host() && to.port() == -1 &&
         from.port() == -1 && to.path_and_query() == from.path_and_query();
}

}  // namespace

HttpsUpgrades::HttpsUpgrades(Options options, Clock* clock, state::StateDb* db, SharedCrawl* shared)
    : options_(options),
      clock_(clock),
      db_(db),
      shared_(shared),
      any_records_(options.resumed && db != nullptr),
      any_include_subdomains_(options.resumed && db != nullptr) {}

void HttpsUpgrades::TrimCache() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  // Every record that matters is in the state (Save writes each change and notes the name in
  // the state's filter), handed over by the commit that follows: emptying the cache costs
  // reads, never knowledge.
  if (cache_.size() > options_.cache_names) cache_.clear();
}

const HttpsUpgrades::Stats& HttpsUpgrades::stats() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return stats_;
}

state::UpgradeRecord* HttpsUpgrades::Find(std::string_view name, bool create) {
  auto it = cache_.find(std::string(name));
  if (it != cache_.end()) return &it->second;
  // A name is read back only when the state may hold its record: a resumed crawl, or a name
  // this run saved (the filter). Whatever a read found is cached, absent included.
  if (db_ != nullptr && (options_.resumed || db_->MayHaveHostRecords(name))) {
    state::UpgradeRecord record = db_->GetUpgrade(name).value_or(state::UpgradeRecord{});
    return &cache_.emplace(std::string(name), record).first->second;
  }
  if (!create) return nullptr;
  return &cache_.emplace(std::string(name), state::UpgradeRecord{}).first->second;
}

bool HttpsUpgrades::HstsCovers(std::string_view name, int64_t now_us) {
  if (const state::UpgradeRecord* r = Find(name, false); r && r->hsts_until_us > now_us) {
    return true;
  }
  if (!any_include_subdomains_) return false;
  // Parents, nearest first (RFC 6797 §8.2): "a.b.example" -> "b.example" -> "example".
  for (size_t dot = name.find('.'); dot != std::string_view::npos; dot = name.find('.', dot + 1)) {
    std::string_view parent = name.substr(dot + 1);
    if (parent.empty()) break;
    const state::UpgradeRecord* p = Find(parent, false);
    if (p && p->include_subdomains && p->hsts_until_us > now_us) return true;
  }
  return false;
}

std::optional<std::string> HttpsUpgrades::Upgrade(std::string_view url, std::string* why) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (!any_records_ || !url.starts_with("http://")) return std::nullopt;
  std::optional<url::Url> u = url::Parse(url);
  if (!u || u->scheme() != "http") return std::nullopt;
  return UpgradeParsed(u->href(), u->host(), u->port() == -1, why);
}

std::optional<std::string> HttpsUpgrades::UpgradeParsed(std::string_view href,
                                                        std::string_view host, bool default_port,
                                                        std::string* why) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  // A crawl in which no name ever upgraded pays nothing per link.
  if (!any_records_ || !href.starts_with("http://")) return std::nullopt;
  if (host.empty() || IsIpLiteral(host)) return std::nullopt;
  const int64_t now_us = clock_->WallMicros();
  const char* reason = nullptr;
  if (HstsCovers(host, now_us)) {
    reason = "hsts";
  } else if (const state::UpgradeRecord* r = default_port ? Find(host, false) : nullptr;
             r && r->learnt_until_us > now_us) {
    reason = "learnt";
  }
  if (reason == nullptr) return std::nullopt;
  if (why != nullptr) *why = reason;
  ++stats_.rewritten;
  // RFC 6797 §8.3: the scheme becomes https, port 80 (implied: a parsed URL drops it) 443,
  // any other port is kept.
  return "https://" + std::string(href.substr(7));
}

void HttpsUpgrades::OnResponse(const fetch::FetchResult& r) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (!GotResponse(r)) return;
  std::optional<url::Url> from = url::Parse(r.url);
  if (!from || from->host().empty() || IsIpLiteral(from->host())) return;
  const int64_t now_us = clock_->WallMicros();
  const bool redirect = r.status >= 300 && r.status < 400;
  if (from->scheme() == "https") {
    std::optional<fetch::HstsPolicy> sts;
    if (options_.trust_hsts) sts = r.StrictTransportSecurity();
    // Back to the http twin: the host no longer upgrades (what was learnt no longer holds).
    std::optional<url::Url> to = redirect ? LocationOf(r, *from) : std::nullopt;
    const bool downgrade = to && SameResourceOtherScheme(*from, *to, "http");
    if (!sts && !downgrade) return;  // the common case: nothing to learn, no lookup
    state::UpgradeRecord* rec = Find(from->host(), /*create=*/sts.has_value());
    if (rec == nullptr) return;
    const state::UpgradeRecord before = *rec;
    if (sts && sts->max_age.count() == 0) {
      rec->hsts_until_us = 0;
      rec->include_subdomains = false;
    } else if (sts) {
      if (rec->hsts_until_us <= now_us) ++stats_.hsts_hosts;
      rec->hsts_until_us = now_us + sts->max_age.count() * 1000 * 1000;
      rec->include_subdomains = sts->include_subdomains;
      any_include_subdomains_ = any_include_subdomains_ || sts->include_subdomains;
    }
    if (downgrade) {
      rec->streak = 0;
      rec->learnt_until_us = 0;
    }
    // The expiry moves with every response of an HSTS host: written when it moved by a day.
    const bool changed = before.include_subdomains != rec->include_subdomains ||
                         (before.hsts_until_us == 0) != (rec->hsts_until_us == 0) ||
                         rec->hsts_until_us - before.hsts_until_us > kDayUs ||
                         before.learnt_until_us != rec->learnt_until_us ||
                         before.streak != rec->streak;
    if (changed) Save(std::string(from->host()), *rec);
    return;
  }
  if (from->scheme() != "http") return;
  std::optional<url::Url> to =
      redirect && IsPermanentRedirect(r.status) ? LocationOf(r, *from) : std::nullopt;
  const bool upgrade = to && SameResourceOtherScheme(*from, *to, "https");
  // Another answer only resets a count or a learnt upgrade that exists.
  state::UpgradeRecord* rec = Find(from->host(), /*create=*/upgrade);
  if (rec == nullptr) return;
  const state::UpgradeRecord before = *rec;
  if (upgrade) {
    ++rec->streak;
    if (rec->streak >= options_.learn_after) {
      if (rec->learnt_until_us <= now_us) ++stats_.learnt_hosts;
      rec->learnt_until_us = now_us + options_.recheck_after.count() * 1000 * 1000;
    }
  } else {
    rec->streak = 0;
    rec->learnt_until_us = 0;
  }
  if (before.streak != rec->streak || before.learnt_until_us != rec->learnt_until_us) {
    Save(std::string(from->host()), *rec);
  }
}

void HttpsUpgrades::HandOver(const std::string& name, const state::UpgradeRecord& record) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  *Find(name, /*create=*/true) = record;
  any_records_ = true;
  any_include_subdomains_ = any_include_subdomains_ || record.include_subdomains;
}

void HttpsUpgrades::Save(const std::string& name, const state::UpgradeRecord& record) {
  any_records_ = true;
  if (db_ != nullptr) {
    db_->PutUpgrade(name, record);
    db_->NoteHostEvicted(name);  // Find reads the name back after the cache is emptied
  }
  if (shared_ != nullptr) shared_->PutHost(name, {.upgrade = record});
}

}  // namespace harvest::crawl
