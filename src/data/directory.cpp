#include "data/directory.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace taskgrid::data {

void RankList::grow() {
  const uint32_t capacity = (capacity_ > kInline ? capacity_ : kInline) * 2;
  int* heap = new int[capacity];
  std::copy(begin(), end(), heap);
  if (capacity_ > kInline) delete[] heap_;
  heap_ = heap;
  capacity_ = capacity;
}

VersionInfo& Directory::add(uint64_t version, size_t bytes, int producer, double ready_at) {
  // Filled in place: the slot may hold a removed version's entry.
  VersionInfo& info = versions_.claim(version);
  info.bytes = bytes;
  info.producer = producer;
  info.holders.clear();
  info.holders.push_back(producer);
  info.ready_at = ready_at;
  return info;
}

void Directory::not_live(uint64_t version) {
  throw std::logic_error("directory: version " + std::to_string(version) + " is not live");
}

void Directory::add_holder(uint64_t version, int rank) {
  VersionInfo& info = at(version);
  if (!info.holds(rank)) info.holders.push_back(rank);
}

void Directory::remove(uint64_t version, std::vector<int>& holders) {
  holders.clear();
  remove_each(version, [&](int rank) { holders.push_back(rank); });
}

}  // namespace taskgrid::data
