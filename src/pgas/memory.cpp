// Global allocations: symmetric (one offset everywhere) and asymmetric (a
// part per rank, found through a symmetric descriptor).
#include "pgas/memory.h"

#include <cstring>
#include <string>

namespace taskgrid::pgas {
namespace {

// Room left for symmetric blocks on this rank (below its local arena), in
// arena coordinates; and the same for the local arena.
size_t symmetric_ceiling(const State& s) {
  return s.segment_bytes - kHeaderBytes - s.local.high_water();
}
size_t local_ceiling(const State& s) {
  return s.segment_bytes - kHeaderBytes - s.symmetric.high_water();
}

std::string describe(Memory memory) { return "allocation #" + std::to_string(memory.slot); }

uint32_t take_slot(State& s, const char* call) {
  if (!s.free_slots.empty()) {
    const uint32_t slot = s.free_slots.back();
    s.free_slots.pop_back();
    return slot;
  }
  if (s.next_slot == kMaxAllocations)
    throw Error(std::string(call) + ": " + std::to_string(kMaxAllocations) +
                " allocations are live; free some first");
  return s.next_slot++;
}

Memory publish(State& s, uint32_t slot) {
  Allocation& a = s.allocations[slot];
  const uint32_t generation = a.generation.load(std::memory_order_relaxed) + 1;
  a.generation.store(generation, std::memory_order_release);
  return Memory{slot, generation};
}

[[noreturn]] void out_of_memory(const State& s, const char* call, size_t bytes,
                                const AgreedValues& room, const char* what) {
  throw Error(std::string(call) + "(" + std::to_string(bytes) + " bytes): out of global memory: " +
              "rank " + std::to_string(room.min_rank) + " has " + std::to_string(room.min) +
              " bytes left for " + what + " (segment " + std::to_string(s.segment_bytes) +
              " bytes per rank; free allocations or raise TASKGRID_PGAS_SEGMENT)");
}

}  // namespace

Allocation& checked_allocation(State& s, Memory memory, const char* call) {
  if (!memory) throw Error(std::string(call) + ": no allocation (a default-constructed Memory)");
  if (memory.slot >= s.next_slot)
    throw Error(std::string(call) + ": unknown " + describe(memory) +
                " (not made by pgas::alloc on this job)");
  Allocation& a = s.allocations[memory.slot];
  const uint32_t generation = a.generation.load(std::memory_order_acquire);
  if (generation == memory.generation) return a;
  if (memory.generation < generation)
    throw Error(std::string(call) + ": " + describe(memory) + " was freed");
  throw Error(std::string(call) + ": unknown " + describe(memory) + " (generation " +
              std::to_string(memory.generation) + ")");
}

void check_rank(const State& s, int rank, const char* call) {
  if (rank < 0 || rank >= s.ranks)
    throw Error(std::string(call) + ": rank " + std::to_string(rank) +
                " is not a rank of the job (0.." + std::to_string(s.ranks - 1) + ")");
}

Part part_on(State& s, Allocation& a, int rank, const char* call) {
  check_rank(s, rank, call);
  if (!a.asymmetric) return Part{a.offset, a.bytes};
  if (rank == s.rank) return Part{a.local_offset, a.bytes};
  RemotePart& cached = a.parts[static_cast<size_t>(rank)];
  if (!cached.known.load(std::memory_order_acquire)) {
    uint64_t descriptor[2] = {0, 0};
    if (const char* segment = direct_segment(s, rank)) {
      std::memcpy(descriptor, segment + a.offset, sizeof descriptor);
    } else {
      check_mpi(MPI_Get(descriptor, 2, MPI_UINT64_T, rank, static_cast<MPI_Aint>(a.offset), 2,
                        MPI_UINT64_T, s.window),
                call);
      check_mpi(MPI_Win_flush(rank, s.window), call);
    }
    // Two threads may fetch at once; they store the same values.
    cached.offset.store(descriptor[0], std::memory_order_relaxed);
    cached.bytes.store(descriptor[1], std::memory_order_relaxed);
    cached.known.store(true, std::memory_order_release);
  }
  return Part{cached.offset.load(std::memory_order_relaxed),
              cached.bytes.load(std::memory_order_relaxed)};
}

uint64_t target_displacement(State& s, Memory memory, int rank, size_t offset, size_t bytes,
                             const char* call) {
  Allocation& a = checked_allocation(s, memory, call);
  const Part part = part_on(s, a, rank, call);
  if (offset > part.bytes || bytes > part.bytes - offset)
    throw Error(std::string(call) + ": bytes [" + std::to_string(offset) + ", " +
                std::to_string(offset + bytes) + ") are outside " + describe(memory) + " on rank " +
                std::to_string(rank) + " (" + std::to_string(part.bytes) + " bytes)");
  return part.offset + offset;
}

Memory alloc(size_t bytes) {
  State& s = state("pgas::alloc");
  CallRecord record;
  record.kind = CallKind::alloc;
  record.args[0] = bytes;
  record.reduced = symmetric_ceiling(s);
  const AgreedValues room = world_group(s).agreement->agree(record, "pgas::alloc");
  // Every rank runs the same arena with the same ceiling: the same offset, or the same failure.
  const auto block = s.symmetric.allocate(bytes, room.min);
  if (!block) out_of_memory(s, "pgas::alloc", bytes, room, "symmetric allocations");
  const uint32_t slot = take_slot(s, "pgas::alloc");
  Allocation& a = s.allocations[slot];
  a.asymmetric = false;
  a.offset = kHeaderBytes + *block;
  a.bytes = bytes;
  a.parts.reset();
  return publish(s, slot);
}

Memory alloc_asymmetric(size_t local_bytes) {
  State& s = state("pgas::alloc_asymmetric");
  const auto part = s.local.allocate(local_bytes, local_ceiling(s));
  // One reduced value says both things: 0 when a rank's part did not fit,
  // otherwise 1 + its room for the symmetric descriptor.
  CallRecord record;
  record.kind = CallKind::alloc_asymmetric;
  record.reduced = part ? symmetric_ceiling(s) + 1 : 0;
  AgreedValues room = world_group(s).agreement->agree(record, "pgas::alloc_asymmetric");
  if (room.min == 0) {
    if (part) s.local.release(*part);
    throw Error("pgas::alloc_asymmetric: out of global memory: rank " +
                std::to_string(room.min_rank) + " could not fit its part (segment " +
                std::to_string(s.segment_bytes) +
                " bytes per rank; free allocations or raise TASKGRID_PGAS_SEGMENT)");
  }
  room.min -= 1;
  const auto descriptor = s.symmetric.allocate(2 * sizeof(uint64_t), room.min);
  if (!descriptor) {
    s.local.release(*part);
    out_of_memory(s, "pgas::alloc_asymmetric", 2 * sizeof(uint64_t), room,
                  "symmetric allocations (the descriptor)");
  }
  const uint32_t slot = take_slot(s, "pgas::alloc_asymmetric");
  Allocation& a = s.allocations[slot];
  a.asymmetric = true;
  a.offset = kHeaderBytes + *descriptor;
  a.bytes = local_bytes;
  a.arena_offset = *part;
  a.local_offset = s.segment_bytes - *part - data::OffsetArena::rounded(local_bytes);
  a.parts = std::make_unique<RemotePart[]>(static_cast<size_t>(s.ranks));
  const uint64_t words[2] = {a.local_offset, a.bytes};
  std::memcpy(s.base + a.offset, words, sizeof words);
  MPI_Win_sync(s.window);  // a local store, seen by RMA from now on
  // Nobody reads a descriptor before its owner has written it.
  record.kind = CallKind::alloc_asymmetric_publish;
  world_group(s).agreement->agree(record, "pgas::alloc_asymmetric");
  return publish(s, slot);
}

void free(Memory memory) {
  State& s = state("pgas::free");
  // This rank's operations end before the block can be reused; the check
  // below waits for every rank's.
  check_mpi(MPI_Win_flush_all(s.window), "pgas::free");
  CallRecord record;
  record.kind = CallKind::free;
  record.args[0] = memory.slot;
  record.args[1] = memory.generation;
  world_group(s).agreement->agree(record, "pgas::free");
  Allocation& a = checked_allocation(s, memory, "pgas::free");
  if (a.asymmetric) {
    s.local.release(a.arena_offset);
    a.parts.reset();
  }
  s.symmetric.release(a.offset - kHeaderBytes);
  a.generation.store(memory.generation + 1, std::memory_order_release);
  s.free_slots.push_back(memory.slot);
}

void* local(Memory memory) {
  State& s = state("pgas::local");
  Allocation& a = checked_allocation(s, memory, "pgas::local");
  return s.base + (a.asymmetric ? a.local_offset : a.offset);
}

size_t size(Memory memory, int rank) {
  State& s = state("pgas::size");
  Allocation& a = checked_allocation(s, memory, "pgas::size");
  return part_on(s, a, rank, "pgas::size").bytes;
}

}  // namespace taskgrid::pgas
