// taskbench-omp_target: Task Bench on OpenMP offload devices. Every task is
// one `target nowait` region on the device that owns its point; the OpenMP
// runtime orders the regions by their depend clauses, and the data stays on
// the devices from the first timestep to the last.
//
// Devices. Point p of a graph belongs to device d when
// d*W/D <= p < (d+1)*W/D (D = omp_get_num_devices(); contiguous blocks, as
// the MPI systems distribute points over ranks; each graph is spread over all
// devices). With no device (no plugin, or a plugin that finds none) every
// point belongs to omp_get_initial_device() and the regions run on the host.
//
// Data. Each point has `rows` output buffers (row t % rows holds the output
// of timestep t; rows = -field K, at least 2, as memory permits). Before the
// timed passes, `target enter data` allocates a point's buffers on its own
// device, and on every other device that reads them at some timestep (a
// replica); its scratch (prepared with the marker on the host) is copied to
// its device, the -broadcast buffer to every device. Nothing returns to the
// host: no task maps data, and a task's inputs are read where they are.
//
// Dependencies. The host addresses of the buffers are the depend objects:
// a task writes its output row (out), reads the rows of its producers on its
// own device (in), and orders the tasks of its point that share its scratch
// (inout). An edge between two devices goes through one copy task per
// producer output and consumer device (however many consumers that device
// has), created with the first of those consumers: `omp_target_memcpy`
// copies the row from the producer's device into the consumer device's
// replica once the producer has written it; the consumers on that device wait
// for the copy (one more depend object per replica row and device), and the
// producer of a later timestep that reuses the row waits for every reader
// and copy. omp_target_memcpy between two devices is one device-to-device
// transfer where the plugin can exchange data directly
// (__tgt_rtl_data_exchange) and is staged through the host otherwise: never
// worse than `target update from` on the producer's device followed by
// `target update to` on the consumer's, which always takes two transfers
// through the host (rank 0, under an MPI plugin).
//
// A task region maps one thing: the DeviceGraph of its graph and device
// (map(alloc), present since the setup: a look-up, no transfer), so nothing
// moves when a task starts or ends; t and p are firstprivate scalars. The region
// runs the contract of every other system (execute_task: checks, input
// validation, output, scratch, kernel) on the device, and counts the task and
// its inputs in the DeviceGraph; the host reads the counts back after each
// pass and checks them against the graph totals.
//
// Timing: like the other systems, one untimed warm-up pass then one timed
// pass of all graphs (timestep by timestep, graphs interleaved); the device
// setup and the team start-up are outside the timed region, which ends when
// every device has returned its counts (run_passes).
#include "omp_target.h"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <tuple>
#include <vector>

#include "core/options.h"
#include "core/report.h"

