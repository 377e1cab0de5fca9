// Shared machinery of taskbench-mpi and taskbench-mpi_omp: MPI start-up and
// error handling, the block distribution of points over ranks, the per-graph
// exchange plan (what each rank receives from whom and sends to whom, per
// dependence set) with its buffers, and the timed driver of spec 8.4.
//
// Protocol of one graph on one rank (both systems), timestep t:
//   1. post the receives of timestep t+1 (early: they land while t computes);
//   2. wait for the receives of timestep t;
//   3. wait for the sends of t-2 (they read the output buffers of parity t%2);
//   4. execute the local active points of t into the output buffers of t%2;
//   5. send each output straight from its buffer (zero copy) to every rank
//      that has an effective consumer of it at t+1, once per rank.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/options.h"
#include "core/report.h"
#include "core/task_contract.h"
#include "core/task_graph.h"

namespace taskbench::mpi {

// Every MPI call goes through this: communicators use MPI_ERRORS_RETURN, and
// a failure ends the job through fatal() naming the call and MPI's message.
#define TASKBENCH_MPI_CHECK(call) ::taskbench::mpi::check_mpi((call), #call)
void check_mpi(int code, const char* call);

struct World {
  MPI_Comm comm = MPI_COMM_NULL;  // private duplicate of MPI_COMM_WORLD
  int rank = 0;
  int size = 1;
  int64_t tag_ub = 32767;  // MPI_TAG_UB of this MPI library
};

// MPI_Init_thread (fails unless `required_thread_level` is provided), sets
// MPI_ERRORS_RETURN, installs the fatal handler ("error: rank <r>: ..." then
// MPI_Abort) and duplicates MPI_COMM_WORLD.
World initialize(int* argc, char*** argv, int required_thread_level);
void finalize(World& world);

// Rank r owns points [r*W/P, (r+1)*W/P - 1] (spec 8.4); any W and P, so a
// rank may own no point at all when W < P.
struct BlockDistribution {
  int64_t width;
  int64_t ranks;
  int64_t first(int64_t rank) const { return rank * width / ranks; }
  // The largest r with first(r) <= point.
  int64_t owner(int64_t point) const { return ((point + 1) * ranks - 1) / width; }
};

// 64-byte aligned, zero-initialised heap memory (aligned records for the
// task contract, no false sharing between the points of mpi_omp threads).
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes);
  char* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
};

// The -broadcast buffer as tasks see it.
struct BroadcastView {
  const char* data = nullptr;
  size_t bytes = 0;
};

// MPI_Bcast in pieces of at most 1 GiB: int counts everywhere, no MPI_Bcast_c.
void broadcast_bytes(char* data, size_t bytes, int root, MPI_Comm comm);

// Where one timestep sits: its dependence set, its active range and the one
// of t-1 (empty for t = 0), and the local active points.
struct Step {
  int64_t timestep;
  int64_t dset;
  int64_t first, last;             // active range of t, inclusive
  int64_t prev_first, prev_last;   // active range of t-1, inclusive (last < first: empty)
  int64_t local_first, local_end;  // this rank's active points, [local_first, local_end)
};

// Per-task arrays for TaskArgs, sized once for the largest input list.
struct TaskScratch {
  std::vector<InputView> views;
  std::vector<int64_t> points;
  explicit TaskScratch(size_t max_inputs = 0) : views(max_inputs), points(max_inputs) {}
};

// Plan and buffers of one graph on one rank. Built once, outside timing; the
// timed loop allocates nothing. Effective edges are the raw edges of the
// dependence set filtered by the active ranges of the step (cheap interval
// tests), so dom and tree need no per-timestep plan.
class GraphExchange {
 public:
  // `tag_base` separates the tags of consecutive graphs (see post_receives).
  GraphExchange(const TaskGraph& graph, const World& world, int64_t tag_base);
  ~GraphExchange();
  GraphExchange(const GraphExchange&) = delete;
  GraphExchange& operator=(const GraphExchange&) = delete;

  const TaskGraph& graph() const { return *graph_; }
  int64_t local_first() const { return local_first_; }
  int64_t local_count() const { return local_count_; }
  // Largest number of inputs a local task can have (TaskScratch size).
  size_t max_inputs() const { return max_inputs_; }

  Step step(int64_t timestep) const;

  // Opens timestep `t` of a pass. `next` holds step(t) on entry (start with
  // step(0)); it is moved to `current`, and the receives of t+1 are posted at
  // once (messages posted early) into `next`. Then waits for t's receives and
  // for the sends of t-2, whose output parity t reuses. Returns whether t+1
  // exists (only then are outputs sent).
  bool begin_timestep(int64_t t, Step& current, Step& next);

  // Untimed, before each pass: zero outputs and receive buffers so that a
  // missing message cannot be hidden by data of the previous pass.
  void reset();

