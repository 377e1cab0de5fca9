// Transfer cookies of the engine: a pointer with the kind of transfer in its
// low bits (every object they point to is at least 8-byte aligned).
#pragma once

#include <cstdint>

namespace taskgrid::runtime {

enum CookieKind : uint64_t { kReceive = 0, kSend = 1, kFetch = 2, kBroadcastChunk = 3 };

inline uint64_t make_cookie(const void* object, CookieKind kind) {
  return reinterpret_cast<uint64_t>(object) | kind;
}
inline CookieKind cookie_kind(uint64_t cookie) { return static_cast<CookieKind>(cookie & 3); }
template <typename T>
T* cookie_object(uint64_t cookie) {
  return reinterpret_cast<T*>(cookie & ~uint64_t{3});
}

}  // namespace taskgrid::runtime
