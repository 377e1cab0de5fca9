// Device memory and collectives on it: this rank's device through the device
// layer's backend; collectives through NCCL (loaded at run time) or staged
// through a host buffer and the group's MPI communicator.
#include "pgas/device.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/backend.h"
#include "device/nccl.h"
#include "pgas/collectives.h"
#include "runtime/options.h"

namespace taskgrid::pgas {

namespace {

// Staged collectives move at most this much per step (the same on every rank:
// the MPI counts of a step must match).
constexpr size_t kStagingPieceBytes = size_t{4} << 20;
constexpr size_t kTextBytes = 240;

struct GroupDevice {
  DevicePath path = DevicePath::undecided;
  std::string reason;
  std::unique_ptr<device::NcclCommunicator> nccl;
};

}  // namespace

struct DeviceState {
  std::mutex mutex;  // guards everything below (task threads may copy)
  std::unique_ptr<device::Backend> backend;
  int device = 0;
  device::Stream* stream = nullptr;
  std::map<const char*, size_t> buffers;  // device_alloc's: start -> bytes asked for
  void* staging = nullptr;
  size_t staging_bytes = 0;
  std::vector<GroupDevice> groups;  // by group id - 1
};

namespace {

// The device state, its backend opened on first use. Throws when there is none.
DeviceState& device_state(State& s, const char* call) {
  static std::mutex opening;  // the first device calls may come from several task threads
  std::lock_guard open_lock(opening);
  if (!s.device) s.device = std::make_shared<DeviceState>();
  DeviceState& d = *s.device;
  if (d.backend) return d;
  const runtime::RuntimeOptions options = runtime::read_options_from_environment();
  device::BackendSettings settings;
  settings.kind = options.device;
  settings.emulated_devices = options.emulated_devices;
  settings.memory_limit = options.device_memory;
  std::unique_ptr<device::Backend> backend = device::open_backend(settings);
  if (!backend || backend->devices() < 1)
    throw Error(
        std::string(call) + ": rank " + std::to_string(s.rank) +
        " has no device backend (TASKGRID_DEVICE=" + device::backend_kind_name(settings.kind) +
        (settings.kind == device::BackendKind::automatic ? ", and no usable GPU" : "") +
        "; TASKGRID_DEVICE=emulated gives emulated devices)");
  d.device = s.node_rank % backend->devices();
  d.stream = backend->create_stream(d.device);
  d.backend = std::move(backend);
  return d;
}

// Waits for everything enqueued on the stream so far; a device failure
// throws, a stall past the PGAS timeout ends the job (never a hang).
void synchronize(State& s, DeviceState& d, const char* call,
                 device::NcclCommunicator* nccl = nullptr) {
  device::Event* event = d.backend->record_event(d.stream);
  const double deadline = MPI_Wtime() + s.timeout_seconds;
  std::string failure;
  bool done = false;
  try {
    done = poll_until(
        [&] {
          if (d.backend->event_done(event)) return true;
          if (nccl) failure = nccl->async_error();
          return !failure.empty();
        },
        deadline);
  } catch (...) {
    d.backend->destroy_event(event);
    throw;
  }
  d.backend->destroy_event(event);
  if (!failure.empty()) throw Error(std::string(call) + ": NCCL failed: " + failure);
  if (!done)
    fail_job(std::string(call) + ": the device work did not finish within " +
             std::to_string(static_cast<int>(s.timeout_seconds)) + " s (TASKGRID_PGAS_TIMEOUT)");
}

// Checks that [pointer, pointer + bytes) lies in one device_alloc buffer.
void check_range(const DeviceState& d, const void* pointer, size_t bytes, const char* call,
                 const char* what) {
  if (bytes == 0) return;
  const char* p = static_cast<const char*>(pointer);
  auto next = d.buffers.upper_bound(p);
  if (next != d.buffers.begin()) {
    const auto& [start, size] = *std::prev(next);
    if (p >= start && bytes <= size && static_cast<size_t>(p - start) <= size - bytes) return;
    if (p >= start && p < start + size)
      throw Error(std::string(call) + ": " + what + ": bytes [" + std::to_string(p - start) + ", " +
                  std::to_string(p - start + bytes) + ") are outside its device buffer (" +
                  std::to_string(size) + " bytes)");
  }
  throw Error(std::string(call) + ": " + what +
              " is not in a buffer of pgas::device_alloc on this rank");
}

void copy(State& s, DeviceState& d, void* to, const void* from, size_t bytes, device::CopyKind kind,
          const char* call) {
  if (bytes == 0) return;
  d.backend->copy_async(d.stream, to, from, bytes, kind);
  synchronize(s, d, call);
}

char* staging(DeviceState& d, size_t bytes) {
  if (d.staging_bytes < bytes) {
    if (d.staging) d.backend->release_staging(d.staging);
    d.staging = nullptr;
    d.staging_bytes = 0;
    d.staging = d.backend->allocate_staging(bytes);
    d.staging_bytes = bytes;
  }
  return static_cast<char*>(d.staging);
}

const char* choice_name(NcclChoice choice) {
  switch (choice) {
    case NcclChoice::automatic:
      return "auto";
    case NcclChoice::yes:
      return "yes";
    case NcclChoice::no:
      return "no";
  }
  return "?";
}

// What each member says when a group chooses its path.
struct PathVote {
  int32_t choice = 0;    // NcclChoice
  int32_t eligible = 0;  // 1: this rank could use NCCL
  char reason[kTextBytes] = {};
  char identity[kTextBytes] = {};
};

void set_text(char (&to)[kTextBytes], const std::string& text) {
  std::memset(to, 0, kTextBytes);
  std::memcpy(to, text.data(), std::min(text.size(), kTextBytes - 1));
}

// A vote's text field as a string.
std::string text(const char (&from)[kTextBytes]) {
  return std::string(from, strnlen(from, kTextBytes));
}

std::string host_name() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  return std::string(name, static_cast<size_t>(std::max(length, 0)));
}

// Collective over `g` (after the call's agreement): chooses the group's path
// from every member's vote, the same way on every member, and sets up NCCL.
GroupDevice& group_device(State& s, DeviceState& d, GroupState& g, uint32_t id, const char* call) {
  if (d.groups.size() < id) d.groups.resize(id);
  GroupDevice& gd = d.groups[id - 1];
  if (gd.path != DevicePath::undecided) return gd;

  PathVote mine;
  mine.choice = static_cast<int32_t>(s.nccl_choice);
  const device::NcclLibrary* nccl = nullptr;
  if (s.nccl_choice != NcclChoice::no) {
    std::string why;
    if (std::string(d.backend->name()) != "cuda") {
      why = std::string("the device backend is ") + d.backend->name() + ", not cuda";
    } else if (!(nccl = device::process_nccl(why))) {
      // why says it: "libnccl.so.2 not found: ..."
    }
    mine.eligible = nccl ? 1 : 0;
    set_text(mine.reason, why);
    set_text(mine.identity, host_name() + " " + d.backend->device_identity(d.device));
  }
  const size_t members = g.world_ranks.size();
  std::vector<PathVote> votes(members);
  check_mpi(
      MPI_Allgather(&mine, sizeof mine, MPI_BYTE, votes.data(), sizeof mine, MPI_BYTE, g.comm),
      call);

  for (size_t i = 1; i < members; ++i)
    if (votes[i].choice != votes[0].choice)
      throw Error(std::string(call) + ": the ranks of " + g.label +
                  " have different TASKGRID_NCCL: rank " + std::to_string(g.world_ranks[0]) +
                  " has " + choice_name(static_cast<NcclChoice>(votes[0].choice)) + ", rank " +
                  std::to_string(g.world_ranks[i]) + " has " +
                  choice_name(static_cast<NcclChoice>(votes[i].choice)));
  std::string reason;
  if (s.nccl_choice == NcclChoice::no) reason = "TASKGRID_NCCL=no";
  for (size_t i = 0; i < members && reason.empty(); ++i)
    if (!votes[i].eligible)
      reason = "rank " + std::to_string(g.world_ranks[i]) + ": " + text(votes[i].reason);
  for (size_t i = 0; i < members && reason.empty(); ++i)
    for (size_t j = i + 1; j < members && reason.empty(); ++j)
      if (text(votes[i].identity) == text(votes[j].identity))
        reason = "ranks " + std::to_string(g.world_ranks[i]) + " and " +
                 std::to_string(g.world_ranks[j]) + " share one GPU (" + text(votes[i].identity) +
                 "), which NCCL refuses; give each rank its own GPU (CUDA_VISIBLE_DEVICES)";
  if (!reason.empty()) {
    if (s.nccl_choice == NcclChoice::yes)
      throw Error(std::string(call) + ": TASKGRID_NCCL=yes, but NCCL cannot be used on " + g.label +
                  ": " + reason);
    gd.path = DevicePath::staged;
    gd.reason = reason;
    return gd;
  }

  // NCCL: group rank 0 makes the unique id; a failure there is everyone's.
  struct IdMessage {
    int32_t ok = 1;
    device::NcclUniqueId id;
    char error[kTextBytes] = {};
  } message;
  if (g.my_rank == 0) {
    try {
      message.id = nccl->unique_id();
    } catch (const Error& error) {
      message.ok = 0;
      set_text(message.error, error.what());
    }
  }
  check_mpi(MPI_Bcast(&message, sizeof message, MPI_BYTE, 0, g.comm), call);
  if (!message.ok)
    throw Error(std::string(call) + ": rank " + std::to_string(g.world_ranks[0]) + ": " +
                text(message.error));
  std::string failure;
  try {
    gd.nccl = nccl->create_communicator(*d.backend, d.device, static_cast<int>(members), g.my_rank,
                                        message.id);
  } catch (const Error& error) {
    failure = error.what();
  }
  int ok = failure.empty() ? 1 : 0;
  int all_ok = 0;
  check_mpi(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, g.comm), call);
  if (!all_ok) {
    gd.nccl.reset();
    throw Error(std::string(call) + ": setting up NCCL on " + g.label + " failed" +
                (failure.empty() ? " on another rank" : ": " + failure));
  }
  gd.path = DevicePath::nccl;
  gd.reason = "NCCL " + nccl->version_string();
  return gd;
}

