#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

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

// "<urn:uuid:" 8-4-4-4-12 lowercase hex digits ">", version 4, variant 10.
bool IsUuidV4Urn(const std::string& id) {
  if (id.size() != 47 || id.compare(0, 10, "<urn:uuid:") != 0 || id.back() != '>') return false;
  for (size_t j = 10; j < 46; ++j) {
    const bool dash = j == 18 || j == 23 || j == 28 || j == 33;
    const char c = id[j];
    if (dash != (c == '-')) return false;
    if (!dash && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return id[24] == '4' && std::string("89ab").find(id[29]) != std::string::npos;
}

// Across several refills of the random pool: every id well-formed and new, and every
// random hex digit takes more than one value.
TEST(NewRecordId, ManyAreWellFormedDistinctAndRandom) {
  EXPECT_FALSE(IsUuidV4Urn("<urn:uuid:6eca7cdc-55b3-3e90-b933-178c12a0dc34>"));  // version 3
  EXPECT_FALSE(IsUuidV4Urn("<urn:uuid:6eca7cdc-55b3-4e90-7933-178c12a0dc34>"));  // variant 0
  EXPECT_FALSE(IsUuidV4Urn("<urn:uuid:6eca7cdc-55b3-4e90-b933-178c12a0dC34>"));  // uppercase
  EXPECT_TRUE(IsUuidV4Urn("<urn:uuid:6eca7cdc-55b3-4e90-b933-178c12a0dc34>"));
  std::set<std::string> ids;
  std::vector<std::set<char>> digits(47);
  for (int i = 0; i < 1000; ++i) {
    std::string id = internal::NewRecordId();
    ASSERT_TRUE(IsUuidV4Urn(id)) << id;
    EXPECT_TRUE(ids.insert(id).second) << id;
    for (size_t j = 0; j < id.size(); ++j) digits[j].insert(id[j]);
  }
  for (size_t j = 10; j < 46; ++j) {
    if (j == 18 || j == 23 || j == 28 || j == 33 || j == 24) continue;  // '-', version '4'
    EXPECT_GT(digits[j].size(), 1u) << "position " << j;
  }
}

}  // namespace
}  // namespace harvest::store