namespace {

using namespace taskbench;

// Output rows cost rows * width * output bytes of host address space (and at
// most that much memory on a device); past this we use fewer rows (the extra
// write-after-read dependencies keep the result the same).
constexpr size_t kMaxOutputMemory = size_t{1} << 30;

// What the task regions of one graph on one device read, copied to the
// device once. `points` is a device address: two device pointers per point,
// its output rows and its scratch, null where the device has no copy.
struct DeviceGraph {
  TaskGraph graph;
  int64_t rows;
  int64_t device;
  char* const* points;
  const char* broadcast;  // nullptr when -broadcast is not used
  size_t broadcast_bytes;
  int64_t tasks;  // tasks run and inputs validated on the device
  int64_t inputs;
};

#pragma omp begin declare target
// The body of one task region: inputs read where they are on this device.
void run_task_on_device(DeviceGraph& view, int64_t t, int64_t p) {
  const TaskGraph& g = view.graph;
  const auto bytes = static_cast<size_t>(g.output_bytes);
  auto missing = [&](int64_t point) {
    fatal("graph " + std::to_string(g.graph_index) + ", timestep " + std::to_string(t) +
          ", point " + std::to_string(p) + ": the buffers of point " + std::to_string(point) +
          " are not on device " + std::to_string(view.device));
  };
  std::vector<int64_t> producers;
  g.effective_inputs(t, p, producers);
  std::vector<InputView> inputs;
  inputs.reserve(producers.size());
  const int64_t previous_row = (t + view.rows - 1) % view.rows;
  for (int64_t q : producers) {
    const char* rows = view.points[2 * q];
    if (rows == nullptr) missing(q);
    inputs.push_back({rows + previous_row * g.output_bytes, bytes});
  }
  char* output = view.points[2 * p];
  if (output == nullptr) missing(p);
  const TaskArgs args{&g,
                      t,
                      p,
                      output + (t % view.rows) * g.output_bytes,
                      bytes,
                      inputs.data(),
                      producers.data(),
                      inputs.size(),
                      view.points[2 * p + 1],
                      static_cast<size_t>(g.scratch_bytes),
                      view.broadcast,
                      view.broadcast_bytes};
  execute_task(args);
  const auto count = static_cast<int64_t>(inputs.size());
#pragma omp atomic update
  view.tasks += 1;
#pragma omp atomic update
  view.inputs += count;
}
#pragma omp end declare target

// The devices of the run: slot s is OpenMP device ids[s].
struct Devices {
  std::vector<int> ids;
  bool host = false;  // no device: one slot, the initial device
  int64_t count() const { return static_cast<int64_t>(ids.size()); }
};

Devices find_devices() {
  Devices devices;
  const int available = omp_get_num_devices();
  if (available == 0) {
    devices.ids.push_back(omp_get_initial_device());
    devices.host = true;
    return devices;
  }
  for (int d = 0; d < available; ++d) {
    // A device whose plugin cannot run our image would silently run the
    // regions on the host, with device pointers: refuse it here instead.
    int on_host = 1;
#pragma omp target device(d) map(from : on_host)
    on_host = omp_is_initial_device();
    if (on_host)
      fatal("OpenMP device " + std::to_string(d) +
            " ran a target region on the host (no device image for it?)");
    devices.ids.push_back(d);
  }
  return devices;
}

// Every `target enter data` of the setup, undone at the end.
struct Mapping {
  const char* host;
  size_t bytes;
  int device;
};

class DeviceMemory {
 public:
  explicit DeviceMemory(const Devices& devices) : devices_(devices) {}
  ~DeviceMemory() {
    for (auto it = mappings_.rbegin(); it != mappings_.rend(); ++it) {
      const char* host = it->host;
      const size_t bytes = it->bytes;
      const int device = it->device;
#pragma omp target exit data map(delete : host [0:bytes]) device(device)
    }
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // The device address of a new device copy of host[0, bytes): allocated
  // (copy = false) or initialised from the host (copy = true). On the host
  // slot, the host memory itself.
  template <typename T>
  T* enter(T* host, size_t bytes, int64_t slot, bool copy) {
    if (devices_.host) return host;
    const int device = devices_.ids[static_cast<size_t>(slot)];
    const char* begin = reinterpret_cast<const char*>(host);
    if (copy) {
#pragma omp target enter data map(to : begin [0:bytes]) device(device)
    } else {
#pragma omp target enter data map(alloc : begin [0:bytes]) device(device)
    }
    mappings_.push_back({begin, bytes, device});
    void* mapped = omp_get_mapped_ptr(begin, device);
    if (mapped == nullptr)
      fatal("cannot place " + std::to_string(bytes) + " bytes on OpenMP device " +
            std::to_string(device));
    return static_cast<T*>(mapped);
  }

 private:
  const Devices& devices_;
  std::vector<Mapping> mappings_;
};

// One graph: its points' owners, its host images (whose addresses are the
// depend objects and the keys of the device copies), and the device copies.
class GraphPlan {
 public:
  GraphPlan(const TaskGraph& g, const Devices& devices, const std::vector<const char*>& broadcast,
            size_t broadcast_bytes, DeviceMemory& memory)
      : graph_(&g), slots_(devices.count()), host_(devices.host), device_ids_(devices.ids) {
    const int64_t width = g.max_width;
    const auto row_bytes = static_cast<size_t>(width * g.output_bytes);
    const auto affordable = static_cast<int64_t>(kMaxOutputMemory / row_bytes);
    rows_ = std::max<int64_t>(2, std::min(g.fields, affordable));
    point_bytes_ = static_cast<size_t>(rows_ * g.output_bytes);

    owner_.resize(static_cast<size_t>(width));
    for (int64_t s = 0; s < slots_; ++s)
      for (int64_t p = s * width / slots_; p < (s + 1) * width / slots_; ++p)
        owner_[static_cast<size_t>(p)] = s;
    find_replicas();
    copied_.assign(static_cast<size_t>(width * slots_), 0);

    // Host images: never touched where devices exist (new char[]: no pages
    // are written), the buffers themselves on the host slot.
    outputs_.reset(new char[static_cast<size_t>(width) * point_bytes_]);
    replica_objects_.reset(new char[static_cast<size_t>(width * rows_ * slots_)]);
    scratch_.resize(static_cast<size_t>(width * g.scratch_bytes));
    prepare_scratch(scratch_.data(), scratch_.size());

    tables_.assign(static_cast<size_t>(slots_), std::vector<char*>(static_cast<size_t>(2 * width)));
    views_.resize(static_cast<size_t>(slots_));
    for (int64_t s = 0; s < slots_; ++s) {
      std::vector<char*>& table = tables_[static_cast<size_t>(s)];
      for (int64_t p = 0; p < width; ++p) {
        const bool owned = owner_of(p) == s;
        if (!owned && !replica_[static_cast<size_t>(p * slots_ + s)]) continue;
        table[static_cast<size_t>(2 * p)] = memory.enter(
            outputs_.get() + p * static_cast<int64_t>(point_bytes_), point_bytes_, s, false);
        if (owned && g.scratch_bytes > 0)
          table[static_cast<size_t>(2 * p + 1)] =
              memory.enter(scratch_of(p), static_cast<size_t>(g.scratch_bytes), s, true);
      }
      DeviceGraph& view = views_[static_cast<size_t>(s)];
      view = DeviceGraph{g,
                         rows_,
                         device_ids_[static_cast<size_t>(s)],
                         memory.enter(table.data(), table.size() * sizeof(char*), s, true),
                         broadcast[static_cast<size_t>(s)],
                         broadcast_bytes,
                         0,
                         0};
      memory.enter(&view, sizeof view, s, true);
    }
  }

