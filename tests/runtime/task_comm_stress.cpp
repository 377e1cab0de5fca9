// Stress test of task-aware communication (taskgrid-task-comm-stress).
//
//   mpiexec -n N taskgrid-task-comm-stress [--tasks 64] [--rounds 2]
//   mpiexec -n N taskgrid-task-comm-stress misuse
//
// The program runs in spmd mode (taskgrid::Mode::spmd); TASKGRID_MODE=spmd
// may confirm it.
// Every rank submits the whole sequence (spmd), every task with a rank hint.
// Per round:
//
//   pairs        K send tasks and K receive tasks per rank with its partner
//                (rank ^ 1), all on channel 0 with the same tag;
//   ring         K tasks per rank that each send to the next rank and receive
//                from the previous one (two operations in one task), on
//                channels 1..3, same tag;
//   collectives  J ibcast tasks (channel j % 4, root j % N) and J iallreduce
//                tasks (channel (j + 1) % 4) per rank.
//
// Message sizes alternate between small (eager) and large (> 64 KiB:
// rendezvous), so a send matched with the wrong receive either overflows it
// or delivers the wrong bytes. On odd ranks the bodies run in another order
// than submitted: the communicating tasks depend, in groups, on slow gate
// tasks submitted and finishing in reverse order, so later tasks' bodies run
// first; the runtime must still post each channel's operations in
// submission order. Every received buffer is checked element by element by a
// verify task (a mismatch throws: the job ends with the details), which
// counts it; at the end an iallreduce adds up the counts and every rank
// checks its own and the total. Prints "task_comm_stress: ok ..." on rank 0.
//
// misuse: a task without a channel calls task_comm::isend; the job must end
// with a message naming the task and the missing channel.
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <taskgrid/task_comm.hpp>
#include <taskgrid/taskgrid.hpp>
#include <thread>
#include <vector>

namespace {

using taskgrid::DataAccess;
using taskgrid::DataHandle;
using taskgrid::TaskContext;

constexpr int kTag = 5;           // the same tag for every point-to-point message
constexpr int kGroups = 8;        // gate groups per phase on odd ranks
constexpr int kCollectives = 12;  // ibcast and iallreduce rounds per round
constexpr int kChannels = 4;      // the default TASKGRID_CHANNELS

enum Phase : uint32_t { kPairs = 1, kRing = 2, kBroadcast = 3, kReduce = 4 };

// Element counts (doubles): small ones go eagerly, large ones (> 64 KiB)
// by rendezvous. Every size is different, so a mismatch is an MPI error.
int message_count(int k) { return k % 2 == 0 ? 16 + (k * 37) % 300 : 9216 + k * 97; }
int collective_count(int j) { return j % 2 == 0 ? 8 + j * 5 : 10240 + j * 131; }

// What the element `i` of a message of stream `stream` holds: an integer
// below 2^24, so sums over ranks are exact in any order.
uint32_t make_stream(uint32_t phase, int round, int source, int dest, int index) {
  return (((phase * 64 + static_cast<uint32_t>(round)) * 64 + static_cast<uint32_t>(source)) * 64 +
          static_cast<uint32_t>(dest)) *
             256 +
         static_cast<uint32_t>(index);
}
double pattern(uint32_t stream, int i) {
  return static_cast<double>((stream * 2654435761u + static_cast<uint32_t>(i) * 40503u) &
                             0xFFFFFFu);
}
void fill(double* buffer, uint32_t stream, int count) {
  for (int i = 0; i < count; ++i) buffer[i] = pattern(stream, i);
}

// ------------------------------------------------------------------ tasks --

// out(gate): sleeps, so that the tasks behind it start late.
void stress_gate(TaskContext& ctx) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ctx.arg<int32_t>()));
  *ctx.data_as<int64_t>(0) = 1;
}

struct PointArgs {
  int32_t peer, count;
  uint32_t stream;
};

