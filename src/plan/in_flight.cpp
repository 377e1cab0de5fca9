#include "plan/in_flight.h"

namespace taskgrid::plan {

InFlightTasks::~InFlightTasks() {
  records_.for_each([this](uint64_t, Record& record) { release_spill(record); });
}

void InFlightTasks::add(uint64_t key, uint32_t function, int rank, bool communicates,
                        const graph::ResolvedAccess* accesses, size_t count, bool on_device) {
  graph::HandleState** spill = nullptr;
  if (count > kInline)
    spill = static_cast<graph::HandleState**>(
        pool_.allocate(count * sizeof(graph::HandleState*), alignof(graph::HandleState*)));
  // Filled in place: the slot may hold a completed task's record.
  Record& record = records_.claim(key);
  record.function = function;
  record.rank = rank;
  record.count = static_cast<uint32_t>(count);
  record.communicates = communicates;
  record.on_device = on_device;
  record.spill = spill;
  graph::HandleState** handles = spill ? spill : record.inline_handles;
  uint64_t output_bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    handles[i] = accesses[i].state;
    if (accesses[i].out_version) output_bytes += accesses[i].bytes;
  }
  record.output_bytes = output_bytes;
  output_bytes_ += output_bytes;
  submitted_ += 1;
  if (communicates) communicating_ += 1;
}

void InFlightTasks::release_spill(Record& record) {
  if (!record.spill) return;
  pool_.deallocate(record.spill, record.count * sizeof(graph::HandleState*),
                   alignof(graph::HandleState*));
  record.spill = nullptr;
}

}  // namespace taskgrid::plan
