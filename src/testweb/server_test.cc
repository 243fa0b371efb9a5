// In-process tests of the TestWeb server over real loopback sockets.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "testweb/internal.h"
#include "testweb/testweb.h"

namespace harvest::testweb {
namespace {

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

class Client {
 public:
  // Connects to `ip` (dotted IPv4, default 127.0.0.1) on `port`.
  explicit Client(int port, const char* ip = "127.0.0.1") {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, ip, &addr.sin_addr);
    timeval tv{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~Client() { close(fd_); }
  bool connected() const { return connected_; }

  void Send(const std::string& data) {
    ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    ASSERT_EQ(n, static_cast<ssize_t>(data.size()));
  }

  // Reads one response with a Content-Length body (or none for HEAD/304).
  HttpResponse Read(bool head = false) {
    HttpResponse r;
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return r;
    }
    std::string head_text = buf_.substr(0, end);
    buf_.erase(0, end + 4);
    r.status = std::atoi(head_text.substr(9, 3).c_str());
    size_t pos = head_text.find("\r\n");
    while (pos != std::string::npos) {
      size_t next = head_text.find("\r\n", pos + 2);
      std::string line =
          head_text.substr(pos + 2, next == std::string::npos ? next : next - pos - 2);
      size_t colon = line.find(':');
      const std::string name = ToLowerAscii(line.substr(0, colon));
      r.headers[name] = line.substr(colon + 2);
      pos = next;
    }
    size_t length = r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
    if (head || r.status == 304) length = 0;
    while (buf_.size() < length) {
      if (!Fill()) return r;
    }
    r.body = buf_.substr(0, length);
    buf_.erase(0, length);
    return r;
  }

  // Reads up to n raw bytes.
  std::string ReadRaw(size_t n) {
    while (buf_.size() < n && Fill()) {
    }
    std::string out = buf_.substr(0, n);
    buf_.erase(0, out.size());
    return out;
  }

