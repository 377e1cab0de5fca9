#include "engine/group_broadcaster.h"

#include <algorithm>
#include <exception>
#include <string>

#include "comm/wire.h"
#include "comm/wire_check.h"
#include "engine/transfer_cookie.h"
#include "engine/tree_broadcaster.h"
#include "trace/trace.h"

namespace taskgrid::engine {

int GroupBroadcaster::create(const std::vector<int32_t>& members, int tag) {
  int group = 0;
  try {
    group = transport_.create_group(members, tag);
  } catch (const std::exception& error) {
    events_.fail("creating the group of a broadcast among " + std::to_string(members.size()) +
                 " ranks failed: " + error.what());
  }
  return group;
}

void GroupBroadcaster::prepare(const std::vector<int32_t>& members, int tag) {
  create(members, tag);
}

void GroupBroadcaster::apply(const char* payload, int source) {
  const auto command = comm::wire::read<comm::wire::MpiBroadcast>(payload);
  std::vector<int32_t> members;
  comm::wire::read_ranks(payload, sizeof command, command.count, members);
  const auto refuse = [&](const std::string& reason) {
    events_.fail(comm::wire::describe(static_cast<uint8_t>(comm::wire::Kind::mpi_broadcast), source,
                                      reason.c_str()));
  };
  const int rank = transport_.rank();
  auto broadcast = std::make_unique<Broadcast>();
  broadcast->root = command.root == rank;
  if (broadcast->root) {
    broadcast->version = versions_.find(command.version);
    if (!broadcast->version)
      refuse("version " + std::to_string(command.version) + ", which this rank does not hold");
  } else {
    broadcast->version = versions_.expect(command.version, command.bytes);
    if (trace::enabled())
      trace::receive_posted(trace::Arrival::broadcast, command.version, command.root,
                            command.bytes);
  }
  // Every member must cut the same chunks, and the receivers' buffers hold
  // command.bytes.
  if (broadcast->version->bytes != command.bytes)
    refuse("version " + std::to_string(command.version) + " of " + std::to_string(command.bytes) +
           " bytes, it has " + std::to_string(broadcast->version->bytes));
  broadcast->version->uses += 1;
  broadcast->chunk_bytes = command.chunk_bytes;
  broadcast->chunks = coll::chunk_count(broadcast->version->bytes, command.chunk_bytes);
  const auto root_at = std::find(members.begin(), members.end(), command.root);
  const auto self_at = std::find(members.begin(), members.end(), rank);
  if (root_at == members.end() || self_at == members.end())
    refuse("its members lack its root or this rank");
  broadcast->root_index = static_cast<int>(root_at - members.begin());
  stats_.mpi_broadcasts += 1;
  auto queue = std::find_if(queues_.begin(), queues_.end(),
                            [&](const Queue& q) { return q.members == members; });
  if (queue == queues_.end()) {
    queues_.push_back(Queue{std::move(members), command.tag, 0, {}, nullptr});
    queue = queues_.end() - 1;
  }
  if (queue->group == 0 && engine_creates_groups_)
    queue->group = create(queue->members, command.tag);
  if (queue->group == 0 && queue->waiting.empty()) groups_missing_ += 1;
  queue->waiting.push_back(std::move(broadcast));
  waiting_ += 1;
  post();
}

void GroupBroadcaster::post() {
  for (Queue& queue : queues_) {
    if (queue.waiting.empty()) continue;
    if (queue.group == 0) {
      // spmd: the program thread creates it; look again until it has.
      queue.group = transport_.find_group(queue.members);
      if (queue.group == 0) continue;
      groups_missing_ -= 1;
    }
    // Collectives match in posting order: a broadcast starts only once every
    // chunk of the one before it in this group was posted, and a root only
    // once its data exists.
    while (!queue.waiting.empty()) {
      if (queue.posting && queue.posting->posted < queue.posting->chunks) break;
      Broadcast& broadcast = *queue.waiting.front();
      Version* version = broadcast.version;
      if (broadcast.root && !version->ready) {
        if (!broadcast.waits_for_data)
          events_.wait_on_host(version, {VersionWaiter::Kind::group_broadcast, 0, 0, nullptr});
        broadcast.waits_for_data = true;
        break;
      }
      broadcast.group = queue.group;
      queue.posting = &broadcast;
      active_.push_back(std::move(queue.waiting.front()));
      queue.waiting.pop_front();
      waiting_ -= 1;
      post_chunks(broadcast);
    }
  }
}

void GroupBroadcaster::post_chunks(Broadcast& broadcast) {
  const Version* version = broadcast.version;
  const uint32_t window = chunk_window(broadcast.chunk_bytes);
  if (broadcast.root && broadcast.posted == 0 && trace::enabled()) {
    // One send to every member: no peer (each receive's arrow starts here).
    const uint64_t now = trace::now_ns();
    trace::span("comm", "broadcast send", now, now, version->id, -1, version->bytes);
  }
  while (broadcast.posted < broadcast.chunks && broadcast.posted < broadcast.completed + window) {
    const uint32_t i = broadcast.posted++;
    const size_t offset = static_cast<size_t>(i) * broadcast.chunk_bytes;
    const size_t size =
        std::min(broadcast.chunk_bytes, version->bytes - std::min(version->bytes, offset));
    transport_.broadcast_chunk(broadcast.group, broadcast.root_index, version->data + offset, size,
                               make_cookie(&broadcast, kGroupChunk));
  }
}

void GroupBroadcaster::chunk_done(uint64_t cookie) {
  Broadcast& broadcast = *cookie_object<Broadcast>(cookie);
  broadcast.completed += 1;
  post_chunks(broadcast);
  if (broadcast.completed < broadcast.chunks) {
    // The group's next broadcast may start once this one's chunks are all posted.
    if (broadcast.posted == broadcast.chunks) post();
    return;
  }
  for (Queue& queue : queues_)
    if (queue.posting == &broadcast) queue.posting = nullptr;
  Version* version = broadcast.version;
  if (!broadcast.root) {
    stats_.data_messages_received += 1;
    stats_.data_bytes_received += version->bytes;
    if (trace::enabled()) trace::receive_done(trace::Arrival::broadcast, version->id);
    events_.version_arrived(version);
  }
  auto it = std::find_if(active_.begin(), active_.end(), [&](const std::unique_ptr<Broadcast>& b) {
    return b.get() == &broadcast;
  });
  std::unique_ptr<Broadcast> done = std::move(*it);
  active_.erase(it);
  events_.version_released(version);
  post();
}

}  // namespace taskgrid::engine
