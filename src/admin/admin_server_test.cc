// admin::Server over real HTTP (httplib::Client) against a fake Backend.
#include <httplib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "admin/admin.h"

namespace harvest::admin {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// Records every call; answers with what the test set.
class FakeBackend : public Backend {
 public:
  Result<SeedResult> InjectSeeds(const SeedRequest& r) override {
    Record("InjectSeeds");
    seeds = r;
    return seed_result;
  }
  StatusSnapshot GetStatus() override {
    Record("GetStatus");
    return status;
  }
  Status SetPolicy(std::string_view host, const HostPolicy& p) override {
    Record("SetPolicy");
    last_host = std::string(host);
    policy = p;
    return policy_status;
  }
  Result<json> GetHost(std::string_view host) override {
    Record("GetHost");
    last_host = std::string(host);
    return host_info;
  }
  Status SetBlocked(std::string_view host, bool b) override {
    Record(b ? "Block" : "Unblock");
    last_host = std::string(host);
    return Status::Ok();
  }
  Result<PageList> ListPages(const PageQuery& q) override {
    Record("ListPages");
    query = q;
    return page_list;
  }
  Result<PageRecord> GetPage(uint64_t id) override {
    Record("GetPage");
    last_id = id;
    return page;
  }
  Result<PageContent> GetPageContent(uint64_t id) override {
    Record("GetPageContent");
    last_id = id;
    return content;
  }
  Status Pause() override {
    Record("Pause");
    return pause_status;
  }
  Status Resume() override {
    Record("Resume");
    return Status::Ok();
  }
  std::string MetricsText() override {
    Record("MetricsText");
    return "# HELP up Up.\n# TYPE up gauge\nup 1\n";
  }
  bool read_only() const override { return read_only_; }

  std::vector<std::string> calls() {
    std::lock_guard<std::mutex> l(mu_);
    return calls_;
  }

  SeedResult seed_result;
  StatusSnapshot status;
  Status policy_status;
  Result<json> host_info = json{{"host", "a.test"}, {"queue_length", 3}};
  Result<PageList> page_list = PageList{};
  Result<PageRecord> page = PageRecord{};
  Result<PageContent> content = PageContent{"text/html", "<p>hi</p>"};
  Status pause_status;
  bool read_only_ = false;

  SeedRequest seeds;
  HostPolicy policy;
  PageQuery query;
  std::string last_host;
  uint64_t last_id = 0;

 private:
  void Record(std::string c) {
    std::lock_guard<std::mutex> l(mu_);
    calls_.push_back(std::move(c));
  }
  std::mutex mu_;
  std::vector<std::string> calls_;
};

class AdminServerTest : public ::testing::Test {
 protected:
  void StartServer(ServerOptions options = {}) {
    Result<std::unique_ptr<Server>> s = Server::Start(std::move(options), &backend_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    std::string addr = server_->address();
    ASSERT_EQ(addr.rfind("127.0.0.1:", 0), 0u) << addr;
    port_ = std::stoi(addr.substr(addr.find(':') + 1));
    ASSERT_GT(port_, 0);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client_->set_read_timeout(10, 0);
  }
  void SetUp() override { StartServer(); }

  // The body as JSON; fails the test when it is not.
  static json Body(const httplib::Result& r) {
    json j = json::parse(r->body, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r->body;
    return j;
  }
  // A 4xx/5xx with a JSON {"error": ...} containing `needle`, and no Backend call.
  void ExpectRejected(const httplib::Result& r, int status, const std::string& needle) {
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, status) << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    json j = Body(r);
    ASSERT_TRUE(j.contains("error")) << r->body;
    EXPECT_THAT(j["error"].get<std::string>(), HasSubstr(needle));
    EXPECT_TRUE(backend_.calls().empty()) << backend_.calls()[0];
  }
  httplib::Result PostJson(const std::string& path, const std::string& body) {
    return client_->Post(path.c_str(), body, "application/json");
  }

  FakeBackend backend_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<httplib::Client> client_;
  int port_ = 0;
};

TEST_F(AdminServerTest, Seeds) {
  backend_.seed_result = {1, {{"http://b.test/", "out of scope"}}};
  auto r = PostJson("/seeds", R"({"urls": ["http://a.test/", "http://b.test/"], "priority": 4})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(Body(r), json::parse(R"({"queued": 1, "rejected": [{"url": "http://b.test/",
                                     "reason": "out of scope"}]})"));
  EXPECT_EQ(backend_.calls(), std::vector<std::string>{"InjectSeeds"});
  EXPECT_EQ(backend_.seeds.urls.size(), 2u);
  EXPECT_EQ(backend_.seeds.priority, 4);
}

