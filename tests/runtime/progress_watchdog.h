// A thread that aborts the process when the test program stops making
// progress, naming the last operation it reported: a hang in a multi-rank
// test ends with a message a bug report can use instead of a CTest timeout.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace taskgrid::testing {

class ProgressWatchdog {
 public:
  // Aborts after `seconds` without progress(), printing "<program>: HANG: no
  // progress for N s at <where><hint>".
  ProgressWatchdog(int seconds, std::string program, std::string hint = {})
      : seconds_(seconds),
        program_(std::move(program)),
        hint_(std::move(hint)),
        thread_([this] { watch(); }) {}
  ProgressWatchdog(const ProgressWatchdog&) = delete;
  ProgressWatchdog& operator=(const ProgressWatchdog&) = delete;
  ~ProgressWatchdog() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  void progress(std::string where) {
    std::lock_guard lock(mutex_);
    where_ = std::move(where);
    ++ticks_;
  }

 private:
  void watch() {
    std::unique_lock lock(mutex_);
    uint64_t seen = ticks_;
    auto since = std::chrono::steady_clock::now();
    while (!stop_) {
      changed_.wait_for(lock, std::chrono::milliseconds(250));
      if (ticks_ != seen) {
        seen = ticks_;
        since = std::chrono::steady_clock::now();
      } else if (!stop_ &&
                 std::chrono::steady_clock::now() - since > std::chrono::seconds(seconds_)) {
        std::fprintf(stderr, "%s: HANG: no progress for %d s at %s%s\n", program_.c_str(), seconds_,
                     where_.c_str(), hint_.c_str());
        std::fflush(stderr);
        std::abort();
      }
    }
  }

  const int seconds_;
  const std::string program_;
  const std::string hint_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string where_ = "start";
  uint64_t ticks_ = 0;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace taskgrid::testing
