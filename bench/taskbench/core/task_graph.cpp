// Geometry, dependence functions and accounting of spec sections 3, 4 and 6.
#include "task_graph.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace taskbench {
namespace {

struct NamedDependence {
  std::string_view name;
  DependenceType type;
};
constexpr NamedDependence kDependenceNames[] = {
    {"trivial", DependenceType::trivial},
    {"no_comm", DependenceType::no_comm},
    {"stencil_1d", DependenceType::stencil_1d},
    {"stencil_1d_periodic", DependenceType::stencil_1d_periodic},
    {"dom", DependenceType::dom},
    {"tree", DependenceType::tree},
    {"fft", DependenceType::fft},
    {"all_to_all", DependenceType::all_to_all},
    {"nearest", DependenceType::nearest},
    {"spread", DependenceType::spread},
    {"random_nearest", DependenceType::random_nearest},
    {"random_spread", DependenceType::random_spread},
};

struct NamedKernel {
  std::string_view name;
  KernelType type;
};
constexpr NamedKernel kKernelNames[] = {
    {"empty", KernelType::empty},
    {"busy_wait", KernelType::busy_wait},
    {"memory_bound", KernelType::memory_bound},
    {"compute_dgemm", KernelType::compute_dgemm},
    {"memory_daxpy", KernelType::memory_daxpy},
    {"compute_bound", KernelType::compute_bound},
    {"compute_bound2", KernelType::compute_bound2},
    {"io_bound", KernelType::io_bound},
    {"load_imbalance", KernelType::load_imbalance},
    {"gpu_compute_bound", KernelType::gpu_compute_bound},
};

// ceil(log2(w)) for w >= 1.
int64_t ceil_log2(int64_t w) {
  int64_t bits = 0;
  while ((int64_t{1} << bits) < w) ++bits;
  return bits;
}

int64_t floor_sqrt(int64_t n) {
  auto r = static_cast<int64_t>(std::sqrt(static_cast<double>(n)));
  while (r * r > n) --r;
  while ((r + 1) * (r + 1) <= n) ++r;
  return r;
}

bool random_edge(const TaskGraph& g, int64_t dset, int64_t producer, int64_t consumer) {
  const int64_t args[] = {g.graph_index, g.radix, dset, producer, consumer};
  return taskbench_random(args, 5) < g.fraction || (g.radix > 0 && producer == consumer);
}

// Calls visit(first, last) for each maximal run of consecutive points of
// [lo, hi] that `include` accepts, in ascending order.
template <typename Include, typename Visit>
void visit_runs(int64_t lo, int64_t hi, Include&& include, Visit&& visit) {
  int64_t run_start = -1;
  for (int64_t i = lo; i <= hi; ++i) {
    if (include(i)) {
      if (run_start < 0) run_start = i;
    } else if (run_start >= 0) {
      visit(run_start, i - 1);
      run_start = -1;
    }
  }
  if (run_start >= 0) visit(run_start, hi);
}

// Calls visit(first, last) for each interval of deps(dset, p) in enumeration
// order. Shared by the vector API and the allocation-free effective lists.
template <typename Visit>
void visit_dependencies(const TaskGraph& g, int64_t dset, int64_t p, Visit&& visit) {
  const int64_t W = g.max_width;
  const int64_t R = g.radix;
  switch (g.dependence) {
    case DependenceType::trivial:
    case DependenceType::random_spread:
      return;
    case DependenceType::no_comm:
      visit(p, p);
      return;
    case DependenceType::stencil_1d:
      visit(std::max<int64_t>(0, p - 1), std::min(p + 1, W - 1));
      return;
    case DependenceType::stencil_1d_periodic:
      visit(std::max<int64_t>(0, p - 1), std::min(p + 1, W - 1));
      if (p == 0) visit(W - 1, W - 1);
      if (p == W - 1) visit(0, 0);
      return;
    case DependenceType::dom:
      visit(std::max<int64_t>(0, p - 1), p);
      return;
    case DependenceType::tree:
      visit(p / 2, p / 2);
      return;
    case DependenceType::fft: {
      const int64_t s = int64_t{1} << dset;
      if (p - s >= 0) visit(p - s, p - s);
      visit(p, p);
      if (p + s < W) visit(p + s, p + s);
      return;
    }
    case DependenceType::all_to_all:
      visit(0, W - 1);
      return;
    case DependenceType::nearest:
      if (R > 0) visit(std::max<int64_t>(0, p - R / 2), std::min(p + (R - 1) / 2, W - 1));
      return;
    case DependenceType::spread:
      for (int64_t i = 0; i < R; ++i) {
        const int64_t q = (p + i * W / R + (i > 0 ? dset : 0)) % W;
        visit(q, q);
      }
      return;
    case DependenceType::random_nearest:
      visit_runs(std::max<int64_t>(0, p - R / 2), std::min(p + (R - 1) / 2, W - 1),
                 [&](int64_t i) { return random_edge(g, dset, i, p); }, visit);
      return;
  }
}

template <typename Visit>
void visit_reverse_dependencies(const TaskGraph& g, int64_t dset, int64_t p, Visit&& visit) {
  const int64_t W = g.max_width;
  const int64_t R = g.radix;
  switch (g.dependence) {
    case DependenceType::trivial:
    case DependenceType::random_spread:
      return;
    case DependenceType::no_comm:
    case DependenceType::stencil_1d:
    case DependenceType::stencil_1d_periodic:
    case DependenceType::fft:
    case DependenceType::all_to_all:
      // Symmetric relations: consumers are the same list as producers.
      visit_dependencies(g, dset, p, visit);
      return;
    case DependenceType::dom:
      visit(p, std::min(W - 1, p + 1));
      return;
    case DependenceType::tree:
      if (2 * p + 1 < W) {
        visit(2 * p, 2 * p + 1);
      } else if (2 * p < W) {
        visit(2 * p, 2 * p);
      }
      return;
    case DependenceType::nearest:
      if (R > 0) visit(std::max<int64_t>(0, p - (R - 1) / 2), std::min(p + R / 2, W - 1));
      return;
    case DependenceType::spread:
      for (int64_t i = 0; i < R; ++i) {
        const int64_t q = ((p - i * W / R - (i > 0 ? dset : 0)) % W + W) % W;
        visit(q, q);
      }
      return;
    case DependenceType::random_nearest:
      // Hash arguments stay (producer, consumer): both directions agree.
      visit_runs(std::max<int64_t>(0, p - (R - 1) / 2), std::min(p + R / 2, W - 1),
                 [&](int64_t i) { return random_edge(g, dset, p, i); }, visit);
      return;
  }
}

// Appends the points of `visit_fn`'s intervals that lie in [lo, hi].
template <typename VisitFn>
void collect_clipped(VisitFn&& visit_fn, int64_t lo, int64_t hi, std::vector<int64_t>& out) {
  visit_fn([&](int64_t first, int64_t last) {
    for (int64_t q = std::max(first, lo); q <= std::min(last, hi); ++q) out.push_back(q);
  });
}

}  // namespace

