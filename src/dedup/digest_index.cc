// DigestIndex: payload digest -> first stored location, behind one mutex.
#include "dedup/dedup.h"

namespace harvest::dedup {

std::optional<DigestIndex::Original> DigestIndex::Find(const std::string& digest) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.find(digest);
  if (it == map_.end()) return std::nullopt;
  return it->second;
}

bool DigestIndex::InsertIfAbsent(const std::string& digest, Original original) {
  std::lock_guard<std::mutex> lock(mu_);
  return map_.try_emplace(digest, std::move(original)).second;
}

size_t DigestIndex::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return map_.size();
}

}  // namespace harvest::dedup
