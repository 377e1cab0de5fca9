// The PGAS layer's process-wide state (internal): the segment's MPI window,
// the two arenas, the allocation table and the groups.
//
// Segment layout (each rank):
//   [0, 64)                           header: this rank's lock words
//   [64, 64 + symmetric high water)   symmetric arena, growing up (same on every rank)
//   [segment - local high water, end) local arena (asymmetric parts), growing down
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "data/offset_arena.h"
#include "pgas/agreement.h"
#include "taskgrid/pgas.hpp"

namespace taskgrid::pgas {

inline constexpr size_t kHeaderBytes = 64;
inline constexpr size_t kLockNextTicket = 0;  // header offsets of the lock words
inline constexpr size_t kLockNowServing = 8;
inline constexpr uint32_t kMaxAllocations = 1u << 16;
inline constexpr size_t kDefaultSegmentBytes = size_t{64} << 20;
inline constexpr double kDefaultTimeoutSeconds = 120.0;

// Where an asymmetric allocation's part lies on one rank, fetched once.
struct RemotePart {
  std::atomic<bool> known{false};
  std::atomic<uint64_t> offset{0};
  std::atomic<uint64_t> bytes{0};
};

// An allocation. `generation` equals the handle's while it is live; fields are
// written before `generation` is published (release), so a thread that sees
// the generation sees them.
struct Allocation {
  std::atomic<uint32_t> generation{0};
  bool asymmetric = false;
  uint64_t offset = 0;                  // symmetric: the block; asymmetric: the 16-byte descriptor
  uint64_t bytes = 0;                   // symmetric: its size; asymmetric: this rank's part
  uint64_t local_offset = 0;            // asymmetric: this rank's part in the segment
  uint64_t arena_offset = 0;            // asymmetric: the part's offset inside the local arena
  std::unique_ptr<RemotePart[]> parts;  // asymmetric: one per rank
};

// TASKGRID_NCCL: the path of collectives on device memory (device.cpp).
enum class NcclChoice : uint8_t { automatic, yes, no };

struct DeviceState;  // device.cpp: device memory and device collectives

struct GroupState {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<int> world_ranks;  // by group rank
  int my_rank = -1;
  std::string label;
  std::unique_ptr<Agreement> agreement;
  bool live = true;
};

struct State {
  MPI_Comm world_comm = MPI_COMM_NULL;   // the layer's own copy of MPI_COMM_WORLD
  MPI_Comm adhoc_comm = MPI_COMM_NULL;   // checks of create_group (no group exists yet)
  MPI_Win window = MPI_WIN_NULL;         // every rank's segment: RMA and atomics
  MPI_Win shared_window = MPI_WIN_NULL;  // the node's segments, mapped here (direct access)
  char* base = nullptr;
  // By world rank: where that rank's segment is mapped in this process, when
  // it shares this node (loads and stores, no MPI); nullptr otherwise. Gets
  // through MPI need the target to poll here (MPICH ch4), so the node path is
  // also what keeps a computing rank from stalling its readers.
  std::vector<char*> direct_base;
  size_t segment_bytes = 0;
  double timeout_seconds = kDefaultTimeoutSeconds;
  bool initialized_mpi = false;
  int rank = 0;
  int ranks = 1;
  int node_rank = 0;  // among the ranks of this node: which of its devices this rank uses
  NcclChoice nccl_choice = NcclChoice::automatic;  // TASKGRID_NCCL
  std::shared_ptr<DeviceState> device;             // opened by the first device call

  data::OffsetArena symmetric;
  data::OffsetArena local;
  std::unique_ptr<Allocation[]> allocations;
  uint32_t next_slot = 0;
  std::vector<uint32_t> free_slots;  // reused last-in first-out, the same on every rank

  std::vector<std::unique_ptr<GroupState>> groups;  // group id = index + 1; world is id 1

  std::mutex lock_mutex;                      // guards lock_holders
  std::vector<std::thread::id> lock_holders;  // by rank: the thread holding its lock
};

// Grants the layer (and its C API) a Group's id.
struct GroupAccess {
  static Group make(uint32_t id) {
    Group group;
    group.id_ = id;
    return group;
  }
  static void clear(Group& group) { group.id_ = 0; }
};

// The mapped segment of `rank` when it shares this node, else nullptr.
inline char* direct_segment(const State& s, int rank) {
  return s.direct_base[static_cast<size_t>(rank)];
}

// The state, or Error("<call>: call pgas::init first").
State& state(const char* call);
State* state_or_null();
GroupState& world_group(State& s);

// How many times the task epilogue completed a task's operations (tests).
uint64_t task_epilogue_fences();

// Throws Error("<call>: <MPI's message>") unless `code` is MPI_SUCCESS.
void check_mpi(int code, const char* call);

}  // namespace taskgrid::pgas
