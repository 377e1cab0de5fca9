// The engine's version store: per data version this rank holds, its buffer,
// whether it is present, a use count and who waits for it. It knows nothing
// of what the waiters are; the engine dispatches them when a version becomes
// present (see Engine::version_ready).
//
// A version lives from the first command that names it on this rank until
// it is retired (no later command will name it) and its last use is done.
// Versions and their waiter lists are recycled, and looked up in a flat
// table, so a task in steady state allocates nothing here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/buffer_pool.h"
#include "data/flat_id_map.h"
#include "data/record_pool.h"

namespace taskgrid::engine {

// Something to do once a version is present.
struct VersionWaiter {
  enum class Kind : uint8_t {
    task,             // object: the Task; one input fewer to wait for
    send,             // dest, tag: send the version there
    fetch,            // object: the fetch record; copy into the program's buffer
    tree_broadcast,   // object: the TreeBroadcast rooted here
    group_broadcast,  // the group broadcaster may post now
  };
  Kind kind;
  int32_t dest = 0;
  int32_t tag = 0;
  void* object = nullptr;
};

struct DeviceReplica;  // engine/device_tasks.h

struct Version {
  uint64_t id = 0;
  char* data = nullptr;
  size_t bytes = 0;
  // `ready`: the host buffer holds the version. `on_device`: a device
  // replica holds it (a device task made it there); until it is written back
  // (DeviceTasks::write_back) only device tasks may read it, and waiters that
  // need host data wait (VersionEvents::wait_on_host).
  bool ready = false;
  bool on_device = false;
  bool writing_back = false;
  bool retired = false;
  uint32_t uses = 0;  // registered reads, sends, fetches and broadcasts, plus the producer
  std::vector<VersionWaiter> waiters;
  // Copies of the version on this rank's devices (DeviceTasks), or nullptr.
  DeviceReplica* replicas = nullptr;
};

// Told when a version with device replicas is freed (DeviceTasks drops them).
class ReplicaOwner {
 public:
  virtual ~ReplicaOwner() = default;
  virtual void version_reclaimed(Version* version) = 0;
};

class VersionStore {
 public:
  VersionStore() = default;
  ~VersionStore();
  VersionStore(const VersionStore&) = delete;
  VersionStore& operator=(const VersionStore&) = delete;

  Version* find(uint64_t id) const { return by_id_.find(id); }
  // A new, absent version without a buffer; nullptr if `id` already exists.
  Version* create(uint64_t id, size_t bytes);
  // The version `id`, created with a buffer to receive into if absent.
  Version* expect(uint64_t id, size_t bytes);
  // Drops one use. A retired version without uses is freed (its buffer goes
  // back to the pool); returns true then.
  bool release_use(Version* version) {
    // Inline: every access of every task ends here, and it is usually just this.
    if (--version->uses > 0 || !version->retired) return false;
    reclaim(version);
    return true;
  }

  // Gives `version` a buffer of its size: from the pool, or one allocated
  // elsewhere (enter_data's copy). Either way it is counted as held.
  void give_buffer(Version* version) { hold(version, buffers_.get(version->bytes)); }
  void give_buffer(Version* version, char* buffer) { hold(version, buffer); }

  void set_replica_owner(ReplicaOwner* owner) { replica_owner_ = owner; }

  size_t live() const { return by_id_.size(); }
  uint64_t reclaimed() const { return reclaimed_; }
  // Memory accounting: bytes of the buffers live versions hold (whole
  // 64-byte blocks), their peak, and the idle bytes the pool keeps.
  uint64_t held_bytes() const { return held_bytes_; }
  uint64_t peak_held_bytes() const { return peak_held_bytes_; }
  uint64_t idle_bytes() const { return buffers_.cached_bytes(); }

 private:
  // Frees a retired version without uses (its buffer goes back to the pool).
  void reclaim(Version* version);

  data::FlatIdMap<Version> by_id_{1024};
  data::RecordPool<Version> records_;
  void hold(Version* version, char* buffer) {
    version->data = buffer;
    held_bytes_ += data::allocated_bytes(version->bytes);
    if (held_bytes_ > peak_held_bytes_) peak_held_bytes_ = held_bytes_;
  }

  data::BufferPool buffers_;
  ReplicaOwner* replica_owner_ = nullptr;
  uint64_t reclaimed_ = 0;
  uint64_t held_bytes_ = 0;
  uint64_t peak_held_bytes_ = 0;
};

}  // namespace taskgrid::engine

namespace taskgrid::engine {

// What the engine's parts ask of the engine about versions.
class VersionEvents {
 public:
  virtual ~VersionEvents() = default;
  // The version is present now: its waiters run.
  virtual void version_arrived(Version* version) = 0;
  // Adds `waiter`, which needs the version in host memory: a version only
  // on a device is written back now.
  virtual void wait_on_host(Version* version, const VersionWaiter& waiter) = 0;
  // One use of the version is done.
  virtual void version_released(Version* version) = 0;
  // Ends the job with a message that names this rank.
  [[noreturn]] virtual void fail(const std::string& message) = 0;
};

}  // namespace taskgrid::engine
