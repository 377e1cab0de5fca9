// RecordPool: records that stay at one address from the moment they are
// handed out until they are given back, then are handed out again. For
// per-task and per-version records that others point to (engine tasks and
// versions, the planner's handle states): steady state allocates nothing.
// A recycled record keeps its last content (its vectors keep their capacity);
// the caller sets every field. Not thread-safe.
#pragma once

#include <memory>
#include <vector>

namespace taskgrid::data {

template <typename T>
class RecordPool {
 public:
  // A recycled record, else a new one (value-initialised) passed to
  // on_new(T&) first: a caller can give new records room they will need.
  template <typename OnNew>
  T* acquire(OnNew&& on_new) {
    if (free_.empty()) [[unlikely]]
      return make(on_new);
    T* record = free_.back();
    free_.pop_back();
    return record;
  }
  T* acquire() {
    return acquire([](T&) {});
  }
  void release(T* record) { free_.push_back(record); }
  // Gives back every record in `records`, which is left empty.
  void release_all(std::vector<T*>& records) {
    free_.insert(free_.end(), records.begin(), records.end());
    records.clear();
  }
  bool has_free() const { return !free_.empty(); }

 private:
  // Out of the hot path: once per record ever made.
  template <typename OnNew>
  [[gnu::noinline]] T* make(OnNew& on_new) {
    records_.push_back(std::make_unique<T>());
    on_new(*records_.back());
    return records_.back().get();
  }

  std::vector<std::unique_ptr<T>> records_;  // every record made
  std::vector<T*> free_;                     // given back, to hand out again
};

}  // namespace taskgrid::data
