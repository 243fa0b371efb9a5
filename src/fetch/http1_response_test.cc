// Http1Response: the incremental HTTP/1.x response parser of the plain-http client. Every
// input is parsed fed whole, one byte at a time and split in two at every position; all of
// them must agree (Parse() below checks that, then the test checks the whole-feed result).
#include "fetch/http1_response.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harvest::fetch::internal {
namespace {

using State = Http1Response::State;
using Headers = std::vector<std::pair<std::string, std::string>>;

struct Options {
  size_t max_head = 64 * 1024;
  size_t max_body = 1024 * 1024;
  bool eof = false;  // call Eof() after the last piece
};

// Everything observable about a parser after a feed, plus the sum of Feed()'s returns and any
// violation of Feed()'s own contract seen on the way.
struct Snapshot {
  State state = State::kHead;
  std::string error;
  bool started = false;
  bool head_done = false;
  bool disconnected = false;
  bool body_over_cap = false;
  bool head_over_cap = false;
  bool keep_alive = false;
  int status = 0;
  std::string version;
  std::string head;
  Headers headers;
  std::string body;
  size_t consumed = 0;
  std::string violations;

  bool done() const { return state == State::kDone; }
  bool failed() const { return state == State::kError; }
};

Snapshot Take(const Http1Response& r, size_t consumed, std::string violations) {
  Snapshot s;
  s.state = r.state();
  s.error = r.error();
  s.started = r.started();
  s.head_done = r.head_done();
  s.disconnected = r.disconnected();
  s.body_over_cap = r.body_over_cap();
  s.head_over_cap = r.head_over_cap();
  s.keep_alive = r.keep_alive();
  s.status = r.status();
  s.version = r.version();
  s.head = r.head();
  s.headers = r.headers();
  s.body = r.body();
  s.consumed = consumed;
  s.violations = std::move(violations);
  return s;
}

// Feeds `input` cut at the ascending positions `cuts` (pieces [0,c1), [c1,c2), ..., [cn,end)).
Snapshot FeedPieces(std::string_view input, const std::vector<size_t>& cuts, const Options& opt) {
  Http1Response r(opt.max_head, opt.max_body);
  size_t consumed = 0;
  std::string violations;
  size_t prev = 0;
  auto feed = [&](std::string_view piece) {
    const bool finished = r.done() || r.failed();
    const size_t n = r.Feed(piece);
    if (n > piece.size()) violations += "Feed returned more than it was given; ";
    if (finished && n != 0) violations += "Feed after done/failed consumed bytes; ";
    if (n < piece.size() && !r.done() && !r.failed()) {
      violations += "Feed left bytes unconsumed while still parsing; ";
    }
    consumed += n;
  };
  for (size_t cut : cuts) {
    feed(input.substr(prev, cut - prev));
    prev = cut;
  }
  feed(input.substr(prev));
  if (opt.eof) r.Eof();
  return Take(r, consumed, std::move(violations));
}

// What must agree between two ways of feeding the same bytes. head()/headers() are only
// defined once head_done(); Feed()'s count is defined as the bytes belonging to the response,
// which only means something when the parse did not fail.
std::string Diff(const Snapshot& a, const Snapshot& b) {
  std::string d;
  auto field = [&](bool same, const char* name) {
    if (!same) d += std::string(name) + " differs; ";
  };
  field(a.state == b.state, "state");
  field(a.error == b.error, "error");
  field(a.started == b.started, "started");
  field(a.head_done == b.head_done, "head_done");
  field(a.disconnected == b.disconnected, "disconnected");
  field(a.body_over_cap == b.body_over_cap, "body_over_cap");
  field(a.head_over_cap == b.head_over_cap, "head_over_cap");
  field(a.keep_alive == b.keep_alive, "keep_alive");
  field(a.status == b.status, "status");
  field(a.version == b.version, "version");
  field(a.body == b.body, "body");
  if (a.head_done && b.head_done) {
    field(a.head == b.head, "head");
    field(a.headers == b.headers, "headers");
  }
  if (!a.failed() && !b.failed()) field(a.consumed == b.consumed, "consumed");
  return d;
}

// Parses `input` fed whole, byte by byte, and in two pieces split at every position (at a
// stride for big inputs); expects them all to agree and returns the whole-feed result.
Snapshot Parse(std::string_view input, const Options& opt = {}) {
  const Snapshot whole = FeedPieces(input, {}, opt);
  EXPECT_EQ(whole.violations, "") << "fed whole";
  int mismatches = 0;
  auto compare = [&](const Snapshot& other, const std::string& how) {
    const std::string d = Diff(whole, other) + other.violations;
    if (!d.empty() && ++mismatches <= 3) {
      ADD_FAILURE() << "fed " << how << " vs whole: " << d << "(whole: state "
                    << static_cast<int>(whole.state) << " error '" << whole.error << "' consumed "
                    << whole.consumed << "; other: state " << static_cast<int>(other.state)
                    << " error '" << other.error << "' consumed " << other.consumed << ")";
    }
  };
  std::vector<size_t> bytes;
  for (size_t i = 1; i < input.size(); ++i) bytes.push_back(i);
  compare(FeedPieces(input, bytes, opt), "byte by byte");
  const size_t stride = input.size() > 4096 ? 997 : 1;
  for (size_t i = 0; i <= input.size(); i += stride) {
    compare(FeedPieces(input, {i}, opt), "split at " + std::to_string(i));
  }
  // Three pieces of uneven sizes, too.
  if (input.size() > 3) {
    compare(FeedPieces(input, {input.size() / 3, input.size() / 3 + 1}, opt), "in three pieces");
  }
  return whole;
}

const std::string& Value(const Snapshot& s, std::string_view name) {
  static const std::string kNone = "<absent>";
  for (const auto& [n, v] : s.headers) {
    if (n == name) return v;
  }
  return kNone;
}

// ---- Content-Length -------------------------------------------------------------------------

TEST(Http1ResponseTest, ContentLengthResponse) {
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n";
  const std::string extra = "HTTP/1.1 404 Not Found\r\n";
  const Snapshot s = Parse(head + "hello" + extra);
  EXPECT_TRUE(s.done());
  EXPECT_EQ(s.error, "");
  EXPECT_TRUE(s.started);
  EXPECT_TRUE(s.head_done);
  EXPECT_EQ(s.head, head);
  EXPECT_EQ(s.body, "hello");
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(s.version, "1.1");
  EXPECT_TRUE(s.keep_alive);
  EXPECT_EQ(s.consumed, head.size() + 5);
  EXPECT_FALSE(s.disconnected);
  EXPECT_FALSE(s.body_over_cap);
  EXPECT_FALSE(s.head_over_cap);
}

TEST(Http1ResponseTest, ContentLengthWithoutExtraBytesConsumesAll) {
  const std::string input = "HTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nabc";
  const Snapshot s = Parse(input);
  EXPECT_TRUE(s.done());
  EXPECT_EQ(s.status, 201);
  EXPECT_EQ(s.body, "abc");
  EXPECT_EQ(s.consumed, input.size());
}

TEST(Http1ResponseTest, PipelinedResponsesParseOneAfterTheOther) {
  const std::string first = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nab";
  const std::string second = "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nxyz";
  const std::string stream = first + second;
  Http1Response a(4096, 4096);
  const size_t n = a.Feed(stream);
  ASSERT_TRUE(a.done());
  EXPECT_EQ(n, first.size());
  EXPECT_EQ(a.body(), "ab");
  Http1Response b(4096, 4096);
  EXPECT_EQ(b.Feed(std::string_view(stream).substr(n)), second.size());
  ASSERT_TRUE(b.done());
  EXPECT_EQ(b.status(), 404);
  EXPECT_EQ(b.body(), "xyz");
}

TEST(Http1ResponseTest, ContentLengthZeroIsDoneAtTheEndOfTheHead) {
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
  const Snapshot s = Parse(head + "NEXT");
  EXPECT_TRUE(s.done());
  EXPECT_EQ(s.body, "");
  EXPECT_EQ(s.head, head);
  EXPECT_EQ(s.consumed, head.size());
  EXPECT_TRUE(s.keep_alive);
}

TEST(Http1ResponseTest, LfOnlyHead) {
  const std::string head = "HTTP/1.1 200 OK\nContent-Length: 2\nX-A: b\n\n";
  const Snapshot s = Parse(head + "okEXTRA");
  EXPECT_TRUE(s.done());
  EXPECT_EQ(s.head, head);
  EXPECT_EQ(s.body, "ok");
  EXPECT_EQ(s.consumed, head.size() + 2);
  EXPECT_EQ(Value(s, "X-A"), "b");
}

TEST(Http1ResponseTest, ContentLengthRepeatedSameValueAccepted) {
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n";
  const Snapshot s = Parse(head + "hello!!");
  EXPECT_TRUE(s.done()) << s.error;
  EXPECT_EQ(s.body, "hello");
  EXPECT_EQ(s.consumed, head.size() + 5);

  // The same value on two field lines.
  const Snapshot t =
      Parse("HTTP/1.1 200 OK\r\nContent-Length: 3\r\ncontent-length: 3\r\n\r\nabcdef");
  EXPECT_TRUE(t.done()) << t.error;
  EXPECT_EQ(t.body, "abc");
}

TEST(Http1ResponseTest, InvalidContentLengthFails) {
  for (const std::string value :
       {"5, 6", "-1", "abc", "", "+5", "5 5", "0x5", "99999999999999999999"}) {
    SCOPED_TRACE("Content-Length: '" + value + "'");
    const Snapshot s = Parse("HTTP/1.1 200 OK\r\nContent-Length: " + value + "\r\n\r\nhello");
    EXPECT_TRUE(s.failed());
    EXPECT_EQ(s.error, "invalid Content-Length");
    EXPECT_FALSE(s.keep_alive);
    EXPECT_FALSE(s.disconnected);
  }
  // Different values on two field lines.
  const Snapshot s =
      Parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!");
  EXPECT_TRUE(s.failed());
  EXPECT_EQ(s.error, "invalid Content-Length");
}

// ---- chunked --------------------------------------------------------------------------------

TEST(Http1ResponseTest, ChunkedMultipleChunksHexCase) {
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string a(10, 'a'), b(10, 'b'), c(31, 'c'), d(31, 'd'), e(256, 'e');
  const std::string chunks = "5\r\nhello\r\na\r\n" + a + "\r\nA\r\n" + b + "\r\n1f\r\n" + c +
                             "\r\n1F\r\n" + d + "\r\n100\r\n" + e + "\r\n0\r\n\r\n";
  const Snapshot s = Parse(head + chunks + "HTTP/1.1 200 OK\r\n");
  EXPECT_TRUE(s.done()) << s.error;
  EXPECT_EQ(s.head, head);
  EXPECT_EQ(s.body, "hello" + a + b + c + d + e);
  EXPECT_EQ(s.consumed, head.size() + chunks.size());
  EXPECT_TRUE(s.keep_alive);
  EXPECT_EQ(s.status, 200);
}

TEST(Http1ResponseTest, ChunkedExtensionsIgnored) {
  const std::string input =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;ext=1\r\nhello\r\n6 ; name=\"quoted;value\"\r\n world\r\n0;last=yes\r\n\r\n";
  const Snapshot s = Parse(input + "X");
  EXPECT_TRUE(s.done()) << s.error;
  EXPECT_EQ(s.body, "hello world");
  EXPECT_EQ(s.consumed, input.size());
}

TEST(Http1ResponseTest, ChunkedTrailersAreDroppedNotInHead) {
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-H: 1\r\n\r\n";
  const std::string body = "3\r\nabc\r\n0\r\nX-Trailer: yes\r\nX-Checksum: 123\r\n\r\n";
  const Snapshot s = Parse(head + body + "NEXT");
  EXPECT_TRUE(s.done()) << s.error;
  EXPECT_EQ(s.head, head);
  EXPECT_EQ(s.body, "abc");
  EXPECT_EQ(s.consumed, head.size() + body.size());
  EXPECT_EQ(Value(s, "X-H"), "1");
  EXPECT_EQ(Value(s, "X-Trailer"), "<absent>");
  EXPECT_EQ(s.head.find("X-Trailer"), std::string::npos);
  EXPECT_TRUE(s.keep_alive);
}

TEST(Http1ResponseTest, ChunkedLfOnlyLineEndings) {
  const std::string input =
      "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n4\nwiki\n5;x\npedia\n0\nT: 1\n\n";
  const Snapshot s = Parse(input + "rest");
  EXPECT_TRUE(s.done()) << s.error;
  EXPECT_EQ(s.body, "wikipedia");
  EXPECT_EQ(s.consumed, input.size());
  EXPECT_EQ(s.head, "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n");
}

TEST(Http1ResponseTest, ChunkedMalformedSizeFails) {
  for (const std::string line :
       {"zz\r\n", "\r\n", "-5\r\n", "5x\r\n", "0x5\r\n", " 5\r\n", "5 6\r\n", "+5\r\n"}) {
    SCOPED_TRACE("chunk-size line '" + line + "'");
    const Snapshot s = Parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + line +
                             "hello\r\n0\r\n\r\n");
    EXPECT_TRUE(s.failed());
    EXPECT_FALSE(s.disconnected);
    EXPECT_FALSE(s.keep_alive);
    EXPECT_NE(s.error.find("malformed chunk size"), std::string::npos) << s.error;
  }
}