// out(buffer): fills it and sends it to the partner.
void stress_send(TaskContext& ctx) {
  const auto args = ctx.arg<PointArgs>();
  double* buffer = ctx.data_as<double>(0);
  fill(buffer, args.stream, args.count);
  taskgrid::task_comm::isend(ctx, buffer, args.count, MPI_DOUBLE, args.peer, kTag);
}

// out(buffer): receives into it from the partner.
void stress_recv(TaskContext& ctx) {
  const auto args = ctx.arg<PointArgs>();
  taskgrid::task_comm::irecv(ctx, ctx.data(0), args.count, MPI_DOUBLE, args.peer, kTag);
}

struct RingArgs {
  int32_t next, previous, count;
  uint32_t stream;
};

// out(send buffer), out(receive buffer): sends to the next rank, receives
// from the previous one; two operations bound to one task.
void stress_ring(TaskContext& ctx) {
  const auto args = ctx.arg<RingArgs>();
  double* out = ctx.data_as<double>(0);
  fill(out, args.stream, args.count);
  taskgrid::task_comm::isend(ctx, out, args.count, MPI_DOUBLE, args.next, kTag);
  taskgrid::task_comm::irecv(ctx, ctx.data(1), args.count, MPI_DOUBLE, args.previous, kTag);
}

struct BroadcastArgs {
  int32_t root, count;
  uint32_t stream;
};

// out(buffer): the root fills it; every rank joins the ibcast.
void stress_bcast(TaskContext& ctx) {
  const auto args = ctx.arg<BroadcastArgs>();
  double* buffer = ctx.data_as<double>(0);
  if (ctx.rank() == args.root) fill(buffer, args.stream, args.count);
  taskgrid::task_comm::ibcast(ctx, buffer, args.count, MPI_DOUBLE, args.root);
}

struct ReduceArgs {
  int32_t count;
  uint32_t stream;  // of rank 0; rank r adds r * 256
};

// out([contribution | sum]): this rank's contribution, iallreduce'd.
void stress_allreduce(TaskContext& ctx) {
  const auto args = ctx.arg<ReduceArgs>();
  double* buffer = ctx.data_as<double>(0);
  fill(buffer, args.stream + static_cast<uint32_t>(ctx.rank()) * 256, args.count);
  taskgrid::task_comm::iallreduce(ctx, buffer, buffer + args.count, args.count, MPI_DOUBLE,
                                  MPI_SUM);
}

struct VerifyArgs {
  uint32_t stream;
  int32_t count, offset;  // elements to check, from element `offset`
  int32_t contributors;   // > 0: the sum of that many ranks' reduce patterns
};

// in(buffer), inout(counter): checks every element, counts the buffer.
void stress_verify(TaskContext& ctx) {
  const auto args = ctx.arg<VerifyArgs>();
  const double* buffer = ctx.data_as<const double>(0) + args.offset;
  for (int i = 0; i < args.count; ++i) {
    double expected = 0.0;
    if (args.contributors > 0) {
      for (int r = 0; r < args.contributors; ++r)
        expected += pattern(args.stream + static_cast<uint32_t>(r) * 256, i);
    } else {
      expected = pattern(args.stream, i);
    }
    if (buffer[i] != expected)
      throw taskgrid::Error("stream " + std::to_string(args.stream) + " (" +
                            std::to_string(args.count) + " elements): element " +
                            std::to_string(i) + " is " + std::to_string(buffer[i]) + ", expected " +
                            std::to_string(expected));
  }
  *ctx.data_as<int64_t>(1) += 1;
}

// in(counter), out([count | total]): adds up the counts of all ranks.
void stress_total(TaskContext& ctx) {
  auto* totals = ctx.data_as<int64_t>(1);
  totals[0] = *ctx.data_as<const int64_t>(0);
  taskgrid::task_comm::iallreduce(ctx, totals, totals + 1, 1, MPI_INT64_T, MPI_SUM);
}

