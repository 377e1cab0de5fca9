// The engine's side of broadcasts (the planner decides who takes part and
// how; coll/broadcast.h holds the shapes and the cost model).
//
// Tree, pipeline and p2p are Dynamic Broadcasts: the root gets a broadcast
// command with every reader rank; each child is sent a route (a control
// message naming the version, the shape and the ranks it must forward to),
// then the data in chunks on the broadcast's tag. A receiver needs to know
// nothing in advance: its tasks say only "this input comes by broadcast".
// Receivers pre-post a window of chunk receives from their parent; with
// forward_each_chunk a chunk is passed on as soon as it has arrived
// (pipeline), otherwise once the whole buffer is in (tree). Tasks on a rank
// start as soon as that rank's copy is complete, while it still forwards.
//
// MPI broadcasts: every member gets an mpi_broadcast command (in cluster
// mode this is the control step: the head tells each member to join) and
// posts MPI_Ibcast on the members' communicator, in command order, so the
// collectives match on every member; the root posts once the data exists.
// The engine polls them with MPI_Testall and never waits inside MPI.
#include <algorithm>
#include <cstring>

#include "runtime/engine.h"
#include "runtime/transfer_cookie.h"
#include "trace/trace.h"

namespace taskgrid::runtime {
namespace {

// Chunks in flight per receive and per child: two at least, so that the link
// stays busy while the engine is away running a task; about 1 MiB at most,
// because a transport may interleave the messages it has in flight on one
// link (UCX over TCP does), so that each completes only when all of them
// have, and a pipeline's every hop waits that long. Measured on netlab (8
// hosts, 200 Mbit/s links, 64 MiB in 4 MiB chunks): 10.6 s with 8 chunks in
// flight, 5.0 s with 2.
uint32_t chunk_window(size_t chunk_bytes) {
  constexpr size_t kInFlightBytes = size_t{1} << 20;
  return static_cast<uint32_t>(
      std::clamp<size_t>(kInFlightBytes / std::max<size_t>(1, chunk_bytes), 2, 8));
}

template <typename T>
std::vector<int32_t> read_ranks(const char* payload, size_t bytes, uint32_t count, int rank) {
  if (bytes != sizeof(T) + count * sizeof(int32_t))
    fail_job(rank, "protocol error: a broadcast command of " + std::to_string(bytes) +
                       " bytes does not hold " + std::to_string(count) + " ranks");
  std::vector<int32_t> ranks(count);
  if (count) std::memcpy(ranks.data(), payload + sizeof(T), count * sizeof(int32_t));
  return ranks;
}

}  // namespace

Engine::Version* Engine::expect_version(uint64_t id, size_t bytes) {
  if (Version* version = find(id)) return version;
  Version* version = create_version(id, bytes);
  version->data = buffers_.get(bytes);
  return version;
}

void Engine::apply_broadcast(const char* payload, size_t bytes, int source, bool root) {
  const auto route = wire::read<wire::Route>(payload);
  const std::vector<int32_t> forward = read_ranks<wire::Route>(payload, bytes, route.count, rank());
  auto owned = std::make_unique<Broadcast>();
  Broadcast* broadcast = owned.get();
  broadcast->parent = root ? -1 : source;
  broadcast->tag = route.tag;
  broadcast->shape = static_cast<coll::Shape>(route.shape);
  broadcast->forward_each_chunk = route.forward_each_chunk != 0;
  broadcast->chunk_bytes = route.chunk_bytes;
  broadcast->chunks = coll::chunk_count(route.bytes, route.chunk_bytes);
  if (root) {
    broadcast->version = find_or_fail(route.version, "broadcast");
    stats_.broadcasts_rooted += 1;
  } else {
    broadcast->version = expect_version(route.version, route.bytes);
    if (broadcast->version->ready)
      fail_job(rank(), "protocol error: version " + std::to_string(route.version) +
                           " arrived by broadcast from rank " + std::to_string(source) +
                           ", but this rank already has it");
    stats_.broadcast_routes_received += 1;
    broadcast->chunk_arrived.assign(broadcast->chunks, 0);
    broadcast->receive_events.resize(broadcast->chunks);
    for (uint32_t i = 0; i < broadcast->chunks; ++i)
      broadcast->receive_events[i] = {broadcast, -1, i};
  }
  if (broadcast->version->bytes != route.bytes)
    fail_job(rank(), "protocol error: broadcast of version " + std::to_string(route.version) +
                         " says " + std::to_string(route.bytes) + " bytes, the version has " +
                         std::to_string(broadcast->version->bytes));
  broadcast->version->uses += 1;  // until this rank has received and forwarded it
  coll::split_children(broadcast->shape, forward.data(), forward.size(), split_);
  broadcast->children.resize(split_.size());
  broadcast->send_events.resize(split_.size());
  for (size_t c = 0; c < split_.size(); ++c) {
    broadcast->children[c].rank = split_[c].rank;
    broadcast->children[c].forward = std::move(split_[c].forward);
    broadcast->send_events[c] = {broadcast, static_cast<int32_t>(c), 0};
  }
  broadcasts_.push_back(std::move(owned));
  // Routes go out at once, ahead of the data: the children can post their
  // receives (and send their own routes) while the data is still on its way.
  for (const BroadcastChild& child : broadcast->children) send_route(*broadcast, child);
  if (root && !broadcast->version->ready) {
    broadcast->version->broadcasts.push_back(broadcast);  // version_ready() advances it
    return;
  }
  advance_broadcast(broadcast);
}

void Engine::send_route(const Broadcast& broadcast, const BroadcastChild& child) {
  const wire::Route route{broadcast.version->id,
                          broadcast.version->bytes,
                          broadcast.chunk_bytes,
                          broadcast.tag,
                          static_cast<uint32_t>(child.forward.size()),
                          static_cast<uint8_t>(broadcast.shape),
                          static_cast<uint8_t>(broadcast.forward_each_chunk),
                          {}};
  wire::BatchWriter batch;
  batch.add(wire::Kind::route, route, child.forward.data(), child.forward.size() * sizeof(int32_t));
  stats_.control_messages_sent += 1;
  stats_.control_bytes_sent += batch.size();
  transport_.send_control(child.rank, std::move(batch.bytes()));
}

void Engine::advance_broadcast(Broadcast* broadcast) {
  Version* version = broadcast->version;
  const bool root = broadcast->parent < 0;
  const auto chunk_size = [&](uint32_t i) {
    const size_t offset = static_cast<size_t>(i) * broadcast->chunk_bytes;
    return std::min(broadcast->chunk_bytes, version->bytes - std::min(version->bytes, offset));
  };
  const auto chunk_data = [&](uint32_t i) {
    return version->data + static_cast<size_t>(i) * broadcast->chunk_bytes;
  };
  const uint32_t window = chunk_window(broadcast->chunk_bytes);
  if (!root) {
    while (broadcast->receives_posted < broadcast->chunks &&
           broadcast->receives_posted < broadcast->received + window) {
      const uint32_t i = broadcast->receives_posted++;
      transport_.receive_chunk(broadcast->parent, broadcast->tag, chunk_data(i), chunk_size(i),
                               make_cookie(&broadcast->receive_events[i], kBroadcastChunk));
    }
  }
  // Chunks this rank may pass on.
  uint32_t available = 0;
  if (root) {
    available = version->ready ? broadcast->chunks : 0;
  } else if (broadcast->forward_each_chunk || broadcast->received == broadcast->chunks) {
    available = broadcast->received;
  }
  // Children are served one after the other, largest subtree first: sending
  // to all at once would share this rank's link among them, so that even the
  // first child could forward only once every child had the whole buffer.
  if (broadcast->serving == broadcast->children.size()) return;
  const size_t c = broadcast->serving;
  BroadcastChild& child = broadcast->children[c];
  while (child.posted < available && child.posted < child.done + window) {
    const uint32_t i = child.posted++;
    transport_.send_chunk(child.rank, broadcast->tag, chunk_data(i), chunk_size(i),
                          make_cookie(&broadcast->send_events[c], kBroadcastChunk));
    stats_.broadcast_chunks_sent += 1;
    stats_.data_messages_sent += 1;
    stats_.data_bytes_sent += chunk_size(i);
  }
}

void Engine::broadcast_chunk_done(ChunkEvent* event) {
  Broadcast* broadcast = event->broadcast;
  if (event->child < 0) {
    broadcast->chunk_arrived[event->chunk] = 1;
    while (broadcast->received < broadcast->chunks && broadcast->chunk_arrived[broadcast->received])
      broadcast->received += 1;
    stats_.broadcast_chunks_received += 1;
    stats_.data_messages_received += 1;
    if (!broadcast->delivered && broadcast->received == broadcast->chunks) {
      broadcast->delivered = true;
      stats_.data_bytes_received += broadcast->version->bytes;
      if (trace::enabled()) {
        const uint64_t now = trace::now_ns();
        trace::span("comm", "broadcast received", now, now, broadcast->version->id,
                    broadcast->parent, broadcast->version->bytes);
      }
      version_ready(broadcast->version);  // this rank's tasks start now
    }
  } else {
    BroadcastChild& child = broadcast->children[static_cast<size_t>(event->child)];
    child.done += 1;
    if (child.done == broadcast->chunks) broadcast->serving += 1;
  }
  advance_broadcast(broadcast);
  const bool received = broadcast->parent < 0 || broadcast->received == broadcast->chunks;
  const bool forwarded =
      std::all_of(broadcast->children.begin(), broadcast->children.end(),
                  [&](const BroadcastChild& c) { return c.done == broadcast->chunks; });
  if (!received || !forwarded) return;
  Version* version = broadcast->version;
  auto it = std::find_if(broadcasts_.begin(), broadcasts_.end(),
                         [&](const std::unique_ptr<Broadcast>& b) { return b.get() == broadcast; });
  broadcasts_.erase(it);
  release_use(version);
}

// ------------------------------------------------------- MPI broadcasts ---

MPI_Comm Engine::broadcast_comm(const std::vector<int32_t>& members, int tag) {
  {
    std::lock_guard lock(comms_mutex_);
    if (auto it = broadcast_comms_.find(members); it != broadcast_comms_.end()) return it->second;
  }
  // Created without the lock: MPI_Comm_create_group blocks until every member
  // joins, and in spmd mode the engine (has_broadcast_comm) must meanwhile go
  // on sending the data that the other members' programs are waiting for
  // before they can join. Only one thread creates (the engine in cluster
  // mode, the program thread in spmd mode), so no set is created twice.
  MPI_Group all, group;
  MPI_Comm_group(collectives_, &all);
  MPI_Group_incl(all, static_cast<int>(members.size()), members.data(), &group);
  MPI_Comm comm = MPI_COMM_NULL;
  const int code = MPI_Comm_create_group(collectives_, group, tag, &comm);
  MPI_Group_free(&group);
  MPI_Group_free(&all);
  if (code != MPI_SUCCESS || comm == MPI_COMM_NULL)
    fail_job(rank(), "creating the communicator of an MPI broadcast among " +
                         std::to_string(members.size()) + " ranks failed (MPI error " +
                         std::to_string(code) + ")");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  std::lock_guard lock(comms_mutex_);
  broadcast_comms_.emplace(members, comm);
  return comm;
}

bool Engine::has_broadcast_comm(const std::vector<int32_t>& members) {
  std::lock_guard lock(comms_mutex_);
  return broadcast_comms_.count(members) != 0;
}

void Engine::apply_mpi_broadcast(const char* payload, size_t bytes) {
  const auto command = wire::read<wire::MpiBroadcast>(payload);
  std::vector<int32_t> members =
      read_ranks<wire::MpiBroadcast>(payload, bytes, command.count, rank());
  auto broadcast = std::make_unique<MpiBroadcast>();
  broadcast->root = command.root == rank();
  broadcast->version = broadcast->root ? find_or_fail(command.version, "MPI broadcast")
                                       : expect_version(command.version, command.bytes);
  broadcast->version->uses += 1;
  broadcast->chunk_bytes = command.chunk_bytes;
  const auto root_at = std::find(members.begin(), members.end(), command.root);
  const auto self_at = std::find(members.begin(), members.end(), rank());
  if (root_at == members.end() || self_at == members.end())
    fail_job(rank(), "protocol error: an MPI broadcast whose members lack its root or this rank");
  broadcast->root_index = static_cast<int>(root_at - members.begin());
  broadcast->copies_locally = std::any_of(members.begin(), members.end(), [&](int32_t member) {
    return transport_.copied_locally(member, command.bytes);
  });
  stats_.mpi_broadcasts += 1;
  auto queue = std::find_if(mpi_queues_.begin(), mpi_queues_.end(),
                            [&](const MpiQueue& q) { return q.members == members; });
  if (queue == mpi_queues_.end()) {
    mpi_queues_.push_back(MpiQueue{std::move(members), command.tag, MPI_COMM_NULL, {}});
    queue = mpi_queues_.end() - 1;
  }
  if (queue->comm == MPI_COMM_NULL && engine_creates_comms_)
    queue->comm = broadcast_comm(queue->members, command.tag);
  queue->waiting.push_back(std::move(broadcast));
  post_mpi_broadcasts();
}

void Engine::post_mpi_broadcasts() {
  for (MpiQueue& queue : mpi_queues_) {
    if (queue.comm == MPI_COMM_NULL) {
      // spmd: the program thread creates it; look again until it has.
      if (queue.waiting.empty() || !has_broadcast_comm(queue.members)) continue;
      queue.comm = broadcast_comm(queue.members, queue.tag);
    }
    // Collectives match in posting order: a broadcast starts only once every
    // chunk of the one before it on this communicator was posted, and a root
    // only once its data exists.
    while (!queue.waiting.empty()) {
      if (queue.posting && queue.posting->posted < queue.posting->requests.size()) break;
      MpiBroadcast& broadcast = *queue.waiting.front();
      Version* version = broadcast.version;
      if (broadcast.root && !version->ready) {
        version->mpi_waiting = true;
        break;
      }
      broadcast.comm = queue.comm;
      broadcast.requests.assign(coll::chunk_count(version->bytes, broadcast.chunk_bytes),
                                MPI_REQUEST_NULL);
      post_mpi_chunks(broadcast);
      queue.posting = &broadcast;
      mpi_active_.push_back(std::move(queue.waiting.front()));
      queue.waiting.pop_front();
    }
  }
}

void Engine::post_mpi_chunks(MpiBroadcast& broadcast) {
  // Windowed like the routes' chunks: thousands of outstanding MPI_Ibcast
  // (a 1 MiB version in 100-byte chunks) slow MPICH down more than linearly.
  const Version* version = broadcast.version;
  const auto chunks = static_cast<uint32_t>(broadcast.requests.size());
  const uint32_t window = chunk_window(broadcast.chunk_bytes);
  while (broadcast.posted < chunks && broadcast.posted < broadcast.completed + window) {
    const uint32_t i = broadcast.posted++;
    const size_t offset = static_cast<size_t>(i) * broadcast.chunk_bytes;
    const size_t size =
        std::min(broadcast.chunk_bytes, version->bytes - std::min(version->bytes, offset));
    const int code = MPI_Ibcast(version->data + offset, static_cast<int>(size), MPI_BYTE,
                                broadcast.root_index, broadcast.comm, &broadcast.requests[i]);
    if (code != MPI_SUCCESS)
      fail_job(rank(), "MPI_Ibcast of version " + std::to_string(version->id) +
                           " failed (MPI error " + std::to_string(code) + ")");
  }
}

size_t Engine::mpi_queues_waiting() const {
  size_t waiting = 0;
  for (const MpiQueue& queue : mpi_queues_) waiting += queue.waiting.size();
  return waiting;
}

bool Engine::poll_mpi_broadcasts() {
  if (mpi_queues_waiting() > 0) post_mpi_broadcasts();
  bool any = false;
  for (size_t i = 0; i < mpi_active_.size();) {
    MpiBroadcast& broadcast = *mpi_active_[i];
    // Chunks complete in posting order on every member; the window follows.
    while (broadcast.completed < broadcast.posted) {
      int done = 0;
      const int code = MPI_Test(&broadcast.requests[broadcast.completed], &done, MPI_STATUS_IGNORE);
      if (code != MPI_SUCCESS)
        fail_job(rank(), "MPI broadcast of version " + std::to_string(broadcast.version->id) +
                             " failed (MPI error " + std::to_string(code) + ")");
      if (!done) break;
      broadcast.completed += 1;
    }
    post_mpi_chunks(broadcast);
    if (broadcast.completed < broadcast.requests.size()) {
      ++i;
      continue;
    }
    for (MpiQueue& queue : mpi_queues_)
      if (queue.posting == &broadcast) queue.posting = nullptr;
    Version* version = broadcast.version;
    if (!broadcast.root) {
      stats_.data_messages_received += 1;
      stats_.data_bytes_received += version->bytes;
      version_ready(version);
    }
    release_use(version);
    mpi_active_[i] = std::move(mpi_active_.back());
    mpi_active_.pop_back();
    any = true;
  }
  if (any) dispatch_ready();
  return any;
}

}  // namespace taskgrid::runtime