 private:
  bool Fill() {
    char tmp[65536];
    ssize_t n = recv(fd_, tmp, sizeof(tmp), 0);
    if (n <= 0) return false;
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
  int fd_;
  bool connected_ = false;
  std::string buf_;
};

std::string Get(const std::string& host, const std::string& target, const std::string& extra = "") {
  return "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\n" + extra + "\r\n";
}

std::string Gunzip(const std::string& in) {
  z_stream zs{};
  inflateInit2(&zs, 15 + 16);
  std::string out(1 << 20, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  inflateEnd(&zs);
  return rc == Z_STREAM_END ? out : "<gunzip failed>";
}

std::vector<nlohmann::json> ReadLog(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

class TestWebServer : public ::testing::Test {
 protected:
  void SetUp() override {
    log_path_ = ::testing::TempDir() + "testweb_server_test_" + std::to_string(getpid()) + ".jsonl";
    TestWebOptions o;
    o.site.hosts = 10;
    o.log_path = log_path_;
    auto web = TestWeb::Start(o);
    ASSERT_TRUE(web.ok()) << web.status().ToString();
    web_ = std::move(web.value());
    ASSERT_GT(web_->port(), 0);
  }
  void TearDown() override {
    if (web_) web_->Stop();
    std::remove(log_path_.c_str());
  }
  std::string log_path_;
  std::unique_ptr<TestWeb> web_;
};

TEST_F(TestWebServer, PageConditionalGzipOnOneKeepAliveConnection) {
  Client c(web_->port());
  ASSERT_TRUE(c.connected());
  c.Send(Get("H0001.TEST:80", "/p/3?b=2&a=1"));
  HttpResponse page = c.Read();
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.body, RenderTreePage(web_->site(), 1, 3, 0).body);
  ASSERT_TRUE(page.headers.count("etag"));
  ASSERT_TRUE(page.headers.count("last-modified"));

  c.Send(Get("h0001.test", "/p/3", "If-None-Match: " + page.headers["etag"] + "\r\n"));
  HttpResponse not_modified = c.Read();
  EXPECT_EQ(not_modified.status, 304);
  EXPECT_TRUE(not_modified.body.empty());

  c.Send(Get("h0001.test", "/p/3", "If-Modified-Since: " + page.headers["last-modified"] + "\r\n"));
  EXPECT_EQ(c.Read().status, 304);

  c.Send(Get("h0001.test", "/p/3", "Accept-Encoding: gzip, deflate\r\n"));
  HttpResponse gz = c.Read();
  EXPECT_EQ(gz.status, 200);
  EXPECT_EQ(gz.headers["content-encoding"], "gzip");
  EXPECT_EQ(Gunzip(gz.body), page.body);

  c.Send("HEAD /p/3 HTTP/1.1\r\nHost: h0001.test\r\n\r\n");
  HttpResponse head = c.Read(/*head=*/true);
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.headers["content-length"], std::to_string(page.body.size()));

  c.Send(Get("nowhere.test", "/"));
  EXPECT_EQ(c.Read().status, 404);
  c.Send(Get("h0001.test", "/robots.txt"));
  HttpResponse robots = c.Read();
  EXPECT_EQ(robots.body, web_->site().RobotsTxt(1));

  web_->Stop();
  auto log = ReadLog(log_path_);
  ASSERT_EQ(log.size(), 7u);
  for (const auto& j : log) {
    EXPECT_EQ(j["conn"], log[0]["conn"]);  // keep-alive: one connection
    EXPECT_LE(j["start_us"].get<int64_t>(), j["end_us"].get<int64_t>());
  }
  EXPECT_EQ(log[0]["host"], "h0001.test");
  EXPECT_EQ(log[0]["path"], "/p/3?b=2&a=1");
  EXPECT_EQ(log[0]["page"], "h0001.test/p/3?a=1&b=2");
  EXPECT_EQ(log[0]["kind"], "page");
  EXPECT_EQ(log[0]["status"], 200);
  EXPECT_EQ(log[0]["bytes"], page.body.size());
  EXPECT_FALSE(log[0].contains("cond"));
  EXPECT_FALSE(log[0].contains("inm"));
  EXPECT_FALSE(log[0].contains("ims"));
  EXPECT_EQ(log[1]["status"], 304);
  EXPECT_EQ(log[1]["cond"], true);
  EXPECT_EQ(log[1]["inm"], page.headers["etag"]);
  EXPECT_FALSE(log[1].contains("ims"));
  EXPECT_EQ(log[2]["ims"], page.headers["last-modified"]);
  EXPECT_FALSE(log[2].contains("inm"));
  EXPECT_EQ(log[1]["bytes"], 0);
  EXPECT_EQ(log[3]["bytes"], gz.body.size());
  EXPECT_EQ(log[4]["bytes"], 0);  // HEAD
  EXPECT_TRUE(log[5]["page"].is_null());
  EXPECT_EQ(log[5]["kind"], "unknown");
  EXPECT_EQ(log[6]["kind"], "robots");
}

TEST_F(TestWebServer, DisallowedRetryAfterAndEpochAreLogged) {
  Client c(web_->port());
  c.Send(Get("hostile.test", "/edge/disallowed/page.html"));
  EXPECT_EQ(c.Read().status, 200);
  c.Send(Get("hostile.test", "/edge/status/503"));
  HttpResponse unavailable = c.Read();
  EXPECT_EQ(unavailable.status, 503);
  EXPECT_EQ(unavailable.headers["retry-after"], "2");
  c.Send(Get("hostile.test", "/edge/changing"));
  HttpResponse v0 = c.Read();
  c.Send("POST /__testweb/epoch HTTP/1.1\r\nHost: control.test\r\nContent-Length: 1\r\n\r\n7");
  EXPECT_EQ(c.Read().body, "7\n");
  EXPECT_EQ(web_->epoch(), 7);
  c.Send(Get("hostile.test", "/edge/changing", "If-None-Match: " + v0.headers["etag"] + "\r\n"));
  HttpResponse v7 = c.Read();
  EXPECT_EQ(v7.status, 200);  // changed: the old ETag no longer matches
  EXPECT_NE(v7.body, v0.body);
  c.Send(Get("hostile.test", "/edge/loop-a"));
  HttpResponse loop = c.Read();
  EXPECT_EQ(loop.status, 302);
  EXPECT_EQ(loop.headers["location"], "http://hostile.test/edge/loop-b");
  web_->Stop();
  auto log = ReadLog(log_path_);
  ASSERT_EQ(log.size(), 6u);
  EXPECT_EQ(log[0]["disallowed"], true);
  EXPECT_EQ(log[1]["retry_after_s"], 2);
  EXPECT_EQ(log[1]["kind"], "edge");
  EXPECT_EQ(log[4]["cond"], true);
}

TEST_F(TestWebServer, SlowAndEndlessResponsesUseTimers) {
  Client slow(web_->port());
  auto start = std::chrono::steady_clock::now();
  slow.Send(Get("hostile.test", "/edge/slow"));
  // Meanwhile another connection is served at once (the loop is not blocked).
  Client fast(web_->port());
  fast.Send(Get("h0002.test", "/"));
  EXPECT_EQ(fast.Read().status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(slow.Read().status, 200);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2900));

