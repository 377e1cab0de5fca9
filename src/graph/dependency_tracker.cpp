#include "graph/dependency_tracker.h"

#include <string>
#include <utility>

namespace taskgrid::graph {

DataHandle DependencyTracker::add_handle(void* host, size_t bytes, uint64_t initial_version,
                                         int owner) {
  const uint64_t id = next_id_++;
  HandleState* state = states_.acquire();
  *state = HandleState{};
  state->id = id;
  state->host = host;
  state->bytes = bytes;
  state->current_version = initial_version;
  state->owner = owner;
  handles_.insert(id, state);
  return DataHandle{id};
}

void DependencyTracker::forget(HandleState* state) {
  handles_.erase(state->id);
  states_.release(state);
}

void DependencyTracker::throw_bad_handle(uint64_t id) const {
  // Ids are handed out in order: below next_id_, a handle not tracked (or
  // marked) is a released one.
  if (id == 0 || id >= next_id_) throw Error("taskgrid: unknown data handle " + std::to_string(id));
  throw Error("taskgrid: data handle " + std::to_string(id) + " was released");
}

HandleState& DependencyTracker::state(DataHandle handle) { return checked(handle.id); }

const HandleState& DependencyTracker::state(DataHandle handle) const {
  return const_cast<DependencyTracker*>(this)->checked(handle.id);
}

void DependencyTracker::reject(const DataAccess* accesses, size_t done,
                               const std::vector<ResolvedAccess>& resolved, uint64_t first_version,
                               uint64_t& next_version) const {
  for (size_t j = 0; j < done; ++j)
    if (resolved[j].out_version) resolved[j].state->current_version = resolved[j].superseded;
  next_version = first_version;
  const DataAccess& access = accesses[done];
  const HandleState* s = find(access.handle.id);
  if (!s || s->released) throw_bad_handle(access.handle.id);
  const auto mode = static_cast<unsigned>(access.mode);
  if (mode < 1 || mode > 3)
    throw Error("taskgrid: invalid access mode " + std::to_string(mode) + " for handle " +
                std::to_string(access.handle.id));
  throw Error("taskgrid: a task writes data handle " + std::to_string(access.handle.id) +
              " through two accesses; use one inout access");
}

void DependencyTracker::resolve(const DataAccess* accesses, size_t count, uint64_t& next_version,
                                std::vector<ResolvedAccess>& out) {
  if (out.size() != count) out.resize(count);
  ResolvedAccess* resolved = out.data();
  // One pass: a handle written by an earlier access of this task is stamped
  // with this call's number, so a later read of it still sees the version
  // before the task and a second write is caught. A rejected task is undone.
  const uint64_t stamp = ++resolves_;
  const uint64_t first_version = next_version;
  for (size_t i = 0; i < count; ++i) {
    const DataAccess& access = accesses[i];
    HandleState* s = find(access.handle.id);
    const AccessMode mode = access.mode;
    if (!s || s->released || static_cast<uint8_t>(mode) - 1u > 2u)
      reject(accesses, i, out, first_version, next_version);
    const bool written_here = s->written_by == stamp;
    ResolvedAccess& r = resolved[i];
    r.handle = access.handle.id;
    r.mode = mode;
    r.bytes = s->bytes;
    r.in_version = mode == AccessMode::out ? 0 : written_here ? s->before_task : s->current_version;
    r.owner = s->owner;
    r.state = s;
    if (mode == AccessMode::in) {
      r.out_version = 0;
      r.superseded = 0;
      continue;
    }
    if (written_here) reject(accesses, i, out, first_version, next_version);
    s->written_by = stamp;
    s->before_task = s->current_version;
    r.superseded = s->current_version;
    r.out_version = next_version++;
    s->current_version = r.out_version;
  }
}

uint64_t DependencyTracker::release(DataHandle handle) {
  HandleState& s = checked(handle.id);
  s.released = true;
  const uint64_t version = s.current_version;
  if (s.tasks_in_flight == 0) forget(&s);
  return version;
}

}  // namespace taskgrid::graph
