// The control-batch decoder as the fuzz target (fuzz_batch.cpp) and its GCC
// replay (tests/comm/test_wire_check.cpp) drive it: comm::wire::check_batch,
// then, for an accepted batch, every read the engine makes of it (engine.cpp,
// tree_broadcaster.cpp, group_broadcaster.cpp). Nothing here exits: a
// rejected batch is only reported.
//
// An input is one byte that says who reads and who sent the batch, then the
// batch: bits 0-1 the sender (of 4 ranks), bit 2 set when the reader is rank 1
// (else rank 0, the head).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "comm/wire.h"
#include "comm/wire_check.h"

namespace taskgrid::fuzz {

constexpr int kRanks = 4;

inline comm::wire::Peer peer_of(uint8_t selector) {
  return comm::wire::Peer{(selector >> 2) & 1, kRanks, 0, selector & 3};
}

// True when the batch was accepted (and then read whole).
inline bool decode_batch(const char* data, size_t bytes, const comm::wire::Peer& peer) {
  if (comm::wire::check_batch(data, bytes, peer)) return false;
  comm::wire::BatchReader reader(data, bytes);
  comm::wire::Header header;
  const char* payload = nullptr;
  std::vector<comm::wire::Access> accesses;
  std::vector<char> args;
  std::vector<int32_t> ranks;
  std::vector<comm::wire::Completed> completed;
  uint64_t sink = 0;
  while (reader.next(header, payload)) {
    switch (header.kind) {
      case comm::wire::Kind::task: {
        const comm::wire::TaskView view = comm::wire::read_task(payload);
        accesses.resize(view.task.num_accesses);
        if (!accesses.empty())  // as engine.cpp: memcpy's pointers must not be null
          std::memcpy(accesses.data(), view.accesses, accesses.size() * sizeof(comm::wire::Access));
        args.assign(view.args, view.args + view.task.args_bytes);
        args.insert(args.end(), view.name, view.name + view.task.name_bytes);
        for (const comm::wire::Access& a : accesses) sink += a.in_version + a.out_version + a.bytes;
        break;
      }
      case comm::wire::Kind::send:
        sink += comm::wire::read<comm::wire::Send>(payload).version;
        break;
      case comm::wire::Kind::retire:
        sink += comm::wire::read<comm::wire::Retire>(payload).version;
        break;
      case comm::wire::Kind::create:
        sink += comm::wire::read<comm::wire::Create>(payload).bytes;
        break;
      case comm::wire::Kind::fetch:
        sink += comm::wire::read<comm::wire::Fetch>(payload).bytes;
        break;
      case comm::wire::Kind::broadcast:
      case comm::wire::Kind::route: {
        const auto route = comm::wire::read<comm::wire::Route>(payload);
        comm::wire::read_ranks(payload, sizeof route, route.count, ranks);
        break;
      }
      case comm::wire::Kind::mpi_broadcast: {
        const auto command = comm::wire::read<comm::wire::MpiBroadcast>(payload);
        comm::wire::read_ranks(payload, sizeof command, command.count, ranks);
        break;
      }
      case comm::wire::Kind::completed:
        completed.resize(header.bytes / sizeof(comm::wire::Completed));
        std::memcpy(completed.data(), payload, completed.size() * sizeof(comm::wire::Completed));
        break;
      case comm::wire::Kind::local_task:  // its pointer is never followed here
      case comm::wire::Kind::shutdown:
        break;
    }
  }
  for (int32_t r : ranks) sink += static_cast<uint64_t>(r);
  volatile uint64_t kept = sink;  // keeps the reads from being optimised away
  (void)kept;
  return true;
}

// An input as described above: the selector byte, then the batch, copied to
// a buffer of exactly its size so that a read past it is caught (ASan).
inline bool decode_input(const uint8_t* data, size_t size) {
  if (size == 0) return false;
  const std::vector<char> batch(data + 1, data + size);
  return decode_batch(batch.data(), batch.size(), peer_of(data[0]));
}

}  // namespace taskgrid::fuzz
