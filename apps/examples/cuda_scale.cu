// A task with a CUDA implementation (README "Tasks on GPUs"): built when CMake
// finds nvcc; runs on GPUs where the ranks have them, on the emulated device
// with TASKGRID_DEVICE=emulated, and on CPUs otherwise.
#include <cuda_runtime.h>

#include <cstdio>
#include <taskgrid/device.hpp>
#include <taskgrid/taskgrid.hpp>
#include <vector>

__global__ void scale_kernel(double* v, size_t n, double factor) {
  const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  if (i < n) v[i] *= factor;
}

void scale_on_cpu(taskgrid::TaskContext& ctx) {
  double* v = ctx.data_as<double>(0);
  for (size_t i = 0; i < ctx.size(0) / sizeof(double); ++i) v[i] *= ctx.arg<double>();
}

void scale_on_device(taskgrid::TaskContext& ctx) {  // data(0) is device memory
  const size_t n = ctx.size(0) / sizeof(double);
  const double factor = ctx.arg<double>();
  if (taskgrid::device_kind(ctx) == taskgrid::DeviceKind::cuda) {
    auto stream = static_cast<cudaStream_t>(ctx.stream());  // launch, never synchronise
    const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    if (blocks > 0) scale_kernel<<<blocks, 256, 0, stream>>>(ctx.data_as<double>(0), n, factor);
    if (cudaGetLastError() != cudaSuccess) throw taskgrid::Error("scale_kernel did not launch");
  } else {  // the emulated device: host work on the task's stream
    auto* v = static_cast<double*>(taskgrid::emulated_view(ctx, 0));
    taskgrid::launch_host_work(ctx, [v, n, factor] {
      for (size_t i = 0; i < n; ++i) v[i] *= factor;
    });
  }
}
const auto scale = taskgrid::register_device_function("scale", scale_on_cpu, scale_on_device);

int main(int argc, char** argv) {
  taskgrid::start(&argc, &argv);
  std::vector<double> v(1 << 20, 1.0);
  auto h = taskgrid::enter_data(v.data(), v.size() * sizeof(double));
  for (int i = 0; i < 3; ++i) {
    taskgrid::TaskOptions options;
    options.rank = i % taskgrid::num_ranks();  // the data moves between ranks' devices
    taskgrid::submit(scale, {taskgrid::inout(h)}, options, 2.0);
  }
  taskgrid::exit_data(h);
  bool ok = true;
  for (double x : v) ok = ok && x == 8.0;
  std::printf("cuda_scale: %s\n", ok ? "every value is 8" : "WRONG");
  return taskgrid::finish(ok ? 0 : 1);
}