// Regression: "10000000000000000" (2^64) once wrapped to 0 in the chunk-size accumulator and
// was taken as the last chunk.
TEST(Http1ResponseTest, ChunkSizeTooLargeFails) {
  // 2^68 - 1 and 2^64: far beyond any body; neither may be read as a small size.
  for (const std::string size : {"FFFFFFFFFFFFFFFFF", "10000000000000000"}) {
    SCOPED_TRACE("chunk size " + size);
    const Snapshot s =
        Parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + size + "\r\n\r\n");
    EXPECT_TRUE(s.failed());
    EXPECT_NE(s.error.find("malformed chunk size"), std::string::npos) << s.error;
  }
}

// Regression: the chunk-size accumulator once wrapped after 16 hex digits equal to 2^60, so
// "10000000000000005" was read as a 5-byte chunk (a framing desync a server could cause).
TEST(Http1ResponseTest, ChunkSizeOverflowDoesNotWrapToASmallSize) {
  const Snapshot s = Parse(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "10000000000000005\r\nhello\r\n0\r\n\r\n");
  EXPECT_TRUE(s.failed());
  EXPECT_NE(s.error.find("malformed chunk size"), std::string::npos) << s.error;
  EXPECT_EQ(s.body, "");
}

TEST(Http1ResponseTest, ChunkDataNotFollowedByCrlfFails) {
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const std::string body : {"5\r\nhelloX\r\n0\r\n\r\n", "5\r\nhello0\r\n\r\n",
                                 "5\r\nhello\r\r\n0\r\n\r\n", "3\r\nhello\r\n0\r\n\r\n"}) {
    SCOPED_TRACE("body '" + body + "'");
    const Snapshot s = Parse(head + body);
    EXPECT_TRUE(s.failed());
    EXPECT_FALSE(s.disconnected);
    EXPECT_FALSE(s.keep_alive);
  }
}

