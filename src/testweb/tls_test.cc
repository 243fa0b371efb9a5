// The test web over HTTPS (docs/testweb.md "HTTPS"): HTTP/1.1 and HTTP/2 through libcurl
// trusting the CA the server made, the log's scheme and proto, --http-redirect, --hsts, the
// CA kept across restarts, and a TLS listener that survives broken clients. libcurl is linked
// by this test only: the testweb library depends on base alone (docs/architecture.md §3).
#include <arpa/inet.h>
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "testweb/testweb.h"

namespace harvest::testweb {
namespace {

namespace fs = std::filesystem;

struct Fetched {
  CURLcode code = CURLE_OK;
  long status = 0;
  long version = 0;  // CURL_HTTP_VERSION_1_1 or CURL_HTTP_VERSION_2_0
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string error;
};

struct FetchOptions {
  long version = CURL_HTTP_VERSION_1_1;  // CURL_HTTP_VERSION_2TLS for h2
  std::vector<std::string> headers;      // extra request headers
  bool head = false;
  size_t abort_after = 0;  // stop reading after this many body bytes (0: read all)
};

size_t OnBody(char* data, size_t, size_t n, void* arg) {
  auto* f = static_cast<std::pair<Fetched*, size_t>*>(arg);
  f->first->body.append(data, n);
  if (f->second > 0 && f->first->body.size() >= f->second) return 0;  // abort the transfer
  return n;
}

size_t OnHeader(char* data, size_t, size_t n, void* arg) {
  auto* f = static_cast<Fetched*>(arg);
  const std::string line(data, n);
  const size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string value = line.substr(colon + 1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    f->headers[ToLowerAscii(line.substr(0, colon))] = value;
  }
  return n;
}

// Fetches `url` with every host name connected to 127.0.0.1:port, trusting `ca` only. With
// `handle` the connection is reused between calls.
Fetched Fetch(const std::string& url, int port, const std::string& ca, const FetchOptions& o = {},
              CURL* handle = nullptr) {
  Fetched f;
  CURL* curl = handle != nullptr ? handle : curl_easy_init();
  const std::string connect_to = "::127.0.0.1:" + std::to_string(port);
  curl_slist* connect = curl_slist_append(nullptr, connect_to.c_str());
  curl_slist* headers = nullptr;
  for (const std::string& h : o.headers) headers = curl_slist_append(headers, h.c_str());
  std::pair<Fetched*, size_t> body_arg{&f, o.abort_after};
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CONNECT_TO, connect);
  curl_easy_setopt(curl, CURLOPT_CAINFO, ca.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, o.version);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_NOBODY, o.head ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body_arg);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &f);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  f.code = curl_easy_perform(curl);
  f.error = error;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &f.status);
  curl_easy_getinfo(curl, CURLINFO_HTTP_VERSION, &f.version);
  // Options that point at this call's locals must not outlive it.
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(curl, CURLOPT_CONNECT_TO, nullptr);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  if (handle == nullptr) curl_easy_cleanup(curl);
  curl_slist_free_all(connect);
  curl_slist_free_all(headers);
  return f;
}

