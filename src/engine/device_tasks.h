// The engine's part for tasks with a device implementation
// (register_device_function), run on this rank's devices (device/backend.h).
//
// Residency: a version may have a replica on each device, a host copy, or
// both. A task's inputs are copied to its device unless a replica is there
// already; its outputs get new replicas there (an inout output starts as a
// copy of its input's). A fresh replica is copied from a replica on the same
// or another device of the rank when there is one (a peer copy), else from
// host memory.
// Outputs stay on the device (Version::on_device): they are written back to
// host memory (write_back(), on a copy stream per device) only when
// something needs them there, a CPU task, a send, a fetch or a broadcast,
// or when their last replica is to be evicted. Replicas go when their
// version is freed or when their device's memory is needed (least recently
// used first; one that is its version's only copy is written back first).
// Sends: a version only on a device goes to another rank straight from
// device memory where MPI reads it (`direct_sends`: a CUDA-aware MPI), else
// staged through a few pinned host buffers (slots) in the transport's
// pieces: each piece is copied into a slot and sent as soon as it is there,
// while the next is copied; a slot is reused once its message is done.
//
// Launching: a task takes a stream of its device from the pool (at most
// `max_streams` out per device) and the memory its accesses need; when
// either is short it waits, in order, for running tasks to give some back.
// The engine polls each running task's event in its one progress loop, beside
// MPI requests: no thread blocks on a device.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/transport.h"
#include "data/record_pool.h"
#include "device/backend.h"
#include "device/stream_pool.h"
#include "engine/engine_stats.h"
#include "engine/task_table.h"
#include "engine/version_store.h"

namespace taskgrid::engine {

struct DeviceReplica {
  Version* version = nullptr;
  DeviceReplica* next_of_version = nullptr;  // the version's other replicas
  // The device's least-recently-used list, while no running task pins it.
  DeviceReplica* older = nullptr;
  DeviceReplica* newer = nullptr;
  void* pointer = nullptr;
  size_t bytes = 0;
  int device = 0;
  uint32_t pins = 0;  // running tasks that use it
  // Being filled by the task that made it (on that task's stream): others
  // may use it once that task is done.
  bool filling = false;
};

class DeviceTasks final : public ReplicaOwner {
 public:
  // `fail` ends the job with a message (the engine's, which names the rank).
  DeviceTasks(std::unique_ptr<device::Backend> backend, int max_streams, bool direct_sends,
              comm::Transport& transport, VersionStore& versions, EngineStats& stats,
              std::function<void(const std::string&)> fail);
  ~DeviceTasks() override;
  DeviceTasks(const DeviceTasks&) = delete;
  DeviceTasks& operator=(const DeviceTasks&) = delete;

  // Whether `task` runs here: it has a device implementation.
  static bool takes(const Task& task) {
    return task.function->device_function != nullptr && task.device != TaskOptions::on_cpu;
  }
  // `task` is ready, its host buffers prepared (Engine::make_ready).
  void start(Task* task);
  // Copies `version`, which only device replicas hold, back into its host
  // buffer; poll() reports it once it is there. Holds a use of the version
  // until then. Nothing to do when it is on its way already.
  void write_back(Version* version);
  // Sends `version`, which only device replicas hold, to `dest` (see Sends
  // above). The caller's use of the version is held until the send is done:
  // each message's cookie is a kDevicePiece or kDeviceSend (sent()).
  void send(Version* version, int dest, int tag);
  // A message send() posted is done: the version whose use it held once its
  // last message is done, else nullptr.
  Version* sent(uint64_t cookie);
  // Moves the tasks whose device work is done into `finished` and the
  // versions whose write-back is done into `written_back` (their use is the
  // caller's to release), then starts waiting tasks that can start now.
  // True when anything happened.
  bool poll(std::vector<Task*>& finished, std::vector<Version*>& written_back);
  bool idle() const {
    return running_.empty() && waiting_.empty() && write_backs_.empty() && staged_.empty();
  }

  void version_reclaimed(Version* version) override;

  device::Backend& backend() { return *backend_; }
  // Device memory the replicas take now (all devices).
  uint64_t replica_bytes() const { return replica_bytes_; }

