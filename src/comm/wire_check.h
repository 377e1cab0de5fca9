// Checks a control batch before the engine applies any of it. A batch comes
// from another process (or a corrupted message), so nothing in it is trusted:
// every length is checked against the payload, every rank against the job,
// every data size against kMaxVersionBytes, and each kind against who may
// send it. The engine (apply_batch) and the fuzz target (fuzz/) both call
// check_batch, so what is fuzzed is what runs.
//
// What needs the engine's state (does a version exist, do its sizes agree)
// is checked where the command is applied (engine/engine_commands.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "comm/wire.h"

namespace taskgrid::comm::wire {

// No command may name data larger than this: 2^47 bytes (128 TiB) is the
// whole user address space of x86-64 and AArch64 with 4-level page tables,
// so a larger size can only be a corrupt command. The bound also keeps sums
// such as bytes + chunk_bytes far from overflowing.
constexpr uint64_t kMaxVersionBytes = uint64_t{1} << 47;

// Who reads a batch and who sent it: what a command may carry depends on it.
struct Peer {
  int rank = 0;    // this rank
  int ranks = 1;   // ranks in the job
  int head = 0;    // the rank whose planner plans this rank (itself in spmd mode)
  int source = 0;  // the batch's sender; == rank for a batch posted on this rank
};

struct Rejection {
  const char* reason = nullptr;  // nullptr: the batch may be applied
  uint8_t kind = 0;              // the raw kind of the offending command
  size_t offset = 0;             // where that command starts in the batch
  explicit operator bool() const { return reason != nullptr; }
};

// nullptr when the command may be applied; otherwise why not (a literal).
const char* check_command(Kind kind, const char* payload, size_t bytes, const Peer& peer);

// The first command of the batch that may not be applied, if any.
Rejection check_batch(const char* data, size_t bytes, const Peer& peer);

// "a task command from rank 3", "a command of unknown kind 99 from rank 3".
std::string command_name(uint8_t kind, int source);
// "protocol error: a task command from rank 3: <reason>" (the job's failure
// path adds the rank that refused it).
std::string describe(uint8_t kind, int source, const char* reason);

}  // namespace taskgrid::comm::wire