std::vector<nlohmann::json> ReadLog(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A plain TCP client, for plain HTTP and for clients that break TLS.
class Socket {
 public:
  explicit Socket(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    timeval tv{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~Socket() { close(fd_); }
  bool connected() const { return connected_; }
  bool Send(const std::string& data) {
    return send(fd_, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  }
  // Reads until the peer closes, `until` appears, or the 5 s receive timeout; true when the
  // peer closed (EOF or reset).
  bool ReadUntilClosed(std::string* out, const std::string& until = "") {
    char buf[4096];
    for (;;) {
      const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
      if (n < 0) return false;
      out->append(buf, static_cast<size_t>(n));
      if (!until.empty() && out->find(until) != std::string::npos) return false;
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// The first flight of a real TLS client (a ClientHello for h0001.test offering h2).
std::string ClientHello() {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL* ssl = SSL_new(ctx);
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  SSL_set_bio(ssl, in, out);
  SSL_set_tlsext_host_name(ssl, "h0001.test");
  SSL_set_connect_state(ssl);
  SSL_do_handshake(ssl);  // wants the server's answer
  char buf[8192];
  const int n = BIO_read(out, buf, sizeof(buf));
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
}

class TlsTestWeb : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "testweb_tls_test_" + std::to_string(getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    options_.site.hosts = 10;
    options_.tls = true;
    options_.tls_dir = dir_ + "/tls";
    options_.log_path = dir_ + "/log.jsonl";
  }
  void TearDown() override {
    if (web_) web_->Stop();
    fs::remove_all(dir_);
  }
  void Start() {
    auto web = TestWeb::Start(options_);
    ASSERT_TRUE(web.ok()) << web.status().ToString();
    web_ = std::move(web.value());
  }
  std::string ca() const { return options_.tls_dir + "/ca.pem"; }
  int port() const { return web_->port(); }
  std::vector<nlohmann::json> StopAndReadLog() {
    web_->Stop();
    return ReadLog(options_.log_path);
  }

  std::string dir_;
  TestWebOptions options_;
  std::unique_ptr<TestWeb> web_;
};

TEST_F(TlsTestWeb, ServesHttp11AndH2OnThePlainPortAndLogsSchemeAndProto) {
  Start();
  ASSERT_TRUE(fs::exists(ca()));
  EXPECT_EQ(fs::status(options_.tls_dir + "/ca.key").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  Fetched h1 = Fetch("https://h0001.test/", port(), ca());
  ASSERT_EQ(h1.code, CURLE_OK) << h1.error;
  EXPECT_EQ(h1.status, 200);
  EXPECT_EQ(h1.version, CURL_HTTP_VERSION_1_1);
  EXPECT_NE(h1.body.find("<!DOCTYPE html>"), std::string::npos);
  EXPECT_EQ(h1.headers.count("strict-transport-security"), 0u) << "no --hsts";

  // Several streams on one h2 connection: a page, its conditional revisit (304) and a HEAD.
  CURL* reuse = curl_easy_init();
  Fetched h2 =
      Fetch("https://h0002.test/p/3", port(), ca(), {.version = CURL_HTTP_VERSION_2TLS}, reuse);
  ASSERT_EQ(h2.code, CURLE_OK) << h2.error;
  EXPECT_EQ(h2.status, 200);
  EXPECT_EQ(h2.version, CURL_HTTP_VERSION_2_0);
  EXPECT_EQ(h2.headers["content-length"], std::to_string(h2.body.size()));
  ASSERT_TRUE(h2.headers.count("etag"));
  Fetched revisit = Fetch(
      "https://h0002.test/p/3", port(), ca(),
      {.version = CURL_HTTP_VERSION_2TLS, .headers = {"If-None-Match: " + h2.headers["etag"]}},
      reuse);
  EXPECT_EQ(revisit.status, 304);
  EXPECT_TRUE(revisit.body.empty());
  Fetched head = Fetch("https://h0002.test/robots.txt", port(), ca(),
                       {.version = CURL_HTTP_VERSION_2TLS, .head = true}, reuse);
  EXPECT_EQ(head.status, 200);
  EXPECT_GT(std::stoul(head.headers["content-length"]), 0u);
  curl_easy_cleanup(reuse);

  // Plain HTTP on the same port is served as before.
  Fetched plain = Fetch("http://h0003.test/", port(), ca());
  EXPECT_EQ(plain.status, 200);

  // A client that connects by IP sends no SNI: the default leaf names 127.0.0.1.
  Fetched by_ip = Fetch("https://127.0.0.1/", port(), ca());
  EXPECT_EQ(by_ip.code, CURLE_OK) << by_ip.error;
  EXPECT_EQ(by_ip.status, 404) << "not a host of the site";

  auto log = StopAndReadLog();
  ASSERT_EQ(log.size(), 6u);
  auto expect_line = [](const nlohmann::json& j, const char* host, const char* scheme,
                        const char* proto, int status) {
    EXPECT_EQ(j["host"], host) << j;
    EXPECT_EQ(j["scheme"], scheme) << j;
    EXPECT_EQ(j["proto"], proto) << j;
    EXPECT_EQ(j["status"], status) << j;
    EXPECT_FALSE(j.contains("upgrade")) << j;
    EXPECT_LE(j["start_us"].get<int64_t>(), j["end_us"].get<int64_t>()) << j;
  };
  expect_line(log[0], "h0001.test", "https", "1.1", 200);
  EXPECT_EQ(log[0]["bytes"].get<size_t>(), h1.body.size());
  expect_line(log[1], "h0002.test", "https", "2", 200);
  EXPECT_EQ(log[1]["page"], "h0002.test/p/3");
  EXPECT_EQ(log[1]["bytes"].get<size_t>(), h2.body.size());
  expect_line(log[2], "h0002.test", "https", "2", 304);
  EXPECT_EQ(log[2]["cond"], true);
  expect_line(log[3], "h0002.test", "https", "2", 200);
  EXPECT_EQ(log[3]["kind"], "robots");
  EXPECT_EQ(log[3]["bytes"], 0);
  EXPECT_EQ(log[1]["conn"], log[3]["conn"]) << "one h2 connection";
  expect_line(log[4], "h0003.test", "http", "1.1", 200);
}

TEST_F(TlsTestWeb, HttpRedirectSendsEveryPlainRequestToHttpsButControl) {
  options_.http_redirect = true;
  Start();
  Socket s(port());
  ASSERT_TRUE(s.connected());
  std::string got;
  ASSERT_TRUE(
      s.Send("GET /robots.txt HTTP/1.1\r\nHost: H0001.TEST:80\r\n\r\n"
             "GET /edge/slow?x=1 HTTP/1.1\r\nHost: hostile.test:8080\r\n\r\n"
             "GET /p/1 HTTP/1.1\r\nHost: nowhere.example\r\nConnection: close\r\n\r\n"));
  EXPECT_TRUE(s.ReadUntilClosed(&got));
  EXPECT_NE(got.find("HTTP/1.1 301 Moved Permanently\r\n"), std::string::npos) << got;
  EXPECT_NE(got.find("Location: https://h0001.test/robots.txt\r\n"), std::string::npos) << got;
  // Another port stays; the edge path is not slow: it is not served at all.
  EXPECT_NE(got.find("Location: https://hostile.test:8080/edge/slow?x=1\r\n"), std::string::npos)
      << got;
  EXPECT_NE(got.find("Location: https://nowhere.example/p/1\r\n"), std::string::npos) << got;
  EXPECT_EQ(got.find("Strict-Transport-Security"), std::string::npos);

  // The control host is driven over plain HTTP.
  Socket control(port());
  ASSERT_TRUE(
      control.Send("POST /__testweb/epoch HTTP/1.1\r\nHost: control.test\r\nContent-Length: 1\r\n"
                   "Connection: close\r\n\r\n7"));
  got.clear();
  EXPECT_TRUE(control.ReadUntilClosed(&got));
  EXPECT_EQ(got.rfind("HTTP/1.1 200", 0), 0u) << got;
  EXPECT_EQ(web_->epoch(), 7);

  // HTTPS is served.
  Fetched https = Fetch("https://h0001.test/robots.txt", port(), ca());
  EXPECT_EQ(https.status, 200);

  auto log = StopAndReadLog();
  ASSERT_EQ(log.size(), 5u);
  EXPECT_EQ(log[0]["host"], "h0001.test");
  EXPECT_EQ(log[0]["kind"], "robots");
  EXPECT_EQ(log[0]["status"], 301);
  EXPECT_TRUE(log[0]["page"].is_null());
  EXPECT_EQ(log[0]["upgrade"], true);
  EXPECT_EQ(log[0]["scheme"], "http");
  EXPECT_EQ(log[1]["kind"], "edge");
  EXPECT_EQ(log[1]["upgrade"], true);
  EXPECT_EQ(log[2]["status"], 301);
  EXPECT_EQ(log[2]["upgrade"], true);
  EXPECT_EQ(log[3]["host"], "control.test");
  EXPECT_FALSE(log[3].contains("upgrade"));
  EXPECT_EQ(log[4]["scheme"], "https");
  EXPECT_EQ(log[4]["status"], 200);
  EXPECT_FALSE(log[4].contains("upgrade"));
}

TEST_F(TlsTestWeb, HstsOnlyOverHttps) {
  options_.hsts = true;
  Start();
  Fetched h1 = Fetch("https://h0001.test/", port(), ca());
  EXPECT_EQ(h1.headers["strict-transport-security"], "max-age=31536000");
  Fetched h2 = Fetch("https://h0001.test/", port(), ca(), {.version = CURL_HTTP_VERSION_2TLS});
  EXPECT_EQ(h2.version, CURL_HTTP_VERSION_2_0);
  EXPECT_EQ(h2.headers["strict-transport-security"], "max-age=31536000");
  Fetched plain = Fetch("http://h0001.test/", port(), ca());
  EXPECT_EQ(plain.status, 200);
  EXPECT_EQ(plain.headers.count("strict-transport-security"), 0u);
}

TEST_F(TlsTestWeb, TheCaIsReusedWhenPresentAndBadFilesAreNamed) {
  Start();
  const std::string first = ReadFile(ca());
  ASSERT_NE(first.find("BEGIN CERTIFICATE"), std::string::npos);
  web_->Stop();
  web_.reset();
  Start();
  EXPECT_EQ(ReadFile(ca()), first);
  Fetched f = Fetch("https://h0004.test/", port(), ca());
  EXPECT_EQ(f.code, CURLE_OK) << f.error;
  // Another server's CA is not trusted (the client checks the chain).
  const std::string other = dir_ + "/other";
  TestWebOptions o = options_;
  o.tls_dir = other;
  o.log_path.clear();
  auto other_web = TestWeb::Start(o);
  ASSERT_TRUE(other_web.ok());
  EXPECT_NE(Fetch("https://h0004.test/", (*other_web)->port(), ca()).code, CURLE_OK);
  (*other_web)->Stop();

  std::ofstream(other + "/ca.pem") << "not a certificate\n";
  auto bad = TestWeb::Start(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find(other + "/ca.pem"), std::string::npos)
      << bad.status().ToString();
  fs::remove(other + "/ca.key");
  bad = TestWeb::Start(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find(other + "/ca.key"), std::string::npos)
      << bad.status().ToString();
}

TEST_F(TlsTestWeb, DelayedAndTricklingResponsesOverH2) {
  Start();
  const auto start = std::chrono::steady_clock::now();
  Fetched slow =
      Fetch("https://hostile.test/edge/slow", port(), ca(), {.version = CURL_HTTP_VERSION_2TLS});
  EXPECT_EQ(slow.version, CURL_HTTP_VERSION_2_0);
  EXPECT_EQ(slow.status, 200);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2900));

  // The endless body: its prefix at once, then a byte every 100 ms; read a few, then close.
  const auto endless_start = std::chrono::steady_clock::now();
  Fetched endless = Fetch("https://hostile.test/edge/endless", port(), ca(),
                          {.version = CURL_HTTP_VERSION_2TLS, .abort_after = 70});
  const auto endless_time = std::chrono::steady_clock::now() - endless_start;
  EXPECT_EQ(endless.status, 200);
  EXPECT_EQ(endless.code, CURLE_WRITE_ERROR);
  ASSERT_GE(endless.body.size(), 70u);
  EXPECT_EQ(endless.body.back(), '.');
  EXPECT_GE(endless_time, std::chrono::milliseconds(100)) << "trickled, not sent at once";
  usleep(300 * 1000);

  auto log = StopAndReadLog();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["path"], "/edge/slow");
  EXPECT_GE(log[0]["end_us"].get<int64_t>() - log[0]["start_us"].get<int64_t>(), 2'900'000);
  EXPECT_EQ(log[1]["path"], "/edge/endless");
  EXPECT_EQ(log[1]["proto"], "2");
  EXPECT_GE(log[1]["bytes"].get<size_t>(), 66u);
}

TEST_F(TlsTestWeb, SurvivesGarbageACutHandshakeAndAStalledOne) {
  // Long enough that closing garbage at once is told apart from the timeout closing it.
  options_.tls_handshake_timeout = std::chrono::milliseconds(1000);
  Start();
  const std::string hello = ClientHello();
  ASSERT_GT(hello.size(), 100u);
  ASSERT_EQ(static_cast<unsigned char>(hello[0]), 0x16);

  {  // a TLS record header followed by garbage
    Socket s(port());
    std::string garbage(200, '\x5a');
    garbage[0] = '\x16';
    const auto sent = std::chrono::steady_clock::now();
    ASSERT_TRUE(s.Send(garbage));
    std::string got;
    EXPECT_TRUE(s.ReadUntilClosed(&got)) << "the server closes it";
    EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::milliseconds(700))
        << "closed for the garbage, not by the handshake timeout";
  }
  EXPECT_EQ(Fetch("https://h0001.test/", port(), ca()).status, 200);

  {  // half a ClientHello, then the client goes
    Socket s(port());
    ASSERT_TRUE(s.Send(hello.substr(0, hello.size() / 2)));
  }
  EXPECT_EQ(Fetch("https://h0001.test/", port(), ca(), {.version = CURL_HTTP_VERSION_2TLS}).status,
            200);

  {  // half a ClientHello, then nothing: closed by the server after the handshake timeout
    Socket s(port());
    const auto sent = std::chrono::steady_clock::now();
    ASSERT_TRUE(s.Send(hello.substr(0, hello.size() / 2)));
    // Meanwhile others are served.
    EXPECT_EQ(Fetch("https://h0002.test/", port(), ca()).status, 200);
    std::string got;
    EXPECT_TRUE(s.ReadUntilClosed(&got)) << "the stalled handshake is closed";
    const auto waited = std::chrono::steady_clock::now() - sent;
    EXPECT_GE(waited, std::chrono::milliseconds(900));
    EXPECT_LT(waited, std::chrono::seconds(4));
  }
  EXPECT_EQ(Fetch("https://h0003.test/", port(), ca()).status, 200);

  // Only the real requests are logged.
  auto log = StopAndReadLog();
  ASSERT_EQ(log.size(), 4u);
  for (const auto& j : log) EXPECT_EQ(j["status"], 200) << j;
}

}  // namespace
}  // namespace harvest::testweb