// The device layer's names for the same types and reductions, in the same order.
static_assert(static_cast<int>(device::NcclType::float64) == static_cast<int>(DataType::float64) &&
              static_cast<int>(device::NcclType::uint32) == static_cast<int>(DataType::uint32));
static_assert(static_cast<int>(device::NcclOp::max) == static_cast<int>(ReduceOp::max) &&
              static_cast<int>(device::NcclOp::prod) == static_cast<int>(ReduceOp::prod));
device::NcclType nccl_type(DataType type) { return static_cast<device::NcclType>(type); }
device::NcclOp nccl_op(ReduceOp op) { return static_cast<device::NcclOp>(op); }

// Elements per staged step.
size_t piece_elements(DataType type) { return kStagingPieceBytes / type_size(type); }

}  // namespace

void* device_alloc(size_t bytes) {
  State& s = state("pgas::device_alloc");
  DeviceState& d = device_state(s, "pgas::device_alloc");
  std::lock_guard lock(d.mutex);
  void* pointer = d.backend->allocate(d.device, std::max<size_t>(bytes, 1));
  if (!pointer)
    throw Error("pgas::device_alloc: no room for " + std::to_string(bytes) + " bytes on " +
                d.backend->name() + " device " + std::to_string(d.device) + " of rank " +
                std::to_string(s.rank));
  d.buffers[static_cast<const char*>(pointer)] = bytes;
  return pointer;
}

