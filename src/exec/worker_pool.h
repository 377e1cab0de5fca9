// CPU worker threads. The engine hands them ready tasks (run by priority,
// exec/ready_queue.h) and gets them back finished; it never blocks on them.
// With TASKGRID_THREADS=1 there are no workers: the engine thread runs tasks
// itself between polls.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "comm/blocking.h"
#include "comm/futex_lock.h"
#include "comm/transport.h"
#include "exec/ready_queue.h"

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
    {
      std::lock_guard lock(mutex_);
      ready_.push(task);
    }
    ready_signal_.notify_one();
  }
  // Takes a ready task for a thread that is not a worker (the engine thread
  // helps when it is idle); nullptr when none. With `leave_to_waiting`, also
  // when no more are ready than workers wait for: a helper inside a task
  // polls nothing, so while data is on its way it leaves a waiting worker the
  // tasks that worker can take and stays free to take the data in.
  Task* try_pop(bool leave_to_waiting = false) {
    std::lock_guard lock(mutex_);
    if (leave_to_waiting && ready_.size() <= waiting_) return nullptr;
    return ready_.pop();
  }
  // Moves the finished tasks into `out` (engine thread).
  void take_finished(std::vector<Task*>& out) {
    std::lock_guard lock(mutex_);
    out.insert(out.end(), finished_.begin(), finished_.end());
    finished_.clear();
  }
  void finished(Task* task) {
    {
      std::lock_guard lock(mutex_);
      finished_.push_back(task);
    }
    on_finished_();
  }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_signal_.notify_all();
    for (auto& thread : threads_) thread->join();
    threads_.clear();
  }

 private:
  void work() {
    for (;;) {
      Task* task = nullptr;
      {
        std::unique_lock lock(mutex_);
        waiting_ += 1;
        ready_signal_.wait(
            lock, [this] { return stopping_ || !ready_.empty(); }, spin_ns_);
        waiting_ -= 1;
        task = ready_.pop();
        if (!task) return;
      }
      run_(task);
      finished(task);
    }
  }

  Runner run_;
  OnFinished on_finished_;
  comm::FutexLock mutex_;
  comm::Condition ready_signal_;
  uint64_t spin_ns_;
  ReadyQueue<Task> ready_;  // highest priority first, FIFO among equals
  std::vector<Task*> finished_;
  bool stopping_ = false;
  size_t waiting_ = 0;  // workers in (or about to leave) the wait for a task
  std::vector<std::unique_ptr<comm::Thread>> threads_;
};

}  // namespace taskgrid::exec
