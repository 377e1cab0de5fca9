// Task Bench graph model: the shapes, dependence patterns and kernels of
// ../shared/specs/taskbench.md (sections 1-6). Pure functions of the
// configuration; every system (serial, omp, mpi, taskgrid, ...) shares them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "gpu_shared.h"

namespace taskbench {

enum class DependenceType {
  trivial,
  no_comm,
  stencil_1d,
  stencil_1d_periodic,
  dom,
  tree,
  fft,
  all_to_all,
  nearest,
  spread,
  random_nearest,
  random_spread,
};

enum class KernelType {
  empty,
  busy_wait,
  memory_bound,
  compute_dgemm,
  memory_daxpy,
  compute_bound,
  compute_bound2,
  io_bound,
  load_imbalance,
  // TaskGrid's GPU kernel (core/gpu_shared.h): -gpu-lanes lanes, each running
  // kGpuChains independent FMA chains for -iter iterations;
  // FLOPs per task = 2 * kGpuChains * lanes * iterations. On CPUs every
  // system runs the same arithmetic on the host (the reference).
  gpu_compute_bound,
};

std::string_view to_string(DependenceType type);
std::string_view to_string(KernelType type);
// Return false when the name is not one of the spec's names.
bool parse_dependence_type(std::string_view name, DependenceType& out);
bool parse_kernel_type(std::string_view name, KernelType& out);

struct KernelConfig {
  KernelType type = KernelType::empty;
  int64_t iterations = 0;                // -iter
  int64_t samples = 16;                  // -sample
  double imbalance = 0.0;                // -imbalance
  int64_t gpu_lanes = kDefaultGpuLanes;  // -gpu-lanes (gpu_compute_bound only)
};

// An inclusive range of points, [first, last].
struct Interval {
  int64_t first;
  int64_t last;
  friend bool operator==(const Interval&, const Interval&) = default;
};

// One task graph of a run: its flags (after defaults) plus the geometry and
// dependence functions of spec section 3. Cheap to copy.
struct TaskGraph {
  int64_t graph_index = 0;  // position among the -and separated graphs
  int64_t timesteps = 4;    // T
  int64_t max_width = 4;    // W
  DependenceType dependence = DependenceType::trivial;
  int64_t radix = 3;
  int64_t period = 0;  // after defaults (spec 2.3)
  double fraction = 0.25;
  KernelConfig kernel;
  int64_t output_bytes = 16;
  int64_t scratch_bytes = 0;
  int64_t fields = 0;  // after defaults: T when not given

  // Active range of timestep t (spec 3.1); t < 0 gives offset 0, width 0.
  int64_t offset_at(int64_t timestep) const;
  int64_t width_at(int64_t timestep) const;
  bool is_active(int64_t timestep, int64_t point) const {
    const int64_t offset = offset_at(timestep);
    return point >= offset && point < offset + width_at(timestep);
  }

  // Dependence sets (spec 3.2).
  int64_t num_dependence_sets() const;
  int64_t dependence_set_at(int64_t timestep) const;

  // Raw dependence functions of spec 3.3/3.4, ignoring the active range.
  // They append to `out` (which is cleared first) in enumeration order.
  void dependencies(int64_t dset, int64_t point, std::vector<Interval>& out) const;
  void reverse_dependencies(int64_t dset, int64_t point, std::vector<Interval>& out) const;

  // Upper bound on the number of points any dependencies() list can hold.
  int64_t max_dependencies() const;

  // Effective inputs of task (t, p): the producer points of timestep t-1,
  // in enumeration order, keeping only those active at t-1. Cleared first.
  void effective_inputs(int64_t timestep, int64_t point, std::vector<int64_t>& out) const;
  // Effective consumers of the output of (t, q): points active at t+1 that
  // read it, using the dependence set of timestep t+1. Cleared first.
  void effective_consumers(int64_t timestep, int64_t point, std::vector<int64_t>& out) const;

  // Totals of spec section 4 and 6 (accounting formulas, never measured).
  int64_t total_tasks() const;
  int64_t total_dependencies() const;
  int64_t total_flops() const;
  int64_t total_bytes() const;
  // Per-task figures.
  int64_t task_iterations(int64_t timestep, int64_t point) const;  // N_task
  int64_t task_flops(int64_t timestep, int64_t point) const;
  int64_t task_bytes(int64_t timestep, int64_t point) const;
};

// The uniform deterministic random number U(x1..xn) of spec section 5.
uint64_t siphash24(const void* data, size_t bytes, uint64_t k0, uint64_t k1);
uint64_t taskbench_hash(const int64_t* args, size_t count);
double taskbench_random(const int64_t* args, size_t count);
inline double taskbench_random(std::initializer_list<int64_t> args) {
  return taskbench_random(args.begin(), args.size());
}

}  // namespace taskbench
