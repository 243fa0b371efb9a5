// The hand-written CDXJ JSON writer against the nlohmann::json code it replaced (the
// oracle): same bytes for every field value, including controls, quotes, backslashes, DEL,
// every byte value and ill-formed UTF-8.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "store/internal.h"

namespace harvest::store {
namespace {

// FormatCdxjLine as it was written with nlohmann::json (the reference).
std::string OracleCdxjLine(const internal::CdxjEntry& e) {
  nlohmann::ordered_json j;
  j["url"] = e.url;
  if (!e.mime.empty()) j["mime"] = e.mime;
  if (!e.status.empty()) j["status"] = e.status;
  if (!e.digest.empty()) j["digest"] = e.digest;
  j["length"] = e.length;
  j["offset"] = e.offset;
  j["filename"] = e.filename;
  if (!e.near_dup_of.empty()) j["near_dup_of"] = e.near_dup_of;
  return e.surt + " " + e.timestamp + " " +
         j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string OracleJsonString(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Json(std::string_view s) {
  std::string out;
  internal::AppendJsonString(s, &out);
  return out;
}

std::string Printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "\\x%02x", c);
    out += buf;
  }
  return out;
}

TEST(CdxjJson, EscapesLikeNlohmann) {
  EXPECT_EQ(Json("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(Json(std::string("\x00\x01\x1f\x7f", 4)), "\"\\u0000\\u0001\\u001f\x7f\"");
  EXPECT_EQ(Json("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
  EXPECT_EQ(Json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  // Ill-formed: one U+FFFD per bad sequence; the byte that breaks one is read again.
  EXPECT_EQ(Json("a\xff"
                 "b"),
            "\"a\xef\xbf\xbd"
            "b\"");
  EXPECT_EQ(Json("a\xe2\x28"
                 "b"),
            "\"a\xef\xbf\xbd(b\"");
  EXPECT_EQ(Json("\xe2\x82\xe2\x82\xac"), "\"\xef\xbf\xbd\xe2\x82\xac\"");
  EXPECT_EQ(Json("a\xe2\x82"), "\"a\xef\xbf\xbd\"");
}

// Every single byte, every pair of bytes, and each byte after each lead byte with a valid
// continuation before it.
TEST(CdxjJson, AllShortByteStringsMatchOracle) {
  for (int a = 0; a < 256; ++a) {
    std::string s(1, static_cast<char>(a));
    ASSERT_EQ(Json(s), OracleJsonString(s)) << Printable(s);
    for (int b = 0; b < 256; ++b) {
      std::string t = s + static_cast<char>(b);
      ASSERT_EQ(Json(t), OracleJsonString(t)) << Printable(t);
      std::string u = "x" + t + "y";
      ASSERT_EQ(Json(u), OracleJsonString(u)) << Printable(u);
    }
  }
  for (int lead = 0xc0; lead < 0x100; ++lead) {
    for (int b = 0; b < 256; ++b) {
      for (int c = 0; c < 256; c += 5) {
        std::string s = {static_cast<char>(lead), static_cast<char>(b), static_cast<char>(c), 'z'};
        ASSERT_EQ(Json(s), OracleJsonString(s)) << Printable(s);
        std::string t = {static_cast<char>(lead), static_cast<char>(0x90), static_cast<char>(b),
                         static_cast<char>(c)};
        ASSERT_EQ(Json(t), OracleJsonString(t)) << Printable(t);
      }
    }
  }
}

// Random strings: some of any bytes, some mostly UTF-8 with a few broken sequences.
std::string RandomValue(std::mt19937& rng) {
  static const std::vector<std::string> kPieces = {"http://example.com/",
                                                   "a",
                                                   "\"",
                                                   "\\",
                                                   "/",
                                                   " ",
                                                   "\x7f",
                                                   "\xc3\xa9",
                                                   "\xe2\x82\xac",
                                                   "\xf0\x9f\x98\x80",
                                                   "\xed\xa0\x80",
                                                   "\xf4\x90\x80\x80",
                                                   "\xc0\xaf",
                                                   "\xe0\x80\xaf",
                                                   "\x80",
                                                   "\xbf",
                                                   "\xfe",
                                                   "\r\n",
                                                   "\t",
                                                   std::string(1, '\0'),
                                                   "\xe2",
                                                   "\xf0\x9f"};
  std::string s;
  const size_t n = rng() % 40;
  const bool any_bytes = rng() % 2 == 0;
  for (size_t i = 0; i < n; ++i) {
    if (any_bytes) {
      s.push_back(static_cast<char>(rng() & 0xff));
    } else {
      s += kPieces[rng() % kPieces.size()];
    }
  }
  return s;
}

TEST(CdxjJson, RandomLinesMatchOracle) {
  std::mt19937 rng(20261127);
  for (int i = 0; i < 20000; ++i) {
    internal::CdxjEntry e;
    e.surt = "com,example)/" + std::to_string(i);
    e.timestamp = "20261127043000";
    e.url = RandomValue(rng);
    if (rng() % 3 != 0) e.mime = RandomValue(rng);
    if (rng() % 3 != 0) e.status = std::to_string(rng() % 600);
    if (rng() % 3 != 0) e.digest = RandomValue(rng);
    e.length = rng() % 2 == 0 ? rng() : (static_cast<uint64_t>(rng()) << 32 | rng());
    e.offset = rng() % 4 == 0 ? 0 : UINT64_MAX - rng() % 3;
    e.filename = RandomValue(rng);
    if (rng() % 3 == 0) e.near_dup_of = RandomValue(rng);
    ASSERT_EQ(internal::FormatCdxjLine(e), OracleCdxjLine(e))
        << "url " << Printable(e.url) << " filename " << Printable(e.filename);
  }
}

// CdxjLineFor (the writer's and recovery's path) gives FormatCdxjLine's line for its fields.
TEST(CdxjJson, CdxjLineForMatchesOracle) {
  internal::CdxjSource s;
  s.target_uri = "http://example.com/a b\"\\\xff";
  s.surt = "com,example)/a";
  s.warc_date = "2026-11-27T04:30:00.123456Z";
  s.response_head = "HTTP/1.1 200 OK\r\nContent-Type: Text/HTML; charset=utf-8\r\n\r\n";
  s.status = 200;
  s.payload_digest = "sha256:ABC";
  s.offset = 123;
  s.length = 456;
  s.filename = "harvest-20261127043000-00000.warc.gz";
  s.near_dup_of = "http://example.com/\x01";
  internal::CdxjEntry e{"com,example)/a",
                        "20261127043000",
                        std::string(s.target_uri),
                        "text/html",
                        "200",
                        "sha256:ABC",
                        456,
                        123,
                        std::string(s.filename),
                        std::string(s.near_dup_of)};
  EXPECT_EQ(internal::CdxjLineFor(s), OracleCdxjLine(e));
  s.revisit = true;
  s.status = 0;
  e.mime = "warc/revisit";
  e.status = "";
  EXPECT_EQ(internal::CdxjLineFor(s), OracleCdxjLine(e));
  std::string line = "prefix ";
  internal::AppendCdxjLine(s, &line);
  EXPECT_EQ(line, "prefix " + OracleCdxjLine(e));
}

}  // namespace
}  // namespace harvest::store
