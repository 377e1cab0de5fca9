// Group broadcasts (the `mpi` strategy): every member gets an mpi_broadcast
// command (in cluster mode this is the control step: the head tells each
// member to join) and posts the transport's collective broadcast on the
// members' group, in command order, so that the collectives match on every
// member; the root posts once its data exists. Chunks are windowed like the
// tree broadcasts' (thousands of outstanding MPI_Ibcast slow MPICH down more
// than linearly), and a group's next broadcast starts once every chunk of
// the one before it was posted.
//
// Groups are created once per member set (collective over the members,
// blocking). In cluster mode the engine creates them when it applies the
// command (the head flushes every member's batch first); in spmd mode the
// program thread creates them (prepare) at a point every member reaches, and
// the engine waits for that: an engine blocked in the creation could wait on
// a rank whose program is waiting for that engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "comm/transport.h"
#include "engine/engine_stats.h"
#include "engine/version_store.h"

namespace taskgrid::engine {

class GroupBroadcaster {
 public:
  GroupBroadcaster(comm::Transport& transport, VersionStore& versions, VersionEvents& events,
                   EngineStats& stats)
      : transport_(transport), versions_(versions), events_(events), stats_(stats) {}

  // spmd mode: the engine waits for the program thread to create groups.
  void set_engine_creates_groups(bool creates) { engine_creates_groups_ = creates; }
  // Creates the group of `members` now (any thread; blocking, collective).
  void prepare(const std::vector<int32_t>& members, int tag);

  // An `mpi_broadcast` command from `source` (comm::wire::check_batch accepted it).
  void apply(const char* payload, int source);
  // Posts what may be posted (a root's data arrived, a group appeared).
  void post();
  // A chunk cookie (kGroupChunk) completed.
  void chunk_done(uint64_t cookie);
  // Broadcasts waiting for a group the program thread has not created yet.
  bool waiting_for_groups() const { return groups_missing_ > 0; }
  bool idle() const { return active_.empty() && waiting_ == 0; }

 private:
  struct Broadcast {
    Version* version = nullptr;
    bool root = false;
    int root_index = 0;
    int group = 0;
    size_t chunk_bytes = 0;
    uint32_t chunks = 0;
    uint32_t posted = 0;          // chunks handed to the transport
    uint32_t completed = 0;       // chunks done (in any order)
    bool waits_for_data = false;  // a root whose version is not present yet
  };
  struct Queue {
    std::vector<int32_t> members;
    int tag = 0;
    int group = 0;  // 0: not created yet
    std::deque<std::unique_ptr<Broadcast>> waiting;
    Broadcast* posting = nullptr;  // started, not all chunks posted yet
  };
  void post_chunks(Broadcast& broadcast);
  int create(const std::vector<int32_t>& members, int tag);

  comm::Transport& transport_;
  VersionStore& versions_;
  VersionEvents& events_;
  EngineStats& stats_;
  bool engine_creates_groups_ = true;
  std::deque<Queue> queues_;  // a deque: queues never move
  std::vector<std::unique_ptr<Broadcast>> active_;
  size_t waiting_ = 0;         // broadcasts in queues, not started
  size_t groups_missing_ = 0;  // queues with broadcasts and no group yet
};

}  // namespace taskgrid::engine