  {
    Client endless(web_->port());
    endless.Send(Get("hostile.test", "/edge/endless"));
    std::string head = endless.ReadRaw(200);  // headers + prefix + a few trickled bytes
    EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u);
    usleep(350 * 1000);
  }  // client closes
  const int64_t closed_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
  usleep(300 * 1000);
  web_->Stop();
  auto log = ReadLog(log_path_);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[2]["path"], "/edge/endless");
  EXPECT_GT(log[2]["bytes"].get<int>(), 60);
  // The response ended with the last byte sent before the client closed, not with a trickle
  // tick that ran after the close (the audit measures the host's delay from this end).
  EXPECT_LE(log[2]["end_us"].get<int64_t>(), closed_us);
}

// A request's logged start is when its first bytes reached the server (the kernel's receive
// time), not when its head was complete or when the loop got round to reading it: the gap
// the audit measures is the host's, without the test web's own wait for a core.
TEST_F(TestWebServer, ARequestStartsWhenItsFirstBytesArrive) {
  auto wall_now = [] { return SystemClock::Default()->WallMicros(); };
  // The kernel turns receive times on shortly after the listeners ask (a work item): one
  // request first, so that the one measured has them.
  Client warm(web_->port());
  warm.Send(Get("h0002.test", "/"));
  EXPECT_EQ(warm.Read().status, 200);
  usleep(50 * 1000);
  Client c(web_->port());
  const std::string request = Get("h0001.test", "/");
  const int64_t before = wall_now();
  c.Send(request.substr(0, 10));
  usleep(300 * 1000);
  const int64_t rest_sent = wall_now();
  c.Send(request.substr(10));
  EXPECT_EQ(c.Read().status, 200);
  web_->Stop();
  auto log = ReadLog(log_path_);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1]["host"], "h0001.test");
  const int64_t start = log[1]["start_us"].get<int64_t>();
  EXPECT_GE(start, before);
  EXPECT_LT(start, rest_sent - 200'000) << "stamped when the head was complete";
  EXPECT_LE(start, log[1]["end_us"].get<int64_t>());
}

