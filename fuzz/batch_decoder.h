// The control-batch decoder as the fuzz target (fuzz_batch.cpp) and its GCC
// replay (tests/runtime/test_wire_check.cpp) drive it: wire::check_batch,
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

inline wire::Peer peer_of(uint8_t selector) {
  return wire::Peer{(selector >> 2) & 1, kRanks, 0, selector & 3};
}

// True when the batch was accepted (and then read whole).
inline bool decode_batch(const char* data, size_t bytes, const wire::Peer& peer) {
  if (wire::check_batch(data, bytes, peer)) return false;
  wire::BatchReader reader(data, bytes);
  wire::Header header;
  const char* payload = nullptr;
  std::vector<wire::Access> accesses;
  std::vector<char> args;
  std::vector<int32_t> ranks;
  std::vector<wire::Completed> completed;
  uint64_t sink = 0;
  while (reader.next(header, payload)) {
    switch (header.kind) {
      case wire::Kind::task: {
        const wire::TaskView view = wire::read_task(payload);
        accesses.resize(view.task.num_accesses);
        if (!accesses.empty())  // as engine.cpp: memcpy's pointers must not be null
          std::memcpy(accesses.data(), view.accesses, accesses.size() * sizeof(wire::Access));
        args.assign(view.args, view.args + view.task.args_bytes);
        args.insert(args.end(), view.name, view.name + view.task.name_bytes);
        for (const wire::Access& a : accesses) sink += a.in_version + a.out_version + a.bytes;
        break;
      }
      case wire::Kind::send:
        sink += wire::read<wire::Send>(payload).version;
        break;
      case wire::Kind::retire:
        sink += wire::read<wire::Retire>(payload).version;
        break;
      case wire::Kind::create:
        sink += wire::read<wire::Create>(payload).bytes;
        break;
      case wire::Kind::fetch:
        sink += wire::read<wire::Fetch>(payload).bytes;
        break;
      case wire::Kind::broadcast:
      case wire::Kind::route: {
        const auto route = wire::read<wire::Route>(payload);
        wire::read_ranks(payload, sizeof route, route.count, ranks);
        break;
      }
      case wire::Kind::mpi_broadcast: {
        const auto command = wire::read<wire::MpiBroadcast>(payload);
        wire::read_ranks(payload, sizeof command, command.count, ranks);
        break;
      }
      case wire::Kind::completed:
        completed.resize(header.bytes / sizeof(wire::Completed));
        std::memcpy(completed.data(), payload, completed.size() * sizeof(wire::Completed));
        break;
      case wire::Kind::local_task:  // its pointer is never followed here
      case wire::Kind::shutdown:
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