TEST_F(AdminServerTest, SeedsBadInput) {
  ExpectRejected(PostJson("/seeds", "{not json"), 400, "malformed JSON");
  ExpectRejected(PostJson("/seeds", R"({"urls": ["mailto:x@y"]})"), 400,
                 "urls[0] 'mailto:x@y': scheme 'mailto' is not http or https");
  ExpectRejected(PostJson("/seeds", R"({"urls": ["http://a.test/"], "x": 1})"), 400,
                 "unknown field 'x'");
  ExpectRejected(PostJson("/seeds", R"({"urls": "http://a.test/"})"), 400, "urls must be an array");
}

TEST_F(AdminServerTest, Status) {
  backend_.status.pages_per_sec = 2.5;
  backend_.status.hosts.blocked = 3;
  backend_.status.state = "running";
  auto r = client_->Get("/status");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  json j = Body(r);
  EXPECT_EQ(j["pages_per_sec"], 2.5);
  EXPECT_EQ(j["hosts"]["blocked"], 3);
  EXPECT_EQ(j["state"], "running");
}

TEST_F(AdminServerTest, Policy) {
  auto r = PostJson("/hosts/A.Test/policy", R"({"crawl_delay_ms": 1500})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r), json::parse(R"({"applied": true})"));
  EXPECT_EQ(backend_.last_host, "a.test");
  EXPECT_EQ(backend_.policy.crawl_delay_ms, 1500);
  EXPECT_FALSE(backend_.policy.weight.has_value());
}

TEST_F(AdminServerTest, PolicyPercentEncodedOrigin) {
  auto r = PostJson("/hosts/http%3A%2F%2Fa.test%3A8080/policy", R"({"weight": 0.5})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(backend_.last_host, "http://a.test:8080");
}

TEST_F(AdminServerTest, PolicyBadInput) {
  ExpectRejected(PostJson("/hosts/a.test/policy", R"({"crawl_delay_ms": "slow"})"), 400,
                 "crawl_delay_ms must be an integer");
  ExpectRejected(PostJson("/hosts/a.test/policy", R"({"delay": 5})"), 400, "unknown field 'delay'");
  ExpectRejected(PostJson("/hosts/a.test/policy", "{"), 400, "malformed JSON");
  ExpectRejected(PostJson("/hosts/" + std::string(254, 'a') + "/policy", R"({"weight": 1})"), 400,
                 "longer than 253");
  ExpectRejected(PostJson("/hosts/a%zz/policy", R"({"weight": 1})"), 400, "percent-escape");
}

TEST_F(AdminServerTest, PolicyBackendErrors) {
  backend_.policy_status =
      Status::InvalidArgument("crawl_delay_ms 100 is shorter than robots.txt asks (2000)");
  auto r = PostJson("/hosts/a.test/policy", R"({"crawl_delay_ms": 100})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_THAT(Body(r)["error"].get<std::string>(), HasSubstr("shorter than robots.txt"));
  backend_.policy_status = Status::NotFound("unknown host 'z.test'");
  r = PostJson("/hosts/z.test/policy", R"({"crawl_delay_ms": 100})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(Body(r)["error"], "unknown host 'z.test'");
  backend_.policy_status = Status::IOError("disk full");
  r = PostJson("/hosts/a.test/policy", R"({"crawl_delay_ms": 100})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  backend_.policy_status = Status::Unavailable("the crawl is stopping");
  r = PostJson("/hosts/a.test/policy", R"({"crawl_delay_ms": 100})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
}

TEST_F(AdminServerTest, GetHost) {
  auto r = client_->Get("/hosts/A.TEST");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(Body(r)["queue_length"], 3);
  EXPECT_EQ(backend_.last_host, "a.test");
  backend_.host_info = Status::NotFound("unknown host 'b.test'");
  r = client_->Get("/hosts/b.test");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(Body(r)["error"], "unknown host 'b.test'");
}

TEST_F(AdminServerTest, Block) {
  auto r = client_->Put("/hosts/a.test/block");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["blocked"], true);
  r = client_->Delete("/hosts/a.test/block");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(Body(r)["blocked"], false);
  EXPECT_EQ(backend_.calls(), (std::vector<std::string>{"Block", "Unblock"}));
}

TEST_F(AdminServerTest, ListPages) {
  PageList list;
  list.pages.push_back(
      {7, "http://a.test/", 200, 1714564800000, "text/html", "A", "sha256:X", "f.warc.gz", 10, 20});
  list.next_cursor = "c2";
  backend_.page_list = list;
  auto r =
      client_->Get("/pages?host=A.test&status=200&since=2024-05-01T12:00:00Z&limit=5&cursor=c1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  json j = Body(r);
  EXPECT_EQ(j["next_cursor"], "c2");
  ASSERT_EQ(j["pages"].size(), 1u);
  EXPECT_EQ(j["pages"][0]["id"], 7);
  EXPECT_EQ(j["pages"][0]["warc_file"], "f.warc.gz");
  EXPECT_EQ(j["pages"][0]["fetched_at"], "2024-05-01T12:00:00.000Z");
  EXPECT_EQ(backend_.query.host, "a.test");
  EXPECT_EQ(backend_.query.status, 200);
  EXPECT_EQ(backend_.query.since_unix_ms, 1714564800000);
  EXPECT_EQ(backend_.query.limit, 5);
  EXPECT_EQ(backend_.query.cursor, "c1");
}

TEST_F(AdminServerTest, ListPagesBadInput) {
  ExpectRejected(client_->Get("/pages?limit=0"), 400, "limit: '0'");
  ExpectRejected(client_->Get("/pages?limit=1001"), 400, "limit");
  ExpectRejected(client_->Get("/pages?since=last%20week"), 400, "since: 'last week'");
  ExpectRejected(client_->Get("/pages?status=2xx"), 400, "status: '2xx'");
  ExpectRejected(client_->Get("/pages?order=desc"), 400, "unknown query parameter 'order'");
}

TEST_F(AdminServerTest, Page) {
  backend_.page = PageRecord{42, "http://a.test/x", 404};
  auto r = client_->Get("/pages/42");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(Body(r)["url"], "http://a.test/x");
  EXPECT_EQ(backend_.last_id, 42u);
  backend_.page = Status::NotFound("no page 43");
  r = client_->Get("/pages/43");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(Body(r)["error"], "no page 43");
}

TEST_F(AdminServerTest, PageBadId) {
  ExpectRejected(client_->Get("/pages/abc"), 400, "page id 'abc' is not a decimal number");
  ExpectRejected(client_->Get("/pages/-1/content"), 400, "page id '-1'");
}

TEST_F(AdminServerTest, PageContentIsSandboxed) {
  auto r = client_->Get("/pages/5/content");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "<p>hi</p>");
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/html");
  EXPECT_EQ(r->get_header_value("Content-Security-Policy"), "sandbox");
  EXPECT_EQ(backend_.last_id, 5u);
}

TEST_F(AdminServerTest, PauseResume) {
  auto r = client_->Post("/pause");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(Body(r)["paused"], true);
  r = client_->Post("/resume");
  ASSERT_TRUE(r);
  EXPECT_EQ(Body(r)["paused"], false);
  EXPECT_EQ(backend_.calls(), (std::vector<std::string>{"Pause", "Resume"}));
  backend_.pause_status = Status::Unavailable("the crawl is complete");
  r = client_->Post("/pause");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
}

// `curl -X POST URL` sends neither Content-Length nor Transfer-Encoding: an empty body.
TEST_F(AdminServerTest, BodylessPostIsAnEmptyBody) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port_));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  const std::string req = "POST /pause HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(::send(fd, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  std::string answer;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) answer.append(buf, static_cast<size_t>(n));
  ::close(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  EXPECT_EQ(backend_.calls(), std::vector<std::string>{"Pause"});
}

TEST_F(AdminServerTest, Metrics) {
  auto r = client_->Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(r->body, "# HELP up Up.\n# TYPE up gauge\nup 1\n");
}

TEST_F(AdminServerTest, UnknownRouteAndWrongMethod) {
  ExpectRejected(client_->Get("/nope"), 404, "no such endpoint: /nope");
  ExpectRejected(client_->Get("/"), 404, "no such endpoint");  // no assets
  ExpectRejected(client_->Post("/hosts/a.test/nope"), 404, "no such endpoint");
  auto r = client_->Get("/seeds");
  ExpectRejected(r, 405, "method GET not allowed on /seeds (allowed: POST)");
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
  ExpectRejected(client_->Post("/status"), 405, "allowed: GET");
  r = client_->Post("/hosts/a.test/block");
  ExpectRejected(r, 405, "allowed: PUT, DELETE");
  ExpectRejected(client_->Delete("/pause"), 405, "allowed: POST");
}

TEST_F(AdminServerTest, BodyTooLarge) {
  server_.reset();
  ServerOptions o;
  o.max_body_bytes = 1000;
  StartServer(o);
  std::string body = R"({"urls": [")" + std::string(2000, 'a') + R"("]})";
  ExpectRejected(PostJson("/seeds", body), 413, "larger than 1000 bytes");
  // The connection stays usable for the next request.
  auto r = client_->Get("/status");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(AdminServerTest, ChunkedBodyTooLarge) {
  server_.reset();
  ServerOptions o;
  o.max_body_bytes = 1000;
  StartServer(o);
  // No Content-Length: the limit is enforced while the chunks arrive.
  auto r = client_->Post(
      "/seeds",
      [](size_t offset, httplib::DataSink& sink) {
        if (offset >= 4000) {
          sink.done();
          return true;
        }
        std::string chunk(500, 'x');
        sink.write(chunk.data(), chunk.size());
        return true;
      },
      "application/json");
  ExpectRejected(r, 413, "larger than 1000 bytes");
}

TEST_F(AdminServerTest, Head) {
  auto r = client_->Head("/status");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(r->body.empty());
  r = client_->Head("/seeds");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
}

TEST_F(AdminServerTest, ReadOnlyRefusesMutations) {
  backend_.read_only_ = true;
  ExpectRejected(PostJson("/seeds", R"({"urls": ["http://a.test/"]})"), 409,
                 "read-only: no crawl is running");
  ExpectRejected(PostJson("/hosts/a.test/policy", R"({"weight": 1})"), 409, "read-only");
  ExpectRejected(client_->Put("/hosts/a.test/block"), 409, "read-only");
  ExpectRejected(client_->Delete("/hosts/a.test/block"), 409, "read-only");
  ExpectRejected(client_->Post("/pause"), 409, "read-only");
  ExpectRejected(client_->Post("/resume"), 409, "read-only");
  auto r = client_->Get("/status");  // reads still work
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(AdminServerTest, Assets) {
  server_.reset();
  ServerOptions o;
  o.assets = [](std::string_view path) -> std::optional<StaticAsset> {
    if (path == "/") return StaticAsset{"text/html; charset=utf-8", "<h1>dash</h1>"};
    if (path == "/app js.js") return StaticAsset{"text/javascript", "x()"};
    return std::nullopt;
  };
  StartServer(o);
  auto r = client_->Get("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "<h1>dash</h1>");
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/html; charset=utf-8");
  r = client_->Get("/app%20js.js");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "x()");
  ExpectRejected(client_->Get("/missing.css"), 404, "no such endpoint");
  // API routes win over assets.
  r = client_->Get("/status");
  ASSERT_TRUE(r);
  EXPECT_EQ(Body(r).contains("state"), true);
}

TEST_F(AdminServerTest, Token) {
  server_.reset();
  ServerOptions o;
  o.token = "s3cret-token";
  StartServer(o);
  ExpectRejected(client_->Get("/status"), 401, "missing Authorization");
  client_->set_bearer_token_auth("wrong");
  ExpectRejected(client_->Get("/status"), 401, "wrong admin token");
  client_->set_bearer_token_auth("s3cret-toke");
  ExpectRejected(client_->Post("/pause"), 401, "wrong admin token");
  client_->set_bearer_token_auth("s3cret-token");
  auto r = client_->Get("/status");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = client_->Post("/pause");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(AdminServerStart, NonLoopbackNeedsToken) {
  FakeBackend backend;
  ServerOptions o;
  o.listen = "0.0.0.0:0";
  Result<std::unique_ptr<Server>> s = Server::Start(o, &backend);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Status::Code::kInvalidArgument);
  EXPECT_THAT(s.status().message(),
              HasSubstr("--admin on a non-loopback address needs --admin-token-file"));
  o.token = "t";
  s = Server::Start(o, &backend);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->address().rfind("0.0.0.0:", 0), 0u);
}

TEST(AdminServerStart, BadAddresses) {
  FakeBackend backend;
  for (const char* bad : {"127.0.0.1", "127.0.0.1:99999", ":80", "::1:80", "127.0.0.1:x"}) {
    ServerOptions o;
    o.listen = bad;
    Result<std::unique_ptr<Server>> s = Server::Start(o, &backend);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), Status::Code::kInvalidArgument) << bad;
  }
  ServerOptions o;
  o.token = "has space";
  EXPECT_FALSE(Server::Start(o, &backend).ok());
}

TEST(AdminServerStart, PortInUse) {
  FakeBackend backend;
  Result<std::unique_ptr<Server>> a = Server::Start({}, &backend);
  ASSERT_TRUE(a.ok());
  ServerOptions o;
  o.listen = (*a)->address();
  Result<std::unique_ptr<Server>> b = Server::Start(o, &backend);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Status::Code::kIOError);
  (*a)->Stop();
  (*a)->Stop();  // idempotent
}

TEST(Loopback, Hosts) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("127.0.0.1.evil.test"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("::"));
}

TEST_F(AdminServerTest, BrowserProtections) {
  // DNS rebinding: a page on evil.test resolving to 127.0.0.1 sends Host: evil.test.
  ExpectRejected(client_->Get("/status", {{"Host", "evil.test"}}), 403, "loopback");
  // A cross-site form POST carries the attacker's Origin.
  ExpectRejected(client_->Post("/pause", {{"Origin", "http://evil.test"}}, "", "text/plain"), 403,
                 "cross-origin");
  // The dashboard's own requests carry its own origin.
  std::string self = "http://127.0.0.1:" + std::to_string(port_);
  auto r = client_->Post("/pause", {{"Origin", self}}, "", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

}  // namespace
}  // namespace harvest::admin