  const TaskGraph& graph() const { return *graph_; }

  // Zeroes the task counts on every device.
  void reset_counts() {
    for (int64_t s = 0; s < slots_; ++s) {
      DeviceGraph* view = &views_[static_cast<size_t>(s)];
      const int device = device_ids_[static_cast<size_t>(s)];
      view->tasks = view->inputs = 0;
      if (!host_) {
#pragma omp target update to(view [0:1]) device(device)
      }
    }
  }

  // Adds the counts of every device to `counts`.
  void collect_counts(ExecutionCounts& counts) {
    for (int64_t s = 0; s < slots_; ++s) {
      DeviceGraph* view = &views_[static_cast<size_t>(s)];
      const int device = device_ids_[static_cast<size_t>(s)];
      if (!host_) {
#pragma omp target update from(view [0:1]) device(device)
      }
      counts.tasks += view->tasks;
      counts.inputs += view->inputs;
    }
  }

  // Called before the tasks of each timestep are created.
  void begin_timestep() { ++step_; }

  // Creates the region of task (t, p), after a copy of each input that lies
  // on another device (one per producer and device: the first consumer on a
  // device creates it, the others wait for it too).
  void create_task(int64_t t, int64_t p, std::vector<int64_t>& points,
                   std::vector<char*>& objects) {
    const TaskGraph& g = *graph_;
    const int64_t slot = owner_of(p);
    g.effective_inputs(t, p, points);
    objects.clear();
    for (int64_t q : points) {
      if (owner_of(q) == slot) {
        objects.push_back(output_object(t - 1, q));
        continue;
      }
      int64_t& copied = copied_[static_cast<size_t>(q * slots_ + slot)];
      if (copied != step_) {
        copied = step_;
        create_copy(t - 1, q, slot);
      }
      objects.push_back(replica_object(t - 1, q, slot));
    }
    char** in = objects.data();
    const int n = static_cast<int>(objects.size());
    char* out = output_object(t, p);
    // Tasks of one point share its scratch: order them when it is used.
    char* scratch[1] = {scratch_of(p)};
    char** shared = scratch;
    const int ns = g.scratch_bytes > 0 ? 1 : 0;
    DeviceGraph* view = &views_[static_cast<size_t>(slot)];
    const int device = device_ids_[static_cast<size_t>(slot)];
#pragma omp target nowait device(device) map(alloc                            \
                                             : view [0:1]) firstprivate(t, p) \
    depend(iterator(k = 0                                                     \
                    : n),                                                     \
           in                                                                 \
           : *in[k]) depend(out                                               \
                            : *out) depend(iterator(k = 0                     \
                                                    : ns),                    \
                                           inout                              \
                                           : *shared[k])
    run_task_on_device(*view, t, p);
  }

