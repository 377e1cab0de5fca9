// diff_device_hash_fill's CUDA implementation (differential_hash.h): the same
// body as on the host, in one GPU thread, so that the device differential
// tests check real GPU runs bit for bit against sequential execution.
#include <cuda_runtime.h>

#include "differential_hash.h"

namespace differential {
namespace {

__global__ void hash_fill_kernel(Buffers buffers, TaskArgs args, uint64_t tweak) {
  fill_outputs(buffers, args, digest_inputs(buffers, args) ^ tweak);
}

}  // namespace

bool launch_hash_fill_on_cuda(void* stream, const Buffers& buffers, const TaskArgs& args,
                              uint64_t tweak) {
  hash_fill_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(buffers, args, tweak);
  return cudaGetLastError() == cudaSuccess;
}

}  // namespace differential
