// The control protocol between planners and engines: commands travel in
// batches (one MPI message holds many), each framed by a tiny header. Plain
// structs copied byte-wise: every rank runs the same binary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace taskgrid::comm::wire {

enum class Kind : uint8_t {
  task = 1,            // planner -> engine: run a task (Task + accesses + args)
  send = 2,            // planner -> engine: send a version to a rank when it exists
  retire = 3,          // planner -> engine: no more uses of a version will be issued
  create = 4,          // local only: a version whose buffer the planner filled (enter_data)
  fetch = 5,           // local only (head): receive/copy a version into host memory
  shutdown = 6,        // planner -> engine: stop after the commands before it
  completed = 7,       // engine -> head: tasks finished (one record per task)
  broadcast = 8,       // planner -> root: broadcast a version (Route + forward list)
  route = 9,           // parent -> child engine: the data follows; forward it (Route + list)
  mpi_broadcast = 10,  // planner -> every participant: join an MPI_Ibcast
  local_task = 11,     // local only: a task of this rank the planner built in place
};

// Access::source of an input that arrives by a broadcast: the sender is not
// known in advance (a route from the parent names it); Access::tag is the
// broadcast's tag.
constexpr int32_t kSourceBroadcast = -2;

struct Header {
  Kind kind;
  uint8_t reserved[3];
  uint32_t bytes;  // payload bytes after this header
};

// Where an input comes from: this rank's store (already there, being
// produced or being received), or a transfer from `source` with `tag`.
struct Access {
  uint64_t in_version;   // 0 when the access does not read
  uint64_t out_version;  // 0 when the access does not write
  uint64_t bytes;
  int32_t source;  // rank the input arrives from; -1: local store
  int32_t tag;     // transfer tag when source >= 0
  uint8_t mode;    // taskgrid::AccessMode
  uint8_t flags;   // kRetiresInput, or 0
  uint8_t reserved[6];
};

// Access::flags: the task's output supersedes its input version, and this
// rank drops its copy once its uses are done. It stands for the `retire`
// command the planner would have sent right after the task (no lookup of the
// version, no command: the engine already holds it when it links the task).
constexpr uint8_t kRetiresInput = 1;

// Followed by num_accesses Access records, args_bytes of arguments and
// name_bytes of task name (0: use the function's name).
struct Task {
  uint64_t task_id;
  uint32_t function;
  uint32_t num_accesses;
  uint32_t args_bytes;
  int32_t channel;  // task-aware communication channel, -1: none
  uint32_t name_bytes;
  int32_t priority;  // TaskOptions::priority: order among ready tasks
  // Returned in the task's Completed record: the planner's key for the task
  // in flight. Dense per planner (task ids are not in spmd mode, where a
  // rank's own tasks are a sparse subset of all tasks).
  uint64_t completion_key;
  // A device of the task's rank, TaskOptions::any_device or on_cpu: the
  // hint, or where heft placed it.
  int32_t device = -1;
  // Checked mode (TASKGRID_CHECK=1): the last this many of the args_bytes
  // are the arguments' types (core/arg_signature.h), not arguments; 0 else.
  uint32_t signature_bytes = 0;
};

struct Send {
  uint64_t version;
  int32_t dest;
  int32_t tag;
};

struct Retire {
  uint64_t version;
};

struct Create {
  uint64_t version;
  uint64_t bytes;
  char* buffer;  // ownership passes to the engine (allocated by BufferPool)
};

// A task for the planner's own rank, built by the engine's in-place builder
// (core::CommandSink::local_task_builder): the record already holds what a
// `task` command would carry, so nothing is encoded or decoded.
struct LocalTask {
  void* record;
};

struct Fetch {
  uint64_t version;
  int32_t source;  // -1: copy from the local store
  int32_t tag;
  void* host;
  uint64_t bytes;
};

// A tree or pipeline broadcast (coll/broadcast.h), followed by `count`
// int32 ranks: the root's readers (Kind::broadcast) or the ranks the receiver
// must forward to (Kind::route). Data messages carry `tag`.
struct Route {
  uint64_t version;
  uint64_t bytes;
  uint64_t chunk_bytes;
  int32_t tag;
  uint32_t count;
  uint8_t shape;  // coll::Shape
  uint8_t forward_each_chunk;
  uint8_t reserved[6];
};

// Followed by `count` int32 ranks, ascending: the communicator's members.
struct MpiBroadcast {
  uint64_t version;
  uint64_t bytes;
  uint64_t chunk_bytes;
  int32_t root;
  int32_t tag;
  uint32_t count;
  uint32_t reserved;
};

struct Completed {
  uint64_t task_id;
  uint64_t duration_ns;
  uint64_t completion_key;  // Task::completion_key
};