void device_free(void* pointer) {
  State& s = state("pgas::device_free");
  if (!pointer) return;
  DeviceState& d = device_state(s, "pgas::device_free");
  std::lock_guard lock(d.mutex);
  auto found = d.buffers.find(static_cast<const char*>(pointer));
  if (found == d.buffers.end())
    throw Error(std::string("pgas::device_free: ") +
                "not a buffer of pgas::device_alloc on this rank (freed already?)");
  d.buffers.erase(found);
  d.backend->release(d.device, pointer);
}

void copy_to_device(void* device_dst, const void* host_src, size_t bytes) {
  State& s = state("pgas::copy_to_device");
  DeviceState& d = device_state(s, "pgas::copy_to_device");
  std::lock_guard lock(d.mutex);
  check_range(d, device_dst, bytes, "pgas::copy_to_device", "the destination");
  if (bytes && !host_src) throw Error("pgas::copy_to_device: the source is null");
  copy(s, d, device_dst, host_src, bytes, device::CopyKind::host_to_device, "pgas::copy_to_device");
}

void copy_from_device(void* host_dst, const void* device_src, size_t bytes) {
  State& s = state("pgas::copy_from_device");
  DeviceState& d = device_state(s, "pgas::copy_from_device");
  std::lock_guard lock(d.mutex);
  check_range(d, device_src, bytes, "pgas::copy_from_device", "the source");
  if (bytes && !host_dst) throw Error("pgas::copy_from_device: the destination is null");
  copy(s, d, host_dst, device_src, bytes, device::CopyKind::device_to_host,
       "pgas::copy_from_device");
}

const char* device_backend() {
  State& s = state("pgas::device_backend");
  return device_state(s, "pgas::device_backend").backend->name();
}

int device_index() {
  State& s = state("pgas::device_index");
  return device_state(s, "pgas::device_index").device;
}