std::string_view to_string(DependenceType type) {
  for (const auto& entry : kDependenceNames)
    if (entry.type == type) return entry.name;
  return "unknown";
}

std::string_view to_string(KernelType type) {
  for (const auto& entry : kKernelNames)
    if (entry.type == type) return entry.name;
  return "unknown";
}

bool parse_dependence_type(std::string_view name, DependenceType& out) {
  for (const auto& entry : kDependenceNames) {
    if (entry.name == name) {
      out = entry.type;
      return true;
    }
  }
  return false;
}

bool parse_kernel_type(std::string_view name, KernelType& out) {
  for (const auto& entry : kKernelNames) {
    if (entry.name == name) {
      out = entry.type;
      return true;
    }
  }
  return false;
}

int64_t TaskGraph::offset_at(int64_t timestep) const {
  if (timestep < 0) return 0;
  if (dependence == DependenceType::dom)
    return std::max<int64_t>(0, timestep + max_width - timesteps);
  return 0;
}

int64_t TaskGraph::width_at(int64_t timestep) const {
  if (timestep < 0) return 0;
  switch (dependence) {
    case DependenceType::dom:
      return std::min({max_width, timestep + 1, timesteps - timestep});
    case DependenceType::tree:
      return std::min(max_width, int64_t{1} << std::min<int64_t>(timestep, 62));
    default:
      return max_width;
  }
}

int64_t TaskGraph::num_dependence_sets() const {
  switch (dependence) {
    case DependenceType::fft:
      return ceil_log2(max_width);
    case DependenceType::spread:
    case DependenceType::random_nearest:
      return period;
    default:
      return 1;
  }
}

int64_t TaskGraph::dependence_set_at(int64_t timestep) const {
  switch (dependence) {
    case DependenceType::fft: {
      const int64_t sets = num_dependence_sets();
      return (timestep + sets - 1) % sets;
    }
    case DependenceType::spread:
    case DependenceType::random_nearest:
      return timestep % period;
    default:
      return 0;
  }
}

void TaskGraph::dependencies(int64_t dset, int64_t point, std::vector<Interval>& out) const {
  out.clear();
  visit_dependencies(*this, dset, point,
                     [&](int64_t first, int64_t last) { out.push_back({first, last}); });
}

void TaskGraph::reverse_dependencies(int64_t dset, int64_t point,
                                     std::vector<Interval>& out) const {
  out.clear();
  visit_reverse_dependencies(*this, dset, point,
                             [&](int64_t first, int64_t last) { out.push_back({first, last}); });
}

