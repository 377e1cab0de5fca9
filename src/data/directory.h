// The planner's directory: for each live data version, its size, the rank
// that produces it and the ranks that hold (or are about to receive) a
// replica. Versions are numbered in order, so entries live in a sliding
// table indexed by version id (data/sliding_id_table.h), and holder lists
// keep a few ranks inline: adding, finding and removing a version allocates
// nothing in steady state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "data/sliding_id_table.h"

namespace taskgrid::data {

// A short list of ranks: kInline of them inline, more on the heap (a
// version read by many ranks, which is rare and long-lived).
class RankList {
 public:
  RankList() = default;
  RankList(std::initializer_list<int> ranks) { assign(ranks.begin(), ranks.end()); }
  RankList(const RankList& other) { assign(other.begin(), other.end()); }
  RankList(RankList&& other) noexcept { take(other); }
  RankList& operator=(const RankList& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  RankList& operator=(RankList&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  RankList& operator=(std::initializer_list<int> ranks) {
    assign(ranks.begin(), ranks.end());
    return *this;
  }
  ~RankList() { release(); }

  template <typename It>
  void assign(It first, It last) {
    size_ = 0;
    for (; first != last; ++first) push_back(*first);
  }
  void push_back(int rank) {
    if (size_ == capacity_) grow();
    data()[size_++] = rank;
  }
  void clear() { size_ = 0; }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int front() const { return data()[0]; }
  int operator[](size_t i) const { return data()[i]; }
  const int* begin() const { return data(); }
  const int* end() const { return data() + size_; }
  int* begin() { return data(); }
  int* end() { return data() + size_; }

 private:
  static constexpr uint32_t kInline = 4;
  int* data() { return capacity_ > kInline ? heap_ : inline_; }
  const int* data() const { return capacity_ > kInline ? heap_ : inline_; }
  void grow();
  void release() {
    if (capacity_ > kInline) delete[] heap_;
    capacity_ = kInline;
    size_ = 0;
  }
  void take(RankList& other) {
    size_ = other.size_;
    capacity_ = other.capacity_;
    if (capacity_ > kInline)
      heap_ = other.heap_;
    else
      for (uint32_t i = 0; i < size_; ++i) inline_[i] = other.inline_[i];
    other.capacity_ = kInline;
    other.size_ = 0;
  }

  uint32_t size_ = 0;
  uint32_t capacity_ = kInline;
  union {
    int inline_[kInline];
    int* heap_;
  };
};

struct VersionInfo {
  size_t bytes = 0;
  int producer = 0;
  RankList holders;     // ranks with a replica, present or in transit
  double ready_at = 0;  // scheduler's estimate (seconds, planner clock)
  bool holds(int rank) const {
    for (int r : holders)
      if (r == rank) return true;
    return false;
  }
  // A rank to send the version from: the producer while it holds it (its
  // copy exists soonest), else the first other holder.
  int source() const { return holds(producer) ? producer : holders.front(); }
};

class Directory {
 public:
  // Throws std::logic_error when `version` is already live.
  VersionInfo& add(uint64_t version, size_t bytes, int producer, double ready_at);
  // nullptr when the version is not live.
  VersionInfo* find(uint64_t version) { return versions_.find(version); }
  const VersionInfo* find(uint64_t version) const { return versions_.find(version); }
  // Throws std::logic_error when the version is not live.
  VersionInfo& at(uint64_t version) {
    VersionInfo* info = versions_.find(version);
    if (!info) not_live(version);
    return *info;
  }
  void add_holder(uint64_t version, int rank);
  // Forgets a version; `holders` receives the ranks that held it (to retire
  // it there). The caller's vector is reused: no allocation per version.
  void remove(uint64_t version, std::vector<int>& holders);
  // Forgets a version, calling each_holder(rank) for the ranks that held it
  // first. False when it was not live.
  template <typename EachHolder>
  bool remove_each(uint64_t version, EachHolder&& each_holder) {
    VersionInfo* info = versions_.find(version);
    if (!info) return false;
    for (int rank : info->holders) each_holder(rank);
    versions_.erase(version);
    return true;
  }
  size_t size() const { return versions_.size(); }
  // Entries kept outside the ring: versions that outlived many newer ones.
  size_t long_lived() const { return versions_.stragglers(); }
  size_t capacity() const { return versions_.capacity(); }

 private:
  [[noreturn]] static void not_live(uint64_t version);

  data::SlidingIdTable<VersionInfo> versions_{"directory: version", 4096};
};

}  // namespace taskgrid::data
