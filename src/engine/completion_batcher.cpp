#include "engine/completion_batcher.h"

namespace taskgrid::engine {

void CompletionBatcher::add(const comm::wire::Completed& record) {
  if (transport_.rank() == head_rank_) {
    local_.push_back(record);
    return;
  }
  if (batch_.empty()) batch_since_ns_ = transport_.now_ns();
  batch_.add(comm::wire::Kind::completed, record);
}

void CompletionBatcher::flush(core::EngineListener* listener, bool force) {
  if (!local_.empty()) {
    if (listener) listener->on_completed(local_.data(), local_.size());
    local_.clear();
  }
  if (batch_.empty()) return;
  bool due = force || batch_.size() >= kBatchBytes;
  if (!due && ++flushes_unclocked_ >= kFlushesPerClockRead) {
    flushes_unclocked_ = 0;
    due = transport_.now_ns() - batch_since_ns_ >= delay_ns_;
  }
  if (!due) return;
  flushes_unclocked_ = 0;
  stats_.control_messages_sent += 1;
  stats_.control_bytes_sent += batch_.size();
  transport_.send_control(head_rank_, std::move(batch_.bytes()));
  batch_.bytes() = {};
}

}  // namespace taskgrid::engine