// A communicating task submitted without a channel (the misuse case).
void send_without_channel(TaskContext& ctx) {
  taskgrid::task_comm::isend(ctx, ctx.data(0), 1, MPI_DOUBLE, 0, kTag);
}
// in(its result): keeps the other ranks waiting (misuse case).
void misuse_reader(TaskContext&) {}

TASKGRID_REGISTER(stress_gate);
TASKGRID_REGISTER(stress_send);
TASKGRID_REGISTER(stress_recv);
TASKGRID_REGISTER(stress_ring);
TASKGRID_REGISTER(stress_bcast);
TASKGRID_REGISTER(stress_allreduce);
TASKGRID_REGISTER(stress_verify);
TASKGRID_REGISTER(stress_total);
TASKGRID_REGISTER(send_without_channel);
TASKGRID_REGISTER(misuse_reader);

// ------------------------------------------------------------------ setup --

struct Stress {
  int ranks = 0, me = 0, tasks = 64, rounds = 2;
  std::vector<double> zeros;  // the owner's initial content of every buffer
  double placeholder = 0.0;   // other ranks' host pointer (never read)

  // Registers a buffer of `bytes` owned by `owner` (every rank calls it).
  DataHandle buffer(size_t bytes, int owner) {
    void* host = &placeholder;
    if (owner == me) {
      if (bytes > zeros.size() * sizeof(double)) zeros.resize(bytes / sizeof(double) + 1, 0.0);
      host = zeros.data();
    }
    return taskgrid::enter_data(host, bytes, owner);
  }

  // Gates for rank r (odd ranks only): kGroups handles, written by slow
  // tasks submitted in reverse order, the first group's the slowest.
  std::vector<DataHandle> gates(int r, std::vector<DataHandle>& handles) {
    if (r % 2 == 0) return {};
    std::vector<DataHandle> result(handles.begin() + r * kGroups,
                                   handles.begin() + (r + 1) * kGroups);
    for (int g = kGroups - 1; g >= 0; --g) {
      taskgrid::TaskOptions options;
      options.rank = r;
      taskgrid::submit(stress_gate, {taskgrid::out(result[static_cast<size_t>(g)])}, options,
                       int32_t{2 + 2 * (kGroups - 1 - g)});
    }
    return result;
  }
  // Appends the gate of item `k` of `count` (odd ranks).
  static void gated(std::vector<DataAccess>& accesses, const std::vector<DataHandle>& gates, int k,
                    int count) {
    if (!gates.empty())
      accesses.push_back(taskgrid::in(gates[static_cast<size_t>(k * kGroups / count)]));
  }
};

void submit_task(taskgrid::TaskFunction fn, const std::vector<DataAccess>& accesses, int rank,
                 int channel, const void* args, size_t bytes) {
  taskgrid::TaskOptions options;
  options.rank = rank;
  options.channel = channel;
  taskgrid::submit_packed(taskgrid::function_id(fn), accesses.data(), accesses.size(), options,
                          args, bytes);
}

int run_misuse() {
  const int last = taskgrid::num_ranks() - 1;
  double value = 1.0;
  const DataHandle h = taskgrid::enter_data(&value, sizeof value, last);
  taskgrid::TaskOptions options;
  options.rank = last;  // no channel
  taskgrid::submit(send_without_channel, {taskgrid::inout(h)}, options);
  // Every other rank waits for its result, as a real program's would.
  for (int r = 0; r < last; ++r) {
    options.rank = r;
    taskgrid::submit(misuse_reader, {taskgrid::in(h)}, options);
  }
  taskgrid::wait_all();
  if (taskgrid::rank() == 0) std::printf("task_comm_stress: misuse not detected\n");
  return taskgrid::finish();
}

}  // namespace

