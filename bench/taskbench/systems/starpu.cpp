// taskbench-starpu: Task Bench on StarPU-MPI (StarPU 1.3, Open MPI builds).
//
// Data: one StarPU handle per graph, field and point, a "variable" of
// -output bytes. Task (t, p) writes handle (t mod K, p) and reads the
// handles ((t-1) mod K, q) of its effective inputs q, where K, the number of
// fields rotated through, is -field (default T), at least 2 (with one
// handle per point, task (t, p+1) could read what (t, p) has just written),
// and at most what fits in 1 GiB per graph. Fewer fields only add
// write-after-read edges. Points are block-distributed over the ranks as in
// taskbench-mpi: rank r owns [r*W/P, (r+1)*W/P - 1] and registers those
// handles over its own memory (starpu_mpi_data_register(handle, tag, owner));
// the other handles are registered without memory, StarPU allocates a copy
// where one is received.
//
// Tasks: every rank submits every task with starpu_mpi_task_insert, in one
// sequential order (timestep by timestep; within a timestep graph by graph,
// so that -and graphs run concurrently; point by point), the output STARPU_W
// and each distinct input STARPU_R. StarPU-MPI runs each task on the owner
// of its output and posts the sends and receives its inputs need; StarPU's
// implicit dependencies order the rest. The codelet runs the task contract
// (core/task_contract.h: input validation, output records, kernel) on the
// buffers StarPU hands it, with a scratch region per worker and graph, and
// counts per worker. -broadcast: the buffer goes out with one timed MPI_Bcast
// before the tasks, as in taskbench-mpi.
//
// Timing (spec 8.4): an untimed warm-up pass, then barrier, MPI_Wtime,
// submission of every task, starpu_mpi_wait_for_all, barrier, MPI_Wtime.
// Between passes the communication cache is flushed and the owned outputs
// are zeroed, so the timed pass cannot read data of the warm-up.
//
// Workers: -worker N CPU workers per rank (STARPU_NCPU), else STARPU_NCPU
// when set, else 1. MPI is initialised by this program with
// MPI_THREAD_MULTIPLE: the main thread calls MPI (barriers, the broadcast,
// the reductions) while StarPU-MPI's progress thread communicates. Then
// starpu_init (the first rank of each node alone first: StarPU's first run
// on a machine measures the bus into $STARPU_HOME/.starpu, and ranks doing
// so together read each other's half-written files) and starpu_mpi_init_comm.
//
// Defaults, where the user has not set the variables (measured on a 2-core
// VM, Open MPI 4.1.4, StarPU 1.3.10, mpirun --bind-to none, stencil_1d
// -kernel compute_bound -iter 4096 -steps 1000, serial 9.0 us per task;
// 2 ranks x 1 worker at width 2, medians of 5 to 11 runs):
//   binding                          rank r of the node (N workers) binds
//   (STARPU_WORKERS_COREID,          its workers to cores r*N.. and its MPI
//    STARPU_MPI_THREAD_COREID)       thread beside worker 0, unless the
//                                    launcher bound the process: 38-41 ms.
//                                    StarPU's own binding (every rank from
//                                    core 0): 2.2 s; no binding: 98-102 ms,
//                                    some runs 350 ms; workers bound, MPI
//                                    threads free: 300 ms
//   OMPI_MCA_mpi_yield_when_idle=1   StarPU-MPI's progress thread polls
//                                    MPI_Test while a receive is posted;
//                                    Open MPI then yields the core when idle
//                                    (3.9 s without)
//   idle yield (progression hook)    StarPU 1.3 keeps the last awake worker
//                                    polling the scheduler; it calls
//                                    sched_yield on each idle poll (over
//                                    12 s without; TASKBENCH_STARPU_IDLE_YIELD=0
//                                    turns it off)
//   STARPU_SCHED=lws                 StarPU's default, pinned: prio, eager,
//                                    ws, dmda within noise (1 rank x 2
//                                    workers, width 2: 14-17 ms each)
//   STARPU_CALIBRATE=0               no performance-model calibration (the
//                                    codelet has no model)
//   STARPU_SILENT=1                  no banner or warnings
// Left as StarPU has them: STARPU_MPI_CACHE=1 (0: 45 ms). Not available:
// STARPU_MPI_DRIVER_CALL_FREQUENCY (the MPI thread running worker 0's
// tasks), which only starpu_mpi_init_conf sets up; tried through it with
// StarPU 1.3.10, such runs never finished.
//
// The tuned program there (medians of 9; core time per task = elapsed x
// cores / tasks; efficiency = serial time per task / core time per task):
//                               width 2 (2000 tasks)   width 16 (16000 tasks)
//   serial                      18.1 ms   9.0 us 100%  144.8 ms  9.0 us 100%
//   mpi, 2 ranks                 9.3 ms   9.3 us  97%   72.7 ms  9.1 us 100%
//   omp -worker 2               10.4 ms  10.4 us  87%   84.1 ms 10.5 us  86%
//   starpu, 2 ranks x 1 worker  38.1 ms  38.1 us  24%  163.3 ms 20.4 us  44%
//   starpu, 1 rank x 2 workers  14.8 ms  14.8 us  61%  137.4 ms 17.2 us  53%
//   starpu, 1 rank x 1 worker   24.8 ms  12.4 us  73%  221.1 ms 13.8 us  65%
// (the last counted on one core; the main thread submits on the other.)
// StarPU costs about 5 us of worker time per task plus 2 to 3 us of
// submission; across ranks each timestep also waits for StarPU-MPI's
// messages, which its progress thread handles on the cores the workers use.
#include <hwloc.h>
#include <sched.h>
#include <starpu.h>
#include <starpu_mpi.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "mpi_exchange.h"

