#include "frontier/admission.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <unordered_map>

namespace harvest::frontier {
namespace {

struct Url {
  std::string url, host, path, query, site;
  uint64_t fp;
};

class AdmissionTest : public ::testing::Test {
 protected:
  AdmitCandidate Candidate(const Url& u, int depth = 1) {
    AdmitCandidate c;
    c.canonical_url = u.url;
    c.host = u.host;
    c.path = u.path;
    c.query = u.query;
    c.registrable_domain = u.site;
    c.fp = u.fp;
    c.depth = depth;
    return c;
  }
  static Url Make(const std::string& host, const std::string& path, const std::string& query = "",
                  uint64_t fp = 0) {
    std::string url = "http://" + host + path + (query.empty() ? "" : "?" + query);
    return {url, host, path, query, SiteOf(host), fp != 0 ? fp : std::hash<std::string>()(url)};
  }
  // A stand-in for url::RegistrableDomain with every TLD a one-label public suffix: the last
  // two labels of the host name ("x.www.a.test:8080" -> "a.test"); "" for an IP address.
  static std::string SiteOf(const std::string& host) {
    const std::string name = host.substr(0, host.find(':'));
    if (name.find_first_not_of("0123456789.") == std::string::npos) return "";
    const size_t last = name.rfind('.');
    if (last == std::string::npos || last == 0) return name;
    const size_t before = name.rfind('.', last - 1);
    return before == std::string::npos ? name : name.substr(before + 1);
  }
  FakeClock clock_;
  dedup::SeenSet seen_{dedup::SeenSetOptions{.expected_urls = 10'000}};
};

TEST_F(AdmissionTest, AcceptThenSeen) {
  Admission a({}, {}, &seen_, &clock_);
  const Url u = Make("www.a.test", "/x");
  EXPECT_EQ(a.Admit(Candidate(u)), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(u)), AdmitVerdict::kSeen);
  EXPECT_EQ(a.count(AdmitVerdict::kAccept), 1u);
  EXPECT_EQ(a.count(AdmitVerdict::kSeen), 1u);
  EXPECT_TRUE(seen_.Contains(u.fp));
}

TEST_F(AdmissionTest, TooDeep) {
  ScopeOptions s;
  s.max_depth = 2;
  Admission a(s, {}, &seen_, &clock_);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/1"), 2)), AdmitVerdict::kAccept);
  const Url deep = Make("a.test", "/2");
  EXPECT_EQ(a.Admit(Candidate(deep, 3)), AdmitVerdict::kTooDeep);
  EXPECT_FALSE(seen_.Contains(deep.fp)) << "refused URLs are not marked seen";
}

TEST_F(AdmissionTest, AllowedDomains) {
  ScopeOptions s;
  s.allowed_domains = {"Example.TEST", ".other.test"};
  Admission a(s, {}, &seen_, &clock_);
  EXPECT_EQ(a.Admit(Candidate(Make("example.test", "/"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("www.example.test:8080", "/"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("x.other.test", "/"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("badexample.test", "/"))), AdmitVerdict::kOutOfScope);
  EXPECT_EQ(a.Admit(Candidate(Make("example.test.evil", "/"))), AdmitVerdict::kOutOfScope);
  EXPECT_EQ(a.count(AdmitVerdict::kOutOfScope), 2u);
}

TEST_F(AdmissionTest, ScopeAnyFollowsEveryHost) {
  Admission a({}, {}, &seen_, &clock_);
  a.AddSeed("www.a.test", "a.test");
  EXPECT_EQ(a.Admit(Candidate(Make("www.a.test", "/"), 0)), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("www.b.test", "/"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("x.www.a.test", "/"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("10.0.0.1", "/"))), AdmitVerdict::kAccept);
}

TEST_F(AdmissionTest, ScopeHostKeepsToTheSeedsHostNames) {
  ScopeOptions s;
  s.mode = ScopeMode::kHost;
  Admission a(s, {}, &seen_, &clock_);
  a.AddSeed("WWW.A.test:8080", "a.test");  // port and case of the seed do not matter
  a.AddSeed("c.test", "c.test");
  EXPECT_EQ(a.Admit(Candidate(Make("www.a.test", "/"), 0)), AdmitVerdict::kAccept) << "the seed";
  EXPECT_EQ(a.Admit(Candidate(Make("www.a.test", "/x"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("www.a.test:8443", "/y"))), AdmitVerdict::kAccept)
      << "another port of the same host";
  EXPECT_EQ(a.Admit(Candidate(Make("WWW.A.TEST", "/z"))), AdmitVerdict::kAccept)
      << "host names compare case-insensitively";
  EXPECT_EQ(a.Admit(Candidate(Make("c.test", "/"))), AdmitVerdict::kAccept) << "second seed";
  EXPECT_EQ(a.Admit(Candidate(Make("www.b.test", "/"))), AdmitVerdict::kOutOfScope)
      << "another host";
  EXPECT_EQ(a.Admit(Candidate(Make("x.www.a.test", "/"))), AdmitVerdict::kOutOfScope)
      << "a subdomain of the seed host";
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/"))), AdmitVerdict::kOutOfScope)
      << "the seed's parent domain (same site, other host)";
  EXPECT_EQ(a.Admit(Candidate(Make("a.test.evil", "/"))), AdmitVerdict::kOutOfScope);
  EXPECT_EQ(a.count(AdmitVerdict::kOutOfScope), 4u);
}

TEST_F(AdmissionTest, ScopeHostWithoutSeedsRefusesEverything) {
  ScopeOptions s;
  s.mode = ScopeMode::kHost;
  Admission a(s, {}, &seen_, &clock_);
  EXPECT_EQ(a.Admit(Candidate(Make("www.a.test", "/"))), AdmitVerdict::kOutOfScope);
}

TEST_F(AdmissionTest, ScopeSiteKeepsToTheSeedsRegistrableDomains) {
  ScopeOptions s;
  s.mode = ScopeMode::kSite;
  Admission a(s, {}, &seen_, &clock_);
  a.AddSeed("www.a.test", "A.test");
  EXPECT_EQ(a.Admit(Candidate(Make("www.a.test", "/"), 0)), AdmitVerdict::kAccept) << "the seed";
  EXPECT_EQ(a.Admit(Candidate(Make("shop.a.test", "/"))), AdmitVerdict::kAccept)
      << "a subdomain of the seed's site";
  EXPECT_EQ(a.Admit(Candidate(Make("x.www.a.test:8080", "/"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/"))), AdmitVerdict::kAccept)
      << "the registrable domain itself";
  EXPECT_EQ(a.Admit(Candidate(Make("www.b.test", "/"))), AdmitVerdict::kOutOfScope)
      << "another registrable domain";
  EXPECT_EQ(a.Admit(Candidate(Make("b.test", "/"))), AdmitVerdict::kOutOfScope);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test.evil", "/"))), AdmitVerdict::kOutOfScope);
}

TEST_F(AdmissionTest, ScopeSiteOfAHostWithoutRegistrableDomainIsTheHost) {
  ScopeOptions s;
  s.mode = ScopeMode::kSite;
  Admission a(s, {}, &seen_, &clock_);
  a.AddSeed("127.0.0.1:8080", "");
  Url same{"http://127.0.0.1:9090/", "127.0.0.1:9090", "/", "", "", 1};
  Url other{"http://127.0.0.2/", "127.0.0.2", "/", "", "", 2};
  EXPECT_EQ(a.Admit(Candidate(same)), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(other)), AdmitVerdict::kOutOfScope)
      << "two IP addresses are not one site although neither has a registrable domain";
}

TEST_F(AdmissionTest, ScopeModeCombinesWithTheOtherScopeChecks) {
  ScopeOptions s;
  s.mode = ScopeMode::kSite;
  s.allowed_domains = {"www.a.test", "b.test"};
  s.exclude_patterns = {"/private/"};
  Admission a(s, {}, &seen_, &clock_);
  a.AddSeed("www.a.test", "a.test");
  EXPECT_EQ(a.Admit(Candidate(Make("www.a.test", "/"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("shop.a.test", "/"))), AdmitVerdict::kOutOfScope)
      << "in the site, not in allowed_domains";
  EXPECT_EQ(a.Admit(Candidate(Make("www.b.test", "/"))), AdmitVerdict::kOutOfScope)
      << "in allowed_domains, not in the site";
  EXPECT_EQ(a.Admit(Candidate(Make("www.a.test", "/private/1"))), AdmitVerdict::kOutOfScope)
      << "in the site, excluded by a pattern";
}

TEST(ScopeModeTest, NamesRoundTrip) {
  for (ScopeMode m : {ScopeMode::kAny, ScopeMode::kHost, ScopeMode::kSite}) {
    ScopeMode parsed = ScopeMode::kAny;
    ASSERT_TRUE(ParseScopeMode(ScopeModeName(m), &parsed)) << ScopeModeName(m);
    EXPECT_EQ(parsed, m);
  }
  ScopeMode untouched = ScopeMode::kSite;
  EXPECT_FALSE(ParseScopeMode("Host", &untouched));
  EXPECT_FALSE(ParseScopeMode("", &untouched));
  EXPECT_FALSE(ParseScopeMode("domain", &untouched));
  EXPECT_EQ(untouched, ScopeMode::kSite);
}

TEST_F(AdmissionTest, IncludeExcludePatterns) {
  ScopeOptions s;
  s.include_patterns = {"http://a.test/docs/*", "/blog/"};
  s.exclude_patterns = {"*.pdf", "logout"};
  Admission a(s, {}, &seen_, &clock_);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/docs/x"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("b.test", "/blog/y"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/other"))), AdmitVerdict::kOutOfScope);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/docs/file.pdf"))), AdmitVerdict::kOutOfScope);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/docs/logout"))), AdmitVerdict::kOutOfScope);
}

TEST(MatchUrlPattern, GlobAndSubstring) {
  EXPECT_TRUE(MatchUrlPattern("*", ""));
  EXPECT_TRUE(MatchUrlPattern("a*c", "abbbc"));
  EXPECT_TRUE(MatchUrlPattern("a*c", "ac"));
  EXPECT_FALSE(MatchUrlPattern("a*c", "abcd"));
  EXPECT_TRUE(MatchUrlPattern("*/x/*/y", "http://h/x/1/2/y"));
  EXPECT_TRUE(MatchUrlPattern("cal", "http://h/calendar"));
  EXPECT_FALSE(MatchUrlPattern("cal", "http://h/c"));
  // A hostile pattern stays fast (no exponential backtracking).
  EXPECT_FALSE(MatchUrlPattern("*a*a*a*a*a*a*a*a*b", std::string(5000, 'a')));
}

TEST_F(AdmissionTest, TrapLongUrl) {
  TrapOptions t;
  t.max_url_length = 40;
  Admission a({}, t, &seen_, &clock_);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/short"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/" + std::string(40, 'x')))),
            AdmitVerdict::kTrapLongUrl);
}

