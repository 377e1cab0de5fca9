// CPU worker threads. The engine hands them ready tasks (run by priority,
// exec/ready_queue.h) and gets them back finished; it never blocks on them.
// With TASKGRID_THREADS=1 there are no workers: the engine thread runs tasks
// itself between polls.
//
// The hand-off takes no lock on its common path: ready tasks of priority 0
// go through a lock-free ring (exec/task_ring.h), finished ones onto a
// lock-free stack the engine empties in one exchange, and a worker waits on
// a sequence word (comm::SleepWord) that a push bumps. One lock for them
// all, taken four times per task, cost a task of one microsecond or less
// several times its own length at one rank with two threads: the lock's
// cache line went back and forth between the cores at every step. Tasks
// with a priority, and what overflows the ring, still queue under a lock.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "comm/blocking.h"
#include "comm/futex_lock.h"
#include "comm/transport.h"
#include "exec/ready_queue.h"
#include "exec/task_ring.h"

namespace taskgrid::exec {

template <typename Task>
class WorkerPool {
 public:
  using Runner = std::function<void(Task*)>;
  using OnFinished = std::function<void()>;  // wakes the engine
  // How a worker thread is started: through the transport seam.
  using StartThread = std::function<std::unique_ptr<comm::Thread>(std::function<void()>)>;

  // Threads wait for tasks through `blocking`, the seam's (transport.h),
  // spinning `spin_ns` before each sleep (0: none; see Condition::wait).
  WorkerPool(int threads, Runner run, OnFinished on_finished, const StartThread& start_thread,
             comm::Blocking& blocking = comm::system_blocking(), uint64_t spin_ns = 0)
      : run_(std::move(run)),
        on_finished_(std::move(on_finished)),
        mutex_(blocking),
        ready_signal_(blocking),
        spin_ns_(spin_ns) {
    for (int i = 0; i < threads; ++i) threads_.push_back(start_thread([this] { work(); }));
  }
  ~WorkerPool() { stop(); }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(threads_.size()); }

  void push(Task* task) {
    // Tasks with a priority go under the lock, where the heap orders them;
    // so do plain ones while the ring is full or what overflowed it is
    // still queued (they would overtake it).
    if (task->priority != 0 || overflowed_.load(std::memory_order_acquire) > 0 ||
        !ring_.try_push(task)) {
      std::lock_guard lock(mutex_);
      locked_.push(task);
      count_locked(task, +1);
    }
    ready_signal_.notify_one();
  }
  // Takes a ready task for a thread that is not a worker (the engine thread
  // helps when it is idle); nullptr when none. With `leave_to_waiting`, also
  // when no more are ready than workers wait for: a helper inside a task
  // polls nothing, so while data is on its way it leaves a waiting worker the
  // tasks that worker can take and stays free to take the data in.
  Task* try_pop(bool leave_to_waiting = false) {
    if (leave_to_waiting) {
      const size_t ready = ring_.approximate_size() + locked_size_.load(std::memory_order_acquire);
      if (ready <= waiting_.load(std::memory_order_acquire)) return nullptr;
    }
    return pop();
  }
  // Moves the finished tasks into `out` (engine thread), in the order they
  // finished.
  void take_finished(std::vector<Task*>& out) {
    Task* task = finished_.exchange(nullptr, std::memory_order_acquire);
    const size_t first = out.size();
    for (; task; task = task->next_finished) out.push_back(task);
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
  }
  void finished(Task* task) {
    task->next_finished = finished_.load(std::memory_order_relaxed);
    while (!finished_.compare_exchange_weak(task->next_finished, task, std::memory_order_release,
                                            std::memory_order_relaxed)) {
    }
    on_finished_();
  }
  void stop() {
    stopping_.store(true);
    ready_signal_.notify_all();
    for (auto& thread : threads_) thread->join();
    threads_.clear();
  }

 private:
  // The next ready task: one with a positive priority first, then the ring,
  // then the rest under the lock (what overflowed, the negative priorities).
  Task* pop() {
    if (urgent_.load(std::memory_order_acquire) > 0)
      if (Task* task = pop_locked()) return task;
    if (Task* task = ring_.try_pop()) return task;
    if (locked_size_.load(std::memory_order_acquire) > 0) return pop_locked();
    return nullptr;
  }
  Task* pop_locked() {
    std::lock_guard lock(mutex_);
    Task* task = locked_.pop();
    if (task) count_locked(task, -1);
    return task;
  }
  // Under the lock: the counts the lock-free paths look at.
  void count_locked(const Task* task, int change) {
    const auto delta = static_cast<size_t>(static_cast<std::ptrdiff_t>(change));
    locked_size_.fetch_add(delta, std::memory_order_release);
    if (task->priority > 0) urgent_.fetch_add(delta, std::memory_order_release);
    if (task->priority == 0) overflowed_.fetch_add(delta, std::memory_order_release);
  }

  void work() {
    while (Task* task = next_task()) {
      run_(task);
      finished(task);
    }
  }
  // Waits through the seam until a task is ready (nullptr: stopping). The
  // sequence is read before the last look at the queues: a push after that
  // look moves it, so the spin sees it or the sleep returns at once (a push
  // that finds this worker registered also wakes it).
  Task* next_task() {
    if (Task* task = pop()) return task;
    waiting_.fetch_add(1);
    Task* task = nullptr;
    for (;;) {
      const uint32_t seen = ready_signal_.sequence();
      if ((task = pop()) || stopping_.load()) break;
      ready_signal_.wait_from(seen, spin_ns_);
    }
    waiting_.fetch_sub(1);
    return task;
  }

  static constexpr size_t kRingSlots = 1024;  // more ready at once go under the lock
  Runner run_;
  OnFinished on_finished_;
  TaskRing<Task> ring_{kRingSlots};
  comm::FutexLock mutex_;  // over locked_
  ReadyQueue<Task> locked_;
  std::atomic<size_t> locked_size_{0};  // tasks in locked_
  std::atomic<size_t> urgent_{0};       // ... of a positive priority
  std::atomic<size_t> overflowed_{0};   // ... of priority 0
  comm::SleepWord ready_signal_;
  uint64_t spin_ns_;
  std::atomic<Task*> finished_{nullptr};  // a stack through Task::next_finished
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> waiting_{0};  // workers in (or about to leave) the wait for a task
  std::vector<std::unique_ptr<comm::Thread>> threads_;
};

}  // namespace taskgrid::exec
