// Http1Client: Harvest's own HTTP/1.1 client for http and https, on the HttpFetcher's epoll
// loop (src/fetch/http1_fetcher.cc). Private to src/fetch.
//
// What it does: GET over a non-blocking TCP connection to a numeric address — for https a
// non-blocking TLS handshake on it first (SSL_connect's WANT_READ/WANT_WRITE driving the
// epoll interest; src/fetch/tls_client.h: verification, ALPN "http/1.1", sessions resumed
// per host) — the response read with Http1Response, the connection kept per (URL host, address) for
// the host's next request (at most FetchOptions::max_idle_connections idle, least recently used
// closed first, none longer than 30 s). A kept connection the server closed meanwhile is noticed by
// epoll while idle, or when the next request gets no response byte at all: that request is
// then sent once more on a new connection (RFC 9110 §9.2.2, GET is idempotent).
// Timeouts as FetchOptions says: connect (TCP connect and TLS handshake), total, and low
// speed (checked every 50 ms).
//
// It captures what CurlFetcher captures (fetch.h): the request head as sent, the final
// response head as received, the body de-chunked but not decoded, the peer address, the
// times; outcomes and WARC-Truncated values as CurlFetcher maps curl's errors.
//
// Thread-safety: the loop thread only.
#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fetch/fetch.h"

namespace harvest::fetch::internal {

// Where a request on the own client goes without a DNS lookup.
struct Http1Target {
  std::string address;  // numeric IPv4 or IPv6 (no brackets)
  int port = 80;
  std::string authority;       // the URL's host[:port], for the Host header
  std::string request_target;  // path and query ("/" when empty), no fragment
  bool tls = false;            // https
  std::string host;            // https: the URL's host (no brackets), for SNI and the check
};

// A FetchOptions::connect_to entry split into its four fields (brackets kept).
struct ConnectToRule {
  std::string host, port, to_host, to_port;
};
std::vector<ConnectToRule> ParseConnectTo(const std::vector<std::string>& entries);

// The target when `request` can run on Http1Client: an http:// (if `http`) or https:// (if
// `https`) URL without userinfo whose path is printable ASCII, no redirects to follow, and a
// numeric address to connect to (FetchRequest::connect_address, an address literal host, or
// a connect_to rule routing the host to one). nullopt: the request needs libcurl.
std::optional<Http1Target> OwnClientTarget(const FetchRequest& request,
                                           const std::vector<ConnectToRule>& connect_to,
                                           bool http = true, bool https = true);

class TlsClientContext;

class Http1Client {
 public:
  // `epoll_fd` is the loop's; the client registers its sockets there, data.ptr pointing at
  // its own connection objects (the loop hands every other pointer's events elsewhere).
  // `tls` runs the https requests (nullptr: the caller sends none).
  Http1Client(const FetchOptions& options, std::string user_agent, int epoll_fd,
              std::unique_ptr<TlsClientContext> tls);
  ~Http1Client();
  Http1Client(const Http1Client&) = delete;
  Http1Client& operator=(const Http1Client&) = delete;

  // Starts a request now (the caller enforces concurrency limits). `done` is queued, with
  // the result, for the caller's next TakeFinished().
  void Start(FetchRequest request, Http1Target target, FetchCallback done);
  // An epoll event whose data.ptr was registered by this client.
  void HandleEvent(void* ptr, uint32_t events);
  // Deadlines (connect, total, low speed) and idle connections past their lifetime.
  void CheckTimers();
  // Connections closed while handling events are freed here, after the event batch.
  void EndOfBatch();
  // How long the loop may wait before CheckTimers() is due (`cap` when nothing runs).
  std::chrono::milliseconds WaitBudget(std::chrono::milliseconds cap) const;

  struct Finished {
    FetchCallback done;
    FetchResult result;
    std::string host_key;
  };
  std::vector<Finished>& finished() { return finished_; }
  size_t running() const { return running_.size(); }
  size_t idle_connections() const { return idle_.size(); }

 private:
  struct Conn;
  struct Xfer;
  using SteadyClock = std::chrono::steady_clock;

  std::unique_ptr<Conn> TakeIdle(const std::string& pool_key);
  void Connect(Xfer* x);
  void StartTls(Xfer* x);
  void Handshake(Xfer* x);
  void SendRequest(Xfer* x);
  void OnReadable(Xfer* x);
  void OnReadableTls(Xfer* x);
  // Feeds response bytes read at `rx_wall_us`; true when the transfer completed.
  bool Consume(Xfer* x, std::string_view data, int64_t rx_wall_us);
  // The connection closed (err 0) or failed reading (errno `err`, or TLS `tls_error`).
  void OnEndOfStream(Xfer* x, int err, std::string tls_error);
  // An idle https connection became readable: true when it only carried TLS messages (a
  // session ticket) and stays usable.
  bool IdleTlsStillOpen(Conn* c);
  void SetEvents(Conn* c, uint32_t events);
  // The reused connection failed before any response byte: once more on a new one.
  bool RetryOnNewConnection(Xfer* x);
  void Complete(Xfer* x, FetchOutcome outcome, std::string error);
  void CloseConn(std::unique_ptr<Conn> conn);
  void KeepIdle(std::unique_ptr<Conn> conn);
  void RemoveIdle(Conn* conn);
  void TrimIdle(SteadyClock::time_point now);

  // First: the connections' SSLs use its BIO method and return their sessions to it.
  std::unique_ptr<TlsClientContext> tls_;
  FetchOptions options_;
  std::string user_agent_;
  int epoll_fd_;
  std::unordered_map<Xfer*, std::unique_ptr<Xfer>> running_;
  std::vector<Finished> finished_;
  // Idle connections, least recently used first, and by pool key ("host-key address:port").
  std::list<std::unique_ptr<Conn>> idle_;
  std::unordered_multimap<std::string, std::list<std::unique_ptr<Conn>>::iterator> idle_by_key_;
  std::vector<std::unique_ptr<Conn>> closed_;  // freed in EndOfBatch()
  SteadyClock::time_point next_check_{};
  std::vector<char> buffer_;  // receive buffer, shared by every connection
};

}  // namespace harvest::fetch::internal
