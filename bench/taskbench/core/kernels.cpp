// Kernels of spec section 6. This file is compiled with -ffp-contract=fast so
// that `x * x + x` becomes one fused multiply-add, as in the reference.
#include "kernels.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gpu_shared.h"
#include "task_contract.h"

#ifdef TASKBENCH_HAVE_BLAS
#include <cblas.h>

// OpenBLAS's own: stops its thread pool (not in cblas.h; weak, so that a BLAS
// without it links and the call is skipped).
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));
#endif

namespace taskbench {

#ifdef TASKBENCH_HAVE_BLAS
namespace {

// OpenBLAS (pthreads) starts a thread per core when it loads, and each spins
// (sched_yield) about 0.1 s waiting for work that never comes: on a 2-core
// machine that takes a core from the first tens of milliseconds of every run,
// often the timed pass of a short one (1 rank, 2 threads: METG spread 4-12
// µs with it, 4-5 µs without). Tasks are the parallelism here, so BLAS runs
// single-threaded in them: stop the pool before main() starts any thread.
struct SingleThreadedBlas {
  SingleThreadedBlas() {
    openblas_set_num_threads(1);
    if (blas_thread_shutdown_) blas_thread_shutdown_();
  }
};
const SingleThreadedBlas single_threaded_blas;

}  // namespace
#endif

bool blas_available() {
#ifdef TASKBENCH_HAVE_BLAS
  return true;
#else
  return false;
#endif
}

double kernel_busy_wait(int64_t iterations) {
  int64_t a = 113;
  for (int64_t i = 0; i < iterations; ++i) a = (a * 139) % 2147483647;
  return static_cast<double>(a);
}

double kernel_compute_bound(int64_t iterations) {
  // 64 independent lanes keep the FMA units busy (throughput-bound, not
  // latency-bound); the compiler keeps them in vector registers.
  constexpr int kLanes = 64;
  alignas(64) double x[kLanes];
  for (int j = 0; j < kLanes; ++j) x[j] = 1e-3 * (j + 1);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int j = 0; j < kLanes; ++j) x[j] = x[j] * x[j] + x[j];
  }
  double product = 1.0;
  for (int j = 0; j < kLanes; ++j) product *= x[j];
  return product;
}

double kernel_compute_bound2(int64_t iterations) {
  constexpr int kElements = 32;
  alignas(64) double a[kElements], b[kElements], c[kElements];
  for (int j = 0; j < kElements; ++j) {
    a[j] = 1.2345;
    b[j] = 1.010101;
    c[j] = 0.0;
  }
  for (int64_t i = 0; i < iterations; ++i) {
    for (int j = 0; j < kElements; ++j) c[j] += a[j] * b[j];
  }
  double sum = 0.0;
  for (int j = 0; j < kElements; ++j) sum += c[j];
  return sum;
}

double kernel_gpu_compute_bound(int64_t lanes, int64_t iterations) {
  // Lanes go in groups of kGroup, so that kGroup * kGpuChains independent
  // chains fill the vector registers (the arithmetic per chain is the GPU's).
  constexpr int64_t kGroup = 16;
  constexpr int kValues = static_cast<int>(kGroup) * kGpuChains;
  double sum = 0.0;
  for (int64_t first = 0; first < lanes; first += kGroup) {
    const int count = static_cast<int>(std::min(kGroup, lanes - first)) * kGpuChains;
    alignas(64) double x[kValues];
    for (int j = 0; j < count; ++j) x[j] = gpu_chain_start(first + j / kGpuChains, j % kGpuChains);
    if (count == kValues) {
      for (int64_t i = 0; i < iterations; ++i)
        for (int j = 0; j < kValues; ++j) x[j] = x[j] * x[j] + x[j];
    } else {
      for (int64_t i = 0; i < iterations; ++i)
        for (int j = 0; j < count; ++j) x[j] = x[j] * x[j] + x[j];
    }
    for (int j = 0; j < count; ++j) sum += x[j];
  }
  return sum;
}

double kernel_memory_bound(int64_t iterations, int64_t samples, int64_t timestep, char* scratch,
                           size_t scratch_bytes) {
  const auto slice_bytes = static_cast<int64_t>(scratch_bytes) / samples;
  // Visit `iterations` slices cyclically from slice (t*N) mod S; each maximal
  // run of consecutive slices (a wrap ends a run) copies its first half onto
  // its second half.
  int64_t slice = (timestep * iterations) % samples;
  int64_t remaining = iterations;
  while (remaining > 0) {
    const int64_t run = std::min(remaining, samples - slice);
    char* begin = scratch + slice * slice_bytes;
    const auto half = static_cast<size_t>(run * slice_bytes / 2);
    std::memcpy(begin + half, begin, half);
    remaining -= run;
    slice = 0;
  }
  return static_cast<double>(static_cast<unsigned char>(scratch[scratch_bytes - 1]));
}

