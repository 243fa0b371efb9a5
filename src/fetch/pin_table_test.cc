// PinTable: the --resolve-file format, its errors and the lookup precedence.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "fetch/resolver.h"

namespace harvest::fetch {
namespace {

PinTable MustParse(const std::string& text) {
  auto t = PinTable::Parse(text, "pins");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t.value()) : PinTable();
}

std::string ParseError(const std::string& text) {
  auto t = PinTable::Parse(text, "pins");
  EXPECT_FALSE(t.ok()) << text;
  return t.ok() ? "" : t.status().message();
}

TEST(PinTableTest, ParsesHostsFileLikeLines) {
  const PinTable t = MustParse(
      "# test web\n"
      "\n"
      "a.example 127.0.0.7\n"
      "  B.Example\t127.0.0.8:8080   # trailing comment\n"
      "c.example. ::1\n"
      "d.example [2001:db8::1]:8443\r\n"
      "e.example [::2]\n"
      "f.example ::ffff:10.0.0.1\n");
  EXPECT_EQ(t.size(), 6u);
  EXPECT_FALSE(t.empty());
  const Pin* a = t.Find("a.example");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->address, "127.0.0.7");
  EXPECT_EQ(a->port, 0);
  const Pin* b = t.Find("b.example");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->address, "127.0.0.8");
  EXPECT_EQ(b->port, 8080);
  ASSERT_NE(t.Find("c.example"), nullptr);
  EXPECT_EQ(t.Find("c.example")->address, "::1");
  EXPECT_NE(t.Find("c.example."), nullptr);
  EXPECT_NE(t.Find("B.EXAMPLE"), nullptr);  // case-insensitive
  const Pin* d = t.Find("d.example");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->address, "2001:db8::1");
  EXPECT_EQ(d->port, 8443);
  EXPECT_EQ(t.Find("e.example")->address, "::2");
  EXPECT_EQ(t.Find("e.example")->port, 0);
  EXPECT_EQ(t.Find("f.example")->address, "::ffff:10.0.0.1");
  EXPECT_EQ(t.Find("g.example"), nullptr);
  EXPECT_EQ(t.Find("x.a.example"), nullptr);  // exact names do not cover subdomains
}

TEST(PinTableTest, WildcardsAndPrecedence) {
  const PinTable t = MustParse(
      "*.example 10.0.0.1\n"
      "*.b.example 10.0.0.2\n"
      "exact.b.example 10.0.0.3\n"
      "*.c.b.example 10.0.0.4:81\n");
  EXPECT_EQ(t.Find("a.example")->address, "10.0.0.1");
  EXPECT_EQ(t.Find("x.y.example")->address, "10.0.0.1");
  EXPECT_EQ(t.Find("example"), nullptr);  // "*.suffix" does not match "suffix"
  EXPECT_EQ(t.Find("b.example")->address, "10.0.0.1");
  EXPECT_EQ(t.Find("a.b.example")->address, "10.0.0.2");      // longest wildcard wins
  EXPECT_EQ(t.Find("exact.b.example")->address, "10.0.0.3");  // exact beats wildcards
  EXPECT_EQ(t.Find("z.c.b.example")->address, "10.0.0.4");
  EXPECT_EQ(t.Find("z.c.b.example")->port, 81);
  EXPECT_EQ(t.Find("Deep.Z.C.B.Example")->port, 81);
  EXPECT_EQ(t.Find("other.org"), nullptr);
  EXPECT_EQ(t.Find("notexample"), nullptr);
}

TEST(PinTableTest, EmptyTable) {
  const PinTable t = MustParse("# nothing\n\n   \n");
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.Find("a.example"), nullptr);
  EXPECT_TRUE(MustParse("").empty());
}

TEST(PinTableTest, ErrorsNameSourceAndLine) {
  EXPECT_EQ(ParseError("a.example 1.2.3.4\nb.example\n"),
            "pins:2: missing ADDRESS after 'b.example'");
  EXPECT_EQ(ParseError("a.example not-an-ip\n"),
            "pins:1: bad address 'not-an-ip' (not a numeric IPv4 or IPv6 address)");
  EXPECT_EQ(ParseError("a.example 1.2.3.4:0\n"), "pins:1: bad port '0' (1..65535)");
  EXPECT_EQ(ParseError("a.example 1.2.3.4:65536\n"), "pins:1: bad port '65536' (1..65535)");
  EXPECT_EQ(ParseError("a.example 1.2.3.4:http\n"), "pins:1: bad port 'http' (1..65535)");
  EXPECT_EQ(ParseError("a.example 1.2.3.4:\n"), "pins:1: bad port '' (1..65535)");
  EXPECT_EQ(ParseError("\n\na.example 1.2.3.4\nA.EXAMPLE 1.2.3.5\n"),
            "pins:4: duplicate host 'A.EXAMPLE'");
  EXPECT_EQ(ParseError("*.a.example 1.2.3.4\n*.a.example 1.2.3.5\n"),
            "pins:2: duplicate host '*.a.example'");
  EXPECT_EQ(ParseError("a.example 1.2.3.4 b.example\n"),
            "pins:1: unexpected 'b.example' (a line is HOST ADDRESS)");
  EXPECT_EQ(ParseError("127.0.0.1 localhost\n"),
            "pins:1: HOST '127.0.0.1' is an address (a line is HOST ADDRESS, not ADDRESS HOST)");
  EXPECT_EQ(ParseError("a*.example 1.2.3.4\n"), "pins:1: bad host 'a*.example'");
  EXPECT_EQ(ParseError("*.*.example 1.2.3.4\n"), "pins:1: bad host '*.*.example'");
  EXPECT_EQ(ParseError("* 1.2.3.4\n"), "pins:1: bad host '*'");
  EXPECT_EQ(ParseError("a..example 1.2.3.4\n"), "pins:1: bad host 'a..example'");
  EXPECT_EQ(ParseError("a.example:80 1.2.3.4\n"), "pins:1: bad host 'a.example:80'");
  EXPECT_EQ(ParseError("a.example [1.2.3.4]\n"),
            "pins:1: bad address '[1.2.3.4]' (brackets are for IPv6)");
  EXPECT_EQ(ParseError("a.example [::1\n"), "pins:1: bad address '[::1'");
  EXPECT_EQ(ParseError("a.example [::1]x\n"), "pins:1: bad address '[::1]x'");
  EXPECT_EQ(ParseError("a.example 1.2.3\n"),
            "pins:1: bad address '1.2.3' (not a numeric IPv4 or IPv6 address)");
}

TEST(PinTableTest, LoadReadsAFileAndNamesIt) {
  char path[] = "/tmp/harvest_pins_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream out(path);
    out << "a.example 127.0.0.1:9\nbad line here\n";
  }
  auto t = PinTable::Load(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            std::string(path) + ":2: unexpected 'here' (a line is HOST ADDRESS)");
  {
    std::ofstream out(path);
    out << "a.example 127.0.0.1:9\n";
  }
  t = PinTable::Load(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->Find("a.example")->port, 9);
  std::remove(path);
  t = PinTable::Load(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), std::string(path) + ": No such file or directory");
}

}  // namespace
}  // namespace harvest::fetch