namespace {

using namespace taskbench;
using namespace taskbench::mpi;

// Outputs of one graph (every field, every point) stay within this; beyond,
// fewer fields are rotated through.
constexpr size_t kMaxOutputMemory = size_t{1} << 30;
// Rough cost of one registered handle on every rank (StarPU's own state),
// counted with the output bytes against kMaxOutputMemory.
constexpr size_t kHandleOverhead = 2048;

// The defaults of the environment (see the top of the file): set where the
// user has not set the variable.
struct EnvironmentDefault {
  const char* name;
  const char* value;
};
constexpr EnvironmentDefault kEnvironmentDefaults[] = {
    {"STARPU_SILENT", "1"},                 // no banner
    {"OMPI_MCA_mpi_yield_when_idle", "1"},  // read by MPI_Init
    {"STARPU_SCHED", "lws"},                // pinned: StarPU's default
    {"STARPU_CALIBRATE", "0"},              // no performance models
};

// Per-worker counters, padded so that workers do not share cache lines.
struct alignas(64) WorkerCounts {
  ExecutionCounts counts;
};

// One graph's handles and the owned part of its outputs.
struct GraphData {
  const TaskGraph* graph = nullptr;
  size_t index = 0;
  BlockDistribution distribution{1, 1};
  int64_t rows = 2;  // fields rotated through
  int64_t local_first = 0;
  int64_t local_count = 0;
  size_t stride = 0;                          // output bytes rounded up to 64
  AlignedBuffer outputs;                      // [row][local point]
  std::vector<starpu_data_handle_t> handles;  // [row][point], every point
  // Submission state (main thread only): seen[q] == serial when producer q
  // is already an input of the task being submitted (serial counts the
  // graph's submitted tasks over both passes), slot_of[q] its buffer.
  uint64_t serial = 0;
  std::vector<uint64_t> seen;
  std::vector<uint32_t> slot_of;

