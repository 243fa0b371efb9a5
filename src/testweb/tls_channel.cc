#include "testweb/tls_channel.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <climits>
#include <utility>

namespace harvest::testweb {

TlsChannel::TlsChannel(OpenSslPtr<SSL> ssl) : ssl_(std::move(ssl)) {
  if (!ssl_) return;
  rbio_ = BIO_new(BIO_s_mem());
  wbio_ = BIO_new(BIO_s_mem());
  if (rbio_ == nullptr || wbio_ == nullptr) {
    BIO_free(rbio_);
    BIO_free(wbio_);
    ssl_.reset();
    return;
  }
  // An empty input BIO means "more bytes later" (WANT_READ), not end of stream.
  BIO_set_mem_eof_return(rbio_, -1);
  SSL_set_bio(ssl_.get(), rbio_, wbio_);
  SSL_set_accept_state(ssl_.get());
}

void TlsChannel::PutRaw(const char* data, size_t size, int64_t rx_us) {
  if (pending_rx_us_ == 0) pending_rx_us_ = rx_us;
  while (size > 0) {
    const int n = BIO_write(rbio_, data, static_cast<int>(std::min<size_t>(size, INT_MAX)));
    if (n <= 0) {
      state_ = State::kFailed;
      return;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
}

TlsChannel::State TlsChannel::Pump(std::string* plain, int64_t* rx_us) {
  *rx_us = pending_rx_us_;
  if (state_ == State::kHandshaking) {
    const int r = SSL_do_handshake(ssl_.get());
    if (r == 1) {
      state_ = State::kOpen;
    } else {
      const int e = SSL_get_error(ssl_.get(), r);
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) state_ = State::kFailed;
    }
  }
  if (state_ == State::kOpen) {
    char buf[16384];
    for (;;) {
      const int n = SSL_read(ssl_.get(), buf, sizeof(buf));
      if (n > 0) {
        plain->append(buf, static_cast<size_t>(n));
        continue;
      }
      const int e = SSL_get_error(ssl_.get(), n);
      if (e == SSL_ERROR_ZERO_RETURN) state_ = State::kClosed;
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE && e != SSL_ERROR_ZERO_RETURN) {
        state_ = State::kFailed;
      }
      break;
    }
  }
  // The error queue is per thread and shared by every connection of the loop: a client's
  // garbage must not leave its errors for the next connection's calls to find.
  if (state_ == State::kFailed) ERR_clear_error();
  DrainOutput();
  if (BIO_ctrl_pending(rbio_) == 0) pending_rx_us_ = 0;
  return state_;
}

bool TlsChannel::h2() const {
  const unsigned char* proto = nullptr;
  unsigned int len = 0;
  SSL_get0_alpn_selected(ssl_.get(), &proto, &len);
  return len == 2 && proto[0] == 'h' && proto[1] == '2';
}

uint64_t TlsChannel::Write(std::string_view plain) {
  while (!plain.empty() && state_ == State::kOpen) {
    const int n = SSL_write(ssl_.get(), plain.data(),
                            static_cast<int>(std::min<size_t>(plain.size(), INT_MAX)));
    if (n <= 0) {
      state_ = State::kFailed;
      ERR_clear_error();
      break;
    }
    plain.remove_prefix(static_cast<size_t>(n));
  }
  DrainOutput();
  return produced_;
}

void TlsChannel::Shutdown() {
  if (state_ != State::kOpen) return;
  if (SSL_shutdown(ssl_.get()) < 0) ERR_clear_error();
  DrainOutput();
}

void TlsChannel::Sent(size_t n) {
  out_off_ += n;
  sent_ += n;
  if (out_off_ == out_.size()) {
    out_.clear();
    out_off_ = 0;
  }
}

void TlsChannel::DrainOutput() {
  char buf[16384];
  for (;;) {
    const int n = BIO_read(wbio_, buf, sizeof(buf));
    if (n <= 0) break;
    out_.append(buf, static_cast<size_t>(n));
    produced_ += static_cast<uint64_t>(n);
  }
}

}  // namespace harvest::testweb
