// HttpsUpgrades: which http:// URLs the crawl asks for over https:// instead, without a
// request (docs/politeness.md "http and https"). Most of the real web answers http:// with a
// 301 to its https:// twin while old pages keep linking http://; asking each such link over
// http costs the host a request per link. A host name is upgraded when
//   - it sent HSTS (RFC 6797): a Strict-Transport-Security header on an HTTPS response
//     (§8.1: only the first header, only over HTTPS, never when certificates are not
//     verified), for max-age seconds; max-age=0 clears it; includeSubDomains covers every
//     name below it (§8.2). Ports follow §8.3: http://h → https://h, http://h:N → https://h:N;
//   - or it answered http:// with a same-path permanent redirect (301, 308) to https:// on
//     the same name `learn_after` times in a row (learnt; default port only). Any other answer
//     to an http:// request, or an https:// answer redirecting back to its http:// twin,
//     unlearns it; a learnt upgrade is checked again with a real request after `recheck_after`.
//
// The crawl asks it twice per URL: before admission (so http://h/p and https://h/p are one
// URL for the seen set) and when an http:// URL queued before the host was known to upgrade
// is leased (it is then recorded `upgraded` and its twin admitted, with no request).
//
// Records are kept by host name in the crawl state (state::UpgradeRecord, written when they
// change in a way that matters) and, in a shared crawl, with the host's records; RAM holds a
// bounded cache of names, read back from the state on a miss when the state may hold them (a
// resumed crawl, or a name this run saved: the state's host filter). A name that never
// upgraded costs no entry and no read in a fresh crawl.
//
// Thread-safety: event-loop-only (asserted).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/clock.h"
#include "base/thread_checker.h"
#include "fetch/fetch.h"
#include "state/state.h"

namespace harvest::crawl {

class SharedCrawl;

class HttpsUpgrades {
 public:
  struct Options {
    // The state may hold records from an earlier run (a miss reads the state).
    bool resumed = false;
    // Same-path http->https permanent redirects in a row before a host is learnt. Default 3.
    int learn_after = 3;
    // A learnt upgrade is checked again (the next http:// URL is requested) after this.
    std::chrono::seconds recheck_after{24 * 3600};
    // HSTS is taken only from responses whose certificate was verified (RFC 6797 §8.1).
    bool trust_hsts = true;
    // Names kept in RAM (present and absent); beyond it TrimCache empties the cache and later
    // misses read the state. Default 65536.
    size_t cache_names = 65536;
  };
  struct Stats {
    uint64_t hsts_hosts = 0;    // names that sent HSTS (this run)
    uint64_t learnt_hosts = 0;  // names learnt as upgrading (this run)
    uint64_t rewritten = 0;     // URLs rewritten to https (admission and leases)
  };

  // `db` may be nullptr (nothing persisted); `shared` may be nullptr.
  HttpsUpgrades(Options options, Clock* clock, state::StateDb* db, SharedCrawl* shared);
  HttpsUpgrades(const HttpsUpgrades&) = delete;
  HttpsUpgrades& operator=(const HttpsUpgrades&) = delete;

  // The https:// twin of `url` when it is an http:// URL of a host known to upgrade; `why`
  // (optional) gets "hsts" or "learnt". nullopt for anything else.
  std::optional<std::string> Upgrade(std::string_view url, std::string* why = nullptr);
  // The same for a parsed http URL: its serialization, host and whether its port is the
  // default (admission's links come parsed). Costs nothing while no name has a record.
  std::optional<std::string> UpgradeParsed(std::string_view href, std::string_view host,
                                           bool default_port, std::string* why = nullptr);
  // A response to one of the crawl's requests (pages, robots.txt, redirect hops): HSTS
  // headers, same-path upgrades and their absence. Failed requests teach nothing.
  void OnResponse(const fetch::FetchResult& r);
  // Empties the cache when it holds more than cache_names names. Call right before the state
  // commit (HostTable::Evict), so every record saved since is handed over before a read.
  void TrimCache();
  // A record handed over with a partition of a shared crawl (replaces what RAM knows).
  void HandOver(const std::string& name, const state::UpgradeRecord& record);

  const Stats& stats() const;

 private:
  // The record of `name`: cached, or read from the state when it may be there (then cached,
  // absent as an empty record); else a new empty one when `create`, else nullptr.
  state::UpgradeRecord* Find(std::string_view name, bool create);
  // HSTS in force for `name` itself or a parent that includes subdomains.
  bool HstsCovers(std::string_view name, int64_t now_us);
  void Save(const std::string& name, const state::UpgradeRecord& record);

  const Options options_;
  Clock* const clock_;
  state::StateDb* const db_;
  SharedCrawl* const shared_;
  ThreadChecker thread_;
  std::unordered_map<std::string, state::UpgradeRecord> cache_;
  // Some name has a record (saved in this run, handed over, or a resumed crawl's state).
  bool any_records_ = false;
  // Names with includeSubDomains in force were seen: parents are looked up.
  bool any_include_subdomains_ = false;
  Stats stats_;
};

}  // namespace harvest::crawl
