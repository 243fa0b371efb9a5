// Private to src/audit: maps strings to dense indices 0, 1, 2, ... (a string interner).
//
// Open addressing over (hash, index) slots with the bytes in one arena: a lookup costs about
// one cache miss, where std::unordered_map<std::string, ...> chases a node per probe. Page
// identities of a million-line log are mostly distinct, so this table dominates the audit's
// run time.
//
// Thread-safety: none; owned by one audit.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace harvest::audit {

class Interner {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  // Returns the index of `s`, adding it when new.
  uint32_t Intern(std::string_view s) {
    if ((entries_.size() + 1) * 2 > slots_.size()) Grow();
    uint64_t h = Hash(s);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.index == kAbsent) {
        slot = {h, uint32_t(entries_.size())};
        entries_.push_back({arena_.size(), s.size()});
        arena_.append(s);
        return slot.index;
      }
      if (slot.hash == h && Get(slot.index) == s) return slot.index;
    }
  }

  // Returns the index of `s`, or kAbsent.
  uint32_t Find(std::string_view s) const {
    if (slots_.empty()) return kAbsent;
    uint64_t h = Hash(s);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (slot.index == kAbsent) return kAbsent;
      if (slot.hash == h && Get(slot.index) == s) return slot.index;
    }
  }

  std::string_view Get(uint32_t index) const {
    const Entry& e = entries_[index];
    return std::string_view(arena_).substr(e.offset, e.size);
  }
  size_t size() const { return entries_.size(); }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t index = kAbsent;
  };
  struct Entry {
    size_t offset;
    size_t size;
  };

  static uint64_t Hash(std::string_view s) { return std::hash<std::string_view>{}(s); }

  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
    size_t mask = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.index == kAbsent) continue;
      size_t i = slot.hash & mask;
      while (slots_[i].index != kAbsent) i = (i + 1) & mask;
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;  // size is a power of two, at most half full
  std::vector<Entry> entries_;
  std::string arena_;
};

}  // namespace harvest::audit
