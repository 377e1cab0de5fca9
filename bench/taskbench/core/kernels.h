// Task Bench kernels (spec section 6). Each returns a value derived from its
// work so that the optimiser cannot delete it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "task_graph.h"

namespace taskbench {

// True when this build links a BLAS (compute_dgemm, memory_daxpy).
bool blas_available();

double kernel_busy_wait(int64_t iterations);
double kernel_compute_bound(int64_t iterations);
double kernel_compute_bound2(int64_t iterations);
double kernel_memory_bound(int64_t iterations, int64_t samples, int64_t timestep, char* scratch,
                           size_t scratch_bytes);
double kernel_memory_daxpy(int64_t iterations, int64_t samples, int64_t timestep, char* scratch,
                           size_t scratch_bytes);
double kernel_compute_dgemm(int64_t iterations, char* scratch, size_t scratch_bytes);
// The CPU reference of gpu_compute_bound (core/gpu_shared.h): `lanes` lanes
// of kGpuChains chains of x = x*x + x, `iterations` times; returns the sum of
// every chain's final value. 2 * kGpuChains * lanes * iterations FLOPs.
double kernel_gpu_compute_bound(int64_t lanes, int64_t iterations);
// Real file I/O: `iterations` rounds of writing and reading back one 4 KiB
// block through a per-thread temporary file (unlinked, in TMPDIR).
double kernel_io_bound(int64_t iterations, int64_t timestep, int64_t point);

// Dispatches on graph.kernel.type with N_task for (timestep, point).
double run_kernel(const TaskGraph& graph, int64_t timestep, int64_t point, char* scratch,
                  size_t scratch_bytes);

}  // namespace taskbench