TEST(TestWebStart, EpochAdvancesEveryChangeEveryOfTheClock) {
  FakeClock clock;
  TestWebOptions o;
  o.site.hosts = 3;
  o.epoch = 5;
  o.change_every = std::chrono::seconds(10);
  o.clock = &clock;
  auto started = TestWeb::Start(o);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::unique_ptr<TestWeb> web = std::move(started.value());
  EXPECT_EQ(web->epoch(), 5);
  clock.Advance(std::chrono::milliseconds(9999));
  EXPECT_EQ(web->epoch(), 5);
  clock.Advance(std::chrono::milliseconds(1));
  EXPECT_EQ(web->epoch(), 6);
  clock.Advance(std::chrono::seconds(25));
  EXPECT_EQ(web->epoch(), 8);
  web->SetEpoch(20);  // the control POST: a manual bump, the schedule goes on from there
  EXPECT_EQ(web->epoch(), 20);
  clock.Advance(std::chrono::seconds(5));
  EXPECT_EQ(web->epoch(), 21);

  // The pages follow: /p/3 changes with the scheduled epoch.
  Client c(web->port());
  c.Send(Get("h0001.test", "/p/3"));
  HttpResponse before = c.Read();
  clock.Advance(std::chrono::seconds(10));
  c.Send(Get("h0001.test", "/p/3", "If-None-Match: " + before.headers["etag"] + "\r\n"));
  HttpResponse after = c.Read();
  EXPECT_EQ(after.status, 200);
  EXPECT_EQ(after.body, RenderTreePage(web->site(), 1, 3, 22).body);
  EXPECT_NE(after.body, before.body);
  web->Stop();

  // Without a schedule the clock does not move the epoch.
  o.change_every = std::chrono::milliseconds(0);
  auto still = TestWeb::Start(o);
  ASSERT_TRUE(still.ok());
  clock.Advance(std::chrono::hours(1));
  EXPECT_EQ((*still)->epoch(), 5);
  (*still)->Stop();
}

TEST(TestWebStart, ServesEveryAddressAndLogsWhichOne) {
  const std::string log_path =
      ::testing::TempDir() + "testweb_multi_address_" + std::to_string(getpid()) + ".jsonl";
  TestWebOptions o;
  o.site.hosts = 5;
  o.listen = "127.0.0.254:0";  // counting up carries into the next octet
  o.addresses = 4;
  o.threads = 2;
  o.log_path = log_path;
  auto started = TestWeb::Start(o);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::unique_ptr<TestWeb> web = std::move(started.value());
  const std::string port = std::to_string(web->port());
  ASSERT_GT(web->port(), 0);
  EXPECT_EQ(web->address(), "127.0.0.254:" + port);
  EXPECT_EQ(web->addresses(),
            (std::vector<std::string>{"127.0.0.254:" + port, "127.0.0.255:" + port,
                                      "127.0.1.0:" + port, "127.0.1.1:" + port}));
  const char* ips[] = {"127.0.0.254", "127.0.0.255", "127.0.1.0", "127.0.1.1"};
  // Every address answers, any host (the resolve file is advice to the crawler only).
  for (int round = 0; round < 2; ++round) {
    for (const char* ip : ips) {
      Client c(web->port(), ip);
      ASSERT_TRUE(c.connected()) << ip;
      c.Send(Get("h0001.test", "/"));
      EXPECT_EQ(c.Read().status, 200) << ip;
    }
  }
  // A fifth address is not listened on.
  Client outside(web->port(), "127.0.1.2");
  EXPECT_FALSE(outside.connected());
  web->Stop();
  auto log = ReadLog(log_path);
  ASSERT_EQ(log.size(), 8u);
  // Two loops append in the order they finish; the requests were sequential by start.
  std::sort(log.begin(), log.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["start_us"].get<int64_t>() < b["start_us"].get<int64_t>();
  });
  for (size_t i = 0; i < log.size(); ++i) EXPECT_EQ(log[i]["ip"], ips[i % 4]) << i;
  std::remove(log_path.c_str());
}

TEST(TestWebStart, OneAddressLogsItsIpToo) {
  const std::string log_path =
      ::testing::TempDir() + "testweb_one_address_" + std::to_string(getpid()) + ".jsonl";
  TestWebOptions o;
  o.site.hosts = 2;
  o.log_path = log_path;
  auto web = TestWeb::Start(o);
  ASSERT_TRUE(web.ok()) << web.status().ToString();
  EXPECT_EQ((*web)->addresses(), std::vector<std::string>{(*web)->address()});
  {
    Client c((*web)->port());
    c.Send(Get("h0000.test", "/robots.txt"));
    EXPECT_EQ(c.Read().status, 200);
  }
  (*web)->Stop();
  auto log = ReadLog(log_path);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["ip"], "127.0.0.1");
  std::remove(log_path.c_str());
}

