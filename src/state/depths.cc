// DepthTable (depth_table.h): shallower paths, and the minimum merge operator that keeps
// them.
#include <algorithm>
#include <climits>
#include <string>

#include "state/depth_table.h"
#include "state/internal.h"

namespace harvest::state {
namespace {

constexpr int kDepthBytes = 4;

std::string EncodeDepth(int depth) {
  std::string v;
  PutBigEndian(&v, static_cast<uint32_t>(std::max(depth, 0)), kDepthBytes);
  return v;
}

bool DecodeDepth(const rocksdb::Slice& v, int* depth) {
  if (v.size() != kDepthBytes) return false;
  const uint64_t d = ReadBigEndian(std::string_view(v.data(), v.size()), kDepthBytes);
  *depth = static_cast<int>(std::min<uint64_t>(d, INT_MAX));
  return true;
}

// Keeps the smaller of two depths (an undecodable operand loses to a decodable one).
class MinDepthOperator final : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice& /*key*/, const rocksdb::Slice* existing,
             const rocksdb::Slice& value, std::string* new_value,
             rocksdb::Logger* /*logger*/) const override {
    int a = INT_MAX, b = INT_MAX;
    const bool has_a = existing != nullptr && DecodeDepth(*existing, &a);
    const bool has_b = DecodeDepth(value, &b);
    if (!has_a && !has_b) return false;
    *new_value = EncodeDepth(std::min(a, b));
    return true;
  }
  const char* Name() const override { return "harvest.MinDepth"; }
};

}  // namespace

std::shared_ptr<rocksdb::MergeOperator> NewMinDepthOperator() {
  return std::make_shared<MinDepthOperator>();
}

void DepthTable::Note(uint64_t fp, int depth) {
  NotedSlot& slot = noted_[SlotOf(fp)];
  if (slot.fp == fp && fp != 0 && slot.depth <= depth) return;
  committer_->batch()->Merge(cf_, SeenKey(fp), EncodeDepth(depth));
  slot.depth = slot.fp == fp ? std::min(slot.depth, depth) : depth;
  slot.fp = fp;
  committer_->MaybeHandOver();
}

std::optional<int> DepthTable::Noted(uint64_t fp) const {
  // A note still in the pending (or a handed-over) batch is in its slot, unless a later note
  // took the slot — then it was written long ago in all but a rare case.
  std::optional<int> best;
  const NotedSlot& slot = noted_[SlotOf(fp)];
  if (slot.fp == fp && fp != 0) best = slot.depth;
  std::string value;
  int stored = 0;
  if (ReadValue(db_, cf_, SeenKey(fp), &value).ok() && DecodeDepth(value, &stored)) {
    best = best ? std::min(*best, stored) : stored;
  }
  return best;
}

}  // namespace harvest::state