  starpu_data_handle_t handle(int64_t timestep, int64_t point) const {
    return handles[static_cast<size_t>((timestep % rows) * graph->max_width + point)];
  }
};

// What the codelet reads (cl_arg): allocated only on the rank that runs the
// task, freed by StarPU after it ran. Followed by the producers of the
// effective inputs (int64_t[num_inputs], enumeration order) and, per input,
// the index of its buffer (uint32_t[num_inputs]; 0 is the output, duplicate
// producers share one buffer).
struct TaskDescriptor {
  const GraphData* graph;
  int64_t timestep;
  int64_t point;
  size_t num_inputs;
  size_t num_buffers;  // the output and the distinct inputs
};
static_assert(sizeof(TaskDescriptor) % alignof(int64_t) == 0);

// What every task of this process shares; written before StarPU runs tasks.
struct Shared {
  std::vector<WorkerCounts> counts;            // [StarPU worker]
  std::vector<std::vector<char*>> scratch;     // [StarPU worker][graph]
  std::vector<AlignedBuffer> scratch_storage;  // owns the above
  BroadcastView broadcast;
};
Shared shared;

void run_task(void* buffers[], void* cl_arg) {
  const auto* task = static_cast<const TaskDescriptor*>(cl_arg);
  const auto* points = reinterpret_cast<const int64_t*>(task + 1);
  const auto* slots = reinterpret_cast<const uint32_t*>(points + task->num_inputs);
  const GraphData& data = *task->graph;
  const TaskGraph& g = *data.graph;
  const unsigned worker = starpu_worker_get_id_check();
  // A handle StarPU-MPI did not pass would leave its buffer unset.
  if (const unsigned given = STARPU_TASK_GET_NBUFFERS(starpu_task_get_current());
      given != task->num_buffers)
    fatal("graph " + std::to_string(g.graph_index) + ", timestep " +
          std::to_string(task->timestep) + ", point " + std::to_string(task->point) +
          ": StarPU passed " + std::to_string(given) + " buffers, expected " +
          std::to_string(task->num_buffers));

  thread_local std::vector<InputView> views;
  views.resize(task->num_inputs);
  for (size_t k = 0; k < task->num_inputs; ++k) {
    const auto* input = static_cast<const starpu_variable_interface*>(buffers[slots[k]]);
    views[k] = {reinterpret_cast<const char*>(input->ptr), input->elemsize};
  }
  const auto* output = static_cast<const starpu_variable_interface*>(buffers[0]);
  const auto scratch_bytes = static_cast<size_t>(g.scratch_bytes);
  const TaskArgs args{&g,
                      task->timestep,
                      task->point,
                      reinterpret_cast<char*>(output->ptr),
                      output->elemsize,
                      views.data(),
                      points,
                      task->num_inputs,
                      scratch_bytes != 0 ? shared.scratch[worker][data.index] : nullptr,
                      scratch_bytes,
                      shared.broadcast.data,
                      shared.broadcast.bytes};
  execute_task(args);
  ExecutionCounts& counts = shared.counts[worker].counts;
  counts.tasks += 1;
  counts.inputs += static_cast<int64_t>(task->num_inputs);
}

starpu_codelet make_codelet() {
  starpu_codelet codelet;
  starpu_codelet_init(&codelet);
  codelet.where = STARPU_CPU;
  codelet.cpu_funcs[0] = run_task;
  codelet.nbuffers = STARPU_VARIABLE_NBUFFERS;  // modes come with each task
  codelet.name = "taskbench";
  return codelet;
}
starpu_codelet codelet = make_codelet();

// Fields rotated through: -field K (default T), at least 2, memory permitting.
int64_t rows_of(const TaskGraph& g) {
  const size_t per_row =
      static_cast<size_t>(g.max_width) * (static_cast<size_t>(g.output_bytes) + kHandleOverhead);
  const auto affordable = static_cast<int64_t>(kMaxOutputMemory / per_row);
  return std::max<int64_t>(2, std::min(g.fields, affordable));
}

// Registers the handles of `data` (every rank registers every handle, with
// the same tag on every rank: tag_base + row * W + point).
void register_graph(GraphData& data, const TaskGraph& g, size_t index, const World& world,
                    int64_t& tag_base) {
  data.graph = &g;
  data.index = index;
  data.distribution = BlockDistribution{g.max_width, world.size};
  data.rows = rows_of(g);
  data.local_first = data.distribution.first(world.rank);
  data.local_count = data.distribution.first(world.rank + 1) - data.local_first;
  const auto bytes = static_cast<size_t>(g.output_bytes);
  data.stride = (bytes + 63) / 64 * 64;
  data.outputs = AlignedBuffer(static_cast<size_t>(data.rows * data.local_count) * data.stride);
  const auto width = static_cast<size_t>(g.max_width);
  data.handles.resize(static_cast<size_t>(data.rows) * width);
  data.seen.assign(width, 0);
  data.slot_of.assign(width, 0);
  for (int64_t row = 0; row < data.rows; ++row) {
    for (int64_t p = 0; p < g.max_width; ++p) {
      starpu_data_handle_t& handle =
          data.handles[static_cast<size_t>(row) * width + static_cast<size_t>(p)];
      const auto owner = static_cast<int>(data.distribution.owner(p));
      if (owner == world.rank) {
        char* memory =
            data.outputs.data() +
            static_cast<size_t>(row * data.local_count + p - data.local_first) * data.stride;
        starpu_variable_data_register(&handle, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(memory),
                                      bytes);
      } else {
        starpu_variable_data_register(&handle, -1, 0, bytes);
      }
      starpu_mpi_data_register(handle, tag_base + row * g.max_width + p, owner);
    }
  }
  tag_base += data.rows * g.max_width;
}

// Untimed, before each pass: zero the owned outputs (a missing transfer then
// cannot be hidden by data of the previous pass).
void reset_outputs(GraphData& data) {
  const TaskGraph& g = *data.graph;
  for (int64_t row = 0; row < data.rows; ++row) {
    for (int64_t p = data.local_first; p < data.local_first + data.local_count; ++p) {
      starpu_data_handle_t handle = data.handle(row, p);
      if (starpu_data_acquire(handle, STARPU_W) != 0) fatal("starpu_data_acquire failed");
      std::memset(reinterpret_cast<void*>(starpu_variable_get_local_ptr(handle)), 0,
                  static_cast<size_t>(g.output_bytes));
      starpu_data_release(handle);
    }
  }
}

// Submits every task of every graph (see the top of the file for the order).
void submit_tasks(std::vector<GraphData>& graphs, int rank) {
  int64_t max_steps = 0;
  for (const GraphData& data : graphs) max_steps = std::max(max_steps, data.graph->timesteps);
  std::vector<int64_t> inputs;
  std::vector<uint32_t> slots;
  std::vector<starpu_data_descr> descriptors;
  for (int64_t t = 0; t < max_steps; ++t) {
    for (GraphData& data : graphs) {
      const TaskGraph& g = *data.graph;
      if (t >= g.timesteps) continue;
      const int64_t offset = g.offset_at(t);
      for (int64_t p = offset; p < offset + g.width_at(t); ++p) {
        const uint64_t serial = ++data.serial;
        g.effective_inputs(t, p, inputs);
        descriptors.clear();
        descriptors.push_back({data.handle(t, p), STARPU_W});
        slots.clear();
        for (int64_t q : inputs) {
          const auto i = static_cast<size_t>(q);
          if (data.seen[i] != serial) {
            data.seen[i] = serial;
            data.slot_of[i] = static_cast<uint32_t>(descriptors.size());
            descriptors.push_back({data.handle(t - 1, q), STARPU_R});
          }
          slots.push_back(data.slot_of[i]);
        }

        // Only the owner of the output runs the task: only it needs the
        // descriptor (StarPU frees it after the task).
        void* argument = nullptr;
        size_t argument_bytes = 0;
        int argument_kind = STARPU_CL_ARGS_NFREE;
        if (data.distribution.owner(p) == rank) {
          const size_t n = inputs.size();
          argument_bytes = sizeof(TaskDescriptor) + n * (sizeof(int64_t) + sizeof(uint32_t));
          argument = std::malloc(argument_bytes);
          if (argument == nullptr) fatal("out of memory allocating a task descriptor");
          auto* task = static_cast<TaskDescriptor*>(argument);
          *task = TaskDescriptor{&data, t, p, n, descriptors.size()};
          auto* points = reinterpret_cast<int64_t*>(task + 1);
          if (n != 0) {
            std::memcpy(points, inputs.data(), n * sizeof(int64_t));
            std::memcpy(points + n, slots.data(), n * sizeof(uint32_t));
          }
          argument_kind = STARPU_CL_ARGS;
        }
        const int ret = starpu_mpi_task_insert(
            MPI_COMM_WORLD, &codelet, STARPU_DATA_MODE_ARRAY, descriptors.data(),
            static_cast<int>(descriptors.size()), argument_kind, argument, argument_bytes, 0);
        if (ret != 0)
          fatal("starpu_mpi_task_insert failed for graph " + std::to_string(g.graph_index) +
                ", timestep " + std::to_string(t) + ", point " + std::to_string(p) + ": " +
                std::strerror(ret < 0 ? -ret : ret));
      }
    }
  }
}

// StarPU 1.3 never lets the last awake worker of a context sleep: it polls
// the scheduler. Its progression hooks run on each idle poll; yielding there
// hands the core to the threads that have work (the other ranks' workers,
// the MPI threads, the submitting main thread). Returns 1: may block.
unsigned yield_when_idle(void*) {
  sched_yield();
  return 1;
}

void set_environment_defaults() {
  for (const EnvironmentDefault& entry : kEnvironmentDefaults)
    if (std::getenv(entry.name) == nullptr) setenv(entry.name, entry.value, 0);
}

// The machine's cores (hwloc), 0 when unknown.
int count_cores() {
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) != 0) return 0;
  int cores = 0;
  if (hwloc_topology_load(topology) == 0)
    cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  hwloc_topology_destroy(topology);
  return cores;
}

