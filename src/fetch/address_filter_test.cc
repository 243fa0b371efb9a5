// AddressFilter: every blocked range, embedded IPv4 forms, and what the operator opens.
#include <gtest/gtest.h>

#include "fetch/resolver.h"

namespace harvest::fetch {
namespace {

TEST(AddressFilterTest, BlocksPrivateAndSpecialRangesByDefault) {
  const AddressFilter f;
  for (const char* a : {"0.0.0.0",
                        "0.1.2.3",
                        "10.0.0.5",
                        "100.64.0.1",
                        "100.127.255.255",
                        "127.0.0.1",
                        "127.255.255.254",
                        "169.254.169.254",
                        "172.16.0.1",
                        "172.31.255.255",
                        "192.0.0.8",
                        "192.168.1.1",
                        "224.0.0.1",
                        "239.255.255.250",
                        "240.0.0.1",
                        "255.255.255.255",
                        "::",
                        "::1",
                        "fc00::1",
                        "fd12:3456::1",
                        "fe80::1",
                        "febf::1",
                        "fec0::1",
                        "ff02::1"}) {
    EXPECT_TRUE(f.Blocked(a).has_value()) << a;
  }
  EXPECT_EQ(f.Blocked("127.0.0.1"), "loopback 127.0.0.0/8");
  EXPECT_EQ(f.Blocked("169.254.169.254"), "link-local 169.254.0.0/16");
  EXPECT_EQ(f.Blocked("fd00::5"), "unique-local fc00::/7");
}

TEST(AddressFilterTest, AllowsPublicAddresses) {
  const AddressFilter f;
  for (const char* a : {"1.1.1.1", "8.8.8.8", "93.184.216.34", "100.63.255.255", "100.128.0.1",
                        "172.15.255.255", "172.32.0.1", "192.169.0.1", "223.255.255.255",
                        "2606:4700:4700::1111", "2001:db8::1", "fbff::1", "fe7f::1"}) {
    EXPECT_FALSE(f.Blocked(a).has_value()) << a << ": " << f.Blocked(a).value_or("");
  }
}

TEST(AddressFilterTest, JudgesAnEmbeddedIPv4AddressByItsIPv4Range) {
  const AddressFilter f;
  for (const char* a : {"::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:10.1.2.3", "::127.0.0.1",
                        "::10.0.0.1", "64:ff9b::127.0.0.1", "64:ff9b::a9fe:a9fe", "::2"}) {
    EXPECT_TRUE(f.Blocked(a).has_value()) << a;
  }
  EXPECT_EQ(f.Blocked("::ffff:169.254.169.254"), "link-local 169.254.0.0/16");
  EXPECT_FALSE(f.Blocked("::ffff:8.8.8.8").has_value());
  EXPECT_FALSE(f.Blocked("64:ff9b::808:808").has_value());
}

TEST(AddressFilterTest, WhatIsNotANumericAddressIsBlocked) {
  const AddressFilter f;
  for (const char* a : {"", "localhost", "2130706433", "0x7f.1", "127.1", "[::1]", "1.2.3.4.5"}) {
    EXPECT_EQ(f.Blocked(a), "not a numeric address") << a;
  }
}

TEST(AddressFilterTest, TheOperatorOpensRanges) {
  Result<AddressFilter> f =
      AddressFilter::Make({"127.0.0.0/8", "10.1.0.0/16", "fd00::/8", "192.168.7.7", "[fe80::]/10"});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  for (const char* a : {"127.0.0.1", "127.9.9.9", "::ffff:127.0.0.1", "10.1.200.3", "fd00::1",
                        "192.168.7.7", "fe80::1"}) {
    EXPECT_FALSE(f->Blocked(a).has_value()) << a;
  }
  for (const char* a : {"10.2.0.1", "192.168.7.8", "fc00::1", "::1", "169.254.169.254"}) {
    EXPECT_TRUE(f->Blocked(a).has_value()) << a;
  }
  for (const char* bad :
       {"", "10.0.0.0/33", "10.0.0.0/", "10.0.0/8", "fd00::/129", "a.test", "10.0.0.0/8x", "/8"}) {
    Result<AddressFilter> r = AddressFilter::Make({bad});
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find(bad), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace harvest::fetch
