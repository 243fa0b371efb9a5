// AresResolver against an in-process UDP DNS server (testing/dns_test_server.h): TTLs,
// negative caching, coalescing, timeouts, numeric names and the cache bound.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"
#include "fetch/resolver.h"
#include "fetch/testing/dns_test_server.h"

namespace harvest::fetch {
namespace {

using namespace std::chrono_literals;
using testing::DnsTestServer;

class ResolverTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.Start()); }

  ResolverOptions Options() const {
    ResolverOptions o;
    o.servers = server_.servers();
    o.timeout = 3000ms;
    return o;
  }
  void Make(ResolverOptions o) {
    auto r = NewAresResolver(std::move(o), &clock_, [this] {
      std::lock_guard lock(mu_);
      ++wakeups_;
      cv_.notify_all();
    });
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    resolver_ = std::move(r.value());
  }
  // Collects completed lookups until there are `n` (or 5 s of real time pass).
  std::vector<Resolution> Wait(size_t n) {
    std::vector<Resolution> out;
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    for (;;) {
      for (Resolution& r : resolver_->TakeCompleted()) out.push_back(std::move(r));
      if (out.size() >= n) break;
      std::unique_lock lock(mu_);
      if (!cv_.wait_until(lock, deadline, [&] { return wakeups_ > seen_; })) break;
      seen_ = wakeups_;
    }
    EXPECT_EQ(out.size(), n) << "lookups did not complete in time";
    return out;
  }
  Resolution ResolveOne(const std::string& name) {
    resolver_->Resolve(name);
    std::vector<Resolution> got = Wait(1);
    return got.empty() ? Resolution{} : got[0];
  }

  DnsTestServer server_;  // outlives the resolver
  FakeClock clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  int wakeups_ = 0;  // guarded by mu_
  int seen_ = 0;     // guarded by mu_
  std::unique_ptr<Resolver> resolver_;
};

TEST_F(ResolverTest, AnswerCachedForItsRecordTtl) {
  server_.SetAnswer("a.test", "192.0.2.7", 300);
  Make(Options());
  EXPECT_FALSE(resolver_->Cached("a.test").has_value());
  const Resolution r = ResolveOne("A.Test");
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.name, "a.test");
  EXPECT_EQ(r.address, "192.0.2.7");
  EXPECT_EQ(r.ttl, 300s);
  EXPECT_EQ(resolver_->pending(), 0u);
  EXPECT_EQ(resolver_->cached(), 1u);

  clock_.Advance(299s);
  auto cached = resolver_->Cached("a.test");
  ASSERT_TRUE(cached.has_value());
  EXPECT_TRUE(cached->ok);
  EXPECT_EQ(cached->address, "192.0.2.7");
  // A fresh answer is not looked up again: Resolve hands back the cached one.
  resolver_->Resolve("a.test");
  const std::vector<Resolution> again = resolver_->TakeCompleted();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].address, "192.0.2.7");
  EXPECT_EQ(server_.queries("a.test"), 1u);

  clock_.Advance(1s);
  EXPECT_FALSE(resolver_->Cached("a.test").has_value());
  EXPECT_EQ(resolver_->cached(), 0u);
  EXPECT_TRUE(ResolveOne("a.test").ok);
  EXPECT_EQ(server_.queries("a.test"), 2u);
}

TEST_F(ResolverTest, TtlClampedToBounds) {
  server_.SetAnswer("low.test", "192.0.2.1", 5);
  server_.SetAnswer("high.test", "192.0.2.2", 86400);
  server_.SetAnswer("zero.test", "192.0.2.3", 0);
  ResolverOptions o = Options();
  o.min_ttl = 60s;
  o.max_ttl = 3600s;
  Make(o);
  EXPECT_EQ(ResolveOne("low.test").ttl, 60s);
  EXPECT_EQ(ResolveOne("high.test").ttl, 3600s);
  EXPECT_EQ(ResolveOne("zero.test").ttl, 60s);
  clock_.Advance(59s);
  EXPECT_TRUE(resolver_->Cached("low.test").has_value());
  clock_.Advance(1s);
  EXPECT_FALSE(resolver_->Cached("low.test").has_value());
  EXPECT_TRUE(resolver_->Cached("high.test").has_value());
  clock_.Advance(3540s);
  EXPECT_FALSE(resolver_->Cached("high.test").has_value());
}

TEST_F(ResolverTest, FailuresCachedForNegativeTtl) {
  server_.SetNxdomain("nx.test");
  ResolverOptions o = Options();
  o.negative_ttl = 30s;
  Make(o);
  const Resolution r = ResolveOne("nx.test");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "NXDOMAIN (domain name not found)");
  EXPECT_EQ(r.address, "");
  EXPECT_EQ(r.ttl, 30s);
  auto cached = resolver_->Cached("nx.test");
  ASSERT_TRUE(cached.has_value());
  EXPECT_FALSE(cached->ok);
  EXPECT_EQ(cached->error, "NXDOMAIN (domain name not found)");
  resolver_->Resolve("nx.test");  // answered from the cache
  EXPECT_EQ(resolver_->TakeCompleted().size(), 1u);
  EXPECT_EQ(server_.queries("nx.test"), 1u);

  clock_.Advance(30s);
  EXPECT_FALSE(resolver_->Cached("nx.test").has_value());
  EXPECT_FALSE(ResolveOne("nx.test").ok);
  EXPECT_EQ(server_.queries("nx.test"), 2u);
}

