// Checked mode (TASKGRID_CHECK=1) end to end (taskgrid-checked-mode).
//
//   taskgrid-checked-mode <case> [rank]
//
// Each misuse case commits one mistake in a task placed on `rank`; in checked
// mode the job must end naming the task and the fault
// (tests/runtime/checked_mode.cmake). Unchecked, the mistakes go unnoticed
// as they always did: the program ends with "checked-mode: <case> done".
// `correct` is a program without mistakes: it prints the same result in
// both modes. The mode (cluster or spmd) comes from TASKGRID_MODE.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <taskgrid/taskgrid.hpp>
#include <vector>

namespace {

constexpr size_t kDoubles = 512;  // 4096 bytes

// Off by one: writes kDoubles + 1 values, the last 8 bytes past the end.
void stencil(taskgrid::TaskContext& ctx) {
  auto* v = ctx.data_as<double>(0);
  const size_t n = ctx.size(0) / sizeof(double);
  for (size_t i = 0; i <= n; ++i) v[i] = 1.5;
}
// 512 bytes past the end: beyond a guard zone.
void far_stencil(taskgrid::TaskContext& ctx) {
  auto* bytes = static_cast<unsigned char*>(ctx.data(0));
  const uint64_t value = 0x0123456789abcdefull;
  std::memcpy(bytes + ctx.size(0) + 512, &value, sizeof value);
}
// Writes to its `in` buffer (access 0) while summing it into access 1.
void reader(taskgrid::TaskContext& ctx) {
  auto* v = ctx.data_as<double>(0);
  double total = 0;
  for (size_t i = 0; i < ctx.size(0) / sizeof(double); ++i) total += v[i];
  v[3] = -1.0;
  *ctx.data_as<double>(1) = total;
}
// Submitted with a float, read as an int.
void scale(taskgrid::TaskContext& ctx) {
  const int factor = ctx.arg<int>();
  auto* v = ctx.data_as<double>(0);
  for (size_t i = 0; i < ctx.size(0) / sizeof(double); ++i) v[i] *= factor;
}

// The correct program's tasks: arguments of several types, every mode.
struct Shift {
  double add;
  int32_t every;
};
void fill(taskgrid::TaskContext& ctx) {
  const double first = ctx.arg<double>();
  const auto step = ctx.arg<uint64_t>(sizeof(double));
  auto* v = ctx.data_as<double>(0);
  for (size_t i = 0; i < ctx.size(0) / sizeof(double); ++i)
    v[i] = first + static_cast<double>(i % step);
}
void shift(taskgrid::TaskContext& ctx) {
  const auto how = ctx.arg<Shift>();
  const char tag = ctx.arg<char>(sizeof(Shift));
  auto* v = ctx.data_as<double>(0);
  for (size_t i = 0; i < ctx.size(0) / sizeof(double); i += static_cast<size_t>(how.every))
    v[i] += how.add + (tag == 's' ? 0.0 : 1000.0);
}
void sum(taskgrid::TaskContext& ctx) {
  const double* a = ctx.data_as<double>(0);
  const double* b = ctx.data_as<double>(1);
  double total = 0;
  for (size_t i = 0; i < ctx.size(0) / sizeof(double); ++i) total += a[i] * 2 + b[i];
  *ctx.data_as<double>(2) = total;
}

TASKGRID_REGISTER(stencil);
TASKGRID_REGISTER(far_stencil);
TASKGRID_REGISTER(reader);
TASKGRID_REGISTER(scale);
TASKGRID_REGISTER(fill);
TASKGRID_REGISTER(shift);
TASKGRID_REGISTER(sum);

double correct_program(int ranks) {
  double result = 0;
  std::vector<std::vector<double>> vectors(4, std::vector<double>(kDoubles));
  std::vector<taskgrid::DataHandle> handles;
  for (auto& v : vectors) handles.push_back(taskgrid::enter_data(v.data(), 4096));
  const auto total = taskgrid::enter_data(&result, sizeof result);
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < handles.size(); ++i) {
      taskgrid::TaskOptions on;
      on.rank = static_cast<int>(i) % ranks;
      taskgrid::submit(fill, {taskgrid::out(handles[i])}, on, 1.0 + round, uint64_t{7 + i});
      taskgrid::submit(shift, {taskgrid::inout(handles[i])}, on,
                       Shift{0.25 * static_cast<double>(i), 3}, 's');
    }
    taskgrid::submit(sum,
                     {taskgrid::in(handles[0]), taskgrid::in(handles[3]), taskgrid::inout(total)});
  }
  // To rank 0, which prints it (in spmd mode the owner may be another rank).
  taskgrid::exit_data(total, 0);
  for (auto h : handles) taskgrid::exit_data(h);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  taskgrid::start(&argc, &argv, taskgrid::Mode::from_environment);
  const std::string which = argc > 1 ? argv[1] : "";
  taskgrid::TaskOptions on;
  on.rank = (argc > 2 ? std::atoi(argv[2]) : 0) % taskgrid::num_ranks();
  std::vector<double> v(kDoubles, 1.0);
  double out = 0;
  const auto h = taskgrid::enter_data(v.data(), v.size() * sizeof(double));
  const auto r = taskgrid::enter_data(&out, sizeof out);
  if (which == "overrun8") {
    taskgrid::submit(stencil, {taskgrid::inout(h)}, on);
  } else if (which == "overrun512") {
    taskgrid::submit(far_stencil, {taskgrid::inout(h)}, on);
  } else if (which == "write_in") {
    taskgrid::submit(reader, {taskgrid::in(h), taskgrid::out(r)}, on);
  } else if (which == "arg_type") {
    taskgrid::submit(scale, {taskgrid::inout(h)}, on, 2.0f);
  } else if (which == "correct") {
    const double result = correct_program(taskgrid::num_ranks());
    if (taskgrid::rank() == 0) std::printf("checked-mode: correct result %.2f\n", result);
  } else {
    std::fprintf(stderr, "checked-mode: unknown case '%s'\n", which.c_str());
    return taskgrid::finish(1);
  }
  taskgrid::exit_data(r);
  taskgrid::exit_data(h);
  if (taskgrid::rank() == 0) std::printf("checked-mode: %s done\n", which.c_str());
  return taskgrid::finish(0);
}