int64_t TaskGraph::max_dependencies() const {
  int64_t bound = 0;
  switch (dependence) {
    case DependenceType::trivial:
    case DependenceType::random_spread:
      bound = 0;
      break;
    case DependenceType::no_comm:
    case DependenceType::tree:
      bound = 1;
      break;
    case DependenceType::dom:
      bound = 2;
      break;
    case DependenceType::stencil_1d:
    case DependenceType::stencil_1d_periodic:
    case DependenceType::fft:
      bound = 3;
      break;
    case DependenceType::all_to_all:
      bound = max_width;
      break;
    case DependenceType::nearest:
    case DependenceType::spread:
    case DependenceType::random_nearest:
      bound = radix;
      break;
  }
  return std::min(bound, max_width);
}

void TaskGraph::effective_inputs(int64_t timestep, int64_t point, std::vector<int64_t>& out) const {
  out.clear();
  const int64_t lo = offset_at(timestep - 1);
  const int64_t hi = lo + width_at(timestep - 1) - 1;
  if (hi < lo) return;
  const int64_t dset = dependence_set_at(timestep);
  collect_clipped([&](auto&& v) { visit_dependencies(*this, dset, point, v); }, lo, hi, out);
}

void TaskGraph::effective_consumers(int64_t timestep, int64_t point,
                                    std::vector<int64_t>& out) const {
  out.clear();
  if (timestep + 1 >= timesteps) return;
  const int64_t lo = offset_at(timestep + 1);
  const int64_t hi = lo + width_at(timestep + 1) - 1;
  const int64_t dset = dependence_set_at(timestep + 1);
  collect_clipped([&](auto&& v) { visit_reverse_dependencies(*this, dset, point, v); }, lo, hi,
                  out);
}

int64_t TaskGraph::total_tasks() const {
  int64_t tasks = 0;
  for (int64_t t = 0; t < timesteps; ++t) tasks += width_at(t);
  return tasks;
}

int64_t TaskGraph::total_dependencies() const {
  // Counted by clipping intervals, so all_to_all costs O(T*W), not O(T*W^2).
  int64_t deps = 0;
  for (int64_t t = 1; t < timesteps; ++t) {
    const int64_t lo = offset_at(t - 1);
    const int64_t hi = lo + width_at(t - 1) - 1;
    const int64_t dset = dependence_set_at(t);
    const int64_t offset = offset_at(t);
    for (int64_t p = offset; p < offset + width_at(t); ++p) {
      visit_dependencies(*this, dset, p, [&](int64_t first, int64_t last) {
        deps += std::max<int64_t>(0, std::min(last, hi) - std::max(first, lo) + 1);
      });
    }
  }
  return deps;
}

int64_t TaskGraph::task_iterations(int64_t timestep, int64_t point) const {
  if (kernel.type != KernelType::load_imbalance) return kernel.iterations;
  const int64_t args[] = {graph_index, timestep, point};
  const double u = taskbench_random(args, 3);
  // std::round rounds half away from zero, as the spec requires.
  return static_cast<int64_t>(
      std::round((1.0 + (u - 0.5) * kernel.imbalance) * static_cast<double>(kernel.iterations)));
}

int64_t TaskGraph::task_flops(int64_t timestep, int64_t point) const {
  switch (kernel.type) {
    case KernelType::compute_bound:
      return 128 * kernel.iterations + 64;
    case KernelType::load_imbalance:
      return 128 * task_iterations(timestep, point) + 64;
    case KernelType::compute_bound2:
      return 64 * kernel.iterations;
    case KernelType::compute_dgemm: {
      const int64_t n = floor_sqrt(scratch_bytes / 24);
      return 2 * n * n * n * kernel.iterations;
    }
    case KernelType::gpu_compute_bound:
      return 2 * kGpuChains * kernel.gpu_lanes * kernel.iterations;
    default:
      return 0;
  }
}

int64_t TaskGraph::task_bytes(int64_t, int64_t) const {
  switch (kernel.type) {
    case KernelType::memory_bound:
    case KernelType::memory_daxpy:
      return kernel.samples > 0 ? scratch_bytes * kernel.iterations / kernel.samples : 0;
    default:
      return 0;
  }
}

int64_t TaskGraph::total_flops() const {
  if (kernel.type != KernelType::load_imbalance) return task_flops(0, 0) * total_tasks();
  int64_t flops = 0;
  for (int64_t t = 0; t < timesteps; ++t) {
    const int64_t offset = offset_at(t);
    for (int64_t p = offset; p < offset + width_at(t); ++p) flops += task_flops(t, p);
  }
  return flops;
}

int64_t TaskGraph::total_bytes() const { return task_bytes(0, 0) * total_tasks(); }

}  // namespace taskbench
