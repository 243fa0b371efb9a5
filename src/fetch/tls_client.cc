// TlsClientContext: the SSL_CTX, the socket BIO and the session store (see the header).
#include "fetch/tls_client.h"

#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "base/receive_time.h"
#include "fetch/resolver.h"
#include "fetch/transfer.h"

namespace harvest::fetch::internal {
namespace {

// The record buffer with read-ahead: a typical page (17 KB with its head) in one recv(2),
// as Http1Client's 64 KiB buffer over plain http.
constexpr size_t kReadBufferBytes = 64 * 1024;
// ALPN, wire format: only HTTP/1.1.
constexpr unsigned char kAlpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

std::string OpenSslErrors() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

}  // namespace

// ---- TlsConnection ----

TlsConnection::~TlsConnection() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

void TlsConnection::Close() {
  if (ssl_ == nullptr) return;
  if (!failed_ && SSL_is_init_finished(ssl_)) {
    // Queues close_notify and writes it at once if the socket takes it; never waits for the
    // server's.
    if (SSL_shutdown(ssl_) < 0) ERR_clear_error();
  }
  // A broken connection sends nothing, and SSL_free drops its session from reuse.
}

void TlsConnection::ReleaseBuffers() {
  if (ssl_ != nullptr) SSL_free_buffers(ssl_);  // keeps them if they hold data: fine
}

std::string TlsConnection::HandshakeError(int ret) {
  const int e = SSL_get_error(ssl_, ret);
  failed_ = true;
  std::string why;
  const long verify = SSL_get_verify_result(ssl_);
  if (e == SSL_ERROR_SSL && verify_ && verify != X509_V_OK) {
    why = std::string("SSL certificate problem: ") + X509_verify_cert_error_string(verify);
    ERR_clear_error();
    return why;
  }
  why = OpenSslErrors();
  if (why.empty()) {
    if (eof_) {
      why = "connection closed by the server";
    } else if (sys_errno_ != 0) {
      why = std::strerror(sys_errno_);
    } else {
      why = "SSL_ERROR " + std::to_string(e);
    }
  }
  return "TLS connect error with " + peer_ + ": " + why;
}

std::string TlsConnection::IoError(int ssl_error) {
  failed_ = true;
  std::string why = OpenSslErrors();
  if (why.empty()) {
    why = sys_errno_ != 0 ? std::strerror(sys_errno_) : "SSL_ERROR " + std::to_string(ssl_error);
  }
  return why;
}

int TlsConnection::BioRead(BIO* bio, char* data, size_t size, size_t* read) {
  auto* t = static_cast<TlsConnection*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  for (;;) {
    int64_t rx_wall_us = 0;
    const ssize_t n = ReceiveWithTime(t->fd_, data, size, &rx_wall_us);
    if (n > 0) {
      if (rx_wall_us != 0) t->rx_wall_us_ = rx_wall_us;
      t->drained_ = static_cast<size_t>(n) < size;
      *read = static_cast<size_t>(n);
      return 1;
    }
    if (n == 0) {
      t->eof_ = true;
      t->drained_ = true;
      return 0;
    }
    if (errno == EINTR) continue;
    t->drained_ = true;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      BIO_set_retry_read(bio);
    } else {
      t->sys_errno_ = errno;
    }
    return 0;
  }
}

int TlsConnection::BioWrite(BIO* bio, const char* data, size_t size, size_t* written) {
  auto* t = static_cast<TlsConnection*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  for (;;) {
    const ssize_t n = send(t->fd_, data, size, MSG_NOSIGNAL);
    if (n >= 0) {
      *written = static_cast<size_t>(n);
      return 1;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      BIO_set_retry_write(bio);
    } else {
      t->sys_errno_ = errno;
    }
    return 0;
  }
}

long TlsConnection::BioCtrl(BIO* bio, int cmd, long, void*) {
  auto* t = static_cast<TlsConnection*>(BIO_get_data(bio));
  switch (cmd) {
    case BIO_CTRL_FLUSH:
      return 1;  // writes go straight to the socket
    case BIO_CTRL_EOF:
      return t != nullptr && t->eof_ ? 1 : 0;
    default:
      return 0;
  }
}

// ---- TlsClientContext ----