// Appends framed commands to a batch.
class BatchWriter {
 public:
  bool empty() const { return bytes_.empty(); }
  size_t size() const { return bytes_.size(); }
  std::vector<char>& bytes() { return bytes_; }
  void clear() { bytes_.clear(); }

  // Reserves room up front: a batch grows to its flush size, and growing it
  // by doubling would reallocate several times per batch.
  void reserve(size_t bytes) { bytes_.reserve(bytes); }

  template <typename T>
  void add(Kind kind, const T& body, const void* extra = nullptr, size_t extra_bytes = 0) {
    const Header header{kind, {}, static_cast<uint32_t>(sizeof(T) + extra_bytes)};
    append(&header, sizeof header);
    append(&body, sizeof body);
    if (extra_bytes) append(extra, extra_bytes);
  }
  // A task: header, Task, accesses, args, name.
  void add_task(const Task& task, const Access* accesses, const void* args,
                const char* name = nullptr) {
    const size_t access_bytes = task.num_accesses * sizeof(Access);
    const Header header{
        Kind::task,
        {},
        static_cast<uint32_t>(sizeof task + access_bytes + task.args_bytes + task.name_bytes)};
    append(&header, sizeof header);
    append(&task, sizeof task);
    append(accesses, access_bytes);
    append(args, task.args_bytes);
    append(name, task.name_bytes);
  }

 private:
  void append(const void* data, size_t n) {
    const size_t at = bytes_.size();
    bytes_.resize(at + n);
    if (n) std::memcpy(bytes_.data() + at, data, n);
  }
  std::vector<char> bytes_;
};

// Walks the commands of a batch. Payload pointers stay valid while the batch
// buffer lives; bodies are copied out (the buffer is not aligned for them).
// A batch cut inside a command ends the walk: next() returns false and cut()
// says why (a batch comes from another process, so it may not throw or read
// past the end). The payload's own layout is checked by wire_check.h.
class BatchReader {
 public:
  BatchReader(const char* data, size_t bytes) : begin_(data), at_(data), end_(data + bytes) {}
  bool next(Header& header, const char*& payload) {
    if (at_ == end_ || cut_) return false;
    if (static_cast<size_t>(end_ - at_) < sizeof header) {
      cut_ = "the batch ends inside a command header";
      std::memcpy(&header.kind, at_, sizeof header.kind);  // at least one byte is left
      return false;
    }
    std::memcpy(&header, at_, sizeof header);
    payload = at_ + sizeof header;
    if (static_cast<size_t>(end_ - payload) < header.bytes) {
      cut_ = "the command runs past the end of the batch";
      return false;
    }
    at_ = payload + header.bytes;
    return true;
  }
  // Why the walk stopped before the end (nullptr: it did not); the header
  // passed to next() then holds at least the command's kind.
  const char* cut() const { return cut_; }
  // Where the next (or the cut) command starts.
  size_t offset() const { return static_cast<size_t>(at_ - begin_); }

 private:
  const char* begin_;
  const char* at_;
  const char* end_;
  const char* cut_ = nullptr;
};

template <typename T>
T read(const char* payload) {
  T value;
  std::memcpy(&value, payload, sizeof value);
  return value;
}

// The command's name in messages; nullptr for a kind this build does not know.
inline const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::task:
      return "task";
    case Kind::send:
      return "send";
    case Kind::retire:
      return "retire";
    case Kind::create:
      return "create";
    case Kind::fetch:
      return "fetch";
    case Kind::shutdown:
      return "shutdown";
    case Kind::completed:
      return "completed";
    case Kind::broadcast:
      return "broadcast";
    case Kind::route:
      return "route";
    case Kind::mpi_broadcast:
      return "mpi_broadcast";
    case Kind::local_task:
      return "local_task";
  }
  return nullptr;
}

// A task command's parts (after check_batch accepted it): the fixed fields
// and where its accesses, arguments and name start in the payload.
struct TaskView {
  Task task;
  const char* accesses;
  const char* args;
  const char* name;
};

inline TaskView read_task(const char* payload) {
  TaskView view;
  view.task = read<Task>(payload);
  view.accesses = payload + sizeof(Task);
  view.args = view.accesses + size_t{view.task.num_accesses} * sizeof(Access);
  view.name = view.args + view.task.args_bytes;
  return view;
}

// The `count` int32 ranks that follow a Route or MpiBroadcast (of `fixed`
// bytes), into `ranks` (after check_batch accepted the command).
inline void read_ranks(const char* payload, size_t fixed, uint32_t count,
                       std::vector<int32_t>& ranks) {
  ranks.resize(count);
  if (count) std::memcpy(ranks.data(), payload + fixed, size_t{count} * sizeof(int32_t));
}

}  // namespace taskgrid::comm::wire
