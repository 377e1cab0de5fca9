// Per-rank counters of the engine (TASKGRID_STATS=1 prints them).
#pragma once

#include <cstdint>

namespace taskgrid::engine {

struct EngineStats {
  uint64_t tasks_executed = 0;
  uint64_t tasks_built_in_place = 0;  // by this process's planner (comm::wire::LocalTask)
  uint64_t timing = 0;                // 1: this rank timed its tasks (else task_ns stays 0)
  uint64_t task_ns = 0;
  uint64_t data_messages_sent = 0;
  uint64_t data_bytes_sent = 0;
  uint64_t data_messages_received = 0;
  uint64_t data_bytes_received = 0;
  uint64_t control_messages_sent = 0;
  uint64_t control_bytes_sent = 0;
  uint64_t control_messages_received = 0;
  uint64_t versions_reclaimed = 0;
  uint64_t inout_buffers_reused = 0;
  // Devices (printed on their own line): tasks run on a device, bytes copied
  // to, from and within devices, replicas found there, replicas evicted.
  uint64_t device_tasks = 0;
  uint64_t device_bytes_in = 0;
  uint64_t device_bytes_out = 0;
  uint64_t device_bytes_within = 0;
  uint64_t device_peer_bytes = 0;  // of those, between two devices
  uint64_t device_replica_hits = 0;
  uint64_t device_evictions = 0;
  // Versions made on a device copied back to host memory: for a CPU reader,
  // a send, a fetch, a broadcast, or before their last replica was evicted.
  uint64_t device_write_backs = 0;
  uint64_t device_eviction_write_backs = 0;  // of those, before an eviction
  // Sends of versions only on a device: through host memory, piece by piece
  // (the pieces), or straight from device memory (TASKGRID_GPU_AWARE_MPI).
  uint64_t device_staged_sends = 0;
  uint64_t device_staged_pieces = 0;
  uint64_t device_direct_sends = 0;
  uint64_t device_replica_bytes = 0;  // device memory the replicas hold now
  // Broadcasts (printed on their own line; see README, TASKGRID_STATS).
  uint64_t broadcasts_rooted = 0;  // tree/pipeline/p2p broadcasts started here
  uint64_t broadcast_routes_received = 0;
  uint64_t broadcast_chunks_sent = 0;
  uint64_t broadcast_chunks_received = 0;
  uint64_t mpi_broadcasts = 0;  // group (MPI) broadcasts taken part in
  // Memory (printed on their own line): version buffers held now and at the
  // peak, and the idle bytes the buffer pool keeps for reuse.
  uint64_t versions_live = 0;
  uint64_t version_bytes_held = 0;
  uint64_t version_bytes_peak = 0;
  uint64_t pool_idle_bytes = 0;
};

}  // namespace taskgrid::engine