// Binding, unless the user set any of StarPU's binding variables. StarPU
// binds each process's workers from core 0 on, so ranks sharing a node would
// all share its first cores. Where the launcher did not bind this process
// (it may run on every CPU), rank r of the node (OMPI_COMM_WORLD_LOCAL_RANK)
// with N workers binds them to cores r*N .. r*N+N-1 (modulo the cores) and
// StarPU-MPI's thread to the first of them: each rank keeps to its own
// cores, as the MPI baseline's ranks. Where the launcher bound it, threads
// stay within the launcher's binding (NOBIND).
void set_binding_defaults(int workers) {
  for (const char* name :
       {"STARPU_WORKERS_NOBIND", "STARPU_WORKERS_CPUID", "STARPU_WORKERS_COREID",
        "STARPU_MPI_NOBIND", "STARPU_MPI_THREAD_CPUID", "STARPU_MPI_THREAD_COREID"})
    if (std::getenv(name) != nullptr) return;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  const int cores = count_cores();
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < online ||
      cores <= 0) {
    setenv("STARPU_WORKERS_NOBIND", "1", 1);
    setenv("STARPU_MPI_NOBIND", "1", 1);
    return;
  }
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  const int local_rank = local != nullptr ? std::atoi(local) : 0;
  std::string list;
  for (int i = 0; i < workers; ++i)
    list += (i != 0 ? " " : "") + std::to_string((local_rank * workers + i) % cores);
  setenv("STARPU_WORKERS_COREID", list.c_str(), 1);
  setenv("STARPU_MPI_THREAD_COREID", std::to_string(local_rank * workers % cores).c_str(), 1);
}

