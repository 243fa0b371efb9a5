// StateReaderSource (metadata.h).
#include "metadata/metadata.h"

namespace harvest::metadata {

PageSource StateReaderSource(std::shared_ptr<state::StateReader> reader) {
  return [reader = std::move(reader)](uint64_t after_id,
                                      size_t limit) -> Result<std::vector<state::PageEntry>> {
    state::PageFilter f;
    f.after_id = after_id;
    f.limit = limit;
    f.max_scanned = limit;
    return std::move(reader->ScanPages(f).pages);
  };
}

}  // namespace harvest::metadata