  // Posts the receives whose data the tasks of `consumer` read. Buffers and
  // requests of parity consumer.timestep % 2.
  void post_receives(const Step& consumer);
  void wait_receives(int64_t consumer_timestep);

  // Sends the output of local point `point` (produced at consumer.timestep-1,
  // which must have a successor) to every rank with an effective consumer.
  void send_output(const Step& consumer, int64_t point);
  // Waits for the sends that read the output buffers of producer_timestep's
  // parity; call before overwriting those buffers.
  void wait_sends(int64_t producer_timestep);
  void wait_all_sends();

  // Arguments of task (step.timestep, point), inputs in effective-input order.
  // Thread-safe (reads the plan, writes only `scratch`).
  TaskArgs task_args(const Step& step, int64_t point, TaskScratch& scratch,
                     const BroadcastView& broadcast) const;

 private:
  struct InputEntry {
    int64_t point;  // producer
    int64_t slot;   // local index of the producer, or its receive slot
    bool remote;
  };
  struct ReceiveEntry {
    int64_t point;  // producer
    int source;
    int tag;
    int64_t slot;
    size_t consumers_begin, consumers_end;  // local consumers (intervals)
  };
  struct SendEntry {
    int dest;
    size_t consumers_begin, consumers_end;  // consumers on dest (intervals)
  };
  // Raw (active-range agnostic) plan of one dependence set.
  struct DsetPlan {
    std::vector<size_t> input_begin;     // per local point, into inputs
    std::vector<InputEntry> inputs;      // enumeration order
    std::vector<ReceiveEntry> receives;  // ascending producer
    std::vector<size_t> send_begin;      // per local point, into sends
    std::vector<SendEntry> sends;        // ascending destination
    std::vector<Interval> consumers;     // pool for the two lists above
  };

  bool any_active(const DsetPlan& plan, size_t begin, size_t end, const Step& step) const;
  char* output(int64_t timestep, int64_t local_index) const;
  char* receive_buffer(int64_t timestep, int64_t slot) const;
  int tag_of(int64_t point) const;

  const TaskGraph* graph_;
  MPI_Comm comm_;
  int rank_;
  BlockDistribution distribution_;
  int64_t local_first_ = 0;
  int64_t local_count_ = 0;
  int64_t tag_base_ = 0;
  int64_t tag_modulus_ = 1;
  size_t max_inputs_ = 0;

  size_t output_bytes_ = 0;
  size_t output_stride_ = 0;  // output_bytes rounded up to 64
  size_t scratch_stride_ = 0;
  MPI_Datatype datatype_ = MPI_BYTE;  // one output, `datatype_count_` times
  int datatype_count_ = 0;
  bool owns_datatype_ = false;

  std::vector<DsetPlan> dsets_;
  std::vector<int> send_tags_;  // per local point
  int64_t receive_slots_ = 0;

  AlignedBuffer outputs_;   // [parity][local point]
  AlignedBuffer receives_;  // [parity][slot]
  AlignedBuffer scratch_;   // [local point], prepared once
  std::vector<MPI_Request> receive_requests_[2];
  std::vector<MPI_Request> send_requests_[2];
  int receive_count_[2] = {0, 0};
  int send_count_[2] = {0, 0};
};

// What a system plugs into run_system().
class System {
 public:
  virtual ~System() = default;
  // The system's own flags, read after the common ones parsed (the same
  // verdict on every rank): "" or the message of a usage error (printed by
  // rank 0 as "error: <message>", status 2).
  virtual std::string parse_flags(int /*argc*/, const char* const* /*argv*/,
                                  const BenchConfig& /*config*/) {
    return {};
  }
  // The flags parse_flags reads (each with one value): not warned about as
  // unknown.
  virtual std::vector<std::string_view> own_flags() const { return {}; }
  // Printed after the usage for -h (its own flags); "" for none.
  virtual const char* help_text() const { return ""; }
  // Untimed, once, after planning: size per-thread state. Returns the number
  // of threads per rank the system runs with.
  virtual int prepare(const BenchConfig& config, size_t max_inputs) = 0;
  // Timed: executes every timestep of one graph (and waits for its sends).
  virtual void run_graph(GraphExchange& graph, const BroadcastView& broadcast,
                         ExecutionCounts& counts) = 0;
};

// The end of a timed run on every rank: sums the counts and takes the most
// threads per rank onto rank 0, which prints the report (finish_run); returns
// its exit status on every rank. Collective over `world`.
int report_run(const World& world, const BenchConfig& config, const char* name, double elapsed,
               const ExecutionCounts& counts, int threads_per_rank);

// The whole program: init, parse (usage errors printed by rank 0 only),
// configuration, plans, untimed warm-up pass and timed pass (barrier +
// MPI_Wtime around each), reduction of counts, finish_run on rank 0, and the
// same exit status on every rank.
int run_system(int argc, char** argv, const char* name, int thread_level, System& system);

}  // namespace taskbench::mpi
