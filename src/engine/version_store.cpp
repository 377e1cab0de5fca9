#include "engine/version_store.h"

namespace taskgrid::engine {

VersionStore::~VersionStore() {
  by_id_.for_each([](uint64_t, Version* version) {
    if (version->data) data::release_buffer(version->data);
  });
}

Version* VersionStore::create(uint64_t id, size_t bytes) {
  Version* version = records_.acquire();
  if (!by_id_.insert(id, version)) {
    records_.release(version);
    return nullptr;
  }
  version->id = id;
  version->data = nullptr;
  version->bytes = bytes;
  version->ready = false;
  version->on_device = false;
  version->writing_back = false;
  version->retired = false;
  version->uses = 0;
  version->waiters.clear();  // keeps its capacity
  version->replicas = nullptr;
  return version;
}

Version* VersionStore::expect(uint64_t id, size_t bytes) {
  if (Version* version = find(id)) return version;
  Version* version = create(id, bytes);
  give_buffer(version);
  return version;
}

void VersionStore::reclaim(Version* version) {
  // Retired and unused: no command can name it again on this rank.
  if (version->replicas) replica_owner_->version_reclaimed(version);
  if (version->data) {
    buffers_.put(version->data, version->bytes);
    held_bytes_ -= data::allocated_bytes(version->bytes);
  }
  version->data = nullptr;
  by_id_.erase(version->id);
  records_.release(version);
  reclaimed_ += 1;
}

}  // namespace taskgrid::engine