Result<std::unique_ptr<TlsClientContext>> TlsClientContext::Make(const FetchOptions& options) {
  std::unique_ptr<TlsClientContext> c(new TlsClientContext());
  c->verify_ = options.verify_tls;
  c->ctx_ = SSL_CTX_new(TLS_client_method());
  if (c->ctx_ == nullptr) return Status::Internal("SSL_CTX_new: " + OpenSslErrors());
  SSL_CTX* ctx = c->ctx_;
  SSL_CTX_set_app_data(ctx, c.get());
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
  // A server that closes without close_notify ends the stream (as curl treats it): an
  // unframed body ends there, a framed one is then short ("disconnect").
  SSL_CTX_set_options(
      ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  // Buffers are not released whenever they run empty (SSL_MODE_RELEASE_BUFFERS: a 64 KiB
  // allocation and free per read, and the write buffer's per request) but when the
  // connection goes idle (ReleaseBuffers).
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_default_read_buffer_len(ctx, kReadBufferBytes);
  if (SSL_CTX_set_alpn_protos(ctx, kAlpn, sizeof(kAlpn)) != 0) {
    return Status::Internal("SSL_CTX_set_alpn_protos: " + OpenSslErrors());
  }
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, &TlsClientContext::OnNewSession);
  // The trust store, built once: the bundle CurlFetcher uses (system + ca_file).
  Result<std::unique_ptr<CaBundle>> bundle = CaBundle::Make(options.ca_file);
  if (!bundle.ok()) return bundle.status();
  if (options.verify_tls) {
    const bool loaded = *bundle != nullptr
                            ? SSL_CTX_load_verify_file(ctx, (*bundle)->path().c_str()) == 1
                            : SSL_CTX_set_default_verify_paths(ctx) == 1;
    if (!loaded) {
      return Status::InvalidArgument("TLS trust store: " + OpenSslErrors());
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  } else {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  }
  c->bio_method_ = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "harvest socket");
  if (c->bio_method_ == nullptr ||
      BIO_meth_set_read_ex(c->bio_method_, &TlsConnection::BioRead) != 1 ||
      BIO_meth_set_write_ex(c->bio_method_, &TlsConnection::BioWrite) != 1 ||
      BIO_meth_set_ctrl(c->bio_method_, &TlsConnection::BioCtrl) != 1) {
    return Status::Internal("BIO_meth_new: " + OpenSslErrors());
  }
  ERR_clear_error();
  return c;
}

TlsClientContext::~TlsClientContext() {
  for (auto& [key, session] : sessions_) SSL_SESSION_free(session);
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
  if (bio_method_ != nullptr) BIO_meth_free(bio_method_);
}

std::unique_ptr<TlsConnection> TlsClientContext::Open(int fd, std::string_view host,
                                                      std::string session_key, std::string peer) {
  std::unique_ptr<TlsConnection> t(new TlsConnection());
  t->owner_ = this;
  t->fd_ = fd;
  t->verify_ = verify_;
  t->session_key_ = std::move(session_key);
  t->peer_ = std::move(peer);
  t->ssl_ = SSL_new(ctx_);
  BIO* bio = t->ssl_ != nullptr ? BIO_new(bio_method_) : nullptr;
  if (bio == nullptr) {
    ERR_clear_error();
    return nullptr;
  }
  BIO_set_data(bio, t.get());
  BIO_set_init(bio, 1);
  SSL_set_bio(t->ssl_, bio, bio);
  SSL_set_app_data(t->ssl_, t.get());
  SSL_set_connect_state(t->ssl_);
  // The URL's host: a trailing dot is not part of the name a certificate or SNI carries.
  if (host.size() > 1 && host.back() == '.') host.remove_suffix(1);
  const std::string name(host);
  const bool literal = IsNumericAddress(name);
  bool ok = true;
  if (!literal) ok = SSL_set_tlsext_host_name(t->ssl_, name.c_str()) == 1;  // SNI
  if (ok && verify_) {
    if (literal) {
      ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl_), name.c_str()) == 1;
    } else {
      SSL_set_hostflags(t->ssl_, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      ok = SSL_set1_host(t->ssl_, name.c_str()) == 1;
    }
  }
  if (!ok) {
    ERR_clear_error();
    return nullptr;
  }
  if (auto it = session_by_key_.find(t->session_key_); it != session_by_key_.end()) {
    SSL_SESSION* session = it->second->second;
    if (SSL_SESSION_is_resumable(session) == 1) {
      SSL_set_session(t->ssl_, session);
      sessions_.splice(sessions_.end(), sessions_, it->second);  // most recently used
    }
  }
  return t;
}

int TlsClientContext::OnNewSession(SSL* ssl, SSL_SESSION* session) {
  auto* t = static_cast<TlsConnection*>(SSL_get_app_data(ssl));
  if (t == nullptr || t->owner_ == nullptr) return 0;
  t->owner_->KeepSession(t->session_key_, session);
  return 1;  // the reference is ours now
}

void TlsClientContext::KeepSession(const std::string& key, SSL_SESSION* session) {
  if (auto it = session_by_key_.find(key); it != session_by_key_.end()) {
    SSL_SESSION_free(it->second->second);
    it->second->second = session;
    sessions_.splice(sessions_.end(), sessions_, it->second);
    return;
  }
  auto pos = sessions_.insert(sessions_.end(), {key, session});
  session_by_key_.emplace(key, pos);
  while (sessions_.size() > kMaxSessions) {
    session_by_key_.erase(sessions_.front().first);
    SSL_SESSION_free(sessions_.front().second);
    sessions_.pop_front();
  }
}

}  // namespace harvest::fetch::internal
