#include <gtest/gtest.h>

#include "store/internal.h"
#include "store/store.h"

namespace harvest::store {
namespace {

// RFC 4648 §10 test vectors for base32.
TEST(Base32, Rfc4648_TestVectors) {
  EXPECT_EQ(internal::Base32Encode(""), "");
  EXPECT_EQ(internal::Base32Encode("f"), "MY======");
  EXPECT_EQ(internal::Base32Encode("fo"), "MZXQ====");
  EXPECT_EQ(internal::Base32Encode("foo"), "MZXW6===");
  EXPECT_EQ(internal::Base32Encode("foob"), "MZXW6YQ=");
  EXPECT_EQ(internal::Base32Encode("fooba"), "MZXW6YTB");
  EXPECT_EQ(internal::Base32Encode("foobar"), "MZXW6YTBOI======");
}

// Known answers computed with Python: base64.b32encode(hashlib.sha256(data).digest()).
TEST(PayloadDigest, Sha256KnownAnswers) {
  EXPECT_EQ(PayloadDigest(""), "sha256:4OYMIQUY7QOBJGX36TEJS35ZEQT24QPEMSNZGTFESWMRW6CSXBKQ====");
  EXPECT_EQ(PayloadDigest("hello world"),
            "sha256:XFGSPOMTJU7ARJJOKLL5U7NL7LCIJ37DPJJYB3UQRD32ZYXPZXUQ====");
}

// Same value jwarc's WarcDigestTest and warcio's tests use.
TEST(PayloadDigest, Sha1KnownAnswers) {
  EXPECT_EQ(PayloadDigest("hello world", DigestAlgorithm::kSha1),
            "sha1:FKXGYNOJJ7H3IFO35FPUBC445EPOQRXN");
  EXPECT_EQ(PayloadDigest("", DigestAlgorithm::kSha1), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
}

TEST(HexEncode, Bytes) { EXPECT_EQ(internal::HexEncode(std::string("\x00\xff\x10", 3)), "00ff10"); }

TEST(NewRecordId, IsUuidV4AndUnique) {
  std::string a = internal::NewRecordId();
  std::string b = internal::NewRecordId();
  EXPECT_NE(a, b);
  ASSERT_EQ(a.size(), 47u) << a;
  EXPECT_EQ(a.substr(0, 10), "<urn:uuid:");
  EXPECT_EQ(a.back(), '>');
  EXPECT_EQ(a[10 + 14], '4');                                          // version nibble
  EXPECT_NE(std::string("89ab").find(a[10 + 19]), std::string::npos);  // variant
}

}  // namespace
}  // namespace harvest::store