// What this StarPU build can run, and the CPU workers per rank (-worker N,
// else STARPU_NCPU, else 1). "" or the message of a usage error.
std::string check_starpu_limits(const BenchConfig& config, int& workers) {
  // StarPU-MPI sends a variable as one MPI datatype of `int` bytes.
  for (const TaskGraph& g : config.graphs)
    if (g.output_bytes > INT_MAX)
      return "Invalid flag \"-output " + std::to_string(g.output_bytes) +
             "\": taskbench-starpu sends each output as one StarPU-MPI message of at most " +
             std::to_string(INT_MAX) + " bytes";
  workers = 1;
  if (config.workers > 0) {
    if (config.workers > STARPU_MAXCPUS)
      return "Invalid flag \"-worker " + std::to_string(config.workers) +
             "\": this StarPU supports at most " + std::to_string(STARPU_MAXCPUS) +
             " CPU workers per process (STARPU_MAXCPUS)";
    workers = static_cast<int>(config.workers);
  } else if (const char* text = std::getenv("STARPU_NCPU"); text != nullptr && *text != '\0') {
    const std::string_view value(text);
    int parsed = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (error != std::errc() || end != value.data() + value.size() || parsed < 1 ||
        parsed > STARPU_MAXCPUS)
      return "STARPU_NCPU=" + std::string(value) + " must be a number from 1 to " +
             std::to_string(STARPU_MAXCPUS);
    workers = parsed;
  }
  // StarPU reads STARPU_NCPU over starpu_conf::ncpus: make both say the same.
  setenv("STARPU_NCPU", std::to_string(workers).c_str(), 1);
  return {};
}

