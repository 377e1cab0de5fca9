#include "data/directory.h"

#include <stdexcept>
#include <string>

namespace taskgrid::data {

VersionInfo& Directory::add(uint64_t version, size_t bytes, int producer, double ready_at) {
  auto [it, inserted] = versions_.try_emplace(version);
  if (!inserted) throw std::logic_error("directory: version " + std::to_string(version) + " added twice");
  it->second.bytes = bytes;
  it->second.producer = producer;
  it->second.holders = std::pmr::vector<int>(1, producer, &memory_);
  it->second.ready_at = ready_at;
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
