// The admin HTTP server (admin.h): routing, authentication and the mapping of Backend
// results to HTTP answers. Parsing lives in requests.cc.
//
// All requests go through catch-all handlers and are routed here on the raw request target
// (httplib's own routing would match the percent-decoded path, so a host "a%2Fb" would look
// like two segments).
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "admin/admin.h"
#include "admin/requests.h"
#include "base/host_key.h"

namespace harvest::admin {
namespace {

using nlohmann::json;

constexpr const char* kJson = "application/json";
constexpr const char* kReadOnly = "read-only: no crawl is running";
constexpr size_t kMaxDrainBytes = 8 << 20;

void SendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(DumpJson(body), kJson);
}

void SendError(httplib::Response& res, int status, std::string_view message) {
  SendJson(res, status, ErrorJson(message));
}

int HttpStatusFor(const Status& s) {
  switch (s.code()) {
    case Status::Code::kOk:
      return 200;
    case Status::Code::kInvalidArgument:
      return 400;
    case Status::Code::kNotFound:
      return 404;
    case Status::Code::kUnavailable:
    case Status::Code::kAborted:
    case Status::Code::kResourceExhausted:
      return 503;
    default:
      return 500;
  }
}

void SendStatus(httplib::Response& res, const Status& s) {
  SendError(res, HttpStatusFor(s), s.message());
}

// Compares in time independent of where the strings differ (the token is a secret).
bool ConstantTimeEquals(std::string_view given, std::string_view secret) {
  unsigned char diff = given.size() == secret.size() ? 0 : 1;
  for (size_t i = 0; i < secret.size(); ++i) {
    unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff |= g ^ static_cast<unsigned char>(secret[i]);
  }
  return diff == 0;
}

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> out;
  if (!path.empty() && path[0] == '/') path.remove_prefix(1);
  while (true) {
    size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

enum class Route {
  kNone,
  kSeeds,
  kStatus,
  kMetrics,
  kPause,
  kResume,
  kPages,
  kPage,
  kPageContent,
  kHost,
  kHostPolicy,
  kHostBlock,
};

struct Match {
  Route route = Route::kNone;
  std::string_view arg;              // {host} or {id}, raw
  std::vector<std::string> methods;  // allowed
};

Match MatchRoute(const std::vector<std::string_view>& seg) {
  auto one = [&](Route r, std::vector<std::string> m, std::string_view arg = {}) {
    return Match{r, arg, std::move(m)};
  };
  if (seg.size() == 1) {
    if (seg[0] == "seeds") return one(Route::kSeeds, {"POST"});
    if (seg[0] == "status") return one(Route::kStatus, {"GET"});
    if (seg[0] == "metrics") return one(Route::kMetrics, {"GET"});
    if (seg[0] == "pause") return one(Route::kPause, {"POST"});
    if (seg[0] == "resume") return one(Route::kResume, {"POST"});
    if (seg[0] == "pages") return one(Route::kPages, {"GET"});
  } else if (seg.size() == 2) {
    if (seg[0] == "pages") return one(Route::kPage, {"GET"}, seg[1]);
    if (seg[0] == "hosts") return one(Route::kHost, {"GET"}, seg[1]);
  } else if (seg.size() == 3) {
    if (seg[0] == "pages" && seg[2] == "content") {
      return one(Route::kPageContent, {"GET"}, seg[1]);
    }
    if (seg[0] == "hosts" && seg[2] == "policy") return one(Route::kHostPolicy, {"POST"}, seg[1]);
    if (seg[0] == "hosts" && seg[2] == "block") {
      return one(Route::kHostBlock, {"PUT", "DELETE"}, seg[1]);
    }
  }
  return {};
}

bool Mutates(Route r) {
  return r == Route::kSeeds || r == Route::kPause || r == Route::kResume ||
         r == Route::kHostPolicy || r == Route::kHostBlock;
}

// The message for an answer httplib makes itself.
std::string ReasonJson(int status, size_t max_body_bytes) {
  std::string msg;
  switch (status) {
    case 400:
      msg = "malformed HTTP request";
      break;
    case 413:
      msg = "request body larger than " + std::to_string(max_body_bytes) + " bytes";
      break;
    case 414:
      msg = "request target too long";
      break;
    default:
      msg = "HTTP error " + std::to_string(status);
  }
  return DumpJson(ErrorJson(msg));
}

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1") return true;
  // 127.0.0.0/8 in dotted-quad form.
  if (host.substr(0, 4) != "127.") return false;
  int dots = 0, digits = 0;
  for (char c : host) {
    if (c == '.') {
      if (digits == 0 || digits > 3) return false;
      ++dots;
      digits = 0;
    } else if (c >= '0' && c <= '9') {
      ++digits;
    } else {
      return false;
    }
  }
  return dots == 3 && digits >= 1 && digits <= 3;
}

Status ParseListenAddress(std::string_view listen, std::string* host, int* port) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("admin address '" + std::string(listen) + "': " +
                                   std::string(why) + " (expected HOST:PORT, e.g. 127.0.0.1:8080)");
  };
  std::string_view h, p;
  if (!listen.empty() && listen[0] == '[') {
    size_t close = listen.find(']');
    if (close == std::string_view::npos) return bad("unterminated '['");
    h = listen.substr(1, close - 1);
    if (listen.substr(close + 1, 1) != ":") return bad("no port");
    p = listen.substr(close + 2);
  } else {
    size_t colon = listen.rfind(':');
    if (colon == std::string_view::npos) return bad("no port");
    h = listen.substr(0, colon);
    if (h.find(':') != std::string_view::npos) return bad("put an IPv6 address in brackets");
    p = listen.substr(colon + 1);
  }
  if (h.empty()) return bad("no host");
  int n = 0;
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string_view::npos) {
    return bad("bad port");
  }
  for (char c : p) n = n * 10 + (c - '0');
  if (n > 65535) return bad("port above 65535");
  *host = std::string(h);
  *port = n;
  return Status::Ok();
}