 private:
  int64_t owner_of(int64_t p) const { return owner_[static_cast<size_t>(p)]; }
  char* output_object(int64_t t, int64_t p) {
    return outputs_.get() + p * static_cast<int64_t>(point_bytes_) +
           (t % rows_) * graph_->output_bytes;
  }
  char* replica_object(int64_t t, int64_t p, int64_t slot) {
    return replica_objects_.get() + ((p * rows_ + t % rows_) * slots_ + slot);
  }
  char* scratch_of(int64_t p) { return scratch_.data() + p * graph_->scratch_bytes; }

  // replica_[q * slots + s]: device s reads point q's output at some
  // timestep although q belongs to another device. Timesteps with the same
  // dependence set and active ranges have the same edges: each is visited once.
  void find_replicas() {
    const TaskGraph& g = *graph_;
    replica_.assign(static_cast<size_t>(g.max_width * slots_), 0);
    if (slots_ == 1) return;
    std::set<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>> seen;
    std::vector<int64_t> producers;
    for (int64_t t = 1; t < g.timesteps; ++t) {
      const int64_t offset = g.offset_at(t), width = g.width_at(t);
      if (!seen.emplace(g.dependence_set_at(t), offset, width, g.offset_at(t - 1),
                        g.width_at(t - 1))
               .second)
        continue;
      for (int64_t p = offset; p < offset + width; ++p) {
        g.effective_inputs(t, p, producers);
        for (int64_t q : producers)
          if (owner_of(q) != owner_of(p))
            replica_[static_cast<size_t>(q * slots_ + owner_of(p))] = 1;
      }
    }
  }

  // Copies the output of (t, q) from its device into the replica on the
  // device of `slot`, once the producer has written it.
  void create_copy(int64_t t, int64_t q, int64_t slot) {
    const int64_t from_slot = owner_of(q);
    const auto bytes = static_cast<size_t>(graph_->output_bytes);
    const auto offset = static_cast<size_t>((t % rows_) * graph_->output_bytes);
    char* source = tables_[static_cast<size_t>(from_slot)][static_cast<size_t>(2 * q)] + offset;
    char* target = tables_[static_cast<size_t>(slot)][static_cast<size_t>(2 * q)] + offset;
    const int from_device = device_ids_[static_cast<size_t>(from_slot)];
    const int to_device = device_ids_[static_cast<size_t>(slot)];
    char* produced = output_object(t, q);
    char* replica = replica_object(t, q, slot);
#pragma omp task default(none) firstprivate(source, target, bytes, from_device, to_device) \
    depend(in                                                                              \
           : *produced) depend(out                                                         \
                               : *replica)
    {
      if (omp_target_memcpy(target, source, bytes, 0, 0, to_device, from_device) != 0)
        fatal("omp_target_memcpy of " + std::to_string(bytes) + " bytes from OpenMP device " +
              std::to_string(from_device) + " to device " + std::to_string(to_device) + " failed");
    }
  }