int main(int argc, char** argv) {
  taskgrid::start(&argc, &argv, taskgrid::Mode::spmd);
  Stress s;
  s.ranks = taskgrid::num_ranks();
  s.me = taskgrid::rank();
  bool misuse = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "misuse") {
      misuse = true;
    } else if ((flag == "--tasks" || flag == "--rounds") && i + 1 < argc) {
      const int value = std::atoi(argv[++i]);
      (flag == "--tasks" ? s.tasks : s.rounds) = value;
    } else {
      if (s.me == 0)
        std::fprintf(stderr,
                     "usage: taskgrid-task-comm-stress [--tasks K] [--rounds R] | misuse\n");
      taskgrid::finish();
      return 2;
    }
  }
  if (!taskgrid::is_spmd() || s.tasks < 1 || s.tasks > 255 || s.rounds < 1 || s.rounds > 63 ||
      s.ranks > 63) {
    if (s.me == 0)
      std::fprintf(stderr,
                   "taskgrid-task-comm-stress: needs 1..63 ranks, "
                   "--tasks 1..255, --rounds 1..63\n");
    taskgrid::finish();
    return 2;
  }
  if (misuse) return run_misuse();

  const int n = s.ranks, k_count = s.tasks;
  const auto rank_index = [](int r, int k, int per_rank) {
    return static_cast<size_t>(r) * static_cast<size_t>(per_rank) + static_cast<size_t>(k);
  };
  // Handles, reused by every round (each round writes new versions).
  std::vector<DataHandle> pair_send, pair_recv, ring_send, ring_recv, bcast, reduce, counters,
      totals, gate_handles;
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < k_count; ++k) {
      const size_t bytes = static_cast<size_t>(message_count(k)) * sizeof(double);
      pair_send.push_back(s.buffer(bytes, r));
      pair_recv.push_back(s.buffer(bytes, r));
      ring_send.push_back(s.buffer(bytes, r));
      ring_recv.push_back(s.buffer(bytes, r));
    }
    for (int j = 0; j < kCollectives; ++j) {
      const size_t bytes = static_cast<size_t>(collective_count(j)) * sizeof(double);
      bcast.push_back(s.buffer(bytes, r));
      reduce.push_back(s.buffer(2 * bytes, r));
    }
    for (int g = 0; g < kGroups; ++g) gate_handles.push_back(s.buffer(sizeof(int64_t), r));
  }
  std::vector<int64_t> my_count(1, 0), my_totals(2, 0);
  for (int r = 0; r < n; ++r) {
    void* count_host = r == s.me ? static_cast<void*>(my_count.data()) : &s.placeholder;
    void* totals_host = r == s.me ? static_cast<void*>(my_totals.data()) : &s.placeholder;
    counters.push_back(taskgrid::enter_data(count_host, sizeof(int64_t), r));
    totals.push_back(taskgrid::enter_data(totals_host, 2 * sizeof(int64_t), r));
  }

  std::vector<DataAccess> accesses;
  auto verify = [&](int r, DataHandle h, VerifyArgs args) {
    accesses.assign({taskgrid::in(h), taskgrid::inout(counters[static_cast<size_t>(r)])});
    submit_task(stress_verify, accesses, r, -1, &args, sizeof args);
  };
  int64_t expected_per_rank = 0;
  for (int round = 0; round < s.rounds; ++round) {
    // Pairs: channel 0, the same tag for all K messages each way.
    for (int r = 0; r < n; ++r) {
      const int partner = (r ^ 1) < n ? r ^ 1 : r;
      const std::vector<DataHandle> gates = s.gates(r, gate_handles);
      for (int k = 0; k < k_count; ++k) {
        const size_t at = rank_index(r, k, k_count);
        const PointArgs send{partner, message_count(k), make_stream(kPairs, round, r, partner, k)};
        accesses.assign({taskgrid::out(pair_send[at])});
        Stress::gated(accesses, gates, k, k_count);
        submit_task(stress_send, accesses, r, 0, &send, sizeof send);
        const PointArgs recv{partner, message_count(k), make_stream(kPairs, round, partner, r, k)};
        accesses.assign({taskgrid::out(pair_recv[at])});
        Stress::gated(accesses, gates, k, k_count);
        submit_task(stress_recv, accesses, r, 0, &recv, sizeof recv);
      }
      for (int k = 0; k < k_count; ++k)
        verify(r, pair_recv[rank_index(r, k, k_count)],
               VerifyArgs{make_stream(kPairs, round, partner, r, k), message_count(k), 0, 0});
    }
    // Ring: one send and one receive per task, channels 1..3.
    for (int r = 0; r < n; ++r) {
      const int next = (r + 1) % n, previous = (r + n - 1) % n;
      const std::vector<DataHandle> gates = s.gates(r, gate_handles);
      for (int k = 0; k < k_count; ++k) {
        const size_t at = rank_index(r, k, k_count);
        const RingArgs args{next, previous, message_count(k),
                            make_stream(kRing, round, r, next, k)};
        accesses.assign({taskgrid::out(ring_send[at]), taskgrid::out(ring_recv[at])});
        Stress::gated(accesses, gates, k, k_count);
        submit_task(stress_ring, accesses, r, 1 + k % 3, &args, sizeof args);
      }
      for (int k = 0; k < k_count; ++k)
        verify(r, ring_recv[rank_index(r, k, k_count)],
               VerifyArgs{make_stream(kRing, round, previous, r, k), message_count(k), 0, 0});
    }
    // Collectives on several channels at once.
    for (int r = 0; r < n; ++r) {
      const std::vector<DataHandle> gates = s.gates(r, gate_handles);
      for (int j = 0; j < kCollectives; ++j) {
        const size_t at = rank_index(r, j, kCollectives);
        const int root = j % n, count = collective_count(j);
        const BroadcastArgs b{root, count, make_stream(kBroadcast, round, root, 0, j)};
        accesses.assign({taskgrid::out(bcast[at])});
        Stress::gated(accesses, gates, j, kCollectives);
        submit_task(stress_bcast, accesses, r, j % kChannels, &b, sizeof b);
        const ReduceArgs a{count, make_stream(kReduce, round, 0, 0, j)};
        accesses.assign({taskgrid::out(reduce[at])});
        Stress::gated(accesses, gates, kCollectives - 1 - j, kCollectives);
        submit_task(stress_allreduce, accesses, r, (j + 1) % kChannels, &a, sizeof a);
      }
      for (int j = 0; j < kCollectives; ++j) {
        const size_t at = rank_index(r, j, kCollectives);
        const int root = j % n, count = collective_count(j);
        verify(r, bcast[at], VerifyArgs{make_stream(kBroadcast, round, root, 0, j), count, 0, 0});
        verify(r, reduce[at], VerifyArgs{make_stream(kReduce, round, 0, 0, j), count, count, n});
      }
    }
    expected_per_rank += 2 * k_count + 2 * kCollectives;
  }
  for (int r = 0; r < n; ++r) {
    accesses.assign({taskgrid::in(counters[static_cast<size_t>(r)]),
                     taskgrid::out(totals[static_cast<size_t>(r)])});
    const int32_t unused = 0;
    submit_task(stress_total, accesses, r, 0, &unused, sizeof unused);
  }
  for (int r = 0; r < n; ++r) {
    taskgrid::fetch(counters[static_cast<size_t>(r)]);
    taskgrid::fetch(totals[static_cast<size_t>(r)]);
  }

  int status = 0;
  if (my_count[0] != expected_per_rank || my_totals[1] != expected_per_rank * n) {
    std::fprintf(stderr,
                 "task_comm_stress: rank %d verified %lld buffers (expected %lld), all ranks %lld "
                 "(expected %lld)\n",
                 s.me, static_cast<long long>(my_count[0]),
                 static_cast<long long>(expected_per_rank), static_cast<long long>(my_totals[1]),
                 static_cast<long long>(expected_per_rank * n));
    status = 1;
  }
  if (s.me == 0 && status == 0)
    std::printf(
        "task_comm_stress: ok: %lld buffers verified on %d ranks (%d rounds, %d tasks per "
        "rank and phase)\n",
        static_cast<long long>(my_totals[1]), n, s.rounds, k_count);
  std::fflush(stdout);
  taskgrid::finish();
  return status;
}