void device_broadcast(void* data, size_t count, DataType type, int root, const Group& group) {
  constexpr const char* call = "pgas::device_broadcast";
  State& s = state(call);
  GroupState& g = member_state(s, group, call);
  check_root(g, root, call);
  check_type_and_op(type, ReduceOp::sum);
  DeviceState& d = device_state(s, call);
  const size_t element = type_size(type);
  {
    std::lock_guard lock(d.mutex);
    check_range(d, data, count * element, call, "the data");
  }
  agree_collective(g, CallKind::device_broadcast, count, type, 0, root, call);
  std::lock_guard lock(d.mutex);
  GroupDevice& gd = group_device(s, d, g, group.id(), call);
  if (count == 0) return;
  if (gd.path == DevicePath::nccl) {
    gd.nccl->broadcast(data, count, nccl_type(type), root, d.stream);
    synchronize(s, d, call, gd.nccl.get());
    return;
  }
  const size_t piece = piece_elements(type);
  char* host = staging(d, std::min(count, piece) * element);
  char* cursor = static_cast<char*>(data);
  for (size_t done = 0; done < count;) {
    const size_t n = std::min(count - done, piece);
    if (g.my_rank == root)
      copy(s, d, host, cursor, n * element, device::CopyKind::device_to_host, call);
    mpi_broadcast(g, host, n, type, root, call);
    if (g.my_rank != root)
      copy(s, d, cursor, host, n * element, device::CopyKind::host_to_device, call);
    cursor += n * element;
    done += n;
  }
}

void device_allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                      const Group& group) {
  constexpr const char* call = "pgas::device_allreduce";
  State& s = state(call);
  GroupState& g = member_state(s, group, call);
  check_type_and_op(type, op);
  DeviceState& d = device_state(s, call);
  const size_t bytes = count * type_size(type);
  {
    std::lock_guard lock(d.mutex);
    check_range(d, send, bytes, call, "the send buffer");
    check_range(d, recv, bytes, call, "the receive buffer");
    const char* from = static_cast<const char*>(send);
    const char* to = static_cast<const char*>(recv);
    if (bytes && send != recv && from < to + bytes && to < from + bytes)
      throw Error(std::string(call) + ": " +
                  "the send and receive buffers overlap without being the same (in place)");
  }
  agree_collective(g, CallKind::device_allreduce, count, type, static_cast<uint64_t>(op), 0, call);
  std::lock_guard lock(d.mutex);
  GroupDevice& gd = group_device(s, d, g, group.id(), call);
  if (count == 0) return;
  if (gd.path == DevicePath::nccl) {
    gd.nccl->allreduce(send, recv, count, nccl_type(type), nccl_op(op), d.stream);
    synchronize(s, d, call, gd.nccl.get());
    return;
  }
  const size_t element = type_size(type);
  const size_t piece = piece_elements(type);
  char* host = staging(d, std::min(count, piece) * element);
  for (size_t done = 0; done < count;) {
    const size_t n = std::min(count - done, piece);
    copy(s, d, host, static_cast<const char*>(send) + done * element, n * element,
         device::CopyKind::device_to_host, call);
    mpi_allreduce(g, host, host, n, type, op, call);
    copy(s, d, static_cast<char*>(recv) + done * element, host, n * element,
         device::CopyKind::host_to_device, call);
    done += n;
  }
}

DevicePath device_collective_path(const Group& group) {
  State& s = state("pgas::device_collective_path");
  group_state(s, group, "pgas::device_collective_path");
  if (!s.device) return DevicePath::undecided;
  std::lock_guard lock(s.device->mutex);
  if (s.device->groups.size() < group.id()) return DevicePath::undecided;
  return s.device->groups[group.id() - 1].path;
}

std::string device_collective_reason(const Group& group) {
  State& s = state("pgas::device_collective_reason");
  group_state(s, group, "pgas::device_collective_reason");
  if (!s.device) return "";
  std::lock_guard lock(s.device->mutex);
  if (s.device->groups.size() < group.id()) return "";
  return s.device->groups[group.id() - 1].reason;
}

const char* device_path_name(DevicePath path) {
  switch (path) {
    case DevicePath::undecided:
      return "undecided";
    case DevicePath::staged:
      return "staged";
    case DevicePath::nccl:
      return "nccl";
  }
  return "?";
}

void release_group_device(State& s, uint32_t group_id) {
  if (!s.device) return;
  std::lock_guard lock(s.device->mutex);
  if (s.device->groups.size() < group_id) return;
  s.device->groups[group_id - 1] = GroupDevice{};
}

void finalize_device(State& s) {
  if (!s.device) return;
  DeviceState& d = *s.device;
  {
    std::lock_guard lock(d.mutex);
    d.groups.clear();  // NCCL communicators first: they use the device
    if (d.backend) {
      for (const auto& [start, bytes] : d.buffers)
        d.backend->release(d.device, const_cast<char*>(start));
      d.buffers.clear();
      if (d.staging) d.backend->release_staging(d.staging);
      d.staging = nullptr;
      if (d.stream) d.backend->destroy_stream(d.stream);
      d.stream = nullptr;
    }
  }
  s.device.reset();
}

}  // namespace taskgrid::pgas