  const TaskGraph* graph_;
  int64_t slots_;
  bool host_;  // no device: the one slot is the host
  std::vector<int> device_ids_;
  int64_t rows_ = 2;
  size_t point_bytes_ = 0;  // rows_ * output bytes: one point's buffers
  std::vector<int64_t> owner_;
  std::vector<char> replica_;
  std::unique_ptr<char[]> outputs_;          // [point][row][output bytes]
  std::unique_ptr<char[]> replica_objects_;  // [point][row][slot]: depend objects
  std::vector<char> scratch_;                // [point][scratch bytes]
  std::vector<std::vector<char*>> tables_;   // per slot: DeviceGraph::points
  std::vector<DeviceGraph> views_;           // per slot (host copies)
  // copied_[q * slots + s]: the step_ in which the output of q was last
  // copied to slot s (0: never).
  std::vector<int64_t> copied_;
  int64_t step_ = 0;  // counts begin_timestep() calls, over all passes
};

// Creates every task of every graph; graphs interleave timestep by timestep
// so independent graphs run concurrently.
void create_tasks(std::vector<GraphPlan>& plans) {
  int64_t max_steps = 0;
  for (const GraphPlan& plan : plans) max_steps = std::max(max_steps, plan.graph().timesteps);
  std::vector<int64_t> points;
  std::vector<char*> objects;
  for (int64_t t = 0; t < max_steps; ++t) {
    for (GraphPlan& plan : plans) {
      const TaskGraph& g = plan.graph();
      if (t >= g.timesteps) continue;
      plan.begin_timestep();
      const int64_t offset = g.offset_at(t);
      for (int64_t p = offset; p < offset + g.width_at(t); ++p)
        plan.create_task(t, p, points, objects);
    }
  }
}

// The warm-up pass and the timed pass (its time and counts go to `info`).
// The time ends when every device has reported its counts: a runtime may
// finish a target task when the region is queued on its device (TaskGrid's
// offload plugin does), and the count transfer follows the device's regions.
void run_passes(std::vector<GraphPlan>& plans, RunInfo& info) {
  for (int pass = 0; pass < 2; ++pass) {
    for (GraphPlan& plan : plans) plan.reset_counts();
    const double start = wall_seconds();
    create_tasks(plans);
#pragma omp taskwait
    info.counts = {};
    for (GraphPlan& plan : plans) plan.collect_counts(info.counts);
    info.elapsed_seconds = wall_seconds() - start;
  }
}

// The size of the team that a parallel region asking for `requested` threads
// gets (fewer with OMP_THREAD_LIMIT or OMP_DYNAMIC, say).
int granted_threads(int requested) {
  int granted = 1;
#pragma omp parallel num_threads(requested) default(none) shared(granted)
#pragma omp single
  granted = omp_get_num_threads();
  return granted;
}

}  // namespace

int main(int argc, char** argv) {
  BenchConfig config;
  int exit_status = 0;
  if (!parse_command_line(argc, argv, config, exit_status)) return exit_status;
  const int workers = config.workers > 0 ? static_cast<int>(config.workers) : omp_get_max_threads();
  std::fputs(configuration_text(config).c_str(), stdout);

  const Devices devices = find_devices();
  std::vector<char> broadcast(static_cast<size_t>(config.broadcast_bytes));
  fill_broadcast(broadcast.data(), broadcast.size());
  std::vector<GraphPlan> plans;
  plans.reserve(config.graphs.size());
  {
    // The device copies go at the end of this block, before the host images
    // (plans, broadcast) they were made from.
    DeviceMemory memory(devices);
    std::vector<const char*> broadcast_copies(static_cast<size_t>(devices.count()), nullptr);
    if (!broadcast.empty())
      for (int64_t s = 0; s < devices.count(); ++s)
        broadcast_copies[static_cast<size_t>(s)] =
            memory.enter(broadcast.data(), broadcast.size(), s, true);

    for (const TaskGraph& g : config.graphs)
      plans.emplace_back(g, devices, broadcast_copies, broadcast.size(), memory);

    // Warm-up pass then timed pass. A team of `workers` threads runs the
    // copy tasks (the runtime's helper threads run the regions) and is started
    // outside the timed region. One thread: no parallel region at all (LLVM
    // 16's libomp fails an assertion when a serialized parallel region ends
    // with target tasks in it).
    RunInfo info{"omp_target", 1, granted_threads(workers), 0.0, {}};
    if (info.threads_per_rank > 1) {
#pragma omp parallel num_threads(workers) default(none) shared(plans, info)
#pragma omp single
      run_passes(plans, info);
    } else {
      run_passes(plans, info);
    }
    exit_status = finish_run(config, info);
  }
  return exit_status;
}
