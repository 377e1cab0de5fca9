#include "runtime/crash_handlers.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "exec/running_task.h"

namespace taskgrid::runtime {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction previous[NSIG];
std::atomic<int> crash_rank{-1};

// Formatting without the heap or stdio: only async-signal-safe calls.
class Line {
 public:
  Line& text(const char* s) {
    while (s && *s && used_ < sizeof buffer_ - 1) buffer_[used_++] = *s++;
    return *this;
  }
  Line& number(uint64_t value) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value);
    while (n > 0 && used_ < sizeof buffer_ - 1) buffer_[used_++] = digits[--n];
    return *this;
  }
  Line& hex(uintptr_t value) {
    text("0x");
    char digits[20];
    int n = 0;
    do {
      digits[n++] = "0123456789abcdef"[value & 15];
      value >>= 4;
    } while (value);
    while (n > 0 && used_ < sizeof buffer_ - 1) buffer_[used_++] = digits[--n];
    return *this;
  }
  void write_out() {
    buffer_[used_++] = '\n';
    size_t done = 0;
    while (done < used_) {
      const ssize_t n = ::write(STDERR_FILENO, buffer_ + done, used_ - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
  }

 private:
  char buffer_[640];
  size_t used_ = 0;
};

const char* signal_name(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV (invalid memory access or stack overflow)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGFPE:
      return "SIGFPE (arithmetic error)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGABRT:
      return "SIGABRT (abort)";
    default:
      return "a fatal signal";
  }
}

void on_crash(int signal, siginfo_t* info, void*) {
  Line line;
  line.text("error: taskgrid: rank ").number(static_cast<uint64_t>(crash_rank.load()));
  line.text(": ").text(signal_name(signal));
  if ((signal == SIGSEGV || signal == SIGBUS) && info)
    line.text(" at address ").hex(reinterpret_cast<uintptr_t>(info->si_addr));
  // Only this thread's slot: claiming one here could allocate.
  const uint64_t task = exec::task_running_on_this_thread();
  if (task) {
    const exec::RunningTask* slot = exec::this_thread_running_task();
    line.text(" in task '").text(slot->name.load()).text("' (id ").number(task).text(")");
  } else {
    line.text(" outside any task (in the program or the runtime");
    // A task that wrote past its buffers corrupts the runtime's memory and
    // the crash comes later, here: name the suspect and the way to find it.
    // Only a slot already claimed: claiming one here could allocate.
    const exec::RunningTask* slot = exec::detail::slot_here;
    if (const uint64_t last = slot ? slot->last_task_id.load() : 0)
      line.text("; the last task on this thread was '")
          .text(slot->name.load())
          .text("' (id ")
          .number(last)
          .text(")");
    line.text("; if a task wrote outside its buffers, TASKGRID_CHECK=1 names it)");
  }
  line.write_out();
  // The handler that was there before (MPI's, or the default) takes over:
  // a fault re-executes and reaches it, an abort() raises again.
  sigaction(signal, &previous[signal], nullptr);
  if (signal == SIGABRT) raise(signal);
}

}  // namespace

void install_crash_handlers(int rank) {
  crash_rank.store(rank);
  static const bool installed = [] {
    for (int signal : kSignals) {
      struct sigaction action {};
      action.sa_sigaction = on_crash;
      action.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset(&action.sa_mask);
      sigaction(signal, &action, &previous[signal]);
    }
    return true;
  }();
  (void)installed;
}

}  // namespace taskgrid::runtime
