// Transfer cookies of the engine: a pointer with the kind of transfer in its
// low bits (every object they point to is at least 8-byte aligned).
#pragma once

#include <cstdint>

namespace taskgrid::engine {

enum CookieKind : uint64_t {
  kReceive = 0,      // a Version received point to point
  kSend = 1,         // a Version sent
  kFetch = 2,        // a FetchReceive: a version into the program's buffer
  kTreeChunk = 3,    // a TreeBroadcaster::ChunkEvent
  kGroupChunk = 4,   // a GroupBroadcast's chunk
  kDevicePiece = 5,  // a DeviceTasks::DeviceSend's piece, sent from host memory
  kDeviceSend = 6,   // a DeviceTasks::DeviceSend straight from device memory
};

inline uint64_t make_cookie(const void* object, CookieKind kind) {
  return reinterpret_cast<uint64_t>(object) | kind;
}
inline CookieKind cookie_kind(uint64_t cookie) { return static_cast<CookieKind>(cookie & 7); }
template <typename T>
T* cookie_object(uint64_t cookie) {
  return reinterpret_cast<T*>(cookie & ~uint64_t{7});
}

}  // namespace taskgrid::engine
