// The differential harness's hashing task body (taskgrid-differential): what
// diff_hash_fill and diff_device_hash_fill compute, on plain byte buffers, so
// that the same code runs on the host, on the emulated device's host views
// and in a CUDA kernel (differential_cuda.cu, one thread: the buffers are at
// most 64 KiB). Every output byte depends on every input byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#ifdef __CUDACC__
#define DIFFERENTIAL_HD __host__ __device__
#else
#define DIFFERENTIAL_HD
#endif

namespace differential {

DIFFERENTIAL_HD inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr size_t kMaxAccesses = 4;

// A task's by-value arguments: the salt, the accesses' sizes and modes (as
// taskgrid::AccessMode: 1 in, 2 out, 3 inout), rounds of busy work.
struct TaskArgs {
  uint64_t salt;
  uint16_t sizes[kMaxAccesses];
  uint32_t spin;  // busy rounds (diff_spin)
  uint8_t count;
  uint8_t modes[kMaxAccesses];
  uint8_t reserved[7];
};
static_assert(sizeof(TaskArgs) == 32);
static_assert(std::is_trivially_copyable_v<TaskArgs>);

constexpr uint8_t kModeIn = 1;   // taskgrid::AccessMode::in
constexpr uint8_t kModeOut = 2;  // taskgrid::AccessMode::out
DIFFERENTIAL_HD inline bool reads(uint8_t mode) { return mode != kModeOut; }
DIFFERENTIAL_HD inline bool writes(uint8_t mode) { return mode != kModeIn; }

// A task's buffers: host memory, an emulated device's host views or CUDA
// device memory.
struct Buffers {
  uint8_t* data[kMaxAccesses] = {};
  size_t size[kMaxAccesses] = {};
};

// FNV-1a over every readable access, then mixed.
DIFFERENTIAL_HD inline uint64_t digest_inputs(const Buffers& buffers, const TaskArgs& args) {
  uint64_t digest = 14695981039346656037ULL ^ args.salt;
  for (size_t i = 0; i < args.count; ++i) {
    if (!reads(args.modes[i])) continue;
    const uint8_t* data = buffers.data[i];
    digest = (digest ^ (0x100 + i)) * 1099511628211ULL;
    for (size_t b = 0; b < buffers.size[i]; ++b) digest = (digest ^ data[b]) * 1099511628211ULL;
  }
  return mix64(digest);
}

// Each writable access gets a stream derived from the digest; inout accesses
// fold their old bytes in.
DIFFERENTIAL_HD inline void fill_outputs(const Buffers& buffers, const TaskArgs& args,
                                         uint64_t digest) {
  for (size_t k = 0; k < args.count; ++k) {
    if (!writes(args.modes[k])) continue;
    uint8_t* out = buffers.data[k];
    const bool keep = reads(args.modes[k]);
    const uint64_t stream = mix64(digest ^ ((k + 1) * 0x51afd7ed558ccd1dULL));
    uint64_t word = 0;
    for (size_t b = 0; b < buffers.size[k]; ++b) {
      if (b % 8 == 0) word = mix64(stream + b);
      const auto fresh = static_cast<uint8_t>(word >> (8 * (b % 8)));
      out[b] = keep ? static_cast<uint8_t>(out[b] * 31u + fresh) : fresh;
    }
  }
}

// On CUDA (differential_cuda.cu, where the build has nvcc): the body above as
// a one-thread kernel on `stream`, the digest xor-ed with `tweak`. false when
// the launch failed.
bool launch_hash_fill_on_cuda(void* stream, const Buffers& buffers, const TaskArgs& args,
                              uint64_t tweak);

}  // namespace differential
