#include "plan/batches.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "trace/trace.h"

namespace taskgrid::plan {

CommandBatches::CommandBatches(core::CommandSink& sink, int ranks, int only_rank,
                               size_t flush_bytes)
    : sink_(sink),
      only_rank_(only_rank),
      flush_bytes_(flush_bytes),
      batches_(only_rank < 0 ? static_cast<size_t>(ranks) : 1) {
  touched_.reserve(batches_.size());
  open_.reserve(batches_.size());
}

void CommandBuffer::add_task(const comm::wire::Task& task, const comm::wire::Access* accesses,
                             const void* args, const char* name) {
  const size_t at = add_task_without_accesses(task, args, name);
  if (task.num_accesses)
    std::memcpy(bytes_.data() + at, accesses, task.num_accesses * sizeof(comm::wire::Access));
}

size_t CommandBuffer::add_task_without_accesses(const comm::wire::Task& task, const void* args,
                                                const char* name) {
  const size_t access_bytes = task.num_accesses * sizeof(comm::wire::Access);
  const size_t body = sizeof task + access_bytes + task.args_bytes + task.name_bytes;
  const comm::wire::Header header{comm::wire::Kind::task, {}, static_cast<uint32_t>(body)};
  char* out = extend(sizeof header + body);
  std::memcpy(out, &header, sizeof header);
  out += sizeof header;
  std::memcpy(out, &task, sizeof task);
  out += sizeof task;
  const size_t accesses_at = static_cast<size_t>(out - bytes_.data());
  out += access_bytes;
  if (task.args_bytes) std::memcpy(out, args, task.args_bytes);
  out += task.args_bytes;
  if (task.name_bytes) std::memcpy(out, name, task.name_bytes);
  return accesses_at;
}

void CommandBuffer::grow(size_t bytes) { bytes_.resize(used_ + std::max(bytes, kGrowBytes)); }

void CommandBuffer::refill(std::vector<char>&& spare, size_t reserve) {
  bytes_ = std::move(spare);
  bytes_.clear();
  used_ = 0;
  if (bytes_.capacity() < reserve) bytes_.reserve(reserve);
}

void CommandBatches::end_of_submission() {
  uint64_t now_ns = 0;
  for (size_t index : touched_) {
    Batch& batch = batches_[index];
    batch.touched = false;
    if (batch.buffer.empty()) continue;
    if (batch.since_ns == 0) {
      if (now_ns == 0) now_ns = trace::now_ns();
      batch.since_ns = now_ns;
      batch.open_index = open_.size();
      open_.push_back(index);
    }
    if (batch.buffer.size() >= flush_bytes_) flush_index(index);
  }
  touched_.clear();
}

void CommandBatches::flush_older_than(uint64_t now_ns, uint64_t max_age_ns) {
  // flush_index removes the batch from open_ (the last one moves into its
  // place), so walk from the back.
  for (size_t i = open_.size(); i-- > 0;) {
    const size_t index = open_[i];
    if (now_ns - batches_[index].since_ns >= max_age_ns) flush_index(index);
  }
}

void CommandBatches::flush(int rank) { flush_index(index_of(rank)); }

void CommandBatches::flush_all() {
  for (size_t index = 0; index < batches_.size(); ++index) flush_index(index);
}

void CommandBatches::flush_all_but_then(int last) {
  for (size_t index = 0; index < batches_.size(); ++index)
    if (rank_of(index) != last) flush_index(index);
  if (emits_for(last)) flush(last);
}

void CommandBatches::flush_index(size_t index) {
  Batch& batch = batches_[index];
  if (batch.since_ns != 0) {
    // Out of the open list: the last entry takes its place.
    const size_t last = open_.back();
    open_[batch.open_index] = last;
    batches_[last].open_index = batch.open_index;
    open_.pop_back();
    batch.since_ns = 0;
  }
  if (batch.buffer.empty()) return;
  batch.buffer.refill(sink_.post(rank_of(index), batch.buffer.take()), flush_bytes_ + 1024);
}

}  // namespace taskgrid::plan