class Server::Impl {
 public:
  Impl(ServerOptions options, Backend* backend) : options_(std::move(options)), backend_(backend) {}

  Status Start() {
    Status s = ParseListenAddress(options_.listen, &host_, &port_);
    if (!s.ok()) return s;
    if (options_.token.empty() && !IsLoopbackHost(host_)) {
      return Status::InvalidArgument(
          "--admin on a non-loopback address needs --admin-token-file (address '" +
          options_.listen + "')");
    }
    for (char c : options_.token) {
      if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
        return Status::InvalidArgument(
            "the admin token must be printable ASCII without spaces or newlines");
      }
    }
    http_.new_task_queue = [] { return new httplib::ThreadPool(8); };
    http_.set_payload_max_length(options_.max_body_bytes);
    // httplib's default is SO_REUSEPORT, which would let a second server share our port
    // silently; SO_REUSEADDR only allows a quick restart.
    http_.set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    http_.set_keep_alive_timeout(2);  // an idle keep-alive connection holds a pool thread
    httplib::Server::Handler handler = [this](const httplib::Request& req, httplib::Response& res) {
      Handle(req, req.body, res);
    };
    // Methods with a body read it through ReadBody: httplib 0.11 checks the size limit
    // against Content-Length only, and would buffer a chunked body of any size.
    httplib::Server::HandlerWithContentReader with_body =
        [this](const httplib::Request& req, httplib::Response& res,
               const httplib::ContentReader& reader) {
          std::string body;
          if (ReadBody(req, reader, res, &body)) Handle(req, body, res);
        };
    // Every method goes to Handle (routing on the raw target, see above). HEAD → Get.
    http_.Get(".*", handler);
    http_.Post(".*", with_body);
    http_.Put(".*", with_body);
    http_.Delete(".*", with_body);
    http_.Patch(".*", with_body);
    http_.Options(".*", handler);
    // Answers httplib makes itself (413, 400 for a malformed request) get a JSON body too.
    http_.set_error_handler(httplib::Server::HandlerWithResponse(
        [this](const httplib::Request&, httplib::Response& res) {
          if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
          res.set_content(ReasonJson(res.status, options_.max_body_bytes), kJson);
          return httplib::Server::HandlerResponse::Handled;
        }));
    http_.set_exception_handler([](const httplib::Request&, httplib::Response& res,
                                   std::exception_ptr) { SendError(res, 500, "internal error"); });
    if (port_ == 0) {
      port_ = http_.bind_to_any_port(host_);
      if (port_ < 0) return Status::IOError("admin: cannot bind " + options_.listen);
    } else if (!http_.bind_to_port(host_, port_)) {
      return Status::IOError("admin: cannot bind " + options_.listen +
                             " (in use, or not an address of this machine)");
    }
    thread_ = std::thread([this] {
      http_.listen_after_bind();
      listen_returned_ = true;
    });
    // stop() only works once the accept loop runs; wait for it so Stop() cannot be lost.
    while (!http_.is_running() && !listen_returned_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (listen_returned_) {
      thread_.join();
      return Status::IOError("admin: the server on " + options_.listen + " stopped at start");
    }
    return Status::Ok();
  }

