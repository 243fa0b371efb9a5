// libFuzzer target for the WARC reader: any bytes as a WARC file (gzip members, plain or
// mixed), then every response block through ParseHttpResponse. Must never crash, hang or
// allocate without bound.
#include <cstddef>
#include <cstdint>
#include <string>

#include "store/store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using harvest::store::WarcReader;
  harvest::store::WarcReaderOptions options;
  options.max_record_bytes = 4 << 20;  // bounds gzip bombs to what the fuzzer can afford
  auto reader = WarcReader::FromBuffer(std::string(reinterpret_cast<const char*>(data), size),
                                       "fuzz", options);
  for (int i = 0; i < 10000; ++i) {
    auto rec = reader->Next();
    if (!rec.ok() || !rec->has_value()) break;
    const harvest::store::WarcRecord& r = **rec;
    (void)r.header("WARC-Payload-Digest");
    auto http = harvest::store::ParseHttpResponse(r.block);
    if (http.ok()) (void)http->header("Content-Type");
  }
  return 0;
}