 private:
  struct Running {
    Task* task = nullptr;
    device::Stream* stream = nullptr;
    device::Event* event = nullptr;
    uint64_t started_ns = 0;
    std::vector<DeviceReplica*> pinned;
    std::vector<DeviceReplica*> filled;  // made by this task: valid once it is done
    // Per access, reused between launches (see launch()).
    std::vector<DeviceReplica*> targets;
    std::vector<DeviceReplica*> sources;
    std::vector<uint8_t> fresh;
    std::vector<detail::TaskContextAccess::Buffer> buffers;  // device pointers
    device::TaskBinding binding;
  };

  // Starts `task` now if a stream and the memory are free; false otherwise.
  bool launch(Task* task);
  int choose_device(const Task& task);
  DeviceReplica* replica_on(Version* version, int device) const;
  // A replica to copy `version` from onto `device` instead of from host
  // memory: one on `device` itself, else on another device; nullptr if none.
  DeviceReplica* copy_source(Version* version, int device) const;
  // A new replica of `version` on `device`, pinned; nullptr when the device
  // has no room even after evicting every unpinned replica.
  DeviceReplica* new_replica(Version* version, int device);
  void drop(DeviceReplica* replica);  // frees its memory, unlinks it
  void pin(DeviceReplica* replica);
  void unpin(DeviceReplica* replica);
  // A replica of `version` that holds it (one not being filled).
  DeviceReplica* current_replica(Version* version);
  // Whether dropping `replica` would lose its version's data.
  static bool only_copy(const DeviceReplica* replica);
  void start_write_back(Version* version, DeviceReplica* replica);
  device::Stream* copy_stream(int device);
  void enqueue_copy(device::Stream* stream, void* to, const void* from, size_t bytes,
                    device::CopyKind kind);
  void call_device_function(Running& running);

  int rank_;
  std::unique_ptr<device::Backend> backend_;
  device::StreamPool streams_;
  VersionStore& versions_;
  EngineStats& stats_;
  std::function<void(const std::string&)> fail_;
  // A version copied from `replica` (pinned meanwhile) into its host buffer.
  struct WriteBack {
    Version* version;
    DeviceReplica* replica;
    device::Event* event;
  };
  // A send of a version only on a device: straight from `replica` (direct),
  // or staged: piece by piece through pinned staging slots, each piece sent
  // once it is in its slot. `replica` is pinned until the last message is done.
  struct DeviceSend;
  struct Piece {
    DeviceSend* send;
    uint32_t slot;
    device::Event* event;  // the piece is in the slot
  };
  struct DeviceSend {
    Version* version = nullptr;
    DeviceReplica* replica = nullptr;
    int dest = 0;
    int tag = 0;
    size_t piece_bytes = 0;
    uint32_t pieces = 1;
    uint32_t copied = 0;         // pieces whose copy into a slot was enqueued
    uint32_t done = 0;           // pieces whose message is done
    std::deque<Piece*> copying;  // in order: enqueued, not yet sent
  };
  // Pinned memory per rank for staging: this many slots of a piece each
  // (TASKGRID_DEVICE_STAGING_BYTES), made when first needed.
  static constexpr size_t kStagingSlots = 4;
  struct StagingSlot {
    char* memory = nullptr;
    size_t bytes = 0;
  };
  // Staged sends get slots in the order they came; copies of pieces into
  // slots go on the replica's device's copy stream.
  void stage_pieces();
  // Sends the pieces whose copies are done; true when any was.
  bool post_staged_pieces();
  bool poll_write_backs(std::vector<Version*>& written_back);
  comm::Transport& transport_;
  bool direct_sends_;
  std::vector<WriteBack> write_backs_;
  std::vector<DeviceSend*> staged_;  // unfinished staged sends, oldest first
  std::vector<StagingSlot> slots_;
  std::vector<uint32_t> free_slots_;
  data::RecordPool<DeviceSend> sends_;
  data::RecordPool<Piece> pieces_;
  // Copies off each device in flight (write-backs and staged sends): their
  // replicas are pinned, and go back to the LRU list once they are done.
  std::vector<int> copies_off_;
  std::vector<device::Stream*> copy_streams_;  // per device, made when first needed
  std::deque<Task*> waiting_;
  data::RecordPool<Running> runnings_;
  std::vector<Running*> running_;
  // Per device: its least recently used unpinned replica, and its newest.
  std::vector<DeviceReplica*> oldest_;
  std::vector<DeviceReplica*> newest_;
  int next_device_ = 0;
  uint64_t replica_bytes_ = 0;
};

}  // namespace taskgrid::engine
