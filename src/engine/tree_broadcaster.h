// Tree, pipeline and p2p broadcasts (Dynamic Broadcasts; the planner decides
// who takes part and how, coll/broadcast.h holds the shapes).
//
// The root gets a `broadcast` command with every reader rank; each child is
// sent a `route` (a control message naming the version, the shape and the
// ranks it must forward to), then the data in chunks on the broadcast's tag.
// A receiver needs to know nothing in advance: its tasks say only "this
// input comes by broadcast". Receivers pre-post a window of chunk receives
// from their parent; with forward_each_chunk a chunk is passed on as soon as
// it has arrived (pipeline), otherwise once the whole buffer is in (tree).
// Tasks on a rank start as soon as that rank's copy is complete, while it
// still forwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "coll/broadcast.h"
#include "comm/transport.h"
#include "engine/engine_stats.h"
#include "engine/version_store.h"

namespace taskgrid::engine {

// Chunks in flight per receive and per child (shared with the group
// broadcasts): two at least, so that the link stays busy while the engine
// runs a task; about 1 MiB at most (see the definition).
uint32_t chunk_window(size_t chunk_bytes);

class TreeBroadcaster {
 public:
  TreeBroadcaster(comm::Transport& transport, VersionStore& versions, VersionEvents& events,
                  EngineStats& stats)
      : transport_(transport), versions_(versions), events_(events), stats_(stats) {}

  // A `broadcast` (root) or `route` command from `source`.
  void apply(const char* payload, int source, bool root);
  // The root's version is present (a VersionWaiter::tree_broadcast).
  void version_present(void* broadcast);
  // A chunk cookie (kTreeChunk) completed.
  void chunk_done(uint64_t cookie);
  bool idle() const { return active_.empty(); }

 private:
  struct Broadcast;
  struct ChunkEvent {  // a transfer's cookie target
    Broadcast* broadcast;
    int32_t child;  // -1: a receive
    uint32_t chunk;
  };
  struct Child {
    int rank = 0;
    std::vector<int32_t> forward;
    uint32_t posted = 0;  // chunks handed to the transport
    uint32_t done = 0;    // chunks sent
  };
  struct Broadcast {
    Version* version = nullptr;
    int parent = -1;  // -1: this rank is the root
    int tag = 0;
    coll::Shape shape = coll::Shape::binomial;
    bool forward_each_chunk = false;
    size_t chunk_bytes = 0;
    uint32_t chunks = 0;
    std::vector<Child> children;
    size_t serving = 0;  // the child being sent to (one at a time)
    uint32_t receives_posted = 0;
    uint32_t received = 0;  // chunks 0..received-1 are complete
    std::vector<uint8_t> chunk_arrived;
    std::vector<ChunkEvent> receive_events;  // one per chunk
    std::vector<ChunkEvent> send_events;     // one per child
    bool delivered = false;
  };
  void advance(Broadcast* broadcast);
  void send_route(const Broadcast& broadcast, const Child& child);

  comm::Transport& transport_;
  VersionStore& versions_;
  VersionEvents& events_;
  EngineStats& stats_;
  std::vector<std::unique_ptr<Broadcast>> active_;
  std::vector<coll::Child> split_;  // reused
};

}  // namespace taskgrid::engine
