// TaskGrid public C++ API.
//
// A program written as tasks with data dependencies, OpenMP-style:
//
//   void scale(taskgrid::TaskContext& ctx) {
//     auto factor = ctx.arg<double>();
//     double* v = ctx.data_as<double>(0);
//     for (size_t i = 0; i < ctx.size(0) / sizeof(double); ++i) v[i] *= factor;
//   }
//   TASKGRID_REGISTER(scale);
//
//   int main(int argc, char** argv) {
//     taskgrid::start(&argc, &argv);           // cluster mode: ranks > 0 serve here
//     std::vector<double> v(1000, 1.0);
//     auto h = taskgrid::enter_data(v.data(), v.size() * sizeof(double));  // map(to:)
//     taskgrid::submit(scale, {taskgrid::inout(h)}, 2.0);                   // depend(inout:)
//     taskgrid::exit_data(h);                                               // map(from:)
//     return taskgrid::finish();
//   }
//
// The same binary runs on every rank (mpiexec -n N ./program). Started without
// mpiexec it is one rank that runs its tasks on local threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "taskgrid/version.h"

namespace taskgrid {

// Every API misuse and every runtime failure the caller can handle.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------- data ----

// A registered buffer. Thin and copyable; id 0 is "no handle".
struct DataHandle {
  uint64_t id = 0;
  explicit operator bool() const { return id != 0; }
  // Written out, not defaulted: CUDA's compiler reads this header in C++17.
  friend bool operator==(DataHandle a, DataHandle b) { return a.id == b.id; }
  friend bool operator!=(DataHandle a, DataHandle b) { return a.id != b.id; }
};

enum class AccessMode : uint8_t { in = 1, out = 2, inout = 3 };

struct DataAccess {
  DataHandle handle;
  AccessMode mode;
};
inline DataAccess in(DataHandle h) { return {h, AccessMode::in}; }
inline DataAccess out(DataHandle h) { return {h, AccessMode::out}; }
inline DataAccess inout(DataHandle h) { return {h, AccessMode::inout}; }

// ---------------------------------------------------------------- tasks ---

// The most bytes of by-value arguments one task may carry: they travel in
// every task command, so large data belongs in handles (enter_data).
// submit() refuses more at compile time, submit_packed() when called.
inline constexpr size_t max_task_args_bytes = size_t{64} << 10;

namespace detail {
struct TaskContextAccess;  // the runtime's access to TaskContext (src/)

// A type's name as the compiler spells it, cut from __PRETTY_FUNCTION__:
// "... [with T = float]" (GCC, and nvcc's front end) or "... [T = float]"
// (clang). Checked mode (TASKGRID_CHECK=1) compares the types an argument
// was submitted and read as by these names; C++17, for CUDA's compiler.
struct TypeText {
  const char* text;
  size_t size;
};
template <typename T>
constexpr const char* pretty_function() {
  return __PRETTY_FUNCTION__;
}
constexpr TypeText type_text_from(const char* pretty) {
  size_t begin = 0;
  while (pretty[begin] != '\0' && !(pretty[begin] == 'T' && pretty[begin + 1] == ' ' &&
                                    pretty[begin + 2] == '=' && pretty[begin + 3] == ' '))
    ++begin;
  if (pretty[begin] == '\0') return {pretty, begin};  // an unknown spelling: all of it
  begin += 4;
  // The last ']' closes the list: an array type has one of its own.
  size_t end = begin;
  for (size_t i = begin; pretty[i] != '\0'; ++i)
    if (pretty[i] == ']') end = i;
  return {pretty + begin, end - begin};
}
// FNV-1a, 64 bits: the name's identity on the wire (pointers do not travel).
constexpr uint64_t type_hash_of(TypeText name) {
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < name.size; ++i) {
    hash ^= static_cast<unsigned char>(name.text[i]);
    hash *= 1099511628211ull;
  }
  return hash;
}
template <typename T>
struct TypeOf {
  static constexpr TypeText name = type_text_from(pretty_function<T>());
  static constexpr uint64_t hash = type_hash_of(name);
};

// One by-value argument as submit() packed it.
struct ArgType {
  uint32_t offset;
  uint32_t size;
  uint64_t hash;  // TypeOf<T>::hash
  const char* name;
  uint32_t name_size;
};
// The arguments of submit(fn, accesses, args...), made at compile time.
template <typename... Args>
struct ArgSignature {
  struct Table {
    ArgType entries[sizeof...(Args)];
  };
  static constexpr Table make() {
    Table made{
        {ArgType{0, static_cast<uint32_t>(sizeof(Args)), TypeOf<Args>::hash,
                 TypeOf<Args>::name.text, static_cast<uint32_t>(TypeOf<Args>::name.size)}...}};
    uint32_t offset = 0;
    for (ArgType& entry : made.entries) {
      entry.offset = offset;
      offset += entry.size;
    }
    return made;
  }
  static constexpr Table table = make();
};
}  // namespace detail

