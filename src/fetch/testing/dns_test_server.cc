#include "fetch/testing/dns_test_server.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/ascii.h"

namespace harvest::fetch::testing {
namespace {

uint16_t Get16(const std::string& s, size_t at) {
  return static_cast<uint16_t>((static_cast<uint8_t>(s[at]) << 8) |
                               static_cast<uint8_t>(s[at + 1]));
}

void Put16(std::string& s, uint16_t v) {
  s.push_back(static_cast<char>(v >> 8));
  s.push_back(static_cast<char>(v & 0xff));
}

void Put32(std::string& s, uint32_t v) {
  Put16(s, static_cast<uint16_t>(v >> 16));
  Put16(s, static_cast<uint16_t>(v & 0xffff));
}

// The lower-case question name and the offset just past QTYPE/QCLASS; false when malformed.
bool ParseQuestion(const std::string& q, std::string* name, uint16_t* type, size_t* end) {
  if (q.size() < 12 || Get16(q, 4) < 1) return false;
  size_t at = 12;
  name->clear();
  while (at < q.size()) {
    const uint8_t len = static_cast<uint8_t>(q[at++]);
    if (len == 0) break;
    if (len > 63 || at + len > q.size()) return false;
    if (!name->empty()) name->push_back('.');
    for (size_t i = 0; i < len; ++i) {
      name->push_back(AsciiLower(q[at + i]));
    }
    at += len;
  }
  if (at + 4 > q.size()) return false;
  *type = Get16(q, at);
  *end = at + 4;
  return true;
}

}  // namespace

bool DnsTestServer::Start() {
  fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd_ < 0 || stop_fd_ < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return false;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return false;
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Loop(); });
  return true;
}

void DnsTestServer::Stop() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t w = write(stop_fd_, &one, sizeof(one));
    thread_.join();
  }
  if (fd_ >= 0) close(fd_);
  if (stop_fd_ >= 0) close(stop_fd_);
  fd_ = stop_fd_ = -1;
}

void DnsTestServer::SetAnswer(const std::string& name, const std::string& address, uint32_t ttl) {
  MutexLock lock(&mu_);
  rules_[name] = Rule{.mode = Mode::kAnswer, .address = address, .ttl = ttl};
}

void DnsTestServer::SetNxdomain(const std::string& name) {
  MutexLock lock(&mu_);
  rules_[name] = Rule{.mode = Mode::kNxdomain};
}

void DnsTestServer::SetIgnore(const std::string& name) {
  MutexLock lock(&mu_);
  rules_[name] = Rule{.mode = Mode::kIgnore};
}

void DnsTestServer::SetHold(const std::string& name) {
  MutexLock lock(&mu_);
  rules_[name] = Rule{.mode = Mode::kHold};
}

void DnsTestServer::Release(const std::string& name, const std::string& address, uint32_t ttl) {
  MutexLock lock(&mu_);
  const Rule rule{.mode = Mode::kAnswer, .address = address, .ttl = ttl};
  rules_[name] = rule;
  for (const Held& h : held_[name]) Reply(h.query, h.peer, rule);
  held_.erase(name);
}

size_t DnsTestServer::queries(const std::string& name, uint16_t type) const {
  MutexLock lock(&mu_);
  auto it = queries_.find({name, type});
  return it == queries_.end() ? 0 : it->second;
}

bool DnsTestServer::WaitForQueries(const std::string& name, size_t n,
                                   std::chrono::milliseconds limit, uint16_t type) const {
  MutexLock lock(&mu_);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!SeenQueries(name, n, type)) {
    if (!cv_.WaitUntil(&mu_, deadline)) return SeenQueries(name, n, type);
  }
  return true;
}

bool DnsTestServer::SeenQueries(const std::string& name, size_t n, uint16_t type) const {
  auto it = queries_.find({name, type});
  return it != queries_.end() && it->second >= n;
}

void DnsTestServer::Reply(const std::string& query, const sockaddr_in& peer, const Rule& rule) {
  std::string name;
  uint16_t type = 0;
  size_t end = 0;
  if (!ParseQuestion(query, &name, &type, &end)) return;
  std::string rdata;
  if (rule.mode == Mode::kAnswer) {
    unsigned char buf[sizeof(in6_addr)];
    if (type == kTypeA && inet_pton(AF_INET, rule.address.c_str(), buf) == 1) {
      rdata.assign(reinterpret_cast<char*>(buf), 4);
    } else if (type == kTypeAAAA && inet_pton(AF_INET6, rule.address.c_str(), buf) == 1) {
      rdata.assign(reinterpret_cast<char*>(buf), 16);
    }
  }
  const uint16_t rcode = rule.mode == Mode::kAnswer ? 0 : 3;  // NOERROR / NXDOMAIN
  std::string out;
  Put16(out, Get16(query, 0));                                                     // ID
  Put16(out, static_cast<uint16_t>(0x8080 | (Get16(query, 2) & 0x0100) | rcode));  // QR RD RA
  Put16(out, 1);                                                                   // QDCOUNT
  Put16(out, rdata.empty() ? 0 : 1);                                               // ANCOUNT
  Put16(out, 0);
  Put16(out, 0);
  out.append(query, 12, end - 12);  // the question
  if (!rdata.empty()) {
    Put16(out, 0xC00C);  // pointer to the question name
    Put16(out, type);
    Put16(out, 1);  // IN
    Put32(out, rule.ttl);
    Put16(out, static_cast<uint16_t>(rdata.size()));
    out += rdata;
  }
  sendto(fd_, out.data(), out.size(), 0, reinterpret_cast<const sockaddr*>(&peer), sizeof(peer));
}

void DnsTestServer::Loop() {
  char buf[1500];
  for (;;) {
    pollfd fds[2] = {{.fd = fd_, .events = POLLIN, .revents = 0},
                     {.fd = stop_fd_, .events = POLLIN, .revents = 0}};
    if (poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents != 0) return;
    sockaddr_in peer{};
    socklen_t len = sizeof(peer);
    const ssize_t n = recvfrom(fd_, buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&peer), &len);
    if (n <= 0) continue;
    const std::string query(buf, static_cast<size_t>(n));
    std::string name;
    uint16_t type = 0;
    size_t end = 0;
    if (!ParseQuestion(query, &name, &type, &end)) continue;
    MutexLock lock(&mu_);
    ++queries_[{name, type}];
    cv_.SignalAll();
    auto it = rules_.find(name);
    const Rule rule = it != rules_.end() ? it->second : Rule{};
    if (rule.mode == Mode::kIgnore) continue;
    if (rule.mode == Mode::kHold) {
      held_[name].push_back(Held{query, peer});
      continue;
    }
    Reply(query, peer, rule);
  }
}

}  // namespace harvest::fetch::testing
