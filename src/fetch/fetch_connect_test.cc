// FetchRequest::connect_address / connect_port: the crawl resolves names itself and tells
// curl where to connect; curl must not resolve the URL's host then.
#include <gtest/gtest.h>

#include <string>

#include "fetch/fetch.h"
#include "fetch/testing/fetcher_fixture.h"

namespace harvest::fetch {
namespace {

using namespace std::chrono_literals;
using testing::FetcherTest;
using testing::FetcherUnderTest;
using testing::MakeResponse;
using testing::RawReply;
using testing::RawRequest;
using testing::UnusedPort;

class ConnectAddressTest : public FetcherTest {
 protected:
  void SetUp() override {
    Serve([](const RawRequest& req) {
      return RawReply{.bytes = MakeResponse(200, "OK", {}, "hello " + req.target)};
    });
  }
  std::string Port() const { return std::to_string(server_->port()); }
};

TEST_F(ConnectAddressTest, UnresolvableNameReachesTheGivenAddress) {
  FetcherUnderTest f(TestOptions());
  const std::string url = "http://some-name.invalid:" + Port() + "/x";
  const FetchResult r = FetchOne(f, {.id = 1, .url = url, .connect_address = "127.0.0.1"});
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello /x");
  EXPECT_EQ(r.ip, "127.0.0.1");
  EXPECT_EQ(r.url, url);
  const auto log = server_->requests();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].Header("Host"), "some-name.invalid:" + Port());  // the URL is unchanged
}

TEST_F(ConnectAddressTest, ConnectPortReplacesTheUrlPort) {
  FetcherUnderTest f(TestOptions());
  const std::string url = "http://Pinned.Invalid:" + std::to_string(UnusedPort()) + "/p";
  const FetchResult r =
      FetchOne(f, {.url = url, .connect_address = "127.0.0.1", .connect_port = server_->port()});
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(r.body, "hello /p");
}

TEST_F(ConnectAddressTest, TakesThePlaceOfConnectTo) {
  FetchOptions o = TestOptions();
  o.connect_to = {"::127.0.0.1:" + std::to_string(UnusedPort())};  // nothing listens there
  FetcherUnderTest f(o);
  const std::string url = "http://routed.invalid:" + Port() + "/";
  EXPECT_EQ(FetchOne(f, {.url = url}).outcome, FetchOutcome::kConnectError);
  const FetchResult r = FetchOne(f, {.url = url, .connect_address = "127.0.0.1"});
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
}

TEST_F(ConnectAddressTest, TrailingDotAndUpperCaseHost) {
  FetcherUnderTest f(TestOptions());
  for (const char* host : {"dot.invalid.", "UPPER.Invalid"}) {
    const std::string url = "http://" + std::string(host) + ":" + Port() + "/d";
    const FetchResult r = FetchOne(f, {.url = url, .connect_address = "127.0.0.1"});
    EXPECT_EQ(r.outcome, FetchOutcome::kOk) << host << ": " << r.error;
  }
}

TEST_F(ConnectAddressTest, ConnectionReusedPerHost) {
  FetcherUnderTest f(TestOptions());
  const std::string base = "http://reuse.invalid:" + Port();
  for (const char* path : {"/1", "/2", "/3"}) {
    const FetchResult r = FetchOne(f, {.url = base + path, .connect_address = "127.0.0.1"});
    EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  }
  EXPECT_EQ(server_->connections(), 1);
}

// Each host keeps its own idle connection although every host is behind one address.
TEST_F(ConnectAddressTest, HostsBehindOneAddressEachKeepTheirConnection) {
  FetcherUnderTest f(TestOptions());
  for (int round = 0; round < 3; ++round) {
    for (const char* host : {"a.invalid", "b.invalid", "c.invalid"}) {
      const std::string url = "http://" + std::string(host) + ":" + Port() + "/";
      const FetchResult r = FetchOne(f, {.url = url, .connect_address = "127.0.0.1"});
      EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
    }
  }
  EXPECT_EQ(server_->connections(), 3);
}

// max_idle_connections bounds the hosts holding an idle connection: the least recently
// used one is closed first.
TEST_F(ConnectAddressTest, IdleConnectionsBeyondTheCapAreClosed) {
  FetchOptions o = TestOptions();
  o.max_idle_connections = 1;
  FetcherUnderTest f(o);
  for (const char* host : {"a.invalid", "a.invalid", "b.invalid", "b.invalid", "a.invalid"}) {
    const std::string url = "http://" + std::string(host) + ":" + Port() + "/";
    const FetchResult r = FetchOne(f, {.url = url, .connect_address = "127.0.0.1"});
    EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  }
  EXPECT_EQ(server_->connections(), 3);  // a, b, then a again: b's idle one pushed a's out
}

TEST_F(ConnectAddressTest, ConnectionNotKeptWhenNotAskedTo) {
  FetcherUnderTest f(TestOptions());
  const std::string url = "http://once.invalid:" + Port() + "/";
  FetchResult r =
      FetchOne(f, {.url = url, .connect_address = "127.0.0.1", .reuse_connection = false});
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  r = FetchOne(f, {.url = url, .connect_address = "127.0.0.1"});
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  r = FetchOne(f, {.url = url, .connect_address = "127.0.0.1"});
  EXPECT_EQ(r.outcome, FetchOutcome::kOk) << r.error;
  EXPECT_EQ(server_->connections(), 2);
}

TEST_F(ConnectAddressTest, Ipv6AddressIsBracketed) {
  FetcherUnderTest f(TestOptions());
  // Nothing listens on [::1] at this port (or IPv6 is off): a connect error proves curl took
  // the address, not a malformed CONNECT_TO entry (kOtherError) or a DNS lookup (kDnsError).
  const FetchResult r = FetchOne(
      f,
      {.url = "http://v6.invalid:" + std::to_string(UnusedPort()) + "/", .connect_address = "::1"});
  EXPECT_EQ(r.outcome, FetchOutcome::kConnectError) << r.error;
}

TEST_F(ConnectAddressTest, NonNumericAddressIsRejected) {
  FetcherUnderTest f(TestOptions());
  FetchResult r = FetchOne(f, {.url = "http://a.invalid/", .connect_address = "localhost"});
  EXPECT_EQ(r.outcome, FetchOutcome::kOtherError);
  EXPECT_EQ(r.error, "connect_address 'localhost' is not a numeric IPv4 or IPv6 address");
  r = FetchOne(f,
               {.url = "http://a.invalid/", .connect_address = "127.0.0.1", .connect_port = 70000});
  EXPECT_EQ(r.outcome, FetchOutcome::kOtherError);
  EXPECT_EQ(server_->requests().size(), 0u);
}

}  // namespace
}  // namespace harvest::fetch