// What a running task sees: its by-value arguments and one buffer per access,
// in the order the accesses were given at submission.
class TaskContext {
 public:
  size_t num_data() const { return num_data_; }
  // Checked: an index past the task's accesses throws taskgrid::Error.
  void* data(size_t index) const {
    if (index >= num_data_) bad_index("data", index);
    return buffers_[index].data;
  }
  size_t size(size_t index) const {
    if (index >= num_data_) bad_index("size", index);
    return buffers_[index].size;
  }
  template <typename T>
  T* data_as(size_t index) const {
    return static_cast<T*>(data(index));
  }

  const void* args() const { return args_; }
  size_t args_size() const { return args_size_; }
  // The by-value arguments packed at submission (see submit()). In checked
  // mode (TASKGRID_CHECK=1) reading one as another type than it was
  // submitted as ends the job naming both types (not for submit_packed's
  // arguments, which carry no types).
  template <typename T>
  T arg(size_t offset = 0) const {
    static_assert(std::is_trivially_copyable_v<T>);
    if (offset + sizeof(T) > args_size_) throw Error("TaskContext::arg: reads past the arguments");
    if (signature_)
      check_arg(offset, sizeof(T), detail::TypeOf<T>::hash, detail::TypeOf<T>::name.text,
                detail::TypeOf<T>::name.size);
    T value;
    std::memcpy(&value, static_cast<const char*>(args_) + offset, sizeof(T));
    return value;
  }

  int rank() const { return rank_; }
  uint64_t task_id() const { return task_id_; }

  // In a device implementation (register_device_function): the device of
  // this rank the task runs on, and the stream to enqueue its work on (a
  // cudaStream_t on a CUDA device: launch kernels on it and return, never
  // synchronise it; taskgrid/device.hpp has what works on every device).
  // data(i) are then device pointers. On a CPU: -1 and nullptr.
  int device() const;
  void* stream() const;

 private:
  // Only the runtime makes contexts and reads their engine state.
  friend struct detail::TaskContextAccess;
  struct Buffer {
    void* data;
    size_t size;
  };
  TaskContext(const Buffer* buffers, size_t num_data, const void* args, size_t args_size, int rank,
              uint64_t task_id, void* binding)
      : buffers_(buffers),
        num_data_(num_data),
        args_(args),
        args_size_(args_size),
        rank_(rank),
        task_id_(task_id),
        binding_(binding) {}

  [[noreturn]] void bad_index(const char* call, size_t index) const;
  // Checked mode: ends the job unless the argument at `offset` was submitted
  // as this type.
  void check_arg(size_t offset, size_t size, uint64_t type_hash, const char* type_name,
                 size_t type_name_size) const;

  const Buffer* buffers_;
  size_t num_data_;
  const void* args_;
  size_t args_size_;
  int rank_;
  uint64_t task_id_;
  void* binding_;
  void* device_ = nullptr;  // the engine's device state (nullptr: on a CPU)
  // Checked mode: the arguments' types as submitted (nullptr: not checked).
  const void* signature_ = nullptr;
  size_t signature_size_ = 0;
};

using TaskFunction = void (*)(TaskContext&);

// A task function's identity: the same on every rank because it is derived
// from the registered name, not from an address or a registration order.
struct FunctionId {
  uint32_t value = 0;
  friend bool operator==(FunctionId a, FunctionId b) { return a.value == b.value; }
  friend bool operator!=(FunctionId a, FunctionId b) { return a.value != b.value; }
};

// Registers `fn` under `name` (unique; a second name with the same hash, or
// the same name for another function, throws). Call before start() or at
// static initialisation (TASKGRID_REGISTER), identically on every rank.
FunctionId register_function(const char* name, TaskFunction fn);
// A task with a device implementation, run on a device of the task's rank
// when it has one (TASKGRID_DEVICE), else `cpu`. `cpu` may be nullptr: such a
// task fails, naming its rank, where no device is. function_id() knows both.
FunctionId register_device_function(const char* name, TaskFunction cpu, TaskFunction device);
// The id of a registered function (throws Error when not registered).
FunctionId function_id(TaskFunction fn);

