// Definitions shared by the host code and the CUDA code of Task Bench
// (bench/taskbench/gpu/, compiled by nvcc as C++17): the arithmetic of the
// gpu_compute_bound kernel and the content of the -broadcast buffer, so that
// the CPU reference and the device kernels compute the same values.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define TASKBENCH_HOST_DEVICE __host__ __device__
#else
#define TASKBENCH_HOST_DEVICE
#endif

namespace taskbench {

// gpu_compute_bound: each of `lanes` lanes (one GPU thread each) runs
// kGpuChains independent chains of x = x*x + x (one FP64 FMA, 2 FLOPs) for
// -iter iterations, so a task performs 2 * kGpuChains * lanes * iterations
// FLOPs. The chains are independent so that a GPU thread has several FMAs in
// flight; nothing touches memory inside the loop.
constexpr int kGpuChains = 4;
constexpr int64_t kDefaultGpuLanes = int64_t{1} << 18;  // -gpu-lanes default

// Starting value of chain `chain` of lane `lane`: one of 1024 values in
// [-0.5, -2^-11]. x*x + x maps (-1, 0) into itself and approaches 0 like
// -1/n, so the values stay finite and never become subnormal.
TASKBENCH_HOST_DEVICE inline double gpu_chain_start(int64_t lane, int chain) {
  return -0.5 * static_cast<double>(1 + (lane * kGpuChains + chain) % 1024) / 1024.0;
}

// Word `index` (8 bytes) of the -broadcast buffer (splitmix64: cheap, and
// every word differs, so misplaced chunks show).
TASKBENCH_HOST_DEVICE inline uint64_t broadcast_word(uint64_t index) {
  uint64_t z = index + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Byte at `offset` of the -broadcast buffer's tail (past its last whole word).
TASKBENCH_HOST_DEVICE inline unsigned char broadcast_tail_byte(uint64_t offset) {
  return static_cast<unsigned char>(offset * 131 + 7);
}

}  // namespace taskbench
