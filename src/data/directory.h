// The head's directory: for each live data version, its size, the rank that
// produces it and the ranks that hold (or are about to receive) a replica.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace taskgrid::data {

struct VersionInfo {
  size_t bytes = 0;
  int producer = 0;
  std::vector<int> holders;  // ranks with a replica, present or in transit
  double ready_at = 0;       // scheduler's estimate (seconds, planner clock)
  bool holds(int rank) const {
    for (int r : holders)
      if (r == rank) return true;
    return false;
  }
};

class Directory {
 public:
  VersionInfo& add(uint64_t version, size_t bytes, int producer, double ready_at);
  // nullptr when the version is not live.
  VersionInfo* find(uint64_t version);
  const VersionInfo* find(uint64_t version) const;
  VersionInfo& at(uint64_t version);
  void add_holder(uint64_t version, int rank);
  // Forgets a version; returns the ranks that held it (to retire it there).
  std::vector<int> remove(uint64_t version);
  size_t size() const { return versions_.size(); }

 private:
  std::unordered_map<uint64_t, VersionInfo> versions_;
};

}  // namespace taskgrid::data