#define TASKGRID_REGISTER(fn)                                                     \
  [[maybe_unused]] static const ::taskgrid::FunctionId taskgrid_registered_##fn = \
      ::taskgrid::register_function(#fn, fn)

struct TaskOptions {
  int rank = -1;      // placement hint: run on this rank (-1: the scheduler decides)
  double cost = 0.0;  // cost hint in seconds (0: use measured durations)
  // Task-aware communication (taskgrid/task_comm.hpp): the channel whose
  // communicator the task's messages use; -1: the task does not communicate.
  // Each rank posts a channel's operations in submission order, so the k-th
  // send to a peer with a tag meets the peer's k-th receive with that tag.
  int channel = -1;
  // For traces and error messages (default: the registered function's name).
  const char* name = nullptr;
  // Among the tasks ready on the same rank at the same time, higher runs
  // first (FIFO among equals). No effect on dependencies or placement.
  int priority = 0;
  // Device hint: run on this device of the task's rank; any_device (the
  // runtime chooses: in cluster mode heft weighs each rank's CPUs and devices
  // by measured durations, elsewhere a device wherever the rank has one), or
  // on_cpu (the CPU implementation, even where devices are). A device index
  // needs a device implementation, on_cpu a CPU one; a rank without the
  // device ends the job naming the task.
  static constexpr int any_device = -1;
  static constexpr int on_cpu = -2;
  int device = any_device;
};

// ------------------------------------------------------------- lifecycle --

// Who runs the program: the program chooses; TASKGRID_MODE may only confirm it.
//   cluster: rank 0 runs the program; the other ranks serve it (run its tasks).
//   spmd: every rank runs the program and must submit the same sequence of
//     enter_data/submit calls (checked: a rank that diverges stops the job
//     with a message naming the first difference).
//   from_environment: the program works in both modes; TASKGRID_MODE
//     (default cluster) picks.
// TASKGRID_MODE set to the other mode than the program's is an error.
enum class Mode { cluster, spmd, from_environment };

// Initialises MPI (or adopts an MPI the program already initialised) and
// starts this rank's engine. In cluster mode rank 0 returns and runs the
// program; the other ranks serve the head until it calls finish(), then
// finalise and exit the process with the job's status (run() returns there
// instead). In spmd mode every rank returns and runs the program.
// A taskgrid::Error the program does not catch, after start() (or from
// start() itself, e.g. a bad setting), ends the whole job with
// "error: taskgrid: rank R: <what>" and exit status 2.
void start(int* argc, char*** argv, Mode mode = Mode::cluster);

struct RunOptions {
  Mode mode = Mode::cluster;
};
// Starts the runtime, runs `main_fn(argc, argv)` (cluster mode: on rank 0,
// the other ranks serve; spmd: on every rank), finishes, and returns the
// job's exit status (the largest main_fn returned on any rank, as finish())
// on every rank, in both modes. main_fn may call finish() itself.
int run(int argc, char** argv, const std::function<int(int, char**)>& main_fn,
        const RunOptions& options = {});
// Waits for all tasks, stops every rank's engine, finalises MPI if start()
// initialised it. Returns the job's status: the largest `exit_status` given
// on any rank (serving ranks give 0), the same on every rank. MPI_Finalize is
// bounded: if it has not returned after TASKGRID_FINALIZE_TIMEOUT seconds
// (default 30; 0: no limit) the rank says so on stderr and exits with that
// status (Debian's MPICH over TCP can hang there after the job's work is
// done).
int finish(int exit_status = 0);

int rank();
int num_ranks();
// The threads that run this rank's tasks: TASKGRID_THREADS, or by default the
// cores this rank may run on (its affinity mask) divided among the node's
// ranks that may run on them too.
int threads_per_rank();
// The ranks of this rank's node whose affinity masks overlap its own, itself
// included (all of the node's ranks where none is bound; 1 where each rank
// has cores of its own): more of them than the rank has cores means they
// take turns on a core, and a rank that only waits should sleep, not poll.
int ranks_sharing_cores();
bool is_running();
// The mode in effect (throws taskgrid::Error before start()).
Mode mode();

// ------------------------------------------------------------------ data --

// `target enter data map(to:)`: copies `bytes` from `host` into the runtime
// and returns a handle. The host buffer stays registered for exit_data/fetch.
// Cluster mode: the data starts on rank 0. spmd mode: every rank makes the
// same call; the data starts on its owner (from the owner's host buffer):
// `owner`, or handle number modulo ranks when not given.
DataHandle enter_data(void* host, size_t bytes);
DataHandle enter_data(void* host, size_t bytes, int owner);
// `target enter data map(alloc:)`: the same without the copy. The first
// version is uninitialised, so the handle's first task must write all of it
// (out); `host` (null allowed) only receives fetch/exit_data, and a fetch of
// a handle entered with null only waits for its writers. For scratch data and
// results: an enter_data of a large buffer copies it in whole.
DataHandle enter_data_alloc(void* host, size_t bytes);
DataHandle enter_data_alloc(void* host, size_t bytes, int owner);
// The rank that owns `h` (spmd: where tasks writing it run by default).
int owner(DataHandle h);
// True in spmd mode: every rank runs the program (mode() == Mode::spmd).
bool is_spmd();
// `target update from`: waits for the tasks that write `h` and copies its
// latest version into the host buffer given at enter_data (cluster mode: on
// rank 0; spmd mode: on the owner, other ranks only wait for their tasks).
void fetch(DataHandle h);
// `target exit data map(from:)`: fetch(h) then release(h).
void exit_data(DataHandle h);
// Results back to any rank (spmd mode): fetch(h) into `rank`'s host buffer
// (the one it gave at enter_data), or with all_ranks into every rank's. A
// call every rank makes at the same point of its sequence (the divergence
// check compares it); the runtime moves the data (one transfer per rank that
// lacks the latest version). Cluster mode: only rank 0 has the program's
// buffers, so `rank` must be 0.
constexpr int all_ranks = -1;
void fetch(DataHandle h, int rank);
// fetch(h, rank) then release(h).
void exit_data(DataHandle h, int rank);
// Forgets `h` once the tasks already submitted on it are done; its versions
// are reclaimed on every rank.
void release(DataHandle h);

// ----------------------------------------------------------------- tasks --

// Submits a task: `fn` with these data accesses (depend clauses) and these
// arguments copied by value (firstprivate; trivially copyable, packed in
// order without padding, at most max_task_args_bytes; read them with
// TaskContext::arg<T>(offset)). Their types are unknown here: checked mode
// does not check how the task reads them.
void submit_packed(FunctionId fn, std::initializer_list<DataAccess> accesses,
                   const TaskOptions& options, const void* args, size_t args_size);
// Same, with an array of accesses.
void submit_packed(FunctionId fn, const DataAccess* accesses, size_t num_accesses,
                   const TaskOptions& options, const void* args, size_t args_size);

namespace detail {
// submit()'s way in: submit_packed with the arguments' types, which checked
// mode sends with the task.
void submit_typed(FunctionId fn, std::initializer_list<DataAccess> accesses,
                  const TaskOptions& options, const void* args, size_t args_size,
                  const ArgType* types, size_t num_types);

template <typename... Args>
constexpr size_t packed_size() {
  return (size_t{0} + ... + sizeof(Args));
}
template <typename... Args>
void pack(char* out, const Args&... args) {
  static_assert((std::is_trivially_copyable_v<Args> && ...),
                "task arguments are copied by value: they must be trivially copyable");
  // A TaskOptions here is a mistake (options go right after the accesses),
  // and it would otherwise travel silently as argument bytes.
  static_assert(!(std::is_same_v<Args, TaskOptions> || ...),
                "TaskOptions passed as a task argument: give the options right after the "
                "accesses, once");
  size_t offset = 0;
  ((std::memcpy(out + offset, &args, sizeof(Args)), offset += sizeof(Args)), ...);
}
}  // namespace detail

// submit(fn, accesses, options, args...) or, with default options,
// submit(fn, accesses, args...). With both forms viable (the first argument
// after the accesses is a TaskOptions) the one taking options is chosen: it
// is the more specialised template. The arguments, at most
// max_task_args_bytes together, are packed on the stack.
template <typename... Args>
void submit(FunctionId fn, std::initializer_list<DataAccess> accesses, const TaskOptions& options,
            const Args&... args) {
  // Checked here, before a stack array of that size is made.
  static_assert(detail::packed_size<Args...>() <= max_task_args_bytes,
                "task arguments are larger than taskgrid::max_task_args_bytes (64 KiB): "
                "register large data with enter_data and pass its handle as an access");
  if constexpr (sizeof...(Args) == 0) {
    // No buffer at all: an unwritten one trips GCC's -Wmaybe-uninitialized.
    submit_packed(fn, accesses, options, nullptr, 0);
  } else {
    char packed[detail::packed_size<Args...>()];
    detail::pack(packed, args...);
    detail::submit_typed(fn, accesses, options, packed, sizeof packed,
                         detail::ArgSignature<Args...>::table.entries, sizeof...(Args));
  }
}
template <typename... Args>
void submit(FunctionId fn, std::initializer_list<DataAccess> accesses, const Args&... args) {
  submit(fn, accesses, TaskOptions{}, args...);
}
template <typename... Args>
void submit(TaskFunction fn, std::initializer_list<DataAccess> accesses, const TaskOptions& options,
            const Args&... args) {
  submit(function_id(fn), accesses, options, args...);
}
template <typename... Args>
void submit(TaskFunction fn, std::initializer_list<DataAccess> accesses, const Args&... args) {
  submit(function_id(fn), accesses, TaskOptions{}, args...);
}

// Waits until every submitted task has completed (spmd: this rank's tasks).
void wait_all();
// Waits until every submitted task that accesses `h` has completed.
void wait(DataHandle h);

}  // namespace taskgrid
