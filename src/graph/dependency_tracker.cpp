#include "graph/dependency_tracker.h"

#include <string>
#include <utility>

namespace taskgrid::graph {

DataHandle DependencyTracker::add_handle(void* host, size_t bytes, uint64_t initial_version) {
  handles_.push_back(HandleState{host, bytes, initial_version, 0, false});
  return DataHandle{handles_.size()};
}

HandleState& DependencyTracker::state(DataHandle handle) {
  return const_cast<HandleState&>(std::as_const(*this).state(handle));
}

const HandleState& DependencyTracker::state(DataHandle handle) const {
  if (handle.id == 0 || handle.id > handles_.size())
    throw Error("taskgrid: unknown data handle " + std::to_string(handle.id));
  const HandleState& s = handles_[handle.id - 1];
  if (s.released)
    throw Error("taskgrid: data handle " + std::to_string(handle.id) + " was released");
  return s;
}

void DependencyTracker::resolve(const DataAccess* accesses, size_t count, uint64_t& next_version,
                                std::vector<ResolvedAccess>& out) {
  out.resize(count);
  // Validate and read the current versions first, so that a read of a handle
  // the same task writes sees the version before the task.
  for (size_t i = 0; i < count; ++i) {
    const DataAccess& access = accesses[i];
    const HandleState& s = state(access.handle);
    const auto mode = static_cast<uint8_t>(access.mode);
    if (mode < 1 || mode > 3)
      throw Error("taskgrid: invalid access mode " + std::to_string(mode) + " for handle " +
                  std::to_string(access.handle.id));
    ResolvedAccess& r = out[i];
    r = ResolvedAccess{access.handle.id, access.mode, s.bytes, 0, 0, 0};
    if (access.mode != AccessMode::out) r.in_version = s.current_version;
    if (access.mode != AccessMode::in) {
      for (size_t j = 0; j < i; ++j) {
        if (out[j].handle == r.handle && out[j].mode != AccessMode::in)
          throw Error("taskgrid: a task writes data handle " + std::to_string(r.handle) +
                      " through two accesses; use one inout access");
      }
    }
  }
  for (ResolvedAccess& r : out) {
    if (r.mode == AccessMode::in) continue;
    HandleState& s = handles_[r.handle - 1];
    r.superseded = s.current_version;
    r.out_version = next_version++;
    s.current_version = r.out_version;
  }
}

uint64_t DependencyTracker::release(DataHandle handle) {
  HandleState& s = state(handle);
  s.released = true;
  return s.current_version;
}

}  // namespace taskgrid::graph