TEST(TestWebStart, FixedPortAndBadAddressRanges) {
  // A port another socket holds on a later address: a clear error (no retry with a fixed
  // port), naming that address.
  TestWebOptions first;
  first.site.hosts = 1;
  first.listen = "127.0.3.2:0";
  auto holder = TestWeb::Start(first);
  ASSERT_TRUE(holder.ok()) << holder.status().ToString();
  TestWebOptions o;
  o.site.hosts = 1;
  o.listen = "127.0.3.1:" + std::to_string((*holder)->port());
  o.addresses = 3;
  auto clash = TestWeb::Start(o);
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.status().ToString().find("bind 127.0.3.2:"), std::string::npos)
      << clash.status().ToString();
  // With port 0 the same layout succeeds (the picked port is free on every address).
  o.listen = "127.0.3.1:0";
  auto picked = TestWeb::Start(o);
  ASSERT_TRUE(picked.ok()) << picked.status().ToString();
  EXPECT_EQ((*picked)->addresses().size(), 3u);
  (*picked)->Stop();
  (*holder)->Stop();

  o.listen = "10.0.0.1:0";  // several addresses must be loopback ones
  EXPECT_FALSE(TestWeb::Start(o).ok());
  o.listen = "127.255.255.253:0";  // would reach 127.255.255.255
  EXPECT_FALSE(TestWeb::Start(o).ok());
  o.listen = "127.0.0.1:0";
  o.addresses = 0;
  EXPECT_FALSE(TestWeb::Start(o).ok());
  o.addresses = kMaxAddresses + 1;
  EXPECT_FALSE(TestWeb::Start(o).ok());
}

TEST(ResolveFile, RoundRobinOverTheAddressesSpecialHostsOnTheFirst) {
  SiteOptions so;
  so.hosts = 5;
  Site site(so);
  const std::string text = ResolveFileText(site, {"127.0.0.1:80", "127.0.0.2:80"});
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    ASSERT_NE(nl, std::string::npos) << "last line unterminated";
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  ASSERT_EQ(lines.size(), 1 + site.hosts().size());
  EXPECT_EQ(lines[0].rfind("# ", 0), 0u);
  EXPECT_EQ(lines[1], "h0000.test 127.0.0.1:80");
  EXPECT_EQ(lines[2], "h0001.test 127.0.0.2:80");
  EXPECT_EQ(lines[3], "h0002.test 127.0.0.1:80");
  EXPECT_EQ(lines[4], "h0003.test 127.0.0.2:80");
  EXPECT_EQ(lines[5], "h0004.test 127.0.0.1:80");
  EXPECT_EQ(lines[6], "hostile.test 127.0.0.1:80");
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string host = lines[i].substr(0, lines[i].find(' '));
    EXPECT_EQ(host, site.hosts()[i - 1].name);
  }
  EXPECT_EQ(lines.back(), "control.test 127.0.0.1:80");
  // One address: every host on it.
  const std::string one = ResolveFileText(site, {"127.0.0.9:1"});
  EXPECT_EQ(one.find("127.0.0.1"), std::string::npos);
  size_t count = 0;
  for (size_t p = one.find("127.0.0.9:1\n"); p != std::string::npos;
       p = one.find("127.0.0.9:1\n", p + 1))
    ++count;
  EXPECT_EQ(count, site.hosts().size());
}

TEST(TestWebStart, RejectsBadListenAddress) {
  TestWebOptions o;
  o.listen = "not-an-address";
  EXPECT_FALSE(TestWeb::Start(o).ok());
  o.listen = "127.0.0.1:99999";
  EXPECT_FALSE(TestWeb::Start(o).ok());
}

}  // namespace
}  // namespace harvest::testweb
