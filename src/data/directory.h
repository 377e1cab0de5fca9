// The head's directory: for each live data version, its size, the rank that
// produces it and the ranks that hold (or are about to receive) a replica.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <unordered_map>
#include <vector>

#include "data/node_pool.h"

namespace taskgrid::data {

struct VersionInfo {
  size_t bytes = 0;
  int producer = 0;
  std::pmr::vector<int> holders;  // ranks with a replica, present or in transit
  double ready_at = 0;            // scheduler's estimate (seconds, planner clock)
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
  // Forgets a version; `holders` receives the ranks that held it (to retire
  // it there). The caller's vector is reused: no allocation per version.
  void remove(uint64_t version, std::vector<int>& holders);
  size_t size() const { return versions_.size(); }

 private:
  // Entries and holder lists come from a pool: one version per task written
  // must not mean one heap allocation per task.
  NodePool memory_;
  std::pmr::unordered_map<uint64_t, VersionInfo> versions_{&memory_};
};

}  // namespace taskgrid::data
