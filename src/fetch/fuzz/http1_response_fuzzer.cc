// libFuzzer target: the incremental HTTP/1.x response parser (Http1Response). The first three
// bytes of the input are control bytes: [0] max_head_bytes (64..4096), [1] max_body_bytes
// (0..31 as is, else up to 8192), [2] bit 7 calls Eof() after the last byte, bits 0-6 the
// largest piece the rest is fed in (pieces of pseudo-random sizes). Checks invariants that
// must hold for any input: Feed never consumes more than it was given, nor anything once the
// response is done or failed, and leaves bytes only when it is; the caps hold; a done
// response has a well-formed head; and feeding the same bytes one at a time gives the same
// result as feeding them in pieces.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fetch/http1_response.h"

namespace {

using harvest::fetch::internal::Http1Response;

void Require(bool condition) {
  if (!condition) std::abort();
}

struct Outcome {
  Http1Response::State state;
  std::string error;
  bool started, head_done, disconnected, body_over_cap, head_over_cap, keep_alive;
  int status;
  std::string version, head, body;
  size_t consumed;
};

// Feeds `input` in pieces of 1..max_piece bytes (sizes drawn from `seed`), checking Feed()'s
// contract on each call and the state's invariants at the end.
Outcome Run(std::string_view input, size_t max_head, size_t max_body, size_t max_piece,
            uint32_t seed, bool eof) {
  Http1Response r(max_head, max_body);
  uint32_t x = seed * 2654435761u + 1;
  size_t pos = 0, consumed = 0;
  while (pos < input.size()) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    const size_t n = std::min<size_t>(1 + x % max_piece, input.size() - pos);
    const bool finished = r.done() || r.failed();
    const size_t used = r.Feed(input.substr(pos, n));
    Require(used <= n);
    if (finished) Require(used == 0);
    if (used < n) Require(r.done() || r.failed());
    consumed += used;
    pos += n;
  }
  if (eof) r.Eof();

  Require(r.body().size() <= max_body);
  Require(consumed <= input.size());
  if (r.done()) {
    Require(r.head_done());
    Require(r.status() >= 100 && r.status() <= 999);
    Require(r.version() == "1.0" || r.version() == "1.1");
    Require(r.head().starts_with("HTTP/1."));
    Require(r.head().ends_with("\n"));
    Require(r.error().empty());
    Require(!r.disconnected());
    if (r.keep_alive()) Require(r.version() == "1.1");
  }
  if (r.head_done()) Require(r.head().size() <= max_head);
  if (r.body_over_cap()) {
    Require(r.failed());
    Require(r.body().size() == max_body);
  }
  if (r.head_over_cap()) Require(r.failed() && !r.head_done());
  if (r.disconnected()) Require(r.failed() && eof);
  if (r.failed()) Require(!r.error().empty() && !r.keep_alive());
  if (!r.started()) Require(!r.head_done());
  return Outcome{r.state(),        r.error(),         r.started(),       r.head_done(),
                 r.disconnected(), r.body_over_cap(), r.head_over_cap(), r.keep_alive(),
                 r.status(),       r.version(),       r.head(),          r.body(),
                 consumed};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const size_t max_head = 64 + size_t{data[0]} * (4096 - 64) / 255;
  const size_t max_body = data[1] < 32 ? data[1] : size_t{data[1]} * 8192 / 255;
  const bool eof = (data[2] & 0x80) != 0;
  const size_t max_piece = 1 + (size_t{data[2]} & 0x7f) * 4;  // 1..509
  const std::string_view input(reinterpret_cast<const char*>(data) + 3, size - 3);

  const Outcome pieces = Run(input, max_head, max_body, max_piece, data[2], eof);
  const Outcome bytes = Run(input, max_head, max_body, 1, 0, eof);
  Require(pieces.state == bytes.state);
  Require(pieces.error == bytes.error);
  Require(pieces.head_done == bytes.head_done);
  Require(pieces.disconnected == bytes.disconnected);
  Require(pieces.body_over_cap == bytes.body_over_cap);
  Require(pieces.head_over_cap == bytes.head_over_cap);
  Require(pieces.keep_alive == bytes.keep_alive);
  Require(pieces.status == bytes.status);
  Require(pieces.version == bytes.version);
  Require(pieces.body == bytes.body);
  // head() is defined once the head is complete (a head over the cap is cut where the piece
  // crossed it); Feed()'s count is the bytes of the response, defined when it did not fail.
  if (pieces.head_done) Require(pieces.head == bytes.head);
  if (pieces.state != Http1Response::State::kError) Require(pieces.consumed == bytes.consumed);
  return 0;
}
