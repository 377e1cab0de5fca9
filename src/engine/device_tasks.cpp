#include "engine/device_tasks.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <utility>

#include "core/task_context_access.h"
#include "engine/transfer_cookie.h"
#include "exec/running_task.h"
#include "trace/trace.h"

namespace taskgrid::engine {
DeviceTasks::DeviceTasks(std::unique_ptr<device::Backend> backend, int max_streams,
                         bool direct_sends, comm::Transport& transport, VersionStore& versions,
                         EngineStats& stats, std::function<void(const std::string&)> fail)
    : rank_(transport.rank()),
      backend_(std::move(backend)),
      streams_(*backend_, max_streams),
      versions_(versions),
      stats_(stats),
      fail_(std::move(fail)),
      transport_(transport),
      direct_sends_(direct_sends),
      copies_off_(static_cast<size_t>(backend_->devices()), 0),
      copy_streams_(static_cast<size_t>(backend_->devices()), nullptr),
      oldest_(static_cast<size_t>(backend_->devices()), nullptr),
      newest_(static_cast<size_t>(backend_->devices()), nullptr) {
  versions_.set_replica_owner(this);
}

DeviceTasks::~DeviceTasks() {
  // The engine stops only when no task runs: every replica is unpinned. The
  // versions go with the store, after this part.
  versions_.set_replica_owner(nullptr);
  for (device::Stream* stream : copy_streams_)
    if (stream) backend_->destroy_stream(stream);
  for (const StagingSlot& slot : slots_) backend_->release_staging(slot.memory);
  for (DeviceReplica*& oldest : oldest_)
    while (oldest) drop(oldest);
}

void DeviceTasks::start(Task* task) {
  if (!waiting_.empty() || !launch(task)) waiting_.push_back(task);  // keeps their order
}

int DeviceTasks::choose_device(const Task& task) {
  const int devices = backend_->devices();
  if (task.device >= 0) {
    if (task.device >= devices)
      fail_(describe(task) + " asks for device " + std::to_string(task.device) +
            "; this rank has " + std::to_string(devices));
    return task.device;
  }
  // Where most of its input bytes are already (they need not move), then the
  // device with fewest streams at work, then the next in turn.
  int best = -1;
  size_t best_bytes = 0;
  for (const Task::Linked& access : task.linked) {
    if (!access.input) continue;
    for (DeviceReplica* r = access.input->replicas; r; r = r->next_of_version) {
      size_t bytes = 0;
      for (const Task::Linked& other : task.linked)
        if (other.input && replica_on(other.input, r->device)) bytes += other.input->bytes;
      if (best < 0 || bytes > best_bytes) {
        best = r->device;
        best_bytes = bytes;
      }
    }
  }
  if (best >= 0) return best;
  int least = next_device_;
  for (int k = 0; k < devices; ++k) {
    const int d = (next_device_ + k) % devices;
    if (streams_.active(d) < streams_.active(least)) least = d;
  }
  next_device_ = (least + 1) % devices;
  return least;
}

DeviceReplica* DeviceTasks::replica_on(Version* version, int device) const {
  for (DeviceReplica* r = version->replicas; r; r = r->next_of_version)
    if (r->device == device) return r;
  return nullptr;
}

DeviceReplica* DeviceTasks::copy_source(Version* version, int device) const {
  // One still being filled is no source yet. A version only on devices has
  // a replica that is not being filled (only_copy keeps it).
  DeviceReplica* peer = nullptr;
  for (DeviceReplica* r = version->replicas; r; r = r->next_of_version) {
    if (r->filling) continue;
    if (r->device == device) return r;
    if (!peer) peer = r;
  }
  return peer;
}

void DeviceTasks::pin(DeviceReplica* replica) {
  if (replica->pins++ > 0) return;
  // Out of the LRU list while a task uses it.
  const auto d = static_cast<size_t>(replica->device);
  if (replica->older) replica->older->newer = replica->newer;
  if (replica->newer) replica->newer->older = replica->older;
  if (oldest_[d] == replica) oldest_[d] = replica->newer;
  if (newest_[d] == replica) newest_[d] = replica->older;
  replica->older = replica->newer = nullptr;
}

void DeviceTasks::unpin(DeviceReplica* replica) {
  if (--replica->pins > 0) return;
  const auto d = static_cast<size_t>(replica->device);
  replica->older = newest_[d];
  replica->newer = nullptr;
  if (newest_[d]) newest_[d]->newer = replica;
  newest_[d] = replica;
  if (!oldest_[d]) oldest_[d] = replica;
}

void DeviceTasks::drop(DeviceReplica* replica) {
  pin(replica);  // unlinks it from the LRU list
  DeviceReplica** link = &replica->version->replicas;
  while (*link != replica) link = &(*link)->next_of_version;
  *link = replica->next_of_version;
  backend_->release(replica->device, replica->pointer);
  replica_bytes_ -= replica->bytes;
  delete replica;
}

bool DeviceTasks::only_copy(const DeviceReplica* replica) {
  if (replica->version->ready) return false;
  for (const DeviceReplica* r = replica->version->replicas; r; r = r->next_of_version)
    if (r != replica && !r->filling) return false;
  return true;
}

device::Stream* DeviceTasks::copy_stream(int device) {
  device::Stream*& stream = copy_streams_[static_cast<size_t>(device)];
  if (!stream) stream = backend_->create_stream(device);
  return stream;
}

DeviceReplica* DeviceTasks::current_replica(Version* version) {
  for (DeviceReplica* r = version->replicas; r; r = r->next_of_version)
    if (!r->filling) return r;
  fail_("internal error: version " + std::to_string(version->id) +
        " is on no device and not in host memory");
  return nullptr;
}

void DeviceTasks::write_back(Version* version) {
  if (version->writing_back || version->ready) return;
  start_write_back(version, current_replica(version));
}

void DeviceTasks::start_write_back(Version* version, DeviceReplica* replica) {
  if (!version->data)
    fail_("internal error: version " + std::to_string(version->id) +
          " has no host buffer to write back to");
  pin(replica);
  version->writing_back = true;
  version->uses += 1;  // until the engine has been told (poll)
  device::Stream* stream = copy_stream(replica->device);
  enqueue_copy(stream, version->data, replica->pointer, version->bytes,
               device::CopyKind::device_to_host);
  write_backs_.push_back({version, replica, backend_->record_event(stream)});
  copies_off_[static_cast<size_t>(replica->device)] += 1;
  stats_.device_write_backs += 1;
}

void DeviceTasks::send(Version* version, int dest, int tag) {
  DeviceReplica* replica = current_replica(version);
  pin(replica);
  copies_off_[static_cast<size_t>(replica->device)] += 1;
  DeviceSend* send = sends_.acquire();
  send->version = version;
  send->replica = replica;
  send->dest = dest;
  send->tag = tag;
  send->piece_bytes = 0;
  send->pieces = 1;
  send->copied = 0;
  send->done = 0;
  send->copying.clear();
  if (direct_sends_) {
    transport_.send_data(dest, tag, backend_->message_address(replica->pointer), version->bytes,
                         make_cookie(send, kDeviceSend));
    stats_.device_direct_sends += 1;
    return;
  }
  send->piece_bytes = std::max<size_t>(1, transport_.data_piece_bytes(version->bytes));
  send->pieces =
      version->bytes == 0
          ? 1
          : static_cast<uint32_t>((version->bytes + send->piece_bytes - 1) / send->piece_bytes);
  staged_.push_back(send);
  stats_.device_staged_sends += 1;
  stage_pieces();
}

void DeviceTasks::stage_pieces() {
  for (DeviceSend* send : staged_) {
    while (send->copied < send->pieces) {
      if (free_slots_.empty()) {
        if (slots_.size() >= kStagingSlots) return;  // every slot is in use: in order
        slots_.push_back({});
        free_slots_.push_back(static_cast<uint32_t>(slots_.size() - 1));
      }
      const uint32_t slot_index = free_slots_.back();
      free_slots_.pop_back();
      StagingSlot& slot = slots_[slot_index];
      const size_t offset = static_cast<size_t>(send->copied) * send->piece_bytes;
      const size_t bytes = std::min(send->piece_bytes, send->version->bytes - offset);
      if (slot.bytes < bytes) {
        if (slot.memory) backend_->release_staging(slot.memory);
        slot.memory = static_cast<char*>(backend_->allocate_staging(bytes));
        slot.bytes = bytes;
      }
      device::Stream* stream = copy_stream(send->replica->device);
      enqueue_copy(stream, slot.memory, static_cast<const char*>(send->replica->pointer) + offset,
                   bytes, device::CopyKind::device_to_host);
      Piece* piece = pieces_.acquire();
      *piece = {send, slot_index, backend_->record_event(stream)};
      send->copying.push_back(piece);
      send->copied += 1;
    }
  }
}

bool DeviceTasks::post_staged_pieces() {
  bool any = false;
  for (DeviceSend* send : staged_) {
    while (!send->copying.empty()) {
      Piece* piece = send->copying.front();
      bool done = false;
      try {
        done = backend_->event_done(piece->event);
      } catch (const std::exception& error) {
        fail_("copying version " + std::to_string(send->version->id) + " off device " +
              std::to_string(send->replica->device) + " to send it to rank " +
              std::to_string(send->dest) + " failed: " + error.what());
      }
      if (!done) break;
      backend_->destroy_event(piece->event);
      piece->event = nullptr;
      send->copying.pop_front();
      // This piece's place among the send's: those before it were posted.
      const uint32_t index = send->copied - static_cast<uint32_t>(send->copying.size()) - 1;
      const size_t bytes = send->version->bytes;
      const size_t offset = static_cast<size_t>(index) * send->piece_bytes;
      transport_.send_data_piece(send->dest, send->tag, slots_[piece->slot].memory,
                                 std::min(send->piece_bytes, bytes - std::min(bytes, offset)),
                                 bytes, make_cookie(piece, kDevicePiece));
      stats_.device_staged_pieces += 1;
      any = true;
    }
  }
  return any;
}

Version* DeviceTasks::sent(uint64_t cookie) {
  DeviceSend* send = nullptr;
  if (cookie_kind(cookie) == kDevicePiece) {
    Piece* piece = cookie_object<Piece>(cookie);
    send = piece->send;
    free_slots_.push_back(piece->slot);
    pieces_.release(piece);
    if (++send->done < send->pieces) {
      stage_pieces();  // the slot may take the next piece
      return nullptr;
    }
    staged_.erase(std::find(staged_.begin(), staged_.end(), send));
  } else {
    send = cookie_object<DeviceSend>(cookie);
  }
  unpin(send->replica);
  copies_off_[static_cast<size_t>(send->replica->device)] -= 1;
  Version* version = send->version;
  sends_.release(send);
  stage_pieces();
  return version;
}

bool DeviceTasks::poll_write_backs(std::vector<Version*>& written_back) {
  bool any = post_staged_pieces();
  for (size_t i = 0; i < write_backs_.size();) {
    WriteBack& copy = write_backs_[i];
    bool done = false;
    try {
      done = backend_->event_done(copy.event);
    } catch (const std::exception& error) {
      fail_("writing version " + std::to_string(copy.version->id) + " back from device " +
            std::to_string(copy.replica->device) + " failed: " + error.what());
    }
    if (!done) {
      ++i;
      continue;
    }
    backend_->destroy_event(copy.event);
    unpin(copy.replica);
    // The host copy is current from here on, though the engine runs the
    // version's waiters only once poll() returns: a launch later in this
    // poll must not take the replica for the only copy and write it back
    // again (into the buffer a CPU task may then be reading).
    copy.version->ready = true;
    copy.version->writing_back = false;
    copies_off_[static_cast<size_t>(copy.replica->device)] -= 1;
    written_back.push_back(copy.version);
    write_backs_[i] = write_backs_.back();
    write_backs_.pop_back();
    any = true;
  }
  return any;
}

DeviceReplica* DeviceTasks::new_replica(Version* version, int device) {
  void* pointer = backend_->allocate(device, version->bytes);
  while (!pointer) {
    DeviceReplica* victim = oldest_[static_cast<size_t>(device)];
    if (!victim) return nullptr;  // everything left is in use
    if (only_copy(victim)) {
      // Written back first; that pins it, so the next oldest is looked at,
      // and it can go once the copy is done.
      start_write_back(victim->version, victim);
      stats_.device_eviction_write_backs += 1;
      continue;
    }
    drop(victim);
    stats_.device_evictions += 1;
    pointer = backend_->allocate(device, version->bytes);
  }
  auto* replica = new DeviceReplica;
  replica->version = version;
  replica->pointer = pointer;
  replica->bytes = version->bytes;
  replica->device = device;
  replica->pins = 1;
  replica->filling = true;  // until the task that made it is done
  replica->next_of_version = version->replicas;
  version->replicas = replica;
  replica_bytes_ += replica->bytes;
  return replica;
}

void DeviceTasks::enqueue_copy(device::Stream* stream, void* to, const void* from, size_t bytes,
                               device::CopyKind kind) {
  if (bytes == 0) return;
  backend_->copy_async(stream, to, from, bytes, kind);
  switch (kind) {
    case device::CopyKind::host_to_device:
      stats_.device_bytes_in += bytes;
      break;
    case device::CopyKind::device_to_host:
      stats_.device_bytes_out += bytes;
      break;
    case device::CopyKind::device_to_device:
      stats_.device_bytes_within += bytes;
      break;
  }
}

bool DeviceTasks::launch(Task* task) {
  const int device = choose_device(*task);
  device::Stream* stream = streams_.acquire(device);
  if (!stream) return false;
  Running* running = runnings_.acquire();
  running->task = task;
  running->stream = stream;
  const size_t count = task->linked.size();
  running->buffers.resize(count);

  // Memory first, copies after: a task that cannot have all it needs takes
  // nothing and waits. Per access: the replica the task sees (`targets`),
  // whether this task made it (`fresh`), and a replica to fill it from
  // instead of host memory (`sources`). `filled` lists the replicas made;
  // `pinned` every replica the task holds. One version may be read by two
  // accesses of a task: the second finds the first one's replica.
  std::vector<DeviceReplica*>& pinned = running->pinned;
  std::vector<DeviceReplica*>& filled = running->filled;
  std::vector<DeviceReplica*>& targets = running->targets;
  std::vector<DeviceReplica*>& sources = running->sources;
  std::vector<uint8_t>& fresh = running->fresh;
  pinned.clear();
  filled.clear();
  targets.assign(count, nullptr);
  sources.assign(count, nullptr);
  fresh.assign(count, 0);
  bool room = true;
  for (size_t i = 0; i < count; ++i) {
    const Task::Linked& access = task->linked[i];
    Version* version = access.output ? access.output : access.input;
    DeviceReplica* replica = access.output ? nullptr : replica_on(version, device);
    // A replica another running task is still filling (on its own stream)
    // cannot be read yet: wait for that task. (One this task made is filled
    // on this task's stream before it runs.)
    if (replica && replica->filling &&
        std::find(filled.begin(), filled.end(), replica) == filled.end()) {
      room = false;
      break;
    }
    if (replica) {
      pin(replica);
      stats_.device_replica_hits += 1;
    } else {
      replica = new_replica(version, device);
      if (!replica) {
        room = false;
        break;
      }
      fresh[i] = 1;
      filled.push_back(replica);
    }
    pinned.push_back(replica);
    targets[i] = replica;
    // The input's replica on this device (an inout), else on another device
    // of the rank (a peer copy). It stays pinned while the task runs.
    if (fresh[i] && access.input) {
      if (DeviceReplica* source = copy_source(access.input, device)) {
        pin(source);
        pinned.push_back(source);
        sources[i] = source;
      }
    }
  }
  if (!room) {
    // Give back what this attempt took. A task waiting while nothing else on
    // its device runs would wait for ever: that is a device too small.
    for (DeviceReplica* replica : pinned) unpin(replica);
    for (DeviceReplica* replica : filled) drop(replica);
    streams_.give_back(stream);
    runnings_.release(running);
    if (streams_.active(device) == 0 && copies_off_[static_cast<size_t>(device)] == 0) {
      // Nothing runs on the device and nothing is copied off it, so nothing
      // is being filled: only memory can be short, and no task, write-back or
      // send will give any back.
      // At most: each access's version, and an inout's input beside its output.
      size_t bytes = 0;
      for (const Task::Linked& access : task->linked)
        bytes +=
            (access.output ? access.output->bytes : 0) + (access.input ? access.input->bytes : 0);
      fail_("task '" + std::string(task->name) + "' needs up to " + std::to_string(bytes) +
            " bytes on device " + std::to_string(device) + ", whose limit is " +
            std::to_string(backend_->memory_limit(device)) +
            " bytes (TASKGRID_DEVICE_MEMORY, or the device's free memory)");
    }
    return false;
  }

  // Fill the fresh replicas: from a device source, else from host memory (an
  // input only on a device always has a device source). An inout's input
  // whose buffer the output took over (make_ready) is in the output's.
  for (size_t i = 0; i < count; ++i) {
    const Task::Linked& access = task->linked[i];
    DeviceReplica* replica = targets[i];
    running->buffers[i] = {replica->pointer, replica->bytes};
    if (!fresh[i]) continue;
    if (DeviceReplica* source = sources[i]) {
      enqueue_copy(stream, replica->pointer, source->pointer, replica->bytes,
                   device::CopyKind::device_to_device);
      if (source->device != device) stats_.device_peer_bytes += replica->bytes;
    } else if (!access.output) {
      enqueue_copy(stream, replica->pointer, access.input->data, replica->bytes,
                   device::CopyKind::host_to_device);
    } else if (access.input) {
      const void* host = access.input->data ? access.input->data : task->buffers[i].data;
      enqueue_copy(stream, replica->pointer, host, replica->bytes,
                   device::CopyKind::host_to_device);
    }
  }
  running->binding = {backend_.get(), stream, task->name};
  running->started_ns = trace::now_ns();
  call_device_function(*running);
  running->event = backend_->record_event(stream);
  running_.push_back(running);
  stats_.device_tasks += 1;
  return true;
}

void DeviceTasks::call_device_function(Running& running) {
  Task* task = running.task;
  TaskContext context = make_context(*task, running.buffers.data(), running.buffers.size(), rank_);
  detail::TaskContextAccess::set_device(context, &running.binding);
  const exec::RunningTaskMark mark(task->id, task->name, running.started_ns);
  try {
    task->function->device_function(context);
  } catch (const std::exception& error) {
    fail_(describe(*task) + " failed launching on device " +
          std::to_string(running.stream->device) + ": " + error.what());
  }
}

bool DeviceTasks::poll(std::vector<Task*>& finished, std::vector<Version*>& written_back) {
  bool any = poll_write_backs(written_back);
  for (size_t i = 0; i < running_.size();) {
    Running& running = *running_[i];
    bool done = false;
    try {
      done = backend_->event_done(running.event);
    } catch (const std::exception& error) {
      fail_(describe(*running.task) + " failed on device " +
            std::to_string(running.stream->device) + ": " + error.what());
    }
    if (!done) {
      ++i;
      continue;
    }
    backend_->destroy_event(running.event);
    streams_.give_back(running.stream);
    for (DeviceReplica* replica : running.filled) replica->filling = false;
    for (DeviceReplica* replica : running.pinned) unpin(replica);
    running.task->duration_ns = trace::now_ns() - running.started_ns;
    finished.push_back(running.task);
    runnings_.release(running_[i]);
    running_[i] = running_.back();
    running_.pop_back();
    any = true;
  }
  while (!waiting_.empty() && launch(waiting_.front())) {
    waiting_.pop_front();
    any = true;
  }
  return any;
}

void DeviceTasks::version_reclaimed(Version* version) {
  while (version->replicas) drop(version->replicas);
}

}  // namespace taskgrid::engine
