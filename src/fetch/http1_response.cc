// Http1Response: incremental HTTP/1.x response parsing (framing per RFC 9112 §6 and §7.1).
#include "fetch/http1_response.h"

#include <algorithm>
#include <cstring>

#include "base/ascii.h"
#include "fetch/fetch.h"

namespace harvest::fetch::internal {
namespace {

// A chunk-size line (with extensions) longer than this is malformed, not a slow server.
constexpr size_t kMaxChunkLine = 4096;
// Chunk sizes beyond this are refused: they would overflow the arithmetic, and no body cap
// comes near it.
constexpr uint64_t kMaxChunkSize = uint64_t{1} << 60;
// Memory reserved for a Content-Length body before its bytes arrive.
constexpr uint64_t kMaxBodyReserve = 1u << 20;

// A line (or a field value) without the OWS before it, and without the OWS and the line end
// (CR, LF) after it.
std::string_view TrimOwsAndLineEnd(std::string_view s) {
  return TrimTrailingIf(TrimLeadingIf(s, IsHttpOws),
                        [](char c) { return IsHttpOws(c) || c == '\r' || c == '\n'; });
}

// Calls fn(token) for each comma-separated, trimmed, non-empty item of a field value.
template <typename Fn>
void ForEachListItem(std::string_view value, Fn fn) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    const std::string_view item = TrimOwsAndLineEnd(value.substr(0, comma));
    if (!item.empty()) fn(item);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

bool ParseDecimal(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = AsciiLower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool IsBlankLine(std::string_view line) { return line == "\r\n" || line == "\n"; }

}  // namespace

void Http1Response::Fail(std::string error) {
  state_ = State::kError;
  error_ = std::move(error);
  keep_alive_ = false;
}

size_t Http1Response::Feed(std::string_view data) {
  size_t used = 0;
  while (used < data.size()) {
    if (state_ == State::kHead) {
      used += FeedHead(data.substr(used));
    } else if (state_ == State::kBody) {
      used += FeedBody(data.substr(used));
    } else {
      break;
    }
  }
  return used;
}

size_t Http1Response::FeedHead(std::string_view data) {
  size_t used = 0;
  while (used < data.size() && state_ == State::kHead) {
    const size_t nl = data.find('\n', used);
    const size_t end = nl == std::string_view::npos ? data.size() : nl + 1;
    const size_t n = end - used;
    started_ = true;
    head_bytes_total_ += n;
    if (head_bytes_total_ > max_head_bytes_) {
      head_over_cap_ = true;
      Fail("response head exceeds max_header_bytes (" + std::to_string(max_head_bytes_) + ")");
      return end;
    }
    head_.append(data.data() + used, n);
    used = end;
    if (nl == std::string_view::npos) break;
    const bool first = head_scan_ == 0;
    const std::string_view line(head_.data() + head_scan_, head_.size() - head_scan_);
    head_scan_ = head_.size();
    if (first && !line.starts_with("HTTP/")) {
      Fail("malformed status line");
      return used;
    }
    if (!first && IsBlankLine(line)) {
      if (!FinishHead()) return used;
    }
  }
  return used;
}

bool Http1Response::FinishHead() {
  // Status line: HTTP-version SP 3DIGIT [SP reason-phrase] (RFC 9112 §4).
  const std::string_view line(head_.data(), head_.find('\n') + 1);
  const std::string_view status_line = TrimOwsAndLineEnd(line);
  if (status_line.size() < 12 || !status_line.starts_with("HTTP/1.") ||
      (status_line[7] != '0' && status_line[7] != '1') || status_line[8] != ' ') {
    Fail("malformed status line");
    return false;
  }
  int status = 0;
  for (size_t i = 9; i < 12; ++i) {
    if (status_line[i] < '0' || status_line[i] > '9') {
      Fail("malformed status line");
      return false;
    }
    status = status * 10 + (status_line[i] - '0');
  }
  if (status_line.size() > 12 && status_line[12] != ' ') {
    Fail("malformed status line");
    return false;
  }
  if (status < 100) {
    Fail("malformed status line");
    return false;
  }
  if (status >= 100 && status < 200 && status != 101) {
    // An interim response: dropped; the final one follows on the same connection.
    head_.clear();
    head_scan_ = 0;
    return true;
  }
  status_ = status;
  version_ = status_line[7] == '1' ? "1.1" : "1.0";
  headers_ = ParseResponseHeaders(head_);
  head_done_ = true;

  bool close = version_ == "1.0";
  bool has_te = false, chunked = false, has_length = false;
  uint64_t length = 0;
  for (const auto& [name, value] : headers_) {
    if (EqualsIgnoreAsciiCase(name, "connection")) {
      ForEachListItem(value, [&](std::string_view token) {
        if (EqualsIgnoreAsciiCase(token, "close")) close = true;
      });
    } else if (EqualsIgnoreAsciiCase(name, "transfer-encoding")) {
      has_te = true;
      chunked = false;  // only the last coding counts
      ForEachListItem(value, [&](std::string_view coding) {
        chunked = EqualsIgnoreAsciiCase(coding, "chunked");
      });
    } else if (EqualsIgnoreAsciiCase(name, "content-length")) {
      bool ok = true;
      ForEachListItem(value, [&](std::string_view item) {
        uint64_t v = 0;
        if (!ParseDecimal(item, &v) || (has_length && v != length)) ok = false;
        length = v;
        has_length = true;
      });
      if (!ok || TrimOwsAndLineEnd(value).empty()) {
        Fail("invalid Content-Length");
        return false;
      }
    }
  }
  keep_alive_ = !close;
  if (status == 101 || status == 204 || status == 304) {
    body_kind_ = BodyKind::kNone;
    keep_alive_ = keep_alive_ && status != 101;
  } else if (has_te) {
    body_kind_ = chunked ? BodyKind::kChunked : BodyKind::kUntilClose;
  } else if (has_length) {
    body_kind_ = BodyKind::kLength;
    body_left_ = length;
  } else {
    body_kind_ = BodyKind::kUntilClose;
  }
  if (body_kind_ == BodyKind::kUntilClose) keep_alive_ = false;
  if (body_kind_ == BodyKind::kNone || (body_kind_ == BodyKind::kLength && length == 0)) {
    state_ = State::kDone;
    return true;
  }
  if (body_kind_ == BodyKind::kLength) {
    // Sized once instead of grown by doubling, but a length the server only claims reserves
    // at most kMaxBodyReserve before its bytes arrive.
    body_.reserve(
        static_cast<size_t>(std::min<uint64_t>({length, max_body_bytes_, kMaxBodyReserve})));
  }
  state_ = State::kBody;
  return true;
}

bool Http1Response::AppendBody(std::string_view bytes) {
  if (body_.size() + bytes.size() > max_body_bytes_) {
    body_.append(bytes.data(), max_body_bytes_ - body_.size());
    body_over_cap_ = true;
    Fail("body exceeds max_body_bytes (" + std::to_string(max_body_bytes_) + ")");
    return false;
  }
  body_.append(bytes.data(), bytes.size());
  return true;
}

size_t Http1Response::FeedBody(std::string_view data) {
  switch (body_kind_) {
    case BodyKind::kLength: {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(body_left_, data.size()));
      if (!AppendBody(data.substr(0, n))) return n;
      body_left_ -= n;
      if (body_left_ == 0) state_ = State::kDone;
      return n;
    }
    case BodyKind::kUntilClose:
      AppendBody(data);
      return data.size();
    case BodyKind::kChunked:
      return FeedChunked(data);
    case BodyKind::kNone:
      break;
  }
  state_ = State::kDone;
  return 0;
}

size_t Http1Response::TakeLine(std::string_view data, size_t max, bool* complete) {
  const size_t nl = data.find('\n');
  const size_t n = nl == std::string_view::npos ? data.size() : nl + 1;
  *complete = nl != std::string_view::npos;
  if (line_.size() + n > max) {
    Fail("chunked body: line longer than " + std::to_string(max) + " bytes");
    return n;
  }
  line_.append(data.data(), n);
  return n;
}

size_t Http1Response::FeedChunked(std::string_view data) {
  size_t used = 0;
  while (used < data.size() && state_ == State::kBody) {
    bool complete = false;
    switch (chunk_state_) {
      case ChunkState::kSize: {
        used += TakeLine(data.substr(used), kMaxChunkLine, &complete);
        if (!complete || state_ != State::kBody) break;
        // chunk-size [ chunk-ext ] CRLF (RFC 9112 §7.1); extensions are ignored.
        uint64_t size = 0;
        size_t i = 0;
        for (; i < line_.size() && HexValue(line_[i]) >= 0; ++i) {
          if (size > kMaxChunkSize / 16) {  // checked before the shift can wrap
            size = kMaxChunkSize + 1;
            break;
          }
          size = size * 16 + static_cast<uint64_t>(HexValue(line_[i]));
        }
        const std::string_view rest = TrimOwsAndLineEnd(std::string_view(line_).substr(i));
        if (i == 0 || size > kMaxChunkSize || (!rest.empty() && rest.front() != ';')) {
          Fail("chunked body: malformed chunk size");
          break;
        }
        line_.clear();
        if (size == 0) {
          chunk_state_ = ChunkState::kTrailer;
        } else {
          body_left_ = size;
          chunk_state_ = ChunkState::kData;
        }
        break;
      }
      case ChunkState::kData: {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(body_left_, data.size() - used));
        if (!AppendBody(data.substr(used, n))) return used + n;
        used += n;
        body_left_ -= n;
        if (body_left_ == 0) chunk_state_ = ChunkState::kDataEnd;
        break;
      }
      case ChunkState::kDataEnd:
        used += TakeLine(data.substr(used), 2, &complete);
        if (!complete || state_ != State::kBody) break;
        if (!IsBlankLine(line_)) {
          Fail("chunked body: chunk data not followed by CRLF");
          break;
        }
        line_.clear();
        chunk_state_ = ChunkState::kSize;
        break;
      case ChunkState::kTrailer:
        // Trailer fields: read and dropped (not part of the head), then an empty line.
        used += TakeLine(data.substr(used), max_head_bytes_, &complete);
        if (!complete || state_ != State::kBody) break;
        if (IsBlankLine(line_)) state_ = State::kDone;
        line_.clear();
        break;
    }
  }
  return used;
}

void Http1Response::Eof() {
  if (state_ == State::kDone || state_ == State::kError) return;
  if (state_ == State::kBody && body_kind_ == BodyKind::kUntilClose) {
    state_ = State::kDone;
    keep_alive_ = false;
    return;
  }
  disconnected_ = true;
  if (!started_) {
    Fail("Empty reply from server");
  } else if (state_ == State::kHead) {
    Fail("connection closed inside the response head");
  } else if (body_kind_ == BodyKind::kLength) {
    Fail("connection closed with " + std::to_string(body_left_) + " bytes of the body left");
  } else {
    Fail("connection closed inside a chunked body");
  }
}

}  // namespace harvest::fetch::internal
