#include "testweb/h2_session.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "base/ascii.h"

namespace harvest::testweb {

namespace {

// Streams a client may open at once. The crawler sends one request per host at a time;
// this only bounds a misbehaving client.
constexpr uint32_t kMaxConcurrentStreams = 100;
// Response header fields that HTTP/2 forbids (RFC 9113 §8.2.2): connection-specific.
bool IsConnectionHeader(std::string_view name) {
  return EqualsIgnoreAsciiCase(name, "connection") || EqualsIgnoreAsciiCase(name, "keep-alive") ||
         EqualsIgnoreAsciiCase(name, "transfer-encoding") ||
         EqualsIgnoreAsciiCase(name, "proxy-connection") || EqualsIgnoreAsciiCase(name, "upgrade");
}

nghttp2_nv Header(const std::string& name, const std::string& value) {
  // nghttp2 copies both (no NO_COPY flags): the strings may go once submitted.
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}

}  // namespace

H2Session::H2Session(Delegate* delegate, const LogEntry& base, bool hsts)
    : delegate_(delegate), base_(base), hsts_(hsts) {
  nghttp2_session_callbacks* cb = nullptr;
  if (nghttp2_session_callbacks_new(&cb) != 0) return;
  nghttp2_session_callbacks_set_on_begin_headers_callback(cb, OnBeginHeaders);
  nghttp2_session_callbacks_set_on_header_callback(cb, OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, OnDataChunk);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, OnFrameRecv);
  nghttp2_session_callbacks_set_before_frame_send_callback(cb, BeforeFrameSend);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, OnStreamClose);
  const int rv = nghttp2_session_server_new(&session_, cb, this);
  nghttp2_session_callbacks_del(cb);
  if (rv != 0) {
    session_ = nullptr;
    return;
  }
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, kMaxConcurrentStreams}};
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, 1);
}

H2Session::~H2Session() {
  if (session_ != nullptr) nghttp2_session_del(session_);
}

bool H2Session::Receive(std::string_view plain, int64_t rx_us) {
  rx_us_ = rx_us;
  const ssize_t n = nghttp2_session_mem_recv(
      session_, reinterpret_cast<const uint8_t*>(plain.data()), plain.size());
  return n >= 0;
}

std::string H2Session::Produce(size_t limit) {
  std::string out;
  while (out.size() < limit) {
    const uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n <= 0) break;  // nothing more, or a fatal error (Finished() then tells)
    out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
  }
  return out;
}

void H2Session::Produced(uint64_t raw_mark) {
  for (int32_t id : touched_) {
    auto it = streams_.find(id);
    if (it != streams_.end()) it->second.last_mark = raw_mark;
  }
  touched_.clear();
}

void H2Session::Sent(uint64_t raw_sent, int64_t before_send_us) {
  for (auto it = streams_.begin(); it != streams_.end();) {
    Stream& s = it->second;
    const int32_t id = it->first;
    ++it;  // Finish() erases the stream
    if (s.last_mark <= s.acked || s.last_mark > raw_sent) continue;
    s.acked = s.last_mark;
    s.last_send_us = before_send_us;
    if (s.ended) Finish(id, s, before_send_us);
  }
}

int64_t H2Session::NextDeadline() const {
  int64_t next = 0;
  auto earlier = [&next](int64_t t) {
    if (t > 0 && (next == 0 || t < next)) next = t;
  };
  for (const auto& [id, s] : streams_) {
    if (s.requested && !s.submitted) earlier(s.ready_at_us);
    if (s.submitted && s.response.trickle && !s.ended) earlier(s.next_trickle_us);
  }
  return next;
}

void H2Session::OnTimer(int64_t now_us) {
  for (auto it = streams_.begin(); it != streams_.end();) {
    const int32_t id = it->first;
    Stream& s = it->second;
    ++it;  // Submit() may erase the stream
    if (s.requested && !s.submitted && s.ready_at_us <= now_us) {
      Submit(id, s);
    } else if (s.submitted && s.response.trickle && !s.ended && s.next_trickle_us <= now_us) {
      ++s.trickle_credit;
      s.next_trickle_us = now_us + int64_t{kTrickleIntervalMs} * 1000;
      if (s.deferred) {
        s.deferred = false;
        nghttp2_session_resume_data(session_, id);
      }
    }
  }
}

