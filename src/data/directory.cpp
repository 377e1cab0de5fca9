#include "data/directory.h"

#include <stdexcept>
#include <string>

namespace taskgrid::data {

VersionInfo& Directory::add(uint64_t version, size_t bytes, int producer, double ready_at) {
  // Built with its holder list already on the pool: moving it in keeps the
  // pool (assigning a pool vector afterwards would not).
  auto [it, inserted] = versions_.try_emplace(
      version, VersionInfo{bytes, producer, std::pmr::vector<int>(1, producer, &memory_), ready_at});
  if (!inserted) throw std::logic_error("directory: version " + std::to_string(version) + " added twice");
  return it->second;
}

VersionInfo* Directory::find(uint64_t version) {
  auto it = versions_.find(version);
  return it == versions_.end() ? nullptr : &it->second;
}

const VersionInfo* Directory::find(uint64_t version) const {
  auto it = versions_.find(version);
  return it == versions_.end() ? nullptr : &it->second;
}

VersionInfo& Directory::at(uint64_t version) {
  VersionInfo* info = find(version);
  if (!info) throw std::logic_error("directory: version " + std::to_string(version) + " is not live");
  return *info;
}

void Directory::add_holder(uint64_t version, int rank) {
  VersionInfo& info = at(version);
  if (!info.holds(rank)) info.holders.push_back(rank);
}

void Directory::remove(uint64_t version, std::vector<int>& holders) {
  holders.clear();
  auto it = versions_.find(version);
  if (it == versions_.end()) return;
  holders.assign(it->second.holders.begin(), it->second.holders.end());
  versions_.erase(it);
}

}  // namespace taskgrid::data
