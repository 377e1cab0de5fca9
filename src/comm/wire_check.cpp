#include "comm/wire_check.h"

#include <limits>

#include "coll/broadcast.h"

namespace taskgrid::comm::wire {
namespace {

bool in_job(int64_t rank, const Peer& peer) { return rank >= 0 && rank < peer.ranks; }

// Tasks, sends, retirements, broadcasts and shutdown come from the planner
// that plans this rank: this rank's own (spmd, and the head's own batches)
// or the head's (cluster mode).
bool from_planner(const Peer& peer) { return peer.source == peer.rank || peer.source == peer.head; }

// create and fetch carry raw pointers of the planner's process: a batch from
// another rank may never carry them (fetch would write wherever it says).
bool from_here(const Peer& peer) { return peer.source == peer.rank; }

const char* check_access(const Access& access, const Peer& peer) {
  if (!access.in_version && !access.out_version)
    return "an access with neither an input nor an output version";
  if (access.bytes > kMaxVersionBytes) return "an access larger than the largest version (2^47 B)";
  if (access.flags & ~kRetiresInput) return "an access with unknown flags";
  if ((access.flags & kRetiresInput) && !(access.in_version && access.out_version))
    return "an access that retires its input without reading and writing";
  if (access.source >= 0) {
    if (!in_job(access.source, peer)) return "an input from a rank outside the job";
    if (access.tag < 0) return "an input with a negative transfer tag";
  } else if (access.source != -1 && access.source != kSourceBroadcast) {
    return "an input from an unknown source";
  }
  return nullptr;
}

const char* check_task(const char* payload, size_t bytes, const Peer& peer) {
  if (!from_planner(peer)) return "tasks come only from this rank's planner";
  if (bytes < sizeof(Task)) return "the payload is shorter than a task's fields";
  const Task task = read<Task>(payload);
  // 64-bit sums of 32-bit fields: cannot overflow whatever the fields say.
  const uint64_t expected = sizeof(Task) + uint64_t{task.num_accesses} * sizeof(Access) +
                            uint64_t{task.args_bytes} + uint64_t{task.name_bytes};
  if (expected != bytes) return "its accesses, arguments and name do not fill its payload exactly";
  if (task.channel < -1) return "a negative channel";
  if (task.signature_bytes > task.args_bytes) return "argument types longer than its arguments";
  const char* at = payload + sizeof(Task);
  for (uint32_t i = 0; i < task.num_accesses; ++i, at += sizeof(Access))
    if (const char* reason = check_access(read<Access>(at), peer)) return reason;
  return nullptr;
}

// A Route or MpiBroadcast: `fixed` bytes, then `count` ranks of the job.
const char* check_rank_list(const char* payload, size_t bytes, size_t fixed, uint32_t count,
                            const Peer& peer) {
  if (bytes != fixed + uint64_t{count} * sizeof(int32_t))
    return "its rank count does not match its payload";
  for (uint32_t i = 0; i < count; ++i)
    if (!in_job(read<int32_t>(payload + fixed + size_t{i} * sizeof(int32_t)), peer))
      return "a rank outside the job";
  return nullptr;
}

// The broadcasters keep a record per chunk, counted in 32 bits.
const char* check_chunks(uint64_t bytes, uint64_t chunk_bytes) {
  if (bytes > kMaxVersionBytes) return "data larger than the largest version (2^47 B)";
  if (bytes && chunk_bytes && (bytes - 1) / chunk_bytes >= std::numeric_limits<uint32_t>::max())
    return "more chunks than a broadcast can count";
  return nullptr;
}

const char* check_route(const char* payload, size_t bytes, const Peer& peer, bool root) {
  if (root && !from_planner(peer)) return "broadcasts come only from this rank's planner";
  if (bytes < sizeof(Route)) return "the payload is shorter than a route's fields";
  const Route route = read<Route>(payload);
  if (const char* reason = check_rank_list(payload, bytes, sizeof route, route.count, peer))
    return reason;
  if (route.shape > static_cast<uint8_t>(coll::Shape::chain)) return "an unknown broadcast shape";
  if (route.tag < 0) return "a negative transfer tag";
  return check_chunks(route.bytes, route.chunk_bytes);
}

const char* check_mpi_broadcast(const char* payload, size_t bytes, const Peer& peer) {
  if (!from_planner(peer)) return "broadcasts come only from this rank's planner";
  if (bytes < sizeof(MpiBroadcast)) return "the payload is shorter than an MPI broadcast's fields";
  const MpiBroadcast command = read<MpiBroadcast>(payload);
  if (const char* reason = check_rank_list(payload, bytes, sizeof command, command.count, peer))
    return reason;
  if (!in_job(command.root, peer)) return "a root outside the job";
  if (command.tag < 0) return "a negative transfer tag";
  return check_chunks(command.bytes, command.chunk_bytes);
}

}  // namespace

const char* check_command(Kind kind, const char* payload, size_t bytes, const Peer& peer) {
  switch (kind) {
    case Kind::task:
      return check_task(payload, bytes, peer);
    case Kind::send: {
      if (!from_planner(peer)) return "sends come only from this rank's planner";
      if (bytes != sizeof(Send)) return "the payload is not one send";
      const Send send = read<Send>(payload);
      if (!in_job(send.dest, peer)) return "a destination outside the job";
      if (send.tag < 0) return "a negative transfer tag";
      return nullptr;
    }
    case Kind::retire:
      if (!from_planner(peer)) return "retirements come only from this rank's planner";
      return bytes == sizeof(Retire) ? nullptr : "the payload is not one retirement";
    case Kind::create: {
      if (!from_here(peer)) return "a local-only command (it carries a pointer) from another rank";
      if (bytes != sizeof(Create)) return "the payload is not one create";
      const Create create = read<Create>(payload);
      if (create.bytes > kMaxVersionBytes) return "data larger than the largest version (2^47 B)";
      if (create.bytes && !create.buffer) return "data without a buffer";
      return nullptr;
    }
    case Kind::fetch: {
      if (!from_here(peer)) return "a local-only command (it carries a pointer) from another rank";
      if (bytes != sizeof(Fetch)) return "the payload is not one fetch";
      const Fetch fetch = read<Fetch>(payload);
      if (fetch.bytes > kMaxVersionBytes) return "data larger than the largest version (2^47 B)";
      if (fetch.bytes && !fetch.host) return "data without a host buffer";
      if (fetch.source != -1 && !in_job(fetch.source, peer)) return "a source outside the job";
      if (fetch.source >= 0 && fetch.tag < 0) return "a negative transfer tag";
      return nullptr;
    }
    case Kind::local_task:
      if (!from_here(peer)) return "a local-only command (it carries a pointer) from another rank";
      if (bytes != sizeof(LocalTask)) return "the payload is not one local task";
      return read<LocalTask>(payload).record ? nullptr : "a local task without its record";
    case Kind::shutdown:  // its payload is never read
      return from_planner(peer) ? nullptr : "shutdown comes only from this rank's planner";
    case Kind::completed:
      if (peer.rank != peer.head) return "completions sent to a rank that is not the head";
      if (bytes == 0 || bytes % sizeof(Completed) != 0)
        return "the payload is not a whole number of completion records";
      return nullptr;
    case Kind::broadcast:
    case Kind::route:
      return check_route(payload, bytes, peer, kind == Kind::broadcast);
    case Kind::mpi_broadcast:
      return check_mpi_broadcast(payload, bytes, peer);
  }
  return "an unknown command kind";
}

Rejection check_batch(const char* data, size_t bytes, const Peer& peer) {
  BatchReader reader(data, bytes);
  Header header{};
  const char* payload = nullptr;
  size_t at = 0;
  while (reader.next(header, payload)) {
    if (const char* reason = check_command(header.kind, payload, header.bytes, peer))
      return {reason, static_cast<uint8_t>(header.kind), at};
    at = reader.offset();
  }
  if (reader.cut()) return {reader.cut(), static_cast<uint8_t>(header.kind), at};
  return {};
}

std::string command_name(uint8_t kind, int source) {
  const char* name = kind_name(static_cast<Kind>(kind));
  std::string what = name ? std::string("a ") + name + " command"
                          : "a command of unknown kind " + std::to_string(kind);
  return what + " from rank " + std::to_string(source);
}

std::string describe(uint8_t kind, int source, const char* reason) {
  return "protocol error: " + command_name(kind, source) + ": " + reason;
}

}  // namespace taskgrid::comm::wire
