// Completion records for the head (the planner that waits for them): this
// rank's own go straight to the listener when this rank is the head; other
// ranks batch them into control messages, sent when 4 KiB accumulate, when
// the oldest is 200 µs old (2 ms where ranks outnumber cores), or when the
// engine has nothing left that could add to the batch (Engine::settled: a
// head waiting for its last tasks gets them at once). They are off the
// critical path (data moves peer to peer).
#pragma once

#include <cstdint>
#include <vector>

#include "comm/transport.h"
#include "comm/wire.h"
#include "core/command_sink.h"
#include "engine/engine_stats.h"

namespace taskgrid::engine {

class CompletionBatcher {
 public:
  CompletionBatcher(comm::Transport& transport, int head_rank, EngineStats& stats)
      : transport_(transport), head_rank_(head_rank), stats_(stats) {}

  int head_rank() const { return head_rank_; }
  void add(const comm::wire::Completed& record);
  // Hands local records to `listener` and sends the batch when it is due
  // (or at once with `force`).
  void flush(core::EngineListener* listener, bool force);
  bool idle() const { return local_.empty() && batch_.empty(); }
  // Records waiting to be sent to another rank's head.
  bool has_batch() const { return !batch_.empty(); }

  static constexpr size_t kBatchBytes = 4096;
  static constexpr uint64_t kDelayNs = 200'000;
  // Where ranks outnumber cores (comm::Transport::oversubscribed): each
  // batch wakes the head, which may take a core from a rank with tasks. At
  // 3 ranks on 2 cores (cluster stencil, the head without tasks, 170 µs
  // tasks) 2 ms instead of 200 µs made the pass 1.15x faster.
  static constexpr uint64_t kSharedNodeDelayNs = 2'000'000;
  // The age is looked at on every fourth flush of a non-empty batch: a clock
  // read costs as much as a tenth of an idle engine pass, and a batch added
  // to in an active pass is flushed while its engine still spins (passes of
  // a microsecond or less), so it is late by a few passes at most.
  static constexpr int kFlushesPerClockRead = 4;
  // How old a batch may grow (tests: a delay that never passes leaves only
  // the size, the engine's settling and shutdown to send it).
  void set_delay_ns(uint64_t delay_ns) { delay_ns_ = delay_ns; }

 private:
  comm::Transport& transport_;
  const int head_rank_;
  EngineStats& stats_;
  std::vector<comm::wire::Completed> local_;  // this rank's, when it is the head
  comm::wire::BatchWriter batch_;
  uint64_t batch_since_ns_ = 0;
  uint64_t delay_ns_ = kDelayNs;
  int flushes_unclocked_ = 0;  // flushes since the age was last looked at
};

}  // namespace taskgrid::engine
