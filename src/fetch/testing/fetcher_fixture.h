// Shared fixture of the Fetcher tests: an in-process RawHttpServer and polling helpers.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "fetch/fetch.h"
#include "fetch/testing/raw_http_server.h"

// The fetch tests are built twice: against CurlFetcher (fetch_test) and against HttpFetcher,
// whose plain-http requests run on Harvest's own client (http1_fetch_test).
#ifndef HARVEST_FETCHER_UNDER_TEST
#define HARVEST_FETCHER_UNDER_TEST CurlFetcher
#endif

namespace harvest::fetch::testing {

using FetcherUnderTest = HARVEST_FETCHER_UNDER_TEST;

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

inline std::string Gzip(const std::string& in) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, in.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// A port nothing listens on: bound, never listened, then closed.
inline int UnusedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

class FetcherTest : public ::testing::Test {
 protected:
  void Serve(RawHttpServer::Handler handler) {
    server_ = std::make_unique<RawHttpServer>(std::move(handler));
    ASSERT_TRUE(server_->Start());
  }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(server_->port()) + path;
  }
  std::string RouteAll() const { return "::127.0.0.1:" + std::to_string(server_->port()); }
  static FetchOptions TestOptions() {
    FetchOptions o;
    o.connect_timeout = 2s;
    o.total_timeout = 5s;
    return o;
  }
  // Starts one request and polls until it completes (or `limit` passes).
  static FetchResult FetchOne(Fetcher& f, FetchRequest req, std::chrono::milliseconds limit = 5s) {
    std::optional<FetchResult> out;
    f.Start(std::move(req), [&out](FetchResult&& r) { out = std::move(r); });
    const auto deadline = Clock::now() + limit;
    while (!out && Clock::now() < deadline) f.Poll(50ms);
    EXPECT_TRUE(out.has_value()) << "request did not complete in time";
    return out ? std::move(*out) : FetchResult{};
  }
  FetchResult FetchPath(const std::string& path, FetchOptions o = TestOptions()) {
    FetcherUnderTest f(o);
    EXPECT_TRUE(f.status().ok()) << f.status().ToString();
    return FetchOne(f, {.id = 7, .url = Url(path)});
  }

  std::unique_ptr<RawHttpServer> server_;
};

}  // namespace harvest::fetch::testing