TEST_F(ResolverTest, NameWithoutAddressIsNodata) {
  server_.SetAnswer("v6only.test", "2001:db8::5", 120);
  ResolverOptions o = Options();
  o.ipv6 = false;
  Make(o);
  const Resolution r = ResolveOne("v6only.test");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "no address (NODATA)");
}

TEST_F(ResolverTest, Ipv6AddressWhenNoIpv4) {
  server_.SetAnswer("v6only.test", "2001:db8::5", 120);
  server_.SetAnswer("v4.test", "192.0.2.9", 120);
  Make(Options());
  const Resolution r = ResolveOne("v6only.test");
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.address, "2001:db8::5");
  EXPECT_EQ(r.ttl, 120s);
  EXPECT_EQ(ResolveOne("v4.test").address, "192.0.2.9");
  EXPECT_EQ(server_.queries("v4.test", DnsTestServer::kTypeAAAA), 1u);
}

TEST_F(ResolverTest, ConcurrentLookupsOfOneNameAreCoalesced) {
  server_.SetHold("slow.test");
  Make(Options());
  resolver_->Resolve("slow.test");
  resolver_->Resolve("SLOW.test");
  resolver_->Resolve("slow.test.");
  ASSERT_TRUE(server_.WaitForQueries("slow.test", 1, 5s));
  EXPECT_EQ(resolver_->pending(), 1u);
  EXPECT_TRUE(resolver_->TakeCompleted().empty());
  server_.Release("slow.test", "192.0.2.44", 600);
  const std::vector<Resolution> got = Wait(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].address, "192.0.2.44");
  EXPECT_EQ(resolver_->pending(), 0u);
  EXPECT_EQ(server_.queries("slow.test"), 1u);
}

TEST_F(ResolverTest, TimeoutIsAFailure) {
  server_.SetIgnore("dead.test");
  ResolverOptions o = Options();
  o.timeout = 300ms;
  o.tries = 1;
  Make(o);
  const auto start = std::chrono::steady_clock::now();
  const Resolution r = ResolveOne("dead.test");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "timeout after 300 ms");
  EXPECT_EQ(r.ttl, o.negative_ttl);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 250ms);
  auto cached = resolver_->Cached("dead.test");
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(cached->error, "timeout after 300 ms");
}

TEST_F(ResolverTest, NumericAddressesNeedNoLookup) {
  Make(Options());
  for (const char* name : {"127.0.0.1", "::1", "[::1]", "2001:DB8::1"}) {
    auto r = resolver_->Cached(name);
    ASSERT_TRUE(r.has_value()) << name;
    EXPECT_TRUE(r->ok);
  }
  EXPECT_EQ(resolver_->Cached("[::1]")->address, "::1");
  EXPECT_EQ(resolver_->Cached("2001:DB8::1")->address, "2001:db8::1");
  resolver_->Resolve("10.1.2.3");
  const std::vector<Resolution> got = resolver_->TakeCompleted();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].ok);
  EXPECT_EQ(got[0].address, "10.1.2.3");
  EXPECT_EQ(resolver_->cached(), 0u);
  EXPECT_EQ(resolver_->pending(), 0u);
  // Almost numeric is a name.
  EXPECT_FALSE(resolver_->Cached("1.2.3.4.5").has_value());
}

TEST_F(ResolverTest, CacheBoundEvictsLeastRecentlyUsed) {
  for (const char* name : {"a.test", "b.test", "c.test"}) server_.SetAnswer(name, "192.0.2.1", 900);
  ResolverOptions o = Options();
  o.max_entries = 2;
  Make(o);
  ASSERT_TRUE(ResolveOne("a.test").ok);
  ASSERT_TRUE(ResolveOne("b.test").ok);
  ASSERT_TRUE(resolver_->Cached("a.test").has_value());  // a is now the most recent
  ASSERT_TRUE(ResolveOne("c.test").ok);
  EXPECT_EQ(resolver_->cached(), 2u);
  EXPECT_TRUE(resolver_->Cached("a.test").has_value());
  EXPECT_FALSE(resolver_->Cached("b.test").has_value());
  EXPECT_TRUE(resolver_->Cached("c.test").has_value());
}

TEST_F(ResolverTest, ZeroEntriesMeansNoCache) {
  server_.SetAnswer("a.test", "192.0.2.1", 900);
  ResolverOptions o = Options();
  o.max_entries = 0;
  Make(o);
  EXPECT_TRUE(ResolveOne("a.test").ok);
  EXPECT_EQ(resolver_->cached(), 0u);
  EXPECT_FALSE(resolver_->Cached("a.test").has_value());
}

TEST_F(ResolverTest, BadServerListIsAnError) {
  ResolverOptions o;
  o.servers = "not an address";
  auto r = NewAresResolver(o, &clock_, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not an address"), std::string::npos);
}

TEST_F(ResolverTest, DestroyedWithLookupsRunning) {
  server_.SetHold("held.test");
  Make(Options());
  resolver_->Resolve("held.test");
  ASSERT_TRUE(server_.WaitForQueries("held.test", 1, 5s));
  resolver_.reset();  // must neither hang nor leak (the asan build checks)
}

}  // namespace
}  // namespace harvest::fetch