TEST_F(AdmissionTest, TrapManyParams) {
  TrapOptions t;
  t.max_query_params = 3;
  Admission a({}, t, &seen_, &clock_);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/", "a=1&b=2&&c=3&"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/", "a=1&b=2&c=3&d=4"))),
            AdmitVerdict::kTrapManyParams);
}

TEST_F(AdmissionTest, TrapRepeatedSegment) {
  Admission a({}, {}, &seen_, &clock_);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/a/b/a/b/"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/a/b/a/b/a/"))), AdmitVerdict::kTrapRepeatedSegment);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/x/x/x"))), AdmitVerdict::kTrapRepeatedSegment);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "//////"))), AdmitVerdict::kAccept)
      << "empty segments do not count";
  // At the limit: as many segments as the limit (3), all alike, with and without a
  // trailing slash; one fewer is never a trap.
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/y/y/y/"))), AdmitVerdict::kTrapRepeatedSegment);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/z/z"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/w/w/"))), AdmitVerdict::kAccept);
  TrapOptions two;
  two.max_repeated_segment = 2;
  Admission b({}, two, &seen_, &clock_);
  EXPECT_EQ(b.Admit(Candidate(Make("b.test", "/v/v"))), AdmitVerdict::kTrapRepeatedSegment);
  EXPECT_EQ(b.Admit(Candidate(Make("b.test", "/u"))), AdmitVerdict::kAccept);
}

