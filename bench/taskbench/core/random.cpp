// SipHash-2-4 and the uniform number U(x1..xn) of spec section 5.
#include <stdexcept>

#include "task_graph.h"

namespace taskbench {
namespace {

constexpr uint64_t rotl(uint64_t x, int bits) { return (x << bits) | (x >> (64 - bits)); }

struct SipState {
  uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }
  void absorb(uint64_t word) {
    v3 ^= word;
    round();
    round();
    v0 ^= word;
  }
};

uint64_t load_le64(const unsigned char* bytes, size_t count) {
  uint64_t word = 0;
  for (size_t i = 0; i < count; ++i) word |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  return word;
}

}  // namespace

uint64_t siphash24(const void* data, size_t bytes, uint64_t k0, uint64_t k1) {
  SipState s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
             k1 ^ 0x7465646279746573ULL};
  const auto* in = static_cast<const unsigned char*>(data);
  const size_t full = bytes / 8 * 8;
  for (size_t i = 0; i < full; i += 8) s.absorb(load_le64(in + i, 8));
  // Last block: remaining bytes plus the total length in the top byte.
  s.absorb(load_le64(in + full, bytes - full) | (static_cast<uint64_t>(bytes) << 56));
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

uint64_t taskbench_hash(const int64_t* args, size_t count) {
  // Arguments are hashed as signed 64-bit little-endian integers; the key's
  // last byte is 0 (spec 5, pitfall 11).
  constexpr size_t kMaxArgs = 8;
  unsigned char buffer[kMaxArgs * 8];
  if (count > kMaxArgs) throw std::invalid_argument("taskbench_hash: more than 8 arguments");
  for (size_t i = 0; i < count; ++i) {
    const auto value = static_cast<uint64_t>(args[i]);
    for (size_t b = 0; b < 8; ++b) buffer[i * 8 + b] = static_cast<unsigned char>(value >> (8 * b));
  }
  return siphash24(buffer, count * 8, 0x0807060504030201ULL, 0x000F0E0D0C0B0A09ULL);
}

double taskbench_random(const int64_t* args, size_t count) {
  return static_cast<double>(taskbench_hash(args, count)) * 0x1p-64;
}

}  // namespace taskbench
