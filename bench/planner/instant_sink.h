// A CommandSink that stands in for this rank's engine with one that takes no
// time: every task command addressed to this rank completes at once (its
// completion goes back to the planner at the next deliver(), outside the
// planner's lock, as the engine thread would), created buffers are freed, and
// everything else is counted and dropped. For the planner's benchmark and
// unit tests: the planner runs alone, without MPI or threads.
#pragma once

#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "comm/wire.h"
#include "core/command_sink.h"
#include "data/buffer_pool.h"

namespace taskgrid::bench {

class InstantSink final : public core::CommandSink {
 public:
  explicit InstantSink(int rank) : rank_(rank) {
    // Room for the completions of many batches up front: the stand-in engine
    // should not allocate while the planner's own allocations are counted
    // (tests/plan/test_plan_allocations.cpp).
    completed_.reserve(4096);
    delivering_.reserve(4096);
  }
  void set_listener(core::EngineListener* listener) { listener_ = listener; }

  std::vector<char> post(int dest, std::vector<char>&& batch) override {
    std::lock_guard lock(mutex_);  // the planner posts while an engine thread may deliver
    ++batches_;
    bytes_ += batch.size();
    if (dest != rank_) ++foreign_batches_;
    comm::wire::BatchReader reader(batch.data(), batch.size());
    comm::wire::Header header;
    const char* payload = nullptr;
    while (reader.next(header, payload)) {
      ++commands_;
      if (header.kind == comm::wire::Kind::task) {
        comm::wire::Task task;
        std::memcpy(&task, payload, sizeof task);
        ++tasks_;
        completed_.push_back(comm::wire::Completed{task.task_id, 0, task.completion_key});
      } else if (header.kind == comm::wire::Kind::create) {
        comm::wire::Create create;
        std::memcpy(&create, payload, sizeof create);
        data::release_buffer(create.buffer);
      }
    }
    batch.clear();  // handed back for the planner's next batch, as the engine does
    return std::move(batch);
  }
  void prepare_broadcast_group(const std::vector<int32_t>&, int) override {}

  // Reports the tasks completed so far (engine-thread side of the planner).
  void deliver() {
    if (!listener_) return;
    listener_->on_poll();
    {
      std::lock_guard lock(mutex_);
      delivering_.swap(completed_);
    }
    if (!delivering_.empty()) listener_->on_completed(delivering_.data(), delivering_.size());
    delivering_.clear();
  }

  // Read these when no planner thread is posting.
  uint64_t batches() const { return batches_; }
  uint64_t foreign_batches() const { return foreign_batches_; }
  uint64_t commands() const { return commands_; }
  uint64_t tasks() const { return tasks_; }
  uint64_t bytes() const { return bytes_; }

 private:
  const int rank_;
  core::EngineListener* listener_ = nullptr;
  std::mutex mutex_;  // guards completed_ and the counts
  std::vector<comm::wire::Completed> completed_;
  std::vector<comm::wire::Completed> delivering_;
  uint64_t batches_ = 0, foreign_batches_ = 0, commands_ = 0, tasks_ = 0, bytes_ = 0;
};

}  // namespace taskgrid::bench