double kernel_memory_daxpy(int64_t iterations, int64_t samples, int64_t timestep, char* scratch,
                           size_t scratch_bytes) {
#ifdef TASKBENCH_HAVE_BLAS
  const auto slice_bytes = static_cast<int64_t>(scratch_bytes) / samples;
  const auto n = static_cast<blasint>(slice_bytes / 16);
  for (int64_t j = 0; j < iterations; ++j) {
    const int64_t slice = (timestep * iterations + j) % samples;
    auto* x = reinterpret_cast<double*>(scratch + slice * slice_bytes);
    cblas_daxpy(n, 1.0, x, 1, x + n, 1);
  }
  return static_cast<double>(static_cast<unsigned char>(scratch[scratch_bytes - 1]));
#else
  (void)iterations, (void)samples, (void)timestep, (void)scratch, (void)scratch_bytes;
  fatal("memory_daxpy needs BLAS, and this build has none");
#endif
}

double kernel_compute_dgemm(int64_t iterations, char* scratch, size_t scratch_bytes) {
#ifdef TASKBENCH_HAVE_BLAS
  // Single-threaded since start-up (SingleThreadedBlas above).
  int64_t n = 0;
  while ((n + 1) * (n + 1) <= static_cast<int64_t>(scratch_bytes) / 24) ++n;
  auto* a = reinterpret_cast<double*>(scratch);
  double* b = a + n * n;
  double* c = b + n * n;
  const auto order = static_cast<blasint>(n);
  for (int64_t i = 0; i < iterations; ++i)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, order, order, order, 1.0, a, order, b,
                order, 1.0, c, order);
  return n > 0 ? c[0] : 0.0;
#else
  (void)iterations, (void)scratch, (void)scratch_bytes;
  fatal("compute_dgemm needs BLAS, and this build has none");
#endif
}

namespace {

// One temporary file per thread, unlinked at once so nothing is left behind
// even when the process is killed.
class ThreadScratchFile {
 public:
  ThreadScratchFile() {
    const char* dir = std::getenv("TMPDIR");
    std::string path = std::string(dir && *dir ? dir : "/tmp") + "/taskbench-io-XXXXXX";
    fd_ = mkstemp(path.data());
    if (fd_ < 0) fatal("io_bound: cannot create a file in " + path + ": " + std::strerror(errno));
    unlink(path.c_str());
  }
  ~ThreadScratchFile() { close(fd_); }
  ThreadScratchFile(const ThreadScratchFile&) = delete;
  ThreadScratchFile& operator=(const ThreadScratchFile&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

}  // namespace

double kernel_io_bound(int64_t iterations, int64_t timestep, int64_t point) {
  constexpr size_t kBlock = 4096;
  constexpr int64_t kBlocksInFile = 16;
  thread_local ThreadScratchFile file;
  alignas(64) int64_t block[kBlock / sizeof(int64_t)];
  alignas(64) int64_t readback[kBlock / sizeof(int64_t)];
  int64_t sum = 0;
  for (int64_t i = 0; i < iterations; ++i) {
    for (size_t w = 0; w < kBlock / sizeof(int64_t); ++w)
      block[w] = timestep * 1000003 + point * 7919 + i + static_cast<int64_t>(w);
    const auto offset = static_cast<off_t>((i % kBlocksInFile) * static_cast<int64_t>(kBlock));
    if (pwrite(file.fd(), block, kBlock, offset) != static_cast<ssize_t>(kBlock))
      fatal(std::string("io_bound: write failed: ") + std::strerror(errno));
    if (pread(file.fd(), readback, kBlock, offset) != static_cast<ssize_t>(kBlock))
      fatal(std::string("io_bound: read failed: ") + std::strerror(errno));
    if (std::memcmp(block, readback, kBlock) != 0) fatal("io_bound: read back different data");
    sum += readback[i % (kBlock / sizeof(int64_t))];
  }
  return static_cast<double>(sum);
}

double run_kernel(const TaskGraph& graph, int64_t timestep, int64_t point, char* scratch,
                  size_t scratch_bytes) {
  const KernelConfig& k = graph.kernel;
  switch (k.type) {
    case KernelType::empty:
      return 0.0;
    case KernelType::busy_wait:
      return kernel_busy_wait(k.iterations);
    case KernelType::compute_bound:
      return kernel_compute_bound(k.iterations);
    case KernelType::compute_bound2:
      return kernel_compute_bound2(k.iterations);
    case KernelType::load_imbalance:
      return kernel_compute_bound(graph.task_iterations(timestep, point));
    case KernelType::memory_bound:
      return kernel_memory_bound(k.iterations, k.samples, timestep, scratch, scratch_bytes);
    case KernelType::memory_daxpy:
      return kernel_memory_daxpy(k.iterations, k.samples, timestep, scratch, scratch_bytes);
    case KernelType::compute_dgemm:
      return kernel_compute_dgemm(k.iterations, scratch, scratch_bytes);
    case KernelType::io_bound:
      return kernel_io_bound(k.iterations, timestep, point);
    case KernelType::gpu_compute_bound:
      return kernel_gpu_compute_bound(k.gpu_lanes, k.iterations);
  }
  return 0.0;
}

}  // namespace taskbench