// The daily quota counts fetches: a host that fetched its quota today may not fetch again
// before the next UTC day, and its new URLs are deferred (accepted into the backlog, seen)
// — released the next day.
TEST_F(AdmissionTest, DailyQuotaCountsFetchesAndDefersUntilTheNextDay) {
  TrapOptions t;
  t.host_daily_quota = 3;
  Admission a({}, t, &seen_, &clock_);
  // 23:59:58 UTC on some day: the quota's day ends in 2 s.
  constexpr int64_t kDay = int64_t{86'400} * 1'000'000;
  clock_.SetMicros(20'000 * kDay + kDay - 2'000'000);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/" + std::to_string(i)))), AdmitVerdict::kAccept)
        << "admissions do not count toward the quota";
  }
  EXPECT_TRUE(a.MayFetch("a.test"));
  for (int i = 0; i < 3; ++i) a.NoteFetched("a.test");
  EXPECT_FALSE(a.MayFetch("a.test"));
  EXPECT_TRUE(a.MayFetch("b.test")) << "per host";
  EXPECT_EQ(a.hosts_over_quota(), 1u);
  EXPECT_EQ(a.BudgetOf("a.test"), Budget::kDailyQuota);
  const Url later = Make("a.test", "/later");
  EXPECT_EQ(a.Admit(Candidate(later)), AdmitVerdict::kDeferredQuota);
  EXPECT_TRUE(seen_.Contains(later.fp)) << "deferred, not dropped: deduplicated like any";
  EXPECT_EQ(a.Admit(Candidate(later)), AdmitVerdict::kSeen);
  EXPECT_EQ(a.backlog_total(), 1u);
  EXPECT_EQ(a.Releasable("a.test", /*host_idle=*/true), 0u) << "not before the next day";
  EXPECT_EQ(a.NextDayMicros(), 20'001 * kDay);
  // A port or another scheme is the same name: the same counters.
  EXPECT_EQ(a.Admit(Candidate(Make("a.test:8080", "/x"))), AdmitVerdict::kDeferredQuota);
  clock_.Advance(std::chrono::seconds(2));  // midnight
  EXPECT_TRUE(a.MayFetch("a.test"));
  EXPECT_EQ(a.hosts_over_quota(), 0u);
  EXPECT_EQ(a.BudgetOf("a.test"), Budget::kOpen);
  EXPECT_EQ(a.Releasable("a.test", /*host_idle=*/false), 2u);
  a.NoteReleased("a.test", 2);
  EXPECT_EQ(a.backlog_total(), 0u);
  EXPECT_TRUE(a.backlogs().empty());
  EXPECT_EQ(a.released_total(), 2u);
  EXPECT_EQ(a.CountersOf("a.test").admitted, 7u);
  EXPECT_EQ(a.CountersOf("a.test").fetched_today, 0u);
  EXPECT_EQ(a.CountersOf("a.test").fetched, 3u);
}

// Over the discovery ratio a host is flagged and throttled: its new URLs are deferred (not
// refused) and released as its fetches catch up — 50 per fetch — or in a batch when the
// host has nothing queued.
TEST_F(AdmissionTest, DiscoveryRatioDefersAndReleasesAsFetchesCatchUp) {
  TrapOptions t;
  t.max_discovery_ratio = 50;
  Admission a({}, t, &seen_, &clock_);
  uint64_t accepted = 0, deferred = 0;
  for (int i = 0; i < 1200; ++i) {
    const AdmitVerdict v = a.Admit(Candidate(Make("gen.test", "/p" + std::to_string(i))));
    accepted += v == AdmitVerdict::kAccept;
    deferred += v == AdmitVerdict::kDeferredRatio;
  }
  EXPECT_EQ(accepted, t.discovery_ratio_after);
  EXPECT_EQ(deferred, 200u);
  EXPECT_EQ(a.count(AdmitVerdict::kDeferredRatio), 200u);
  EXPECT_EQ(a.BudgetOf("gen.test"), Budget::kDiscoveryRatio);
  EXPECT_EQ(a.backlogs().at("gen.test"), 200u);
  EXPECT_EQ(a.Releasable("gen.test", false), 0u);
  // 21 fetches allow 1050 admissions: 50 of the backlog.
  for (int i = 0; i < 21; ++i) a.NoteFetched("gen.test");
  EXPECT_EQ(a.Releasable("gen.test", false), 50u);
  a.NoteReleased("gen.test", 50);
  EXPECT_EQ(a.Releasable("gen.test", false), 0u);
  EXPECT_EQ(a.backlogs().at("gen.test"), 150u);
  // Idle (nothing queued): a batch whatever the ratio, at most the backlog.
  EXPECT_EQ(a.Releasable("gen.test", /*host_idle=*/true), 150u);
  a.NoteReleased("gen.test", 150);
  EXPECT_EQ(a.Releasable("gen.test", true), 0u) << "no backlog";
  EXPECT_EQ(a.CountersOf("gen.test").admitted, 1200u);
}

// The backlog cap is what bounds an endless URL space: past it new URLs are refused, not
// marked seen (a later offer is judged again).
TEST_F(AdmissionTest, BacklogCapRefusesBeyondIt) {
  TrapOptions t;
  t.host_daily_quota = 1;
  t.max_backlog = 2;
  Admission a({}, t, &seen_, &clock_);
  a.NoteFetched("trap.test");
  EXPECT_EQ(a.Admit(Candidate(Make("trap.test", "/1"))), AdmitVerdict::kDeferredQuota);
  EXPECT_EQ(a.Admit(Candidate(Make("trap.test", "/2"))), AdmitVerdict::kDeferredQuota);
  const Url third = Make("trap.test", "/3");
  EXPECT_EQ(a.Admit(Candidate(third)), AdmitVerdict::kTrapBacklogCap);
  EXPECT_FALSE(seen_.Contains(third.fp));
  EXPECT_EQ(a.count(AdmitVerdict::kTrapBacklogCap), 1u);
  EXPECT_EQ(a.Admit(Candidate(Make("other.test", "/3"))), AdmitVerdict::kAccept) << "per host";
  // A resumed crawl's backlog counts toward the cap.
  Admission b({}, t, &seen_, &clock_);
  b.RestoreBacklog("trap.test", 2);
  b.NoteFetched("trap.test");
  EXPECT_EQ(b.Admit(Candidate(Make("trap.test", "/4"))), AdmitVerdict::kTrapBacklogCap);
  EXPECT_EQ(b.backlog_total(), 2u);
  b.ClearBacklog("trap.test");
  EXPECT_EQ(b.backlog_total(), 0u);
}

// The counter store is written once per host and SaveChanged, with the counters after
// every change since; a host evicted by TrimResident was saved first and loads back.
TEST_F(AdmissionTest, CountersAreSavedOncePerHostAndTurn) {
  struct Store final : Admission::CounterStore {
    bool Load(uint64_t key, HostCounters* c) override {
      auto it = saved.find(key);
      if (it == saved.end()) return false;
      *c = it->second;
      return true;
    }
    void Save(uint64_t key, const HostCounters& c) override {
      saved[key] = c;
      ++saves;
    }
    void Evicted(uint64_t) override { ++evictions; }
    std::unordered_map<uint64_t, HostCounters> saved;
    int saves = 0, evictions = 0;
  } store;
  Admission a({}, {}, &seen_, &clock_);
  a.SetCounterStore(&store, /*max_resident=*/1);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/" + std::to_string(i)))), AdmitVerdict::kAccept);
  }
  a.NoteFetched("a.test");
  a.Admit(Candidate(Make("b.test", "/")));
  EXPECT_EQ(store.saves, 0);  // nothing until the turn's save
  a.SaveChanged();
  EXPECT_EQ(store.saves, 2);  // one per host
  const HostCounters& saved_a = store.saved.at(Admission::HostHash("a.test"));
  EXPECT_EQ(saved_a.admitted, 10u);
  EXPECT_EQ(saved_a.fetched, 1u);
  a.SaveChanged();
  EXPECT_EQ(store.saves, 2);  // nothing changed since
  // A change then an eviction: saved before the host leaves RAM (one resident host).
  a.NoteFetched("a.test");
  a.TrimResident();
  EXPECT_EQ(store.saves, 3);
  EXPECT_EQ(store.evictions, 1);
  EXPECT_EQ(a.hosts_resident(), 1u);
  EXPECT_EQ(store.saved.at(Admission::HostHash("a.test")).fetched, 2u);
}

// A counter store in a map; with `blind`, it takes blind increments (ListSaved, AddAdmitted)
// as the crawl state's does.
struct MapStore final : Admission::CounterStore {
  explicit MapStore(bool blind_adds) : blind(blind_adds) {}
  bool Load(uint64_t key, HostCounters* c) override {
    ++loads;
    auto it = saved.find(key);
    if (it == saved.end()) return false;
    *c = it->second;
    return true;
  }
  void Save(uint64_t key, const HostCounters& c) override { saved[key] = c; }
  void Evicted(uint64_t) override {}
  bool ListSaved(const std::function<void(uint64_t, const HostCounters&)>& fn) override {
    if (!blind) return false;
    for (const auto& [key, c] : saved) fn(key, c);
    return true;
  }
  void AddAdmitted(uint64_t key, uint64_t n) override {
    ASSERT_TRUE(blind);
    saved[key].admitted += n;
    ++adds;
  }
  const bool blind;
  std::unordered_map<uint64_t, HostCounters> saved;
  int loads = 0, adds = 0;
};

// Links to hosts whose counters left RAM are counted without loading them while the hosts'
// budgets are open for certain; the counts reach the store once per host and turn, or join
// the counters of a host that enters RAM first; near a threshold the host is loaded. A new
// host enters RAM (its load finds nothing, which costs no read in the crawl state).
TEST_F(AdmissionTest, AdmissionsToHostsOutOfRamAreCountedBlind) {
  TrapOptions t;
  t.discovery_ratio_after = 5;
  t.max_discovery_ratio = 1;
  MapStore store(/*blind_adds=*/true);
  Admission a({}, t, &seen_, &clock_);
  a.SetCounterStore(&store, /*max_resident=*/1);
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/0"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.Admit(Candidate(Make("b.test", "/0"))), AdmitVerdict::kAccept);
  EXPECT_EQ(a.admitted_blind(), 0u);
  EXPECT_EQ(store.loads, 2);
  a.TrimResident();  // a.test leaves RAM (saved: 1 admitted)
  EXPECT_EQ(a.hosts_resident(), 1u);
  for (int i = 1; i < 5; ++i) {
    EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/" + std::to_string(i)))), AdmitVerdict::kAccept);
  }
  EXPECT_EQ(a.admitted_blind(), 4u);
  EXPECT_EQ(store.loads, 2);
  EXPECT_EQ(a.hosts_resident(), 1u);
  // A seen URL is refused on the blind path too, and not counted.
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/1"))), AdmitVerdict::kSeen);
  EXPECT_EQ(a.admitted_blind(), 4u);
  // The sixth: its bound reached discovery_ratio_after, so it is loaded and judged (1 saved +
  // 4 counted blind = 5 admitted, none fetched: deferred).
  EXPECT_EQ(a.Admit(Candidate(Make("a.test", "/5"))), AdmitVerdict::kDeferredRatio);
  EXPECT_EQ(store.loads, 3);
  EXPECT_EQ(a.CountersOf("a.test").admitted, 5u);
  EXPECT_EQ(store.adds, 0);
  // b.test leaves RAM, then is counted blind until the turn's save, which adds its count in
  // one increment.
  a.TrimResident();
  a.Admit(Candidate(Make("b.test", "/1")));
  a.Admit(Candidate(Make("b.test", "/2")));
  EXPECT_EQ(a.admitted_blind(), 6u);
  a.SaveChanged();
  EXPECT_EQ(store.adds, 1);
  EXPECT_EQ(store.saved.at(Admission::HostHash("b.test")).admitted, 3u);
  EXPECT_EQ(store.saved.at(Admission::HostHash("a.test")).admitted, 5u);
  a.SaveChanged();
  EXPECT_EQ(store.adds, 1) << "nothing counted since";
  // A host listed by the store at SetCounterStore (a resumed crawl) with 4 admitted: its bound
  // is 4, so its next link is blind and the one after is loaded.
  MapStore resumed(/*blind_adds=*/true);
  resumed.saved[Admission::HostHash("c.test")].admitted = 4;
  Admission r({}, t, &seen_, &clock_);
  r.SetCounterStore(&resumed, 100);
  EXPECT_EQ(r.Admit(Candidate(Make("c.test", "/1"))), AdmitVerdict::kAccept);
  EXPECT_EQ(r.admitted_blind(), 1u);
  EXPECT_EQ(r.Admit(Candidate(Make("c.test", "/2"))), AdmitVerdict::kDeferredRatio);
  EXPECT_EQ(r.CountersOf("c.test").admitted, 5u);
  // A store without blind increments: every host is loaded.
  MapStore plain(/*blind_adds=*/false);
  Admission p({}, t, &seen_, &clock_);
  p.SetCounterStore(&plain, 1);
  p.Admit(Candidate(Make("d.test", "/1")));
  p.Admit(Candidate(Make("e.test", "/1")));
  p.TrimResident();  // d.test leaves RAM
  EXPECT_EQ(p.Admit(Candidate(Make("d.test", "/2"))), AdmitVerdict::kAccept);
  EXPECT_EQ(p.admitted_blind(), 0u);
  EXPECT_EQ(p.activity_bound_bytes(), 0u);
  EXPECT_EQ(plain.loads, 3);
}

// The same random stream of links, fetches and evictions through an Admission that counts
// blind and one that loads every host: the same verdicts, and the same counters at the end.
TEST_F(AdmissionTest, BlindCountingChangesNoVerdict) {
  TrapOptions t;
  t.discovery_ratio_after = 12;
  t.max_discovery_ratio = 2;
  t.host_daily_quota = 40;
  t.max_backlog = 1'000'000;
  MapStore blind_store(true), plain_store(false);
  dedup::SeenSet seen_blind{dedup::SeenSetOptions{.expected_urls = 20'000}};
  dedup::SeenSet seen_plain{dedup::SeenSetOptions{.expected_urls = 20'000}};
  Admission blind({}, t, &seen_blind, &clock_), plain({}, t, &seen_plain, &clock_);
  blind.SetCounterStore(&blind_store, /*max_resident=*/4);
  plain.SetCounterStore(&plain_store, /*max_resident=*/4);
  uint64_t rng = 42;
  auto next = [&rng] {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return rng >> 33;
  };
  for (int i = 0; i < 6000; ++i) {
    const std::string host = "h" + std::to_string(next() % 30) + ".test";
    const uint64_t op = next() % 10;
    if (op < 7) {
      const Url u = Make(host, "/" + std::to_string(next() % 400));
      ASSERT_EQ(blind.Admit(Candidate(u)), plain.Admit(Candidate(u))) << "link " << i;
    } else if (op < 9) {
      blind.NoteFetched(host);
      plain.NoteFetched(host);
    } else {
      blind.TrimResident();
      plain.TrimResident();
    }
    if (i % 1000 == 999) clock_.Advance(std::chrono::hours(12));  // days roll
  }
  EXPECT_GT(blind.admitted_blind(), 100u);
  EXPECT_GT(blind.count(AdmitVerdict::kDeferredRatio), 0u);
  blind.SaveChanged();
  plain.SaveChanged();
  for (int h = 0; h < 30; ++h) {
    const std::string host = "h" + std::to_string(h) + ".test";
    const HostCounters b = blind.CountersOf(host), p = plain.CountersOf(host);
    EXPECT_EQ(b.admitted, p.admitted) << host;
    EXPECT_EQ(b.fetched, p.fetched) << host;
    EXPECT_EQ(b.fetched_today, p.fetched_today) << host;
  }
}

TEST(VerdictName, AllNamed) {
  EXPECT_STREQ(VerdictName(AdmitVerdict::kAccept), "accept");
  EXPECT_STREQ(VerdictName(AdmitVerdict::kDeferredRatio), "deferred-discovery-ratio");
  EXPECT_STREQ(VerdictName(AdmitVerdict::kTrapBacklogCap), "trap-backlog-cap");
  EXPECT_STREQ(BudgetName(Budget::kDailyQuota), "daily-quota");
  for (size_t i = 0; i < kAdmitVerdictCount; ++i) {
    EXPECT_STRNE(VerdictName(static_cast<AdmitVerdict>(i)), "unknown");
  }
}

}  // namespace
}  // namespace harvest::frontier
