// CommandBatches: the planner's outgoing command batches, one per rank it
// emits for (every rank in cluster mode, only its own in spmd mode). Owns the
// batch buffers and their ages, and decides when each goes to the sink: when
// it reaches its size limit, when it is older than the age limit (checked by
// the engine loop's poll), or when the planner asks (a wait, a broadcast, the
// shutdown). Work per submission depends on the ranks the submission touched,
// not on the job's size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "comm/wire.h"
#include "core/command_sink.h"

namespace taskgrid::plan {

// One rank's batch being built: the bytes comm::wire::BatchWriter writes (the wire
// format), each command's room taken at once and its pieces copied in. The
// vector grows (zero-filled) kGrowBytes at a time, not per command: a resize
// per command, an out-of-line call and a small memset, cost about 70
// instructions per task, the steps about 20. Not larger steps: a large
// memset may become `rep stosb`, which callgrind counts once per byte.
class CommandBuffer {
 public:
  bool empty() const { return used_ == 0; }
  size_t size() const { return used_; }
  const char* data() const { return bytes_.data(); }

  template <typename T>
  void add(comm::wire::Kind kind, const T& body, const void* extra = nullptr,
           size_t extra_bytes = 0) {
    const comm::wire::Header header{kind, {}, static_cast<uint32_t>(sizeof(T) + extra_bytes)};
    char* out = extend(sizeof header + sizeof(T) + extra_bytes);
    std::memcpy(out, &header, sizeof header);
    std::memcpy(out + sizeof header, &body, sizeof(T));
    if (extra_bytes) std::memcpy(out + sizeof header + sizeof(T), extra, extra_bytes);
  }
  // A task: header, Task, accesses, args, name.
  void add_task(const comm::wire::Task& task, const comm::wire::Access* accesses, const void* args,
                const char* name);
  // A task whose task.num_accesses accesses the caller writes afterwards with
  // set_access(returned offset, i, access), before anything else is added to
  // this buffer: the planner fills them in as it routes the inputs, without
  // building them elsewhere first.
  size_t add_task_without_accesses(const comm::wire::Task& task, const void* args,
                                   const char* name);
  void set_access(size_t task_offset, size_t i, const comm::wire::Access& access) {
    std::memcpy(bytes_.data() + task_offset + i * sizeof access, &access, sizeof access);
  }
  // The batch for the sink, which takes its buffer.
  std::vector<char> take() {
    bytes_.resize(used_);  // shrinks: nothing to fill
    used_ = 0;
    return std::move(bytes_);
  }
  // The buffer for the next batch: `spare` (a buffer the sink is done with),
  // emptied, with room for `reserve` bytes, so that it does not grow by doubling.
  void refill(std::vector<char>&& spare, size_t reserve);

 private:
  // Room for `bytes` more at the end: returns where they go.
  char* extend(size_t bytes) {
    const size_t at = used_;
    if (bytes > bytes_.size() - at) grow(bytes);
    used_ = at + bytes;
    return bytes_.data() + at;
  }
  void grow(size_t bytes);
  static constexpr size_t kGrowBytes = 2048;

  std::vector<char> bytes_;  // [0, used_) is the batch; the rest is room
  size_t used_ = 0;
};

class CommandBatches {
 public:
  // `only_rank` >= 0: batches for that rank only (spmd); -1: for all `ranks`.
  CommandBatches(core::CommandSink& sink, int ranks, int only_rank, size_t flush_bytes);

  // Commands for `rank` are built only where they will run.
  bool emits_for(int rank) const { return only_rank_ < 0 || rank == only_rank_; }
  // The batch of `rank` (emits_for(rank) must hold). Marks it touched: the
  // next end_of_submission() looks at it.
  CommandBuffer& to(int rank) {
    Batch& batch = batches_[index_of(rank)];
    if (!batch.touched) {
      batch.touched = true;
      touched_.push_back(index_of(rank));
    }
    return batch.buffer;
  }
  void add_task(int rank, const comm::wire::Task& task, const comm::wire::Access* accesses,
                const void* args, const char* name) {
    to(rank).add_task(task, accesses, args, name);
  }

  // After each submission: starts the age clock of batches that became
  // non-empty (reading the clock only then) and flushes those past the size
  // limit.
  void end_of_submission();
  // Flushes batches older than `max_age_ns` (the engine loop's poll).
  void flush_older_than(uint64_t now_ns, uint64_t max_age_ns);
  void flush(int rank);
  void flush_all();
  // Every emitting rank's batch, `last` last (a rank whose engine may stop
  // once it applies its batch must find every other one posted already).
  void flush_all_but_then(int last);

  bool empty(int rank) const { return batches_[index_of(rank)].buffer.empty(); }
  // Some batch has an age (flush_older_than has something to look at).
  bool any_open() const { return !open_.empty(); }
  size_t flush_bytes() const { return flush_bytes_; }

 private:
  struct Batch {
    CommandBuffer buffer;
    uint64_t since_ns = 0;  // when it became non-empty; 0: empty or not yet stamped
    bool touched = false;   // in touched_
    size_t open_index = 0;  // position in open_ while since_ns != 0
  };
  size_t index_of(int rank) const { return static_cast<size_t>(only_rank_ < 0 ? rank : 0); }
  int rank_of(size_t index) const { return only_rank_ < 0 ? static_cast<int>(index) : only_rank_; }
  void flush_index(size_t index);

  core::CommandSink& sink_;
  const int only_rank_;
  const size_t flush_bytes_;
  std::vector<Batch> batches_;
  std::vector<size_t> touched_;  // batches added to since the last end_of_submission
  std::vector<size_t> open_;     // batches with an age (non-empty, stamped)
};

}  // namespace taskgrid::plan