TEST(Http1ResponseTest, TransferEncodingGzipChunkedIsChunked) {
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n";
  const std::string gz("\x1f\x8b\x08\x00\x00\x00", 6);  // not decoded: kept as sent
  const std::string body = "6\r\n" + gz + "\r\n0\r\n\r\n";
  const Snapshot s = Parse(head + body + "++");
  EXPECT_TRUE(s.done()) << s.error;
  EXPECT_EQ(s.body, gz);
  EXPECT_EQ(s.consumed, head.size() + body.size());
  EXPECT_TRUE(s.keep_alive);

  // The last coding over two field lines.
  const Snapshot t = Parse(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: Chunked\r\n\r\n"
      "2\r\nhi\r\n0\r\n\r\n");
  EXPECT_TRUE(t.done()) << t.error;
  EXPECT_EQ(t.body, "hi");
}

TEST(Http1ResponseTest, TransferEncodingNotEndingInChunkedReadsUntilEof) {
  const std::string input =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
  const Snapshot open = Parse(input);
  EXPECT_EQ(open.state, State::kBody);
  EXPECT_TRUE(open.head_done);
  EXPECT_EQ(open.consumed, input.size());

  const Snapshot s = Parse(input, {.eof = true});
  EXPECT_TRUE(s.done()) << s.error;
  EXPECT_EQ(s.body, "5\r\nhello\r\n0\r\n\r\n");
  EXPECT_FALSE(s.keep_alive);
  EXPECT_FALSE(s.disconnected);

  const Snapshot t =
      Parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\nabc",
            {.eof = true});
  EXPECT_TRUE(t.done()) << t.error;
  EXPECT_EQ(t.body, "abc");
  EXPECT_FALSE(t.keep_alive);
}