  void Stop() {
    if (!thread_.joinable()) return;
    http_.stop();
    thread_.join();
  }

  std::string address() const {
    bool v6 = host_.find(':') != std::string::npos;
    return (v6 ? "[" + host_ + "]" : host_) + ":" + std::to_string(port_);
  }

 private:
  // Authentication and browser-origin checks; false: `res` holds the refusal.
  bool Admit(const httplib::Request& req, httplib::Response& res) {
    if (!options_.token.empty()) {
      const std::string& auth = req.get_header_value("Authorization");
      constexpr std::string_view kBearer = "Bearer ";
      if (auth.size() < kBearer.size() || auth.compare(0, kBearer.size(), kBearer) != 0 ||
          !ConstantTimeEquals(std::string_view(auth).substr(kBearer.size()), options_.token)) {
        res.set_header("WWW-Authenticate", "Bearer");
        SendError(res, 401,
                  auth.empty() ? "missing Authorization: Bearer token" : "wrong admin token");
        return false;
      }
    } else if (req.has_header("Host") &&
               !IsLoopbackHost(Unbracket(NameOfAuthority(req.get_header_value("Host"))))) {
      // Without a token only loopback names reach us: a DNS-rebinding page cannot.
      SendError(res, 403, "Host header must name a loopback address");
      return false;
    }
    if (req.has_header("Origin")) {
      std::string origin = req.get_header_value("Origin");
      if (origin != "http://" + req.get_header_value("Host")) {
        SendError(res, 403, "cross-origin request refused (Origin " + origin + ")");
        return false;
      }
    }
    return true;
  }

  // Reads the body up to max_body_bytes; false: `res` holds the refusal (413, 400).
  bool ReadBody(const httplib::Request& req, const httplib::ContentReader& reader,
                httplib::Response& res, std::string* body) {
    if (req.is_multipart_form_data()) {
      res.set_header("Connection", "close");  // the body is left unread
      SendError(res, 400, "request bodies are JSON, not multipart/form-data");
      return false;
    }
    // Neither Content-Length nor Transfer-Encoding: an empty body (RFC 9112 §6.3), as
    // `curl -X POST URL` sends. httplib's reader would fail on it.
    if (!req.has_header("Content-Length") && !req.has_header("Transfer-Encoding")) return true;
    // Past the limit the rest is read and dropped (up to kMaxDrainBytes), so the client,
    // still sending, reads our 413 instead of a connection reset.
    bool too_large = false;
    size_t dropped = 0;
    bool ok = reader([&](const char* data, size_t len) {
      if (!too_large && body->size() + len <= options_.max_body_bytes) {
        body->append(data, len);
        return true;
      }
      if (!too_large) body->clear();
      too_large = true;
      dropped += len;
      return dropped <= kMaxDrainBytes;
    });
    if (too_large || res.status == 413) {     // 413: httplib's check of Content-Length
      res.set_header("Connection", "close");  // the rest of the body is left unread
      SendError(res, 413,
                "request body larger than " + std::to_string(options_.max_body_bytes) + " bytes");
      return false;
    }
    if (!ok) {
      res.set_header("Connection", "close");
      SendError(res, 400, "could not read the request body");
      return false;
    }
    return true;
  }

  void Handle(const httplib::Request& req, const std::string& body, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    if (!Admit(req, res)) return;
    std::string_view target = req.target;
    std::string_view path = target.substr(0, target.find('?'));
    Match m = MatchRoute(SplitPath(path));
    const std::string& method = req.method;
    if (m.route == Route::kNone) {
      if ((method == "GET" || method == "HEAD") && options_.assets) {
        Result<std::string> decoded = PercentDecode(path);
        std::optional<StaticAsset> asset;
        if (decoded.ok()) asset = options_.assets(*decoded);
        if (asset) {
          res.status = 200;
          res.set_content(std::string(asset->body), asset->content_type.c_str());
          return;
        }
      }
      SendError(res, 404, "no such endpoint: " + std::string(path));
      return;
    }
    bool allowed = false;
    std::string allow;
    for (const std::string& a : m.methods) {
      if (a == method || (a == "GET" && method == "HEAD")) allowed = true;
      allow += (allow.empty() ? "" : ", ") + a;
    }
    if (!allowed) {
      res.set_header("Allow", allow);
      SendError(res, 405,
                "method " + method + " not allowed on " + std::string(path) +
                    " (allowed: " + allow + ")");
      return;
    }
    if (Mutates(m.route) && backend_->read_only()) {
      SendError(res, 409, kReadOnly);
      return;
    }
    Dispatch(m, req, body, res);
  }

