// Programs that misuse TaskGrid or fail inside it (taskgrid-error-cases).
//
//   taskgrid-error-cases <case> [rank]
//
// Each case must end the job quickly with a non-zero status and a message
// that says what went wrong; tests/runtime/error_cases.cmake runs them under
// mpiexec through expect_failure.py, which also fails a case that hangs.
// Errors the API reports by throwing taskgrid::Error are caught here: the
// program prints "caught: <what>", calls finish() and exits 3. A case that
// unexpectedly succeeds prints "error-cases: no error" and exits 0, which the
// driver counts as a failure. The "uncaught_" cases do not catch the error:
// the runtime must end the job with "error: taskgrid: rank R: ..." and status 2.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <taskgrid/device.hpp>
#include <taskgrid/taskgrid.hpp>
#include <thread>
#include <vector>

// Never registered; external linkage and ENABLE_EXPORTS (error_cases.cmake)
// let the runtime name it in the error.
void unregistered_task(taskgrid::TaskContext&) {}

namespace {

constexpr int kCaught = 3;

void throwing_task(taskgrid::TaskContext&) { throw std::runtime_error("boom"); }
void bad_index_task(taskgrid::TaskContext& ctx) {
  // One access: index 7 does not exist.
  static_cast<char*>(ctx.data(7))[0] = 1;
}
void exiting_task(taskgrid::TaskContext&) { std::exit(0); }
// Internal linkage: no symbol the dynamic linker knows, so only its address.
void hidden_unregistered_task(taskgrid::TaskContext&) {}
void touch_task(taskgrid::TaskContext& ctx) {
  auto* bytes = static_cast<unsigned char*>(ctx.data(0));
  for (size_t i = 0; i < ctx.size(0); ++i) bytes[i] = static_cast<unsigned char>(bytes[i] + 1);
}

// About 20 ms of arithmetic on a block of doubles (the many_threads case).
void busy_task(taskgrid::TaskContext& ctx) {
  auto* values = ctx.data_as<double>(0);
  const size_t count = ctx.size(0) / sizeof(double);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  double x = 1.0;
  while (std::chrono::steady_clock::now() < until)
    for (int i = 0; i < 1000; ++i) x = x * 0.999999 + 1e-9;
  for (size_t i = 0; i < count; ++i) values[i] += 1.0 + (x > 0 ? 0.0 : 1.0);
}
TASKGRID_REGISTER(busy_task);

// Crashes and stops inside a task: the job ends naming the rank and the task.
void segfault_task(taskgrid::TaskContext&) {
  volatile int* nowhere = nullptr;
  *nowhere = 1;
}
void abort_task(taskgrid::TaskContext&) { std::abort(); }
// Deep enough to overflow any task thread's stack (the flag stops it only
// for the compiler, which would otherwise see endless recursion).
volatile bool keep_recursing = true;
int recurse(int depth) {
  volatile char frame[1024];
  frame[0] = static_cast<char>(depth);
  return (keep_recursing ? recurse(depth + 1) : 0) + frame[0];
}
void stack_overflow_task(taskgrid::TaskContext&) { std::printf("%d\n", recurse(0)); }
void stop_rank_task(taskgrid::TaskContext&) { raise(SIGSTOP); }
void endless_task(taskgrid::TaskContext&) {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}
// Calls that deadlock or diverge inside a task: refused alike on every rank.
void wait_all_task(taskgrid::TaskContext&) { taskgrid::wait_all(); }
void submit_task(taskgrid::TaskContext& ctx);

TASKGRID_REGISTER(throwing_task);
TASKGRID_REGISTER(segfault_task);
TASKGRID_REGISTER(abort_task);
TASKGRID_REGISTER(stack_overflow_task);
TASKGRID_REGISTER(stop_rank_task);
TASKGRID_REGISTER(endless_task);
TASKGRID_REGISTER(wait_all_task);
TASKGRID_REGISTER(submit_task);
TASKGRID_REGISTER(bad_index_task);
TASKGRID_REGISTER(exiting_task);
TASKGRID_REGISTER(touch_task);

void submit_task(taskgrid::TaskContext&) {
  taskgrid::submit(touch_task, {taskgrid::inout(taskgrid::DataHandle{1})}, {});
}

// Device tasks (run with TASKGRID_DEVICE=emulated, or none for the CPU
// implementations). device_add adds its argument to every double of its
// buffer; on the emulated device as host work on the task's stream.
void add_on_cpu(taskgrid::TaskContext& ctx) {
  auto* values = ctx.data_as<double>(0);
  const double add = ctx.arg<double>();
  for (size_t i = 0; i < ctx.size(0) / sizeof(double); ++i) values[i] += add;
}
void add_on_device(taskgrid::TaskContext& ctx) {
  if (taskgrid::device_kind(ctx) != taskgrid::DeviceKind::emulated)
    throw std::runtime_error("this test has no CUDA kernel");
  auto* values = static_cast<double*>(taskgrid::emulated_view(ctx, 0));
  const size_t count = ctx.size(0) / sizeof(double);
  const double add = ctx.arg<double>();
  taskgrid::launch_host_work(ctx, [values, count, add] {
    for (size_t i = 0; i < count; ++i) values[i] += add;
  });
}
const taskgrid::FunctionId device_add =
    taskgrid::register_device_function("device_add", add_on_cpu, add_on_device);
void only_on_device(taskgrid::TaskContext&) {}
const taskgrid::FunctionId device_only_task =
    taskgrid::register_device_function("device_only_task", nullptr, only_on_device);
void failing_kernel(taskgrid::TaskContext& ctx) {
  taskgrid::launch_host_work(ctx, [] { throw std::runtime_error("kernel fault"); });
}
const taskgrid::FunctionId failing_kernel_task =
    taskgrid::register_device_function("failing_kernel_task", nullptr, failing_kernel);

// Rounds of device_add over handles spread on every rank, each round's value
// known, then every handle checked on its owner.
int device_sum() {
  constexpr int kHandles = 8;
  constexpr int kRounds = 12;
  constexpr size_t kValues = 1000;
  const int ranks = taskgrid::num_ranks();
  const bool spmd = taskgrid::is_spmd();
  std::vector<std::vector<double>> data(kHandles, std::vector<double>(kValues));
  std::vector<taskgrid::DataHandle> handles;
  for (int h = 0; h < kHandles; ++h) {
    for (size_t i = 0; i < kValues; ++i) data[h][i] = static_cast<double>(h * 10000 + i);
    handles.push_back(
        spmd ? taskgrid::enter_data(data[h].data(), kValues * sizeof(double), h % ranks)
             : taskgrid::enter_data(data[h].data(), kValues * sizeof(double)));
  }
  for (int round = 1; round <= kRounds; ++round)
    for (int h = 0; h < kHandles; ++h) {
      taskgrid::TaskOptions options;
      options.rank = (h + round) % ranks;  // the data moves between ranks too
      taskgrid::submit(device_add, {taskgrid::inout(handles[h])}, options,
                       static_cast<double>(round));
    }
  for (const auto h : handles) taskgrid::exit_data(h);
  bool ok = true;
  for (int h = 0; h < kHandles; ++h) {
    if (spmd && h % ranks != taskgrid::rank()) continue;  // not this rank's to check
    for (size_t i = 0; i < kValues; ++i)
      ok = ok && data[h][i] == static_cast<double>(h * 10000 + i) + kRounds * (kRounds + 1) / 2;
  }
  std::printf("error-cases: device_sum rank %d %s\n", taskgrid::rank(), ok ? "ok" : "WRONG");
  std::fflush(stdout);
  return taskgrid::finish(ok ? 0 : 1);
}

int no_error() {
  std::printf("error-cases: no error\n");
  std::fflush(stdout);
  return taskgrid::finish();
}

// Runs `misuse`, which must throw taskgrid::Error on rank 0.
template <typename Misuse>
int expect_error(Misuse misuse) {
  try {
    misuse();
  } catch (const taskgrid::Error& error) {
    std::printf("caught: %s\n", error.what());
    std::fflush(stdout);
    taskgrid::finish();
    return kCaught;
  }
  return no_error();
}

// Runs one task on `rank` with one small buffer, and waits for it.
int run_failing_task(taskgrid::TaskFunction fn, int rank,
                     int device = taskgrid::TaskOptions::any_device) {
  char buffer[64] = {};
  const auto h = taskgrid::enter_data(buffer, sizeof buffer);
  taskgrid::TaskOptions options;
  options.rank = rank;
  options.device = device;
  taskgrid::submit(fn, {taskgrid::inout(h)}, options);
  // Work after the failing task, so that the head is busy waiting when it fails.
  for (int i = 0; i < 10; ++i) taskgrid::submit(touch_task, {taskgrid::inout(h)}, {});
  taskgrid::exit_data(h);
  return no_error();
}

// The launcher's rank (this process's rank once the runtime is gone).
int launcher_rank() {
  // MPICH's Hydra sets PMI_RANK, Open MPI's mpirun OMPI_COMM_WORLD_RANK.
  for (const char* name : {"PMI_RANK", "OMPI_COMM_WORLD_RANK"})
    if (const char* value = std::getenv(name)) return std::atoi(value);
  return 0;
}

// The body given to taskgrid::run(): one task per rank on one handle, then
// `status`. In cluster mode only rank 0 runs it.
int run_body(int status) {
  std::vector<unsigned char> bytes(static_cast<size_t>(taskgrid::num_ranks()), 0);
  const bool spmd = taskgrid::is_spmd();
  const auto h = spmd ? taskgrid::enter_data(bytes.data(), bytes.size(), 0)
                      : taskgrid::enter_data(bytes.data(), bytes.size());
  for (int r = 0; r < taskgrid::num_ranks(); ++r) {
    taskgrid::TaskOptions options;
    options.rank = r;
    taskgrid::submit(touch_task, {taskgrid::inout(h)}, options);
  }
  taskgrid::exit_data(h);
  // The data comes back to its owner, rank 0 (the only one in cluster mode).
  const bool ok = (spmd && taskgrid::rank() != 0) || bytes[0] == taskgrid::num_ranks();
  std::printf("run: rank %d ran main_fn in %s mode%s\n", taskgrid::rank(),
              taskgrid::mode() == taskgrid::Mode::spmd ? "spmd" : "cluster",
              ok ? "" : " (WRONG RESULT)");
  std::fflush(stdout);
  return ok ? status : 1;
}

// run() in `mode`, main_fn returning `status`: every rank must come back.
int run_case(taskgrid::Mode mode, int status, int argc, char** argv) {
  taskgrid::RunOptions options;
  options.mode = mode;
  const int job_status = taskgrid::run(
      argc, argv, [status](int, char**) { return run_body(status); }, options);
  std::printf("run: rank %d returned %d, is_running %d\n", launcher_rank(), job_status,
              taskgrid::is_running() ? 1 : 0);
  std::fflush(stdout);
  return job_status;
}

[[noreturn]] void usage() {
  std::fprintf(
      stderr,
      "usage: taskgrid-error-cases <case> [rank]\n"
      "cases: task_throws bad_index rank_exits unknown_handle null_enter two_writers "
      "bad_rank_hint released_handle unregistered_function start_only no_finish "
      "spmd_divergence "
      "program_terminates zero_byte_fetch uncaught_unknown_handle "
      "uncaught_unregistered uncaught_unregistered_hidden uncaught_bad_rank_hint succeed "
      "cluster_program "
      "spmd_program run_cluster run_spmd task_segfaults task_aborts "
      "task_overflows_stack rank_stops task_never_returns wait_all_in_task "
      "submit_in_task null_packed_args huge_packed_args huge_enter_data big_transfer "
      "settings_differ device_sum "
      "device_only device_too_small device_kernel_fails device_hint_without_device_function "
      "device_hint_missing enter_before_start call_after_finish many_threads spmd_fetch_to "
      "spmd_fetch_diverges fetch_to_bad_rank cluster_fetch_to_rank\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) usage();
  const std::string name = argv[1];
  const int target = argc == 3 ? std::atoi(argv[2]) : 1;

  // API calls before start() and after finish() that the program does not
  // catch: one whole line naming the cause and the rank, status 2.
  if (name == "enter_before_start") {
    static char buffer[8];
    taskgrid::enter_data(buffer, sizeof buffer);
    return 0;
  }
  if (name == "call_after_finish") {
    taskgrid::start(&argc, &argv, taskgrid::Mode::spmd);
    taskgrid::finish();
    static char buffer[8];
    taskgrid::enter_data(buffer, sizeof buffer);
    return 0;
  }

  // Bad settings (the test sets TASKGRID_SCHEDULER or TASKGRID_THREADS):
  // start() itself throws, on every rank, before MPI starts; the program does
  // not catch it (the default a user gets).
  if (name == "start_only") {
    taskgrid::start(&argc, &argv, taskgrid::Mode::from_environment);
    return no_error();
  }
  // The mode belongs to the program: TASKGRID_MODE may only confirm it.
  if (name == "cluster_program" || name == "spmd_program") {
    taskgrid::start(&argc, &argv,
                    name == "cluster_program" ? taskgrid::Mode::cluster : taskgrid::Mode::spmd);
    return no_error();
  }
  // taskgrid::run(): returns on every rank with the job's status (`target`:
  // what main_fn returns).
  if (name == "run_cluster" || name == "run_spmd") {
    const int status = argc == 3 ? target : 0;
    return run_case(name == "run_cluster" ? taskgrid::Mode::cluster : taskgrid::Mode::spmd, status,
                    2, argv);
  }

  // Both modes (spmd_divergence runs with TASKGRID_MODE=spmd). Cluster mode:
  // ranks > 0 serve inside start() and exit there.
  taskgrid::start(&argc, &argv, taskgrid::Mode::from_environment);

  // Many threads per rank (the test sets the top of TASKGRID_THREADS): 64
  // blocks of busy tasks, each block on its own rank by turns, for some
  // seconds of work while the failure detector watches.
  if (name == "many_threads") {
    constexpr int kBlocks = 64, kRounds = 4;
    std::vector<std::vector<double>> blocks(kBlocks, std::vector<double>(16, 0.0));
    std::vector<taskgrid::DataHandle> handles;
    for (auto& block : blocks)
      handles.push_back(taskgrid::enter_data(block.data(), block.size() * sizeof(double)));
    for (int round = 0; round < kRounds; ++round)
      for (int b = 0; b < kBlocks; ++b) {
        taskgrid::TaskOptions options;
        options.rank = b % taskgrid::num_ranks();
        taskgrid::submit(busy_task, {taskgrid::inout(handles[static_cast<size_t>(b)])}, options);
      }
    bool ok = true;
    for (size_t b = 0; b < handles.size(); ++b) {
      taskgrid::exit_data(handles[b]);
      for (double v : blocks[b]) ok = ok && v == kRounds;
    }
    std::printf("error-cases: many_threads %s\n", ok ? "correct" : "WRONG");
    std::fflush(stdout);
    return taskgrid::finish(ok ? 0 : 1);
  }

  // spmd: results back to a chosen rank, and to all ranks (fetch(h, rank),
  // exit_data(h, all_ranks)). Block b is owned by rank b % ranks and written
  // there; then every block comes to rank `target`, and again to every rank.
  if (name == "spmd_fetch_to") {
    const int ranks = taskgrid::num_ranks(), me = taskgrid::rank();
    constexpr int kBlocks = 6;
    std::vector<std::vector<unsigned char>> blocks(kBlocks, std::vector<unsigned char>(4096, 0));
    std::vector<taskgrid::DataHandle> handles;
    for (int b = 0; b < kBlocks; ++b)
      handles.push_back(
          taskgrid::enter_data(blocks[static_cast<size_t>(b)].data(), 4096, b % ranks));
    const auto block_ok = [&](int b, unsigned char value) {
      for (unsigned char byte : blocks[static_cast<size_t>(b)])
        if (byte != value) return false;
      return true;
    };
    for (int b = 0; b < kBlocks; ++b)
      for (int k = 0; k <= b; ++k)
        taskgrid::submit(touch_task, {taskgrid::inout(handles[static_cast<size_t>(b)])}, {});
    bool ok = true;
    for (int b = 0; b < kBlocks; ++b) {
      taskgrid::fetch(handles[static_cast<size_t>(b)], target);
      // Only `target` and the owner's buffer (entered with the data) change.
      const bool expected_here = me == target;
      if (expected_here)
        ok = ok && block_ok(b, static_cast<unsigned char>(b + 1));
      else if (me != b % ranks)
        ok = ok && block_ok(b, 0);
    }
    for (int b = 0; b < kBlocks; ++b)
      taskgrid::submit(touch_task, {taskgrid::inout(handles[static_cast<size_t>(b)])}, {});
    for (int b = 0; b < kBlocks; ++b) {
      taskgrid::exit_data(handles[static_cast<size_t>(b)], taskgrid::all_ranks);
      ok = ok && block_ok(b, static_cast<unsigned char>(b + 2));
    }
    std::printf("error-cases: spmd_fetch_to rank %d %s\n", me, ok ? "correct" : "WRONG");
    std::fflush(stdout);
    return taskgrid::finish(ok ? 0 : 1);
  }
  // spmd: rank `target` fetches to another rank than the others do.
  if (name == "spmd_fetch_diverges") {
    char buffer[64] = {};
    const auto h = taskgrid::enter_data(buffer, sizeof buffer, 0);
    taskgrid::submit(touch_task, {taskgrid::inout(h)}, {});
    taskgrid::fetch(h, taskgrid::rank() == target ? 1 : 0);
    std::printf("error-cases: spmd_fetch_diverges was not detected\n");
    return taskgrid::finish();
  }
  if (name == "fetch_to_bad_rank") {
    char buffer[64] = {};
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    return expect_error([h] { taskgrid::fetch(h, taskgrid::num_ranks()); });
  }
  if (name == "cluster_fetch_to_rank") {
    char buffer[64] = {};
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    return expect_error([h] { taskgrid::fetch(h, 1); });
  }

  // A job that must succeed (warnings and TASKGRID_DISPLAY_ENV are checked).
  if (name == "succeed") {
    char buffer[8] = {};
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    taskgrid::submit(touch_task, {taskgrid::inout(h)}, {});
    taskgrid::exit_data(h);
    std::printf("error-cases: succeeded (buffer[0] = %d)\n", buffer[0]);
    std::fflush(stdout);
    return taskgrid::finish();
  }

  // API misuse the program does not catch: exit status 2 and the message.
  if (name == "uncaught_unknown_handle") {
    taskgrid::submit(touch_task, {taskgrid::inout(taskgrid::DataHandle{12345})}, {});
    return no_error();
  }
  if (name == "uncaught_unregistered") {
    static char buffer[8];
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    taskgrid::submit(unregistered_task, {taskgrid::inout(h)}, {});
    return no_error();
  }
  if (name == "uncaught_unregistered_hidden") {
    static char buffer[8];
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    taskgrid::submit(hidden_unregistered_task, {taskgrid::inout(h)}, {});
    return no_error();
  }
  if (name == "uncaught_bad_rank_hint") {
    static char buffer[8];
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    taskgrid::TaskOptions options;
    options.rank = taskgrid::num_ranks() + 3;
    taskgrid::submit(touch_task, {taskgrid::inout(h)}, options);
    return no_error();
  }

  // Failures inside tasks: the job ends with a message naming the task and rank.
  if (name == "task_throws") return run_failing_task(throwing_task, target);
  if (name == "bad_index") return run_failing_task(bad_index_task, target);
  if (name == "rank_exits") return run_failing_task(exiting_task, target);
  if (name == "task_segfaults") return run_failing_task(segfault_task, target);
  if (name == "task_aborts") return run_failing_task(abort_task, target);
  if (name == "task_overflows_stack") return run_failing_task(stack_overflow_task, target);
  if (name == "rank_stops") return run_failing_task(stop_rank_task, target);
  if (name == "task_never_returns") return run_failing_task(endless_task, target);
  if (name == "wait_all_in_task") return run_failing_task(wait_all_task, target);
  if (name == "submit_in_task") return run_failing_task(submit_task, target);
  if (name == "device_sum") return device_sum();
  // A device hint: for a function without a device implementation (refused
  // at submit), for a device the rank does not have, on a rank without any.
  if (name == "device_hint_without_device_function") {
    char buffer[8] = {};
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    taskgrid::TaskOptions options;
    options.device = 0;
    return expect_error([&] { taskgrid::submit(touch_task, {taskgrid::inout(h)}, options); });
  }
  if (name == "device_hint_missing") {
    std::vector<double> values(4, 0.0);
    const auto h = taskgrid::enter_data(values.data(), values.size() * sizeof(double));
    taskgrid::TaskOptions options;
    options.rank = target;
    options.device = 5;
    taskgrid::submit(device_add, {taskgrid::inout(h)}, options, 1.0);
    taskgrid::exit_data(h);
    return no_error();
  }
  if (name == "device_only") return run_failing_task(only_on_device, target);
  // On device 0 (heft might run the function's CPU implementation instead).
  if (name == "device_too_small") return run_failing_task(add_on_cpu, target, 0);
  if (name == "device_kernel_fails") return run_failing_task(failing_kernel, target);
  // Not an error: 4 MiB there and back under a tiny TASKGRID_CHUNK_BYTES
  // (the test sets 1). Chunk receives are all posted at once; one per byte
  // used to exhaust MPICH's requests (an assertion inside MPI_Irecv).
  if (name == "big_transfer") {
    std::vector<unsigned char> bytes(size_t{4} << 20, 1);
    const auto h = taskgrid::enter_data(bytes.data(), bytes.size(), 0);
    taskgrid::TaskOptions options;
    options.rank = target;
    taskgrid::submit(touch_task, {taskgrid::inout(h)}, options);
    taskgrid::exit_data(h);
    bool ok = true;
    if (taskgrid::rank() == 0)
      for (unsigned char b : bytes) ok = ok && b == 2;
    std::printf("error-cases: big_transfer %s\n", ok ? "correct" : "WRONG");
    std::fflush(stdout);
    return taskgrid::finish(ok ? 0 : 1);
  }
  // A size no rank can allocate: an error on the rank that would hold it,
  // leaving no half-registered handle behind (finish() then runs cleanly).
  if (name == "huge_enter_data") {
    static char buffer[8];
    return expect_error([] { taskgrid::enter_data(buffer, size_t{1} << 62); });
  }
  if (name == "null_packed_args") {
    static char buffer[8];
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    return expect_error([h] {
      taskgrid::submit_packed(taskgrid::function_id(touch_task), {taskgrid::inout(h)}, {}, nullptr,
                              16);
    });
  }
  if (name == "huge_packed_args") {
    static char buffer[8];
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    return expect_error([h] {
      std::vector<char> args(taskgrid::max_task_args_bytes + 1);
      taskgrid::submit_packed(taskgrid::function_id(touch_task), {taskgrid::inout(h)}, {},
                              args.data(), args.size());
    });
  }
  // Runs with different settings per rank (an MPMD command line): start()
  // itself must fail on every rank, naming the setting.
  if (name == "settings_differ") return no_error();

  // API misuse on rank 0: taskgrid::Error.
  if (name == "unknown_handle") {
    return expect_error(
        [] { taskgrid::submit(touch_task, {taskgrid::inout(taskgrid::DataHandle{12345})}, {}); });
  }
  if (name == "null_enter") return expect_error([] { taskgrid::enter_data(nullptr, 16); });
  if (name == "two_writers") {
    static char buffer[8];
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    return expect_error([h] {
      taskgrid::submit(touch_task, {taskgrid::out(h), taskgrid::inout(h)}, {});
    });
  }
  if (name == "bad_rank_hint") {
    static char buffer[8];
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    return expect_error([h] {
      taskgrid::TaskOptions options;
      options.rank = taskgrid::num_ranks();
      taskgrid::submit(touch_task, {taskgrid::inout(h)}, options);
    });
  }
  if (name == "released_handle") {
    static char buffer[8];
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    taskgrid::submit(touch_task, {taskgrid::inout(h)}, {});
    taskgrid::release(h);
    return expect_error([h] { taskgrid::submit(touch_task, {taskgrid::in(h)}, {}); });
  }
  if (name == "unregistered_function") {
    static char buffer[8];
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    return expect_error([h] {
      taskgrid::submit_packed(taskgrid::FunctionId{42}, {taskgrid::inout(h)}, {}, nullptr, 0);
    });
  }

  // Not an error: a handle of 0 bytes entered with a null pointer, written on
  // `target` and fetched. Must end cleanly (exit 0) without leaving a message
  // that was sent but never received (MPICH's UCX layer reports those at
  // MPI_Finalize as "unexpected tag-receive descriptor ... was not matched").
  if (name == "zero_byte_fetch") {
    const auto h = taskgrid::enter_data(nullptr, 0);
    taskgrid::TaskOptions options;
    options.rank = target;
    taskgrid::submit(touch_task, {taskgrid::inout(h)}, options);
    taskgrid::fetch(h);
    taskgrid::submit(touch_task, {taskgrid::inout(h)}, options);
    taskgrid::exit_data(h);
    std::printf("error-cases: zero_byte_fetch done\n");
    return taskgrid::finish();
  }

  // spmd (run with TASKGRID_MODE=spmd): rank `target` submits one task more
  // than the others in the middle of the sequence. The divergence check must
  // stop the job naming the first differing submission, never hang.
  if (name == "spmd_divergence") {
    char buffer[64] = {};
    const auto a = taskgrid::enter_data(buffer, sizeof buffer, 0);
    const auto b = taskgrid::enter_data(buffer, sizeof buffer, taskgrid::num_ranks() - 1);
    for (int i = 0; i < 50; ++i) {
      taskgrid::submit(touch_task, {taskgrid::inout(a)}, {});
      if (i == 20 && taskgrid::rank() == target)
        taskgrid::submit(touch_task, {taskgrid::inout(b)}, {});
      taskgrid::submit(touch_task, {taskgrid::inout(b)}, {});
    }
    taskgrid::wait_all();
    std::printf("error-cases: spmd_divergence was not detected\n");
    return taskgrid::finish();
  }

  // Leaving without finish(): the exit guard ends the job instead of leaving
  // the other ranks waiting.
  if (name == "no_finish") {
    char buffer[64] = {};
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    taskgrid::submit(touch_task, {taskgrid::inout(h)}, {});
    taskgrid::exit_data(h);
    std::printf("error-cases: returning from main without finish()\n");
    std::fflush(stdout);
    return 0;
  }
  // finish(status) is the exit status even when MPI_Finalize never returns
  // (the test preloads a library whose MPI_Finalize hangs).
  if (name == "finalize_hangs") {
    char buffer[64] = {};
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    taskgrid::submit(touch_task, {taskgrid::inout(h)}, {});
    taskgrid::exit_data(h);
    std::printf("error-cases: finishing with status 5\n");
    std::fflush(stdout);
    return taskgrid::finish(5);
  }
  // The program dies (uncaught exception: std::terminate, no exit handlers)
  // while the other ranks serve: mpiexec must end them.
  if (name == "program_terminates") {
    char buffer[64] = {};
    const auto h = taskgrid::enter_data(buffer, sizeof buffer);
    for (int i = 0; i < 10; ++i) taskgrid::submit(touch_task, {taskgrid::inout(h)}, {});
    taskgrid::wait_all();
    throw std::logic_error("program bug after wait_all");
  }

  std::fprintf(stderr, "taskgrid-error-cases: unknown case \"%s\"\n", name.c_str());
  taskgrid::finish();
  return 2;
}