TEST(Http1ResponseTest, TransferEncodingWinsOverContentLength) {
  for (const std::string head :
       {"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 100\r\n\r\n"}) {
    SCOPED_TRACE(head);
    const std::string body = "5\r\nhello\r\n0\r\n\r\n";
    const Snapshot s = Parse(head + body + "zz");
    EXPECT_TRUE(s.done()) << s.error;
    EXPECT_EQ(s.body, "hello");
    EXPECT_EQ(s.consumed, head.size() + body.size());
  }
  // TE not ending in chunked, with a Content-Length: until close, not the length.
  const Snapshot s =
      Parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: gzip\r\n\r\nabcdef");
  EXPECT_EQ(s.state, State::kBody);
  EXPECT_EQ(s.body, "abcdef");
}

// ---- read until close, keep-alive ---------------------------------------------------------

TEST(Http1ResponseTest, NoFramingHeaderReadsUntilEof) {
  const std::string input = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html>body";
  const Snapshot open = Parse(input);
  EXPECT_EQ(open.state, State::kBody);
  EXPECT_TRUE(open.head_done);
  EXPECT_EQ(open.body, "<html>body");
  EXPECT_EQ(open.consumed, input.size());

  const Snapshot s = Parse(input, {.eof = true});
  EXPECT_TRUE(s.done()) << s.error;
  EXPECT_EQ(s.body, "<html>body");
  EXPECT_FALSE(s.keep_alive);
  EXPECT_FALSE(s.disconnected);
  EXPECT_EQ(s.head, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n");

  // An empty body until close.
  const Snapshot e = Parse("HTTP/1.1 200 OK\r\n\r\n", {.eof = true});
  EXPECT_TRUE(e.done()) << e.error;
  EXPECT_EQ(e.body, "");
  EXPECT_FALSE(e.keep_alive);
}

TEST(Http1ResponseTest, Http10IsNotKeepAlive) {
  const Snapshot s = Parse("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi");
  EXPECT_TRUE(s.done()) << s.error;
  EXPECT_EQ(s.version, "1.0");
  EXPECT_FALSE(s.keep_alive);

  const Snapshot k =
      Parse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi");
  EXPECT_TRUE(k.done()) << k.error;
  EXPECT_FALSE(k.keep_alive);

  const Snapshot u = Parse("HTTP/1.0 200 OK\r\n\r\nuntil close", {.eof = true});
  EXPECT_TRUE(u.done()) << u.error;
  EXPECT_EQ(u.body, "until close");
  EXPECT_FALSE(u.keep_alive);
}

TEST(Http1ResponseTest, ConnectionClose) {
  for (const std::string value : {"close", "Close", "CLOSE", "keep-alive, Close", "Upgrade,close",
                                  "  keep-alive ,  close  "}) {
    SCOPED_TRACE("Connection: " + value);
    const Snapshot s =
        Parse("HTTP/1.1 200 OK\r\nConnection: " + value + "\r\nContent-Length: 1\r\n\r\nx");
    EXPECT_TRUE(s.done()) << s.error;
    EXPECT_FALSE(s.keep_alive);
  }
  for (const std::string value : {"keep-alive", "closed", "Upgrade", "not-close"}) {
    SCOPED_TRACE("Connection: " + value);
    const Snapshot s =
        Parse("HTTP/1.1 200 OK\r\nConnection: " + value + "\r\nContent-Length: 1\r\n\r\nx");
    EXPECT_TRUE(s.done()) << s.error;
    EXPECT_TRUE(s.keep_alive);
  }
  // On a separate field line from another Connection field.
  const Snapshot s = Parse(
      "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nconnection: close\r\nContent-Length: 1\r\n\r\n"
      "x");
  EXPECT_FALSE(s.keep_alive);
}

// ---- responses without a body -------------------------------------------------------------

TEST(Http1ResponseTest, NoBodyStatusesCompleteAtTheEndOfTheHead) {
  for (const std::string status_line : {"HTTP/1.1 204 No Content", "HTTP/1.1 304 Not Modified"}) {
    for (const std::string framing :
         {"Content-Length: 10\r\n", "Transfer-Encoding: chunked\r\n", ""}) {
      SCOPED_TRACE(status_line + " / " + framing);
      const std::string head = status_line + "\r\nDate: x\r\n" + framing + "\r\n";
      const Snapshot s = Parse(head + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
      EXPECT_TRUE(s.done()) << s.error;
      EXPECT_EQ(s.head, head);
      EXPECT_EQ(s.body, "");
      EXPECT_EQ(s.consumed, head.size());
      EXPECT_TRUE(s.keep_alive);
    }
  }
  const Snapshot s =
      Parse("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", {.eof = true});
  EXPECT_TRUE(s.done()) << s.error;  // Eof after done changes nothing
  EXPECT_EQ(s.status, 304);
  EXPECT_TRUE(s.keep_alive);
}

// ---- interim responses --------------------------------------------------------------------

TEST(Http1ResponseTest, InterimResponsesAreDropped) {
  const std::string interim =
      "HTTP/1.1 100 Continue\r\n\r\n"
      "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\nLink: </a.js>\r\n\r\n";
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nX-Final: 1\r\n\r\n";
  const Snapshot s = Parse(interim + head + "body" + "more");
  EXPECT_TRUE(s.done()) << s.error;
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(s.head, head);
  EXPECT_EQ(s.body, "body");
  EXPECT_EQ(s.consumed, interim.size() + head.size() + 4);
  EXPECT_EQ(Value(s, "Link"), "<absent>");
  EXPECT_EQ(Value(s, "X-Final"), "1");
  EXPECT_TRUE(s.keep_alive);
}

TEST(Http1ResponseTest, InterimResponseThenEofIsDisconnected) {
  const Snapshot s = Parse("HTTP/1.1 100 Continue\r\n\r\n", {.eof = true});
  EXPECT_TRUE(s.failed());
  EXPECT_TRUE(s.disconnected);
  EXPECT_TRUE(s.started);
  EXPECT_FALSE(s.head_done);
}

TEST(Http1ResponseTest, InterimHeadsCountTowardMaxHeadBytes) {
  const std::string interim = "HTTP/1.1 103 Early Hints\r\nLink: </style.css>\r\n\r\n";
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n";
  const std::string input = interim + head + "ok";
  const size_t total = interim.size() + head.size();
  const Snapshot fits = Parse(input, {.max_head = total});
  EXPECT_TRUE(fits.done()) << fits.error;
  EXPECT_EQ(fits.head, head);
  EXPECT_EQ(fits.body, "ok");

  // Each head alone is under the cap; together they are one byte over it.
  ASSERT_LT(head.size(), total - 1);
  ASSERT_LT(interim.size(), total - 1);
  const Snapshot over = Parse(input, {.max_head = total - 1});
  EXPECT_TRUE(over.failed());
  EXPECT_TRUE(over.head_over_cap);
  EXPECT_FALSE(over.head_done);
}

// ---- caps ---------------------------------------------------------------------------------

TEST(Http1ResponseTest, HeadOverCapFails) {
  const std::string head =
      "HTTP/1.1 200 OK\r\nX-Long: " + std::string(100, 'v') + "\r\nContent-Length: 1\r\n\r\n";
  const Snapshot s = Parse(head + "x", {.max_head = 64});
  EXPECT_TRUE(s.failed());
  EXPECT_TRUE(s.head_over_cap);
  EXPECT_FALSE(s.head_done);
  EXPECT_FALSE(s.body_over_cap);
  EXPECT_FALSE(s.disconnected);
  EXPECT_FALSE(s.keep_alive);

  const Snapshot exact = Parse(head + "x", {.max_head = head.size()});
  EXPECT_TRUE(exact.done()) << exact.error;
  EXPECT_EQ(exact.head, head);
  EXPECT_EQ(exact.body, "x");

  const Snapshot one_less = Parse(head + "x", {.max_head = head.size() - 1});
  EXPECT_TRUE(one_less.failed());
  EXPECT_TRUE(one_less.head_over_cap);
}

TEST(Http1ResponseTest, HeadWithoutEndOverCapFails) {
  // Header lines keep coming and never end: the cap stops them.
  std::string input = "HTTP/1.1 200 OK\r\n";
  for (int i = 0; i < 200; ++i) input += "X-" + std::to_string(i) + ": v\r\n";
  const Snapshot s = Parse(input, {.max_head = 512});
  EXPECT_TRUE(s.failed());
  EXPECT_TRUE(s.head_over_cap);
}

// Regression: a first Feed() already over max_head_bytes once failed before started() was
// set, although response bytes had arrived (the client's retry decision reads started()).
TEST(Http1ResponseTest, StartedWhenFirstFeedExceedsHeadCap) {
  Http1Response r(64, 1024);
  const std::string input = "HTTP/1.1 200 " + std::string(100, 'x') + "\r\n\r\n";
  r.Feed(input);
  EXPECT_TRUE(r.failed());
  EXPECT_TRUE(r.head_over_cap());
  EXPECT_TRUE(r.started());
}

TEST(Http1ResponseTest, BodyOverCapKeepsTheFirstBytes) {
  const std::string body = "0123456789ABCDE";
  const Snapshot s =
      Parse("HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n" + body, {.max_body = 10});
  EXPECT_TRUE(s.failed());
  EXPECT_TRUE(s.body_over_cap);
  EXPECT_FALSE(s.head_over_cap);
  EXPECT_TRUE(s.head_done);
  EXPECT_EQ(s.body, body.substr(0, 10));
  EXPECT_FALSE(s.keep_alive);

  const Snapshot exact =
      Parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n" + body, {.max_body = 10});
  EXPECT_TRUE(exact.done()) << exact.error;
  EXPECT_FALSE(exact.body_over_cap);
  EXPECT_EQ(exact.body, body.substr(0, 10));
}

TEST(Http1ResponseTest, ChunkedBodyOverCap) {
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  const Snapshot s = Parse(head + "6\r\nabcdef\r\n6\r\nghijkl\r\n0\r\n\r\n", {.max_body = 10});
  EXPECT_TRUE(s.failed());
  EXPECT_TRUE(s.body_over_cap);
  EXPECT_EQ(s.body, "abcdefghij");

  const Snapshot exact = Parse(head + "6\r\nabcdef\r\n4\r\nghij\r\n0\r\n\r\n", {.max_body = 10});
  EXPECT_TRUE(exact.done()) << exact.error;
  EXPECT_EQ(exact.body, "abcdefghij");
}

TEST(Http1ResponseTest, UntilCloseBodyOverCap) {
  const std::string head = "HTTP/1.1 200 OK\r\n\r\n";
  const Snapshot s = Parse(head + "abcdefghijk", {.max_body = 10, .eof = true});
  EXPECT_TRUE(s.failed());
  EXPECT_TRUE(s.body_over_cap);
  EXPECT_FALSE(s.disconnected);
  EXPECT_EQ(s.body, "abcdefghij");

  const Snapshot exact = Parse(head + "abcdefghij", {.max_body = 10, .eof = true});
  EXPECT_TRUE(exact.done()) << exact.error;
  EXPECT_EQ(exact.body, "abcdefghij");
}

TEST(Http1ResponseTest, ZeroBodyCap) {
  const Snapshot empty = Parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", {.max_body = 0});
  EXPECT_TRUE(empty.done()) << empty.error;
  const Snapshot one = Parse("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", {.max_body = 0});
  EXPECT_TRUE(one.failed());
  EXPECT_TRUE(one.body_over_cap);
  EXPECT_EQ(one.body, "");
}

// ---- end of stream ------------------------------------------------------------------------

TEST(Http1ResponseTest, EofBeforeAnyByteIsEmptyReply) {
  Http1Response r(1024, 1024);
  r.Eof();
  EXPECT_TRUE(r.failed());
  EXPECT_TRUE(r.disconnected());
  EXPECT_FALSE(r.started());
  EXPECT_EQ(r.error(), "Empty reply from server");
  EXPECT_EQ(r.Feed("HTTP/1.1 200 OK\r\n\r\n"), 0u);

  const Snapshot s = Parse("", {.eof = true});
  EXPECT_TRUE(s.failed());
  EXPECT_EQ(s.error, "Empty reply from server");
}

TEST(Http1ResponseTest, EofInsideTheHead) {
  for (const std::string input : {"H", "HTTP/1.1 200 OK", "HTTP/1.1 200 OK\r\n",
                                  "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"}) {
    SCOPED_TRACE(input);
    const Snapshot s = Parse(input, {.eof = true});
    EXPECT_TRUE(s.failed());
    EXPECT_TRUE(s.disconnected);
    EXPECT_TRUE(s.started);
    EXPECT_FALSE(s.head_done);
    EXPECT_NE(s.error, "Empty reply from server");
  }
}

TEST(Http1ResponseTest, EofInsideAContentLengthBody) {
  const Snapshot s = Parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", {.eof = true});
  EXPECT_TRUE(s.failed());
  EXPECT_TRUE(s.disconnected);
  EXPECT_TRUE(s.started);
  EXPECT_TRUE(s.head_done);
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(s.body, "abc");
  EXPECT_FALSE(s.keep_alive);
}

TEST(Http1ResponseTest, EofInsideAChunkedBody) {
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const std::string body : {"", "5", "5\r\n", "5\r\nhel", "5\r\nhello", "5\r\nhello\r\n",
                                 "5\r\nhello\r\n0\r\n", "5\r\nhello\r\n0\r\nT: 1\r\n"}) {
    SCOPED_TRACE("body '" + body + "'");
    const Snapshot s = Parse(head + body, {.eof = true});
    EXPECT_TRUE(s.failed());
    EXPECT_TRUE(s.disconnected);
    EXPECT_TRUE(s.started);
    EXPECT_TRUE(s.head_done);
    EXPECT_FALSE(s.keep_alive);
  }
}

TEST(Http1ResponseTest, EofAfterDoneOrFailedChangesNothing) {
  Http1Response r(1024, 1024);
  r.Feed("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
  ASSERT_TRUE(r.done());
  r.Eof();
  EXPECT_TRUE(r.done());
  EXPECT_FALSE(r.disconnected());
  EXPECT_TRUE(r.keep_alive());
  EXPECT_EQ(r.body(), "hi");
  EXPECT_EQ(r.error(), "");

  Http1Response f(1024, 1024);
  f.Feed("FOO 200\r\n");
  ASSERT_TRUE(f.failed());
  const std::string error = f.error();
  f.Eof();
  EXPECT_TRUE(f.failed());
  EXPECT_FALSE(f.disconnected());
  EXPECT_EQ(f.error(), error);
}

TEST(Http1ResponseTest, FeedAfterDoneOrFailedConsumesNothing) {
  Http1Response r(1024, 1024);
  r.Feed("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  ASSERT_TRUE(r.done());
  EXPECT_EQ(r.Feed("HTTP/1.1 200 OK\r\n\r\n"), 0u);
  EXPECT_TRUE(r.done());

  Http1Response f(1024, 1024);
  f.Feed("HTTP/2 200 OK\r\n\r\n");
  ASSERT_TRUE(f.failed());
  EXPECT_EQ(f.Feed("more"), 0u);
}

// ---- status line --------------------------------------------------------------------------

TEST(Http1ResponseTest, MalformedStatusLinesFail) {
  for (const std::string line :
       {"HTTP/2 200 OK", "HTTP/1.1 20 OK", "HTTP/1.1 2000 OK", "FOO 200", "HTTP/1.1 200OK",
        "HTTP/1.2 200 OK", "HTTP/1.1 099 Low", "HTTP/1.1 2x0 OK", "HTTP/1.1  200 OK",
        " HTTP/1.1 200 OK", "http/1.1 200 OK", "HTTP/1.1"}) {
    SCOPED_TRACE("status line '" + line + "'");
    const Snapshot s = Parse(line + "\r\nContent-Length: 0\r\n\r\n");
    EXPECT_TRUE(s.failed());
    EXPECT_FALSE(s.head_done);
    EXPECT_FALSE(s.disconnected);
    EXPECT_FALSE(s.head_over_cap);
    EXPECT_FALSE(s.keep_alive);
  }
  // An empty first line is not a status line either.
  const Snapshot s = Parse("\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  EXPECT_TRUE(s.failed());
}

TEST(Http1ResponseTest, StatusLineVariantsAccepted) {
  struct Case {
    std::string line;
    int status;
    std::string version;
  };
  for (const Case& c : std::vector<Case>{{"HTTP/1.1 200", 200, "1.1"},
                                         {"HTTP/1.1 200 ", 200, "1.1"},
                                         {"HTTP/1.0 404 Not Found", 404, "1.0"},
                                         {"HTTP/1.1 503 Service  Unavailable", 503, "1.1"},
                                         {"HTTP/1.1 999 Odd", 999, "1.1"},
                                         {"HTTP/1.1 201 Created", 201, "1.1"}}) {
    SCOPED_TRACE("status line '" + c.line + "'");
    const std::string head = c.line + "\r\nContent-Length: 1\r\n\r\n";
    const Snapshot s = Parse(head + "x");
    EXPECT_TRUE(s.done()) << s.error;
    EXPECT_EQ(s.status, c.status);
    EXPECT_EQ(s.version, c.version);
    EXPECT_EQ(s.head, head);
    EXPECT_EQ(s.body, "x");
  }
}

// ---- header fields ------------------------------------------------------------------------

TEST(Http1ResponseTest, HeadersParsedWithObsFold) {
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type:  text/html; charset=utf-8 \r\nX-Long: one\r\n"
      "  two\r\n\tthree\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 2\r\n\r\n";
  const Snapshot s = Parse(head + "ok");
  ASSERT_TRUE(s.done()) << s.error;
  EXPECT_EQ(s.head, head);
  const Headers expected = {{"Content-Type", "text/html; charset=utf-8"},
                            {"X-Long", "one two three"},
                            {"Set-Cookie", "a=1"},
                            {"Set-Cookie", "b=2"},
                            {"Content-Length", "2"}};
  EXPECT_EQ(s.headers, expected);
}

TEST(Http1ResponseTest, ObsFoldedConnectionClose) {
  const Snapshot s =
      Parse("HTTP/1.1 200 OK\r\nConnection: keep-alive,\r\n close\r\nContent-Length: 1\r\n\r\nx");
  ASSERT_TRUE(s.done()) << s.error;
  EXPECT_EQ(Value(s, "Connection"), "keep-alive, close");
  EXPECT_FALSE(s.keep_alive);
}

// ---- big bodies ---------------------------------------------------------------------------

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  uint32_t x = 12345;
  for (char& c : s) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 16);
  }
  return s;
}

TEST(Http1ResponseTest, BigBodyAcrossManyFeeds) {
  const std::string body = Pattern(100 * 1024);
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  const std::string input = head + body + "TAIL";
  // Pieces of 1..1499 bytes.
  std::vector<size_t> cuts;
  for (size_t pos = 0, step = 1; pos + step < input.size(); step = step * 7 % 1499 + 1) {
    pos += step;
    cuts.push_back(pos);
  }
  ASSERT_GT(cuts.size(), 100u);
  const Snapshot pieces = FeedPieces(input, cuts, {});
  EXPECT_EQ(pieces.violations, "");
  EXPECT_TRUE(pieces.done()) << pieces.error;
  EXPECT_TRUE(pieces.body == body);
  EXPECT_EQ(pieces.consumed, head.size() + body.size());

  const Snapshot s = Parse(input);  // whole, byte by byte, split at a stride
  EXPECT_TRUE(s.done()) << s.error;
  EXPECT_EQ(s.body.size(), body.size());
  EXPECT_TRUE(s.body == body);
  EXPECT_EQ(s.consumed, head.size() + body.size());
}

TEST(Http1ResponseTest, BigChunkedBodyAcrossManyFeeds) {
  const std::string body = Pattern(100 * 1024);
  std::string framed;
  for (size_t pos = 0, n = 1; pos < body.size(); pos += n, n = n * 3 % 4001 + 1) {
    const size_t len = std::min(n, body.size() - pos);
    char size[32];
    std::snprintf(size, sizeof size, "%zx", len);
    framed += std::string(size) + "\r\n" + body.substr(pos, len) + "\r\n";
  }
  framed += "0\r\n\r\n";
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  const Snapshot s = Parse(head + framed + "TAIL");
  EXPECT_TRUE(s.done()) << s.error;
  EXPECT_TRUE(s.body == body);
  EXPECT_EQ(s.consumed, head.size() + framed.size());
}

}  // namespace
}  // namespace harvest::fetch::internal
