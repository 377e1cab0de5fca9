// A small task graph with a known shape, for the trace and DOT tests
// (tests/runtime/trace.cmake): taskgrid-trace-graph, any mode, 2+ ranks.
//
//   #1 set_value     out h0      rank 0
//   #2 set_value     out h1      rank 1
//   #3 add_into      inout h0, in h1   rank 1   (reads #1's h0, #2's h1)
//   #4 "check \xff"  in h0       rank 0   (reads #3's h0; the name is not UTF-8)
//
// so the dependencies are 1->3 (h0), 2->3 (h1), 3->4 (h0), and h0 and h1 travel
// between the ranks. Rank 0 prints "trace-graph: handles H0 H1" (the ids the
// DOT labels name). #4 fails the job unless h0 holds 2 + 3.
#include <cstdio>
#include <stdexcept>
#include <taskgrid/taskgrid.hpp>
#include <vector>

namespace {

constexpr size_t kValues = 256;

void set_value(taskgrid::TaskContext& ctx) {
  auto* values = ctx.data_as<double>(0);
  for (size_t i = 0; i < ctx.size(0) / sizeof(double); ++i) values[i] = ctx.arg<double>();
}

void add_into(taskgrid::TaskContext& ctx) {
  auto* into = ctx.data_as<double>(0);
  const auto* from = ctx.data_as<const double>(1);
  for (size_t i = 0; i < ctx.size(0) / sizeof(double); ++i) into[i] += from[i];
}

void check_sum(taskgrid::TaskContext& ctx) {
  const auto* values = ctx.data_as<const double>(0);
  for (size_t i = 0; i < ctx.size(0) / sizeof(double); ++i)
    if (values[i] != 5.0) throw std::runtime_error("h0 does not hold 2 + 3");
}

TASKGRID_REGISTER(set_value);
TASKGRID_REGISTER(add_into);
TASKGRID_REGISTER(check_sum);

int program(int, char**) {
  std::vector<double> a(kValues, 0.0);
  std::vector<double> b(kValues, 0.0);
  const taskgrid::DataHandle h0 = taskgrid::enter_data(a.data(), a.size() * sizeof(double), 0);
  const taskgrid::DataHandle h1 = taskgrid::enter_data(b.data(), b.size() * sizeof(double), 1);
  taskgrid::submit(set_value, {taskgrid::out(h0)}, taskgrid::TaskOptions{.rank = 0}, 2.0);
  taskgrid::submit(set_value, {taskgrid::out(h1)}, taskgrid::TaskOptions{.rank = 1}, 3.0);
  taskgrid::submit(add_into, {taskgrid::inout(h0), taskgrid::in(h1)},
                   taskgrid::TaskOptions{.rank = 1});
  taskgrid::submit(check_sum, {taskgrid::in(h0)},
                   taskgrid::TaskOptions{.rank = 0, .name = "check \xff sum"});
  taskgrid::wait_all();
  if (taskgrid::rank() == 0) {
    std::printf("trace-graph: handles %llu %llu\n", static_cast<unsigned long long>(h0.id),
                static_cast<unsigned long long>(h1.id));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return taskgrid::run(argc, argv, program, {.mode = taskgrid::Mode::from_environment});
}
