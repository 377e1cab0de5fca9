#include "runtime/watchdog.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>

#include "exec/running_task.h"
#include "trace/trace.h"

namespace taskgrid::runtime {
namespace {

std::string seconds_text(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", static_cast<double>(ns) * 1e-9);
  return text;
}

std::atomic<StoppedRankNote> stopped_rank_note{nullptr};

std::string note_on(int rank) {
  const StoppedRankNote note = stopped_rank_note.load();
  if (!note) return "";
  const std::string text = note(rank);
  return text.empty() ? "" : "; " + text;
}

}  // namespace

void set_stopped_rank_note(StoppedRankNote note) { stopped_rank_note.store(note); }

Watchdog::Watchdog(std::unique_ptr<comm::HeartbeatLink> link, const WatchdogConfig& config,
                   std::function<void(const std::string&)> fail)
    : link_(std::move(link)),
      fail_(std::move(fail)),
      timeout_ns_(static_cast<uint64_t>(config.timeout_seconds * 1e9)),
      deadline_ns_(static_cast<uint64_t>(config.task_deadline_seconds * 1e9)),
      bytes_arriving_from_(config.bytes_arriving_from) {
  if (link_ && link_->size() < 2) link_.reset();  // nobody to watch
  if (link_) {
    rank_ = link_->rank();
    predecessor_ = (rank_ + link_->size() - 1) % link_->size();
    successor_ = (rank_ + 1) % link_->size();
  }
  // Five beats per timeout: one late beat (a busy node) is no failure.
  period_ns_ = timeout_ns_ / 5;
  // Steps often enough to relay a detection promptly (the detector ends the
  // job 200 ms after telling the others) and to keep deadlines to ~10%.
  uint64_t tick = 50'000'000;
  if (timeout_ns_ > 0) tick = std::min(tick, period_ns_ / 2);
  if (deadline_ns_ > 0) tick = std::min(tick, std::max<uint64_t>(deadline_ns_ / 10, 1'000'000));
  tick_ns_ = std::max<uint64_t>(tick, 1'000'000);
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_signal_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::start() {
  if (!watching() && deadline_ns_ == 0) return;
  thread_ = std::thread([this] { loop(); });
}

void Watchdog::leave() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_signal_.notify_all();
  if (thread_.joinable()) thread_.join();
  // After the thread: the link is used by one thread at a time.
  say_leaving();
  // Receive the predecessor's last beats, up to its own `leaving` (messages
  // from one rank arrive in order), so that no beat is left unmatched at
  // MPI_Finalize. Bounded: it has passed the last collective too, so it says
  // it soon; a rank that never does is not worth a hang at the very end.
  const uint64_t give_up = trace::now_ns() + std::max<uint64_t>(timeout_ns_, 1'000'000'000);
  while (watching() && !predecessor_left_ && trace::now_ns() < give_up) {
    int source = -1;
    comm::HeartbeatMessage message;
    if (!link_->receive(source, message)) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    if (source == predecessor_ && message.kind == comm::HeartbeatMessage::leaving)
      predecessor_left_ = true;
  }
  link_.reset();
}

void Watchdog::say_leaving() {
  if (watching()) link_->send(successor_, {comm::HeartbeatMessage::leaving, rank_, 0});
}

void Watchdog::loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    const std::string failure = step(trace::now_ns());
    if (!failure.empty()) fail_(failure);
    lock.lock();
    stop_signal_.wait_for(lock, std::chrono::nanoseconds(tick_ns_), [this] { return stopping_; });
  }
}

std::string Watchdog::step(uint64_t now_ns) {
  if (!started_clock_) {
    started_clock_ = true;
    last_heard_ns_ = now_ns;
    next_beat_ns_ = now_ns;
  }
  std::string failure;
  if (watching()) failure = check_ring(now_ns);
  if (failure.empty() && deadline_ns_ > 0) failure = check_tasks(now_ns);
  return failure;
}

std::string Watchdog::check_ring(uint64_t now_ns) {
  using Message = comm::HeartbeatMessage;
  if (now_ns >= next_beat_ns_) {
    link_->send(successor_, {Message::alive, rank_, 0});
    next_beat_ns_ = now_ns + period_ns_;
  }
  int source = -1;
  Message message;
  while (link_->receive(source, message)) {
    switch (message.kind) {
      case Message::alive:
        if (source == predecessor_) last_heard_ns_ = now_ns;
        break;
      case Message::leaving:
        if (source == predecessor_) predecessor_left_ = true;
        break;
      case Message::stopped:
        return "rank " + std::to_string(message.rank) + " stopped responding (last heard " +
               seconds_text(static_cast<uint64_t>(message.silent_ms) * 1'000'000) +
               " s ago; detected by rank " + std::to_string(source) + note_on(message.rank) + ")";
      default:
        break;
    }
  }
  const uint64_t silent_ns = now_ns - last_heard_ns_;
  if (predecessor_left_ || silent_ns <= timeout_ns_) return "";
  // Its beats may be queued behind the data it is sending here.
  const uint64_t arriving = bytes_arriving_from_ ? bytes_arriving_from_(predecessor_) : 0;
  const uint64_t allowance_ns = static_cast<uint64_t>(
      static_cast<double>(arriving) * 1e9 / static_cast<double>(kSlowestLinkBytesPerSecond));
  if (silent_ns <= timeout_ns_ + allowance_ns) return "";
  // Tell every other survivor first: each then ends with the same words.
  const Message stopped{Message::stopped, predecessor_,
                        static_cast<int64_t>(silent_ns / 1'000'000)};
  for (int r = 0; r < link_->size(); ++r)
    if (r != rank_ && r != predecessor_) link_->send(r, stopped);
  // The allowance is named where it lengthened the wait noticeably.
  const std::string waited_for = allowance_ns >= 100'000'000
                                     ? " + " + seconds_text(allowance_ns) + " s for the " +
                                           std::to_string(arriving) + " bytes it was sending here"
                                     : "";
  return "rank " + std::to_string(predecessor_) + " stopped responding (last heard " +
         seconds_text(silent_ns) + " s ago; TASKGRID_FAILURE_TIMEOUT=" + seconds_text(timeout_ns_) +
         waited_for + note_on(predecessor_) + ")";
}

std::string Watchdog::check_tasks(uint64_t now_ns) {
  const exec::RunningTask* table = exec::running_task_table();
  for (size_t i = 0; i < exec::kMaxRunningTasks; ++i) {
    const exec::RunningTask& slot = table[i];
    if (!slot.claimed.load(std::memory_order_relaxed)) continue;
    const uint64_t task = slot.task_id.load(std::memory_order_acquire);
    const uint64_t started = slot.started_ns.load(std::memory_order_relaxed);
    if (!task || !started || now_ns < started || now_ns - started <= deadline_ns_) continue;
    const char* name = slot.name.load(std::memory_order_relaxed);
    return "task '" + std::string(name ? name : "?") + "' (id " + std::to_string(task) +
           ") has run for " + seconds_text(now_ns - started) +
           " s, past TASKGRID_TASK_DEADLINE=" + seconds_text(deadline_ns_) + " s";
  }
  return "";
}

}  // namespace taskgrid::runtime
