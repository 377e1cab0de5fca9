// Compiled only (never run): a TaskOptions given as a by-value task argument
// must not compile (tests/runtime/CMakeLists.txt, runtime.submit_compile.*),
// nor arguments larger than taskgrid::max_task_args_bytes (SUBMIT_TOO_LARGE).
// Without the macros the valid forms must compile (the checks' control),
// arguments of exactly the limit among them.
#include <taskgrid/taskgrid.hpp>

void task(taskgrid::TaskContext&) {}

struct AtTheLimit {
  char bytes[taskgrid::max_task_args_bytes];
};
struct PastTheLimit {
  char bytes[16 << 20];  // 16 MiB: it used to overflow the submitting thread's stack
};

void forms(taskgrid::DataHandle h, double x) {
  taskgrid::TaskOptions options;
  options.priority = 1;
  taskgrid::submit(task, {taskgrid::in(h)}, x);
  taskgrid::submit(task, {taskgrid::in(h)}, options, x);
  taskgrid::submit(task, {taskgrid::in(h)}, {}, x);
  taskgrid::submit(taskgrid::FunctionId{1}, {taskgrid::in(h)}, x);
  taskgrid::submit(taskgrid::FunctionId{1}, {taskgrid::in(h)}, options);
  taskgrid::submit(task, {taskgrid::in(h)}, AtTheLimit{});
#ifdef SUBMIT_TOO_LARGE
  taskgrid::submit(task, {taskgrid::in(h)}, PastTheLimit{});
#endif
#ifdef SUBMIT_MISTAKE
  // The options a second time, where the arguments go.
  taskgrid::submit(task, {taskgrid::in(h)}, x, options);
#endif
}
