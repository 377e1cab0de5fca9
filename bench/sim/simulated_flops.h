// What a simulated Task Bench task costs (taskgrid_sim.cpp and the SMPI
// build of the MPI baseline alike): its FLOPs by Task Bench's own accounting
// (TaskGraph::task_flops), charged at the simulated core's speed. Kernels
// whose cost is not FLOPs (busy_wait, memory_bound, memory_daxpy, io_bound)
// have no figure: -1.
#pragma once

#include <cstdint>

#include "core/task_graph.h"

namespace taskbench::sim {

inline double simulated_flops(const TaskGraph& graph, int64_t timestep, int64_t point) {
  switch (graph.kernel.type) {
    case KernelType::empty:
      return 0;
    case KernelType::compute_bound:
    case KernelType::compute_bound2:
    case KernelType::load_imbalance:
    case KernelType::compute_dgemm:
      return static_cast<double>(graph.task_flops(timestep, point));
    default:
      return -1;
  }
}

}  // namespace taskbench::sim
