// Http1Response: an incremental parser of one HTTP/1.x response (RFC 9112) for Harvest's own
// plain-http client (src/fetch/http1_fetcher.cc). Private to src/fetch.
//
// It is fed the bytes of a connection as they arrive and keeps what the WARC writer needs:
// the raw head of the final response exactly as received (interim 1xx responses are parsed
// and dropped, as curl does), the body with the chunked framing removed but NOT
// content-decoded, and whether the connection may carry another request.
//
// Framing (RFC 9112 §6.3): 1xx, 204 and 304 responses have no body; a Transfer-Encoding
// whose last coding is chunked is de-chunked (chunk extensions and trailer fields are read
// and dropped); any other Transfer-Encoding, or neither header, is read until the server
// closes the connection; otherwise Content-Length (a list of one repeated value is
// accepted, differing values are an error). Lines may end in CRLF or a bare LF. The head is
// capped at max_head_bytes (all heads of the response, 1xx included), the body at
// max_body_bytes (the bytes up to the cap are kept; BodyOverCap()).
//
// Thread-safety: a plain value; one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harvest::fetch::internal {

class Http1Response {
 public:
  enum class State {
    kHead,   // reading a status line and header fields
    kBody,   // reading a body (of a length, chunked, or until close)
    kDone,   // the response is complete
    kError,  // malformed or over a cap: error() says what
  };

  Http1Response(size_t max_head_bytes, size_t max_body_bytes)
      : max_head_bytes_(max_head_bytes), max_body_bytes_(max_body_bytes) {}

  // Parses `data`; returns how many of its bytes belong to this response (the rest, after
  // kDone, is what the server sent beyond it). Feeding after kDone or kError consumes nothing.
  size_t Feed(std::string_view data);
  // The server closed the connection (end of stream): completes a body read until close;
  // anywhere else in a response it is an error (Disconnected() tells it apart).
  void Eof();

  State state() const { return state_; }
  bool done() const { return state_ == State::kDone; }
  bool failed() const { return state_ == State::kError; }
  const std::string& error() const { return error_; }
  // A response byte arrived (the status line began).
  bool started() const { return started_; }
  // The final (non-1xx) response's head is complete: status(), version(), head(), headers().
  bool head_done() const { return head_done_; }
  // The error was the connection closing inside a response (not malformed data).
  bool disconnected() const { return disconnected_; }
  // The body reached max_body_bytes (state kError; the body holds the bytes up to the cap).
  bool body_over_cap() const { return body_over_cap_; }
  // The head exceeded max_head_bytes (state kError).
  bool head_over_cap() const { return head_over_cap_; }

  int status() const { return status_; }
  const std::string& version() const { return version_; }  // "1.0" or "1.1"
  const std::string& head() const { return head_; }        // raw, status line .. empty line
  std::string& mutable_head() { return head_; }
  const std::vector<std::pair<std::string, std::string>>& headers() const { return headers_; }
  std::vector<std::pair<std::string, std::string>>& mutable_headers() { return headers_; }
  std::string& mutable_body() { return body_; }
  const std::string& body() const { return body_; }
  // After kDone: the connection may carry another request (HTTP/1.1 without
  // "Connection: close", and a body not read until close).
  bool keep_alive() const { return keep_alive_; }

 private:
  enum class BodyKind { kNone, kLength, kChunked, kUntilClose };
  enum class ChunkState { kSize, kData, kDataEnd, kTrailer };

  size_t FeedHead(std::string_view data);
  size_t FeedBody(std::string_view data);
  size_t FeedChunked(std::string_view data);
  // A complete head in head_; false (with an error) when it is malformed.
  bool FinishHead();
  bool AppendBody(std::string_view bytes);
  void Fail(std::string error);
  // Reads one line (through its LF) into line_; returns bytes consumed and whether the
  // line is complete. Caps the line at `max` bytes (Fail when exceeded).
  size_t TakeLine(std::string_view data, size_t max, bool* complete);

  size_t max_head_bytes_;
  size_t max_body_bytes_;
  State state_ = State::kHead;
  std::string error_;
  bool started_ = false;
  bool head_done_ = false;
  bool disconnected_ = false;
  bool body_over_cap_ = false;
  bool head_over_cap_ = false;
  bool keep_alive_ = false;
  int status_ = 0;
  std::string version_;
  std::string head_;
  size_t head_bytes_total_ = 0;  // every head of the response (1xx included)
  size_t head_scan_ = 0;         // where the current line starts in head_
  std::vector<std::pair<std::string, std::string>> headers_;
  std::string body_;
  BodyKind body_kind_ = BodyKind::kNone;
  uint64_t body_left_ = 0;  // kLength: bytes left; kChunked kData: bytes left of the chunk
  ChunkState chunk_state_ = ChunkState::kSize;
  std::string line_;  // a chunk-size or trailer line being read
};

}  // namespace harvest::fetch::internal
