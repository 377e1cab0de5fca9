// Compiled only (never run): a TaskOptions given as a by-value task argument
// must not compile (tests/runtime/CMakeLists.txt, runtime.submit_compile.*).
// Without SUBMIT_MISTAKE the valid forms must compile (the check's control).
#include <taskgrid/taskgrid.hpp>

void task(taskgrid::TaskContext&) {}

void forms(taskgrid::DataHandle h, double x) {
  taskgrid::TaskOptions options;
  options.priority = 1;
  taskgrid::submit(task, {taskgrid::in(h)}, x);
  taskgrid::submit(task, {taskgrid::in(h)}, options, x);
  taskgrid::submit(task, {taskgrid::in(h)}, {}, x);
  taskgrid::submit(taskgrid::FunctionId{1}, {taskgrid::in(h)}, x);
  taskgrid::submit(taskgrid::FunctionId{1}, {taskgrid::in(h)}, options);
#ifdef SUBMIT_MISTAKE
  // The options a second time, where the arguments go.
  taskgrid::submit(task, {taskgrid::in(h)}, x, options);
#endif
}