  void Dispatch(const Match& m, const httplib::Request& req, const std::string& body,
                httplib::Response& res) {
    switch (m.route) {
      case Route::kSeeds: {
        Result<SeedRequest> r = ParseSeedRequest(body);
        if (!r.ok()) return SendStatus(res, r.status());
        Result<SeedResult> out = backend_->InjectSeeds(*r);
        if (!out.ok()) return SendStatus(res, out.status());
        return SendJson(res, 200, ToJson(*out));
      }
      case Route::kStatus:
        return SendJson(res, 200, ToJson(backend_->GetStatus()));
      case Route::kMetrics:
        res.status = 200;
        res.set_content(backend_->MetricsText(), "text/plain; version=0.0.4; charset=utf-8");
        return;
      case Route::kPause:
      case Route::kResume: {
        bool pause = m.route == Route::kPause;
        Status s = pause ? backend_->Pause() : backend_->Resume();
        if (!s.ok()) return SendStatus(res, s);
        return SendJson(res, 200, {{"paused", pause}});
      }
      case Route::kPages: {
        Result<PageQuery> q = ParsePageQuery(req.params);
        if (!q.ok()) return SendStatus(res, q.status());
        Result<PageList> list = backend_->ListPages(*q);
        if (!list.ok()) return SendStatus(res, list.status());
        return SendJson(res, 200, ToJson(*list));
      }
      case Route::kPage:
      case Route::kPageContent: {
        Result<uint64_t> id = ParsePageId(m.arg);
        if (!id.ok()) return SendStatus(res, id.status());
        if (m.route == Route::kPage) {
          Result<PageRecord> page = backend_->GetPage(*id);
          if (!page.ok()) return SendStatus(res, page.status());
          return SendJson(res, 200, ToJson(*page));
        }
        Result<PageContent> content = backend_->GetPageContent(*id);
        if (!content.ok()) return SendStatus(res, content.status());
        // Crawled bytes are hostile: never let them run as this origin (the dashboard's).
        res.set_header("Content-Security-Policy", "sandbox");
        res.set_header("X-Content-Type-Options", "nosniff");
        res.status = 200;
        res.set_content(std::move(content->body), content->content_type.empty()
                                                      ? "application/octet-stream"
                                                      : content->content_type.c_str());
        return;
      }
      case Route::kHost:
      case Route::kHostPolicy:
      case Route::kHostBlock: {
        Result<std::string> host = ParseHostSegment(m.arg);
        if (!host.ok()) return SendStatus(res, host.status());
        if (m.route == Route::kHost) {
          Result<json> info = backend_->GetHost(*host);
          if (!info.ok()) return SendStatus(res, info.status());
          return SendJson(res, 200, *info);
        }
        if (m.route == Route::kHostPolicy) {
          Result<HostPolicy> policy = ParsePolicyRequest(body);
          if (!policy.ok()) return SendStatus(res, policy.status());
          Status s = backend_->SetPolicy(*host, *policy);
          if (!s.ok()) return SendStatus(res, s);
          return SendJson(res, 200, {{"applied", true}});
        }
        bool block = req.method == "PUT";
        Status s = backend_->SetBlocked(*host, block);
        if (!s.ok()) return SendStatus(res, s);
        return SendJson(res, 200, {{"host", *host}, {"blocked", block}});
      }
      case Route::kNone:
        break;
    }
    SendError(res, 404, "no such endpoint");
  }

  ServerOptions options_;
  Backend* backend_;
  httplib::Server http_;
  std::string host_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> listen_returned_{false};
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() { Stop(); }

Result<std::unique_ptr<Server>> Server::Start(ServerOptions options, Backend* backend) {
  auto impl = std::make_unique<Impl>(std::move(options), backend);
  Status s = impl->Start();
  if (!s.ok()) return s;
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

std::string Server::address() const { return impl_->address(); }
void Server::Stop() { impl_->Stop(); }

}  // namespace harvest::admin