bool H2Session::Finished() const {
  return nghttp2_session_want_read(session_) == 0 && nghttp2_session_want_write(session_) == 0;
}

void H2Session::Abort() {
  const int64_t now = delegate_->WallMicros();
  for (auto it = streams_.begin(); it != streams_.end();) {
    Stream& s = it->second;
    const int32_t id = it->first;
    ++it;
    Finish(id, s, s.last_send_us > 0 ? s.last_send_us : now);
  }
}

void H2Session::OnRequest(int32_t id, Stream& s) {
  s.requested = true;
  s.entry.path = s.request.target;
  s.entry.host = s.request.host;
  if (s.body_too_large) {
    s.response = Response();
    s.response.status = 413;
  } else {
    s.response = delegate_->Respond(s.request, &s.entry);
  }
  if (s.request.method == "HEAD") {
    s.response.head_only = true;
    s.response.trickle = false;
  }
  if (s.response.delay_ms > 0) {
    s.ready_at_us = SteadyMicros() + int64_t{s.response.delay_ms} * 1000;
    return;
  }
  Submit(id, s);
}

void H2Session::Submit(int32_t id, Stream& s) {
  s.submitted = true;
  const Response& r = s.response;
  const bool no_body =
      r.head_only || r.status == 304 || (!r.trickle && (!r.body || r.body->empty()));
  std::vector<std::pair<std::string, std::string>> fields;
  fields.emplace_back(":status", std::to_string(r.status));
  fields.emplace_back("date", delegate_->DateHeader());
  fields.emplace_back("server", "harvest-testweb");
  for (const auto& [k, v] : r.headers) {
    if (!IsConnectionHeader(k)) fields.emplace_back(ToLowerAscii(k), v);
  }
  if (!r.trickle && r.status != 304) {
    fields.emplace_back("content-length", std::to_string(r.body ? r.body->size() : 0));
  }
  if (hsts_) fields.emplace_back("strict-transport-security", "max-age=31536000");
  std::vector<nghttp2_nv> nva;
  nva.reserve(fields.size());
  for (const auto& [k, v] : fields) nva.push_back(Header(k, v));
  nghttp2_data_provider provider{};
  provider.read_callback = ReadBody;
  s.entry.status = r.status;
  s.entry.bytes = 0;
  if (r.trickle) s.next_trickle_us = SteadyMicros() + int64_t{kTrickleIntervalMs} * 1000;
  if (nghttp2_submit_response(session_, id, nva.data(), nva.size(),
                              no_body ? nullptr : &provider) != 0) {
    // The stream is gone (the client reset it): log what there is.
    Finish(id, s, delegate_->WallMicros());
  }
}

void H2Session::Finish(int32_t id, Stream& s, int64_t end_us) {
  if (s.requested) {
    s.entry.end_us = end_us;
    if (s.entry.status == 0) s.entry.status = s.response.status;  // closed before headers
    delegate_->Log(s.entry);
  }
  const bool close = s.requested && s.response.close;
  streams_.erase(id);
  // Like "Connection: close" after the response: no more requests on this connection.
  if (close && !closing_) {
    closing_ = true;
    nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
  }
}

int H2Session::OnBeginHeaders(nghttp2_session*, const nghttp2_frame* frame, void* self) {
  auto* h = static_cast<H2Session*>(self);
  if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  Stream& s = h->streams_[frame->hd.stream_id];
  s.entry = h->base_;
  s.entry.start_us = h->delegate_->RequestStart(h->rx_us_);
  return 0;
}

