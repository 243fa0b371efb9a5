// Fuzz target: canonicalization (default options; all policies on; all policies on with
// percent normalization, host lowercasing and sorting off). Checks that the canonical
// form parses, is a fixed point of canonicalization, and that SURT/fingerprints never crash.
#include <cstddef>
#include <cstdint>

#include "url/fuzz/url_fuzz_common.h"

namespace {

void CheckCanon(const harvest::url::Url& u, const harvest::url::CanonOptions& options) {
  using namespace harvest::url;
  Url once = Canonicalize(u, options);
  fuzz::CheckParsed(once);
  std::optional<Url> reparsed = Parse(once.href());
  if (!reparsed) fuzz::Fail("canonical form does not parse", once.href(), "");
  Url twice = Canonicalize(*reparsed, options);
  if (twice.href() != once.href())
    fuzz::Fail("canon(canon(x)) != canon(x)", once.href(), twice.href());
  (void)Surt(once);
  (void)Fingerprint64(once.href());
  (void)RegistrableDomain(once.host());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace harvest::url;
  static const CanonOptions* const kAll = [] {
    auto* o = new CanonOptions();
    o->strip_trailing_slash = true;
    o->strip_index = true;
    o->drop_userinfo = true;
    return o;
  }();
  static const CanonOptions* const kRaw = [] {
    auto* o = new CanonOptions(*kAll);
    o->normalize_percent_encoding = false;
    o->lowercase_host = false;
    o->sort_query = false;
    return o;
  }();
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::optional<Url> u = Parse(input);
  if (!u) return 0;
  CheckCanon(*u, DefaultCanonOptions());
  CheckCanon(*u, *kAll);
  CheckCanon(*u, *kRaw);
  return 0;
}
