// The forms of taskgrid::submit, run for real, and task priorities end to
// end: results must be those of the tasks run in submission order.
//
//   submit(fn, accesses, args...)            default options
//   submit(fn, accesses, options, args...)   options first (also `{}`)
//   the same with a FunctionId instead of a function
//
// And enter_data_alloc (map(alloc:)): written first by a task, with and
// without a host buffer.
//
// Exits 0 and prints "submit_forms: ok" when every result is right.
#include <cstdint>
#include <cstdio>
#include <taskgrid/taskgrid.hpp>
#include <vector>

namespace {

// v = v * factor + add: the order of two tasks on one buffer shows.
void affine(taskgrid::TaskContext& ctx) {
  const auto factor = ctx.arg<int64_t>();
  const auto add = ctx.arg<int64_t>(sizeof(int64_t));
  auto* v = ctx.data_as<int64_t>(0);
  *v = *v * factor + add;
}
TASKGRID_REGISTER(affine);

// Checks that it was given no by-value arguments (an options object given
// alone must be taken as the options, not packed as an argument).
void no_args(taskgrid::TaskContext& ctx) {
  if (ctx.args_size() != 0) throw taskgrid::Error("no_args: got by-value arguments");
  *ctx.data_as<int64_t>(0) += 1;
}
TASKGRID_REGISTER(no_args);

// out int64: v = the argument (writes all of it, reads nothing).
void set_value(taskgrid::TaskContext& ctx) { *ctx.data_as<int64_t>(0) = ctx.arg<int64_t>(); }
TASKGRID_REGISTER(set_value);

// in a, out b: b = a.
void copy_value(taskgrid::TaskContext& ctx) {
  *ctx.data_as<int64_t>(1) = *ctx.data_as<const int64_t>(0);
}
TASKGRID_REGISTER(copy_value);

int failures = 0;

void expect(bool ok, const char* what, long long got, long long want) {
  if (ok) return;
  std::fprintf(stderr, "submit_forms: %s: got %lld, expected %lld\n", what, got, want);
  failures += 1;
}

}  // namespace

int main(int argc, char** argv) {
  taskgrid::start(&argc, &argv);
  const int ranks = taskgrid::num_ranks();
  const int64_t two = 2, three = 3, one = 1, zero = 0;

  // Every form on one buffer, in sequence: 1 -> 2*1+3 = 5 -> 3*5+1 = 16 ->
  // 2*16+0 = 32 -> 33 -> 34 -> 3*34+3 = 105 -> 106.
  int64_t value = 1;
  const auto h = taskgrid::enter_data(&value, sizeof value);
  taskgrid::submit(affine, {taskgrid::inout(h)}, two, three);      // no options
  taskgrid::submit(affine, {taskgrid::inout(h)}, {}, three, one);  // empty options, as before
  taskgrid::TaskOptions on_last;
  on_last.rank = ranks - 1;
  taskgrid::submit(affine, {taskgrid::inout(h)}, on_last, two, zero);
  taskgrid::submit(no_args, {taskgrid::inout(h)});           // no options, no arguments
  taskgrid::submit(no_args, {taskgrid::inout(h)}, on_last);  // options only
  const taskgrid::FunctionId affine_id = taskgrid::function_id(affine);
  taskgrid::submit(affine_id, {taskgrid::inout(h)}, three, three);  // FunctionId, no options
  taskgrid::submit(taskgrid::function_id(no_args), {taskgrid::inout(h)},
                   taskgrid::TaskOptions{.rank = 0, .name = "named no_args"});
  taskgrid::fetch(h);
  expect(value == 106, "the forms of submit in sequence", value, 106);

  // Priorities: chains (priorities must not reorder dependent tasks) and
  // independent tasks with priorities of both signs, on every rank.
  constexpr int kChains = 16, kSteps = 12;
  std::vector<int64_t> chain(kChains, 1), want(kChains, 1);
  std::vector<taskgrid::DataHandle> handles;
  for (int c = 0; c < kChains; ++c)
    handles.push_back(taskgrid::enter_data(&chain[static_cast<size_t>(c)], sizeof(int64_t)));
  for (int s = 0; s < kSteps; ++s) {
    for (int c = 0; c < kChains; ++c) {
      taskgrid::TaskOptions options;
      options.priority = (c * 5 + s * 3) % 9 - 4;
      options.rank = (c + s) % ranks;
      const int64_t factor = 1 + (c + s) % 3, add = c * 100 + s;
      taskgrid::submit(affine, {taskgrid::inout(handles[static_cast<size_t>(c)])}, options, factor,
                       add);
      want[static_cast<size_t>(c)] = want[static_cast<size_t>(c)] * factor + add;
    }
  }
  for (int c = 0; c < kChains; ++c) {
    taskgrid::exit_data(handles[static_cast<size_t>(c)]);
    expect(chain[static_cast<size_t>(c)] == want[static_cast<size_t>(c)], "a chain with priorities",
           static_cast<long long>(chain[static_cast<size_t>(c)]),
           static_cast<long long>(want[static_cast<size_t>(c)]));
  }
  taskgrid::exit_data(h);

  // enter_data_alloc (map(alloc:)): nothing is copied in; the first task
  // writes the data, later ones read it, fetch brings it home. With a null
  // host a fetch only waits, and the data still reaches other tasks.
  int64_t filled = -1;
  const auto allocated = taskgrid::enter_data_alloc(&filled, sizeof filled);
  taskgrid::submit(set_value, {taskgrid::out(allocated)}, on_last, int64_t{20});
  taskgrid::submit(affine, {taskgrid::inout(allocated)}, two, one);
  taskgrid::fetch(allocated);
  expect(filled == 41, "enter_data_alloc, written then updated", filled, 41);
  int64_t copied = 0;
  const auto nowhere = taskgrid::enter_data_alloc(nullptr, sizeof(int64_t));
  const auto copy = taskgrid::enter_data(&copied, sizeof copied);
  taskgrid::submit(set_value, {taskgrid::out(nowhere)}, on_last, int64_t{7});
  taskgrid::fetch(nowhere);  // no host buffer: waits, copies nothing
  taskgrid::submit(copy_value, {taskgrid::in(nowhere), taskgrid::out(copy)});
  taskgrid::exit_data(copy);
  expect(copied == 7, "enter_data_alloc with no host buffer, read by a task", copied, 7);
  taskgrid::release(nowhere);
  taskgrid::exit_data(allocated);

  if (failures == 0) std::printf("submit_forms: ok\n");
  return taskgrid::finish(failures == 0 ? 0 : 1);
}
