#include "engine/tree_broadcaster.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "comm/wire.h"
#include "comm/wire_check.h"
#include "engine/transfer_cookie.h"
#include "trace/trace.h"

namespace taskgrid::engine {

// A transport may interleave the messages it has in flight on one link (UCX
// over TCP does), so that each completes only when all of them have, and a
// pipeline's every hop waits that long. Measured on netlab (8 hosts, 200
// Mbit/s links, 64 MiB in 4 MiB chunks): 10.6 s with 8 chunks in flight,
// 5.0 s with 2.
uint32_t chunk_window(size_t chunk_bytes) {
  constexpr size_t kInFlightBytes = size_t{1} << 20;
  return static_cast<uint32_t>(
      std::clamp<size_t>(kInFlightBytes / std::max<size_t>(1, chunk_bytes), 2, 8));
}

// A `broadcast` (root) or `route` command; comm::wire::check_batch accepted it.
void TreeBroadcaster::apply(const char* payload, int source, bool root) {
  const auto route = comm::wire::read<comm::wire::Route>(payload);
  std::vector<int32_t> forward;
  comm::wire::read_ranks(payload, sizeof route, route.count, forward);
  const auto refuse = [&](const std::string& reason) {
    events_.fail(comm::wire::describe(
        static_cast<uint8_t>(root ? comm::wire::Kind::broadcast : comm::wire::Kind::route), source,
        reason.c_str()));
  };
  auto owned = std::make_unique<Broadcast>();
  Broadcast* broadcast = owned.get();
  broadcast->parent = root ? -1 : source;
  broadcast->tag = route.tag;
  broadcast->shape = static_cast<coll::Shape>(route.shape);
  broadcast->forward_each_chunk = route.forward_each_chunk != 0;
  broadcast->chunk_bytes = route.chunk_bytes;
  broadcast->chunks = coll::chunk_count(route.bytes, route.chunk_bytes);
  if (root) {
    broadcast->version = versions_.find(route.version);
    if (!broadcast->version)
      refuse("version " + std::to_string(route.version) + ", which this rank does not hold");
    stats_.broadcasts_rooted += 1;
  } else {
    broadcast->version = versions_.expect(route.version, route.bytes);
    if (broadcast->version->ready)
      refuse("version " + std::to_string(route.version) + ", which this rank already has");
    stats_.broadcast_routes_received += 1;
    if (trace::enabled())
      trace::receive_posted(trace::Arrival::broadcast, route.version, source, route.bytes);
    broadcast->chunk_arrived.assign(broadcast->chunks, 0);
    broadcast->receive_events.resize(broadcast->chunks);
    for (uint32_t i = 0; i < broadcast->chunks; ++i)
      broadcast->receive_events[i] = {broadcast, -1, i};
  }
  if (broadcast->version->bytes != route.bytes)
    refuse("version " + std::to_string(route.version) + " of " + std::to_string(route.bytes) +
           " bytes, it has " + std::to_string(broadcast->version->bytes));
  broadcast->version->uses += 1;  // until this rank has received and forwarded it
  coll::split_children(broadcast->shape, forward.data(), forward.size(), split_);
  broadcast->children.resize(split_.size());
  broadcast->send_events.resize(split_.size());
  for (size_t c = 0; c < split_.size(); ++c) {
    broadcast->children[c].rank = split_[c].rank;
    broadcast->children[c].forward = std::move(split_[c].forward);
    broadcast->send_events[c] = {broadcast, static_cast<int32_t>(c), 0};
  }
  active_.push_back(std::move(owned));
  // Routes go out at once, ahead of the data: the children can post their
  // receives (and send their own routes) while the data is still on its way.
  for (const Child& child : broadcast->children) send_route(*broadcast, child);
  if (root && !broadcast->version->ready) {
    events_.wait_on_host(broadcast->version,
                         {VersionWaiter::Kind::tree_broadcast, 0, 0, broadcast});
    return;
  }
  advance(broadcast);
}

void TreeBroadcaster::version_present(void* broadcast) {
  advance(static_cast<Broadcast*>(broadcast));
}

void TreeBroadcaster::send_route(const Broadcast& broadcast, const Child& child) {
  const comm::wire::Route route{broadcast.version->id,
                                broadcast.version->bytes,
                                broadcast.chunk_bytes,
                                broadcast.tag,
                                static_cast<uint32_t>(child.forward.size()),
                                static_cast<uint8_t>(broadcast.shape),
                                static_cast<uint8_t>(broadcast.forward_each_chunk),
                                {}};
  comm::wire::BatchWriter batch;
  batch.add(comm::wire::Kind::route, route, child.forward.data(),
            child.forward.size() * sizeof(int32_t));
  stats_.control_messages_sent += 1;
  stats_.control_bytes_sent += batch.size();
  transport_.send_control(child.rank, std::move(batch.bytes()));
}

void TreeBroadcaster::advance(Broadcast* broadcast) {
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
                               make_cookie(&broadcast->receive_events[i], kTreeChunk));
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
  Child& child = broadcast->children[c];
  while (child.posted < available && child.posted < child.done + window) {
    if (child.posted == 0 && trace::enabled()) {
      const uint64_t now = trace::now_ns();
      trace::span("comm", "broadcast send", now, now, version->id, child.rank, version->bytes);
    }
    const uint32_t i = child.posted++;
    transport_.send_chunk(child.rank, broadcast->tag, chunk_data(i), chunk_size(i),
                          make_cookie(&broadcast->send_events[c], kTreeChunk));
    stats_.broadcast_chunks_sent += 1;
    stats_.data_messages_sent += 1;
    stats_.data_bytes_sent += chunk_size(i);
  }
}

void TreeBroadcaster::chunk_done(uint64_t cookie) {
  const ChunkEvent* event = cookie_object<ChunkEvent>(cookie);
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
      if (trace::enabled()) trace::receive_done(trace::Arrival::broadcast, broadcast->version->id);
      events_.version_arrived(broadcast->version);  // this rank's tasks start now
    }
  } else {
    Child& child = broadcast->children[static_cast<size_t>(event->child)];
    child.done += 1;
    if (child.done == broadcast->chunks) broadcast->serving += 1;
  }
  advance(broadcast);
  const bool received = broadcast->parent < 0 || broadcast->received == broadcast->chunks;
  const bool forwarded = std::all_of(broadcast->children.begin(), broadcast->children.end(),
                                     [&](const Child& c) { return c.done == broadcast->chunks; });
  if (!received || !forwarded) return;
  Version* version = broadcast->version;
  auto it = std::find_if(active_.begin(), active_.end(),
                         [&](const std::unique_ptr<Broadcast>& b) { return b.get() == broadcast; });
  active_.erase(it);
  events_.version_released(version);
}

}  // namespace taskgrid::engine