const char* help_text() {
  return "\nStarPU options:\n"
         "  -worker N                CPU workers per process (default: STARPU_NCPU, else 1)\n"
         "  StarPU's environment variables apply (STARPU_SCHED, ...). Unless set, this\n"
         "  program sets STARPU_SILENT=1, STARPU_WORKERS_NOBIND=1, STARPU_MPI_NOBIND=1,\n"
         "  STARPU_SCHED=lws, STARPU_CALIBRATE=0 and OMPI_MCA_mpi_yield_when_idle=1;\n"
         "  idle workers yield the core (TASKBENCH_STARPU_IDLE_YIELD=0: they spin).\n";
}

}  // namespace

int main(int argc, char** argv) {
  set_environment_defaults();  // before MPI_Init: Open MPI reads its own there
  World world = initialize(&argc, &argv, MPI_THREAD_MULTIPLE);
  BenchConfig config;
  int status = 0;
  // Every rank parses the same argv and reaches the same verdict.
  if (!parse_command_line(argc, argv, config, status, world.rank == 0)) {
    if (config.help && world.rank == 0) std::fputs(help_text(), stdout);
    finalize(world);
    return status;
  }
  int workers = 1;
  if (const std::string problem = check_starpu_limits(config, workers); !problem.empty()) {
    if (world.rank == 0) std::fprintf(stderr, "error: %s\n", problem.c_str());
    finalize(world);
    return 2;
  }
  if (world.rank == 0) {
    std::fputs(configuration_text(config).c_str(), stdout);
    std::fflush(stdout);
  }

  set_binding_defaults(workers);
  starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncpus = workers;
  conf.ncuda = 0;
  conf.nopencl = 0;
  conf.will_use_mpi = 1;
  // On a node where StarPU never ran, starpu_init measures the bus and writes
  // the results under $STARPU_HOME/.starpu; ranks doing so together read
  // each other's half-written files and abort. The first rank of each node
  // (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK 0) starts StarPU first, the others
  // after it; then StarPU-MPI starts on all together (it may communicate).
  // starpu_init + starpu_mpi_init_comm is starpu_mpi_init_conf without the
  // core it would reserve for the MPI thread (none is: ncpus is given).
  const char* local_rank = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  const bool first_on_node =
      local_rank != nullptr ? std::strcmp(local_rank, "0") == 0 : world.rank == 0;
  if (!first_on_node) TASKBENCH_MPI_CHECK(MPI_Barrier(world.comm));
  if (const int ret = starpu_init(&conf); ret != 0)
    fatal("starpu_init failed: " + std::string(std::strerror(ret < 0 ? -ret : ret)));
  if (first_on_node) TASKBENCH_MPI_CHECK(MPI_Barrier(world.comm));
  if (const int ret = starpu_mpi_init_comm(&argc, &argv, 0, MPI_COMM_WORLD); ret != 0)
    fatal("starpu_mpi_init_comm failed: " + std::string(std::strerror(ret < 0 ? -ret : ret)));

  if (const char* yield = std::getenv("TASKBENCH_STARPU_IDLE_YIELD");
      yield == nullptr || std::strcmp(yield, "0") != 0)
    starpu_progression_hook_register(yield_when_idle, nullptr);

  // Untimed setup: handles, scratch, counters, broadcast content.
  std::vector<GraphData> graphs(config.graphs.size());
  int64_t tag_base = 0;
  for (size_t i = 0; i < graphs.size(); ++i)
    register_graph(graphs[i], config.graphs[i], i, world, tag_base);
  const unsigned worker_count = starpu_worker_get_count();
  shared.counts.assign(worker_count, WorkerCounts{});
  shared.scratch.assign(worker_count, std::vector<char*>(graphs.size(), nullptr));
  for (unsigned w = 0; w < worker_count; ++w) {
    for (size_t i = 0; i < graphs.size(); ++i) {
      const auto bytes = static_cast<size_t>(config.graphs[i].scratch_bytes);
      if (bytes == 0) continue;
      AlignedBuffer& buffer = shared.scratch_storage.emplace_back(bytes);
      prepare_scratch(buffer.data(), bytes);
      shared.scratch[w][i] = buffer.data();
    }
  }
  const auto broadcast_size = static_cast<size_t>(config.broadcast_bytes);
  AlignedBuffer broadcast(broadcast_size);
  if (world.rank == 0) fill_broadcast(broadcast.data(), broadcast_size);
  shared.broadcast = {broadcast_size != 0 ? broadcast.data() : nullptr, broadcast_size};

  // Warm-up pass, then the timed pass (spec 8.4).
  double elapsed = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (GraphData& data : graphs) reset_outputs(data);
    if (world.rank != 0 && broadcast_size != 0) std::memset(broadcast.data(), 0, broadcast_size);
    std::fill(shared.counts.begin(), shared.counts.end(), WorkerCounts{});
    TASKBENCH_MPI_CHECK(MPI_Barrier(world.comm));
    const double start = MPI_Wtime();
    broadcast_bytes(broadcast.data(), broadcast_size, 0, world.comm);
    submit_tasks(graphs, world.rank);
    if (starpu_mpi_wait_for_all(MPI_COMM_WORLD) != 0) fatal("starpu_mpi_wait_for_all failed");
    TASKBENCH_MPI_CHECK(MPI_Barrier(world.comm));
    elapsed = MPI_Wtime() - start;
    starpu_mpi_cache_flush_all_data(MPI_COMM_WORLD);
  }

  ExecutionCounts counts;
  for (const WorkerCounts& c : shared.counts) {
    counts.tasks += c.counts.tasks;
    counts.inputs += c.counts.inputs;
  }
  status = report_run(world, config, "starpu", elapsed, counts,
                      static_cast<int>(starpu_cpu_worker_get_count()));

  for (GraphData& data : graphs)
    for (starpu_data_handle_t handle : data.handles) starpu_data_unregister(handle);
  starpu_mpi_shutdown();
  starpu_shutdown();
  finalize(world);
  return status;
}
