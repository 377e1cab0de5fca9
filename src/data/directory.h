// The planner's directory entries: for a data version, its size, the rank
// that produces it and the ranks that hold (or are about to receive) a
// replica. The only versions the planner needs to know about are the
// current ones of its handles (a superseded version is retired at once), so
// each handle carries the entry of its current version
// (graph::HandleState::where) and no table by version id is kept. Holder
// lists keep a few ranks inline: publishing a version allocates nothing in
// steady state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

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
  // The device of the producer's rank that made it, where the placement
  // chose one (-1: a CPU, or the producer's engine chose): the version is
  // there, and in host memory only once something needed it there.
  int device = -1;
  // A new version, held by its producer only.
  void reset(size_t new_bytes, int new_producer, double new_ready_at, int new_device = -1) {
    bytes = new_bytes;
    producer = new_producer;
    holders.clear();
    holders.push_back(new_producer);
    ready_at = new_ready_at;
    device = new_device;
  }
  bool holds(int rank) const {
    for (int r : holders)
      if (r == rank) return true;
    return false;
  }
  // A rank to send the version from: the producer while it holds it (its
  // copy exists soonest), else the first other holder.
  int source() const { return holds(producer) ? producer : holders.front(); }
};

}  // namespace taskgrid::data