int H2Session::OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                        size_t name_len, const uint8_t* value, size_t value_len, uint8_t,
                        void* self) {
  auto* h = static_cast<H2Session*>(self);
  if (frame->hd.type != NGHTTP2_HEADERS) return 0;
  auto it = h->streams_.find(frame->hd.stream_id);
  if (it == h->streams_.end()) return 0;
  Request& req = it->second.request;
  const std::string_view n(reinterpret_cast<const char*>(name), name_len);
  std::string v(reinterpret_cast<const char*>(value), value_len);
  // nghttp2 has checked the names are lower case (RFC 9113 §8.2.1).
  if (n == ":method") {
    req.method = std::move(v);
  } else if (n == ":path") {
    req.target = std::move(v);
  } else if (n == ":authority" || (n == "host" && req.host.empty())) {
    req.host = std::move(v);
  } else if (n == "accept-encoding") {
    req.accept_encoding = std::move(v);
  } else if (n == "if-none-match") {
    req.if_none_match = std::move(v);
  } else if (n == "if-modified-since") {
    req.if_modified_since = std::move(v);
  }
  return 0;
}

int H2Session::OnDataChunk(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t len,
                           void* self) {
  auto* h = static_cast<H2Session*>(self);
  auto it = h->streams_.find(id);
  if (it == h->streams_.end()) return 0;
  Stream& s = it->second;
  if (s.request.body.size() + len > kMaxBodyBytes) {
    s.body_too_large = true;
  } else {
    s.request.body.append(reinterpret_cast<const char*>(data), len);
  }
  return 0;
}

int H2Session::OnFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* self) {
  auto* h = static_cast<H2Session*>(self);
  if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) {
    return 0;
  }
  auto it = h->streams_.find(frame->hd.stream_id);
  if (it != h->streams_.end() && !it->second.requested) h->OnRequest(it->first, it->second);
  return 0;
}

// HEADERS (DATA frames are seen in ReadBody) go out in the mem_send call that returns them.
int H2Session::BeforeFrameSend(nghttp2_session*, const nghttp2_frame* frame, void* self) {
  auto* h = static_cast<H2Session*>(self);
  if (frame->hd.type != NGHTTP2_HEADERS) return 0;
  auto it = h->streams_.find(frame->hd.stream_id);
  if (it == h->streams_.end()) return 0;
  h->Touch(it->first);
  if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) it->second.ended = true;
  return 0;
}

int H2Session::OnStreamClose(nghttp2_session*, int32_t id, uint32_t, void* self) {
  auto* h = static_cast<H2Session*>(self);
  auto it = h->streams_.find(id);
  // An ended stream is logged when its last bytes are sent (Sent()); any other was reset.
  if (it == h->streams_.end() || it->second.ended) return 0;
  Stream& s = it->second;
  h->Finish(id, s, s.last_send_us > 0 ? s.last_send_us : h->delegate_->WallMicros());
  return 0;
}

ssize_t H2Session::ReadBody(nghttp2_session*, int32_t id, uint8_t* buf, size_t length,
                            uint32_t* data_flags, nghttp2_data_source*, void* self) {
  auto* h = static_cast<H2Session*>(self);
  auto it = h->streams_.find(id);
  if (it == h->streams_.end()) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  Stream& s = it->second;
  const std::string* body = s.response.body.get();
  const size_t left = body ? body->size() - s.body_off : 0;
  if (left > 0) {
    const size_t n = std::min(length, left);
    std::memcpy(buf, body->data() + s.body_off, n);
    s.body_off += n;
    s.entry.bytes += n;
    h->Touch(id);
    if (!s.response.trickle && s.body_off == body->size()) {
      *data_flags |= NGHTTP2_DATA_FLAG_EOF;
      s.ended = true;
    }
    return static_cast<ssize_t>(n);
  }
  if (!s.response.trickle) {
    *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    s.ended = true;
    h->Touch(id);
    return 0;
  }
  if (s.trickle_credit > 0 && length > 0) {
    --s.trickle_credit;
    buf[0] = '.';
    s.entry.bytes += 1;
    h->Touch(id);
    return 1;
  }
  s.deferred = true;
  return NGHTTP2_ERR_DEFERRED;
}

}  // namespace harvest::testweb
