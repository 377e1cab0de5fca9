// taskgrid-hop-bench: the cross-rank critical path, one hop at a time.
//
// A chain of tasks alternating between ranks 0 and 1 (task i on rank i % 2,
// each `inout` on one handle of B bytes that starts on rank 0), then a fetch
// back to rank 0: every task waits for the one before it on the other rank,
// so the chain's time over its N transfers is what one hop costs (the task's
// own work is one increment). Beside it, in the same job, an MPI ping-pong
// of the same B bytes on a communicator of its own: its one-way latency is
// what a hand-written MPI program pays for the same hop.
//
//   mpiexec -n 2 taskgrid-hop-bench [--mode spmd|cluster] [--bytes 8,1024,65536]
//                                   [--hops N] [--rounds R]
//
// spmd (default): every rank submits the chain; the rounds alternate chain,
// ping-pong, chain, ... after one untimed warm-up of each. cluster: rank 0
// submits and the other ranks serve inside taskgrid::start, so the ping-pong
// rounds run first, before start, in the same job. Each figure is the median
// of R rounds; the goal line is #31's: a hop costs at most 1.5x MPI's one-way
// latency plus 0.3 us. Every round checks the chain's count on rank 0.
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <taskgrid/taskgrid.hpp>
#include <thread>
#include <vector>

namespace {

constexpr const char* kProgram = "taskgrid-hop-bench";

void hop_touch(taskgrid::TaskContext& ctx) { *ctx.data_as<uint64_t>(0) += 1; }
TASKGRID_REGISTER(hop_touch);

struct Options {
  bool spmd = true;
  std::vector<size_t> bytes = {8, 1024, 65536};
  int hops = 1000;
  int rounds = 5;
};

const char* usage_text() {
  return "usage: mpiexec -n 2 taskgrid-hop-bench [options]\n"
         "  --mode spmd|cluster  which TaskGrid mode runs the chain (default spmd)\n"
         "  --bytes LIST         payload sizes, each at least 8 (default 8,1024,65536)\n"
         "  --hops N             tasks per chain, even, at least 2 (default 1000)\n"
         "  --rounds R           timed rounds per size, after one warm-up (default 5)\n";
}

bool parse_count(const char* text, long long low, long long& value) {
  char* end = nullptr;
  errno = 0;
  value = std::strtoll(text, &end, 10);
  return errno == 0 && end != text && *end == '\0' && value >= low;
}

// "" when the arguments are good, else what is wrong ("help" for --help).
std::string parse_options(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") return "help";
    if (i + 1 >= argc) return "missing value for " + flag;
    const char* value = argv[++i];
    long long number = 0;
    if (flag == "--mode") {
      if (std::strcmp(value, "spmd") != 0 && std::strcmp(value, "cluster") != 0)
        return "--mode must be spmd or cluster, not '" + std::string(value) + "'";
      options.spmd = std::strcmp(value, "spmd") == 0;
    } else if (flag == "--bytes") {
      options.bytes.clear();
      std::string list = value;
      size_t start = 0;
      while (start <= list.size()) {
        const size_t comma = std::min(list.find(',', start), list.size());
        const std::string item = list.substr(start, comma - start);
        if (!parse_count(item.c_str(), 8, number) || number > (1LL << 30))
          return "--bytes: '" + item + "' is not a size from 8 to 1073741824";
        options.bytes.push_back(static_cast<size_t>(number));
        start = comma + 1;
      }
    } else if (flag == "--hops") {
      if (!parse_count(value, 2, number) || number % 2 != 0 || number > 10000000)
        return "--hops must be an even number from 2 to 10000000, not '" + std::string(value) + "'";
      options.hops = static_cast<int>(number);
    } else if (flag == "--rounds") {
      if (!parse_count(value, 1, number) || number > 1000)
        return "--rounds must be from 1 to 1000, not '" + std::string(value) + "'";
      options.rounds = static_cast<int>(number);
    } else {
      return "unknown option " + flag;
    }
  }
  return "";
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// One MPI ping-pong of `hops` one-way messages (hops / 2 round trips) between
// ranks 0 and 1 of `comm`; seconds per one-way message on rank 0.
double ping_pong(MPI_Comm comm, int rank, std::vector<char>& buffer, int hops) {
  MPI_Barrier(comm);
  const int bytes = static_cast<int>(buffer.size());
  const double start = MPI_Wtime();
  for (int i = 0; i < hops / 2; ++i) {
    if (rank == 0) {
      MPI_Send(buffer.data(), bytes, MPI_BYTE, 1, 0, comm);
      MPI_Recv(buffer.data(), bytes, MPI_BYTE, 1, 0, comm, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buffer.data(), bytes, MPI_BYTE, 0, 0, comm, MPI_STATUS_IGNORE);
      MPI_Send(buffer.data(), bytes, MPI_BYTE, 0, 0, comm);
    }
  }
  return (MPI_Wtime() - start) / hops;
}

// One chain of `hops` tasks and the fetch back to rank 0; seconds per hop on
// rank 0. The counter must then read `expected`.
double chain(const Options& options, MPI_Comm comm, taskgrid::DataHandle h,
             const std::vector<uint64_t>& host, uint64_t expected, int rank) {
  if (options.spmd) MPI_Barrier(comm);
  const double start = MPI_Wtime();
  for (int i = 0; i < options.hops; ++i) {
    taskgrid::TaskOptions task;
    task.rank = i % 2;
    taskgrid::submit(hop_touch, {taskgrid::inout(h)}, task);
  }
  taskgrid::fetch(h);  // the last task ran on rank 1: one more transfer, N in all
  const double seconds = (MPI_Wtime() - start) / options.hops;
  if (rank == 0 && host[0] != expected) {
    std::fprintf(stderr, "%s: error: after the chain the count is %llu, expected %llu\n", kProgram,
                 static_cast<unsigned long long>(host[0]),
                 static_cast<unsigned long long>(expected));
    std::exit(1);
  }
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Options options;
  std::string error = parse_options(argc, argv, options);
  if (error.empty() && ranks < 2) error = "needs at least 2 ranks (mpiexec -n 2), it has 1";
  if (!error.empty()) {
    if (rank == 0) {
      if (error == "help")
        std::printf("%s", usage_text());
      else
        std::fprintf(stderr, "%s: error: %s\n%s", kProgram, error.c_str(), usage_text());
    }
    MPI_Finalize();
    return error == "help" ? 0 : 2;
  }
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);

  // cluster: the ping-pong runs before start (the other ranks then serve).
  std::vector<std::vector<double>> one_way(options.bytes.size());
  if (!options.spmd) {
    for (size_t s = 0; s < options.bytes.size(); ++s) {
      std::vector<char> buffer(options.bytes[s], 1);
      ping_pong(comm, rank, buffer, options.hops);  // warm-up
      for (int r = 0; r < options.rounds; ++r)
        one_way[s].push_back(ping_pong(comm, rank, buffer, options.hops));
    }
  }
  taskgrid::start(&argc, &argv, options.spmd ? taskgrid::Mode::spmd : taskgrid::Mode::cluster);
  if (rank == 0)
    std::printf("hop bench: %s mode, %d ranks (chain on 0 and 1), %d hops x %d rounds, medians\n",
                options.spmd ? "spmd" : "cluster", ranks, options.hops, options.rounds);
  if (rank == 0)
    std::printf("%10s %16s %16s %8s %14s\n", "bytes", "taskgrid us/hop", "mpi us/one-way", "ratio",
                "goal 1.5x+0.3");
  for (size_t s = 0; s < options.bytes.size(); ++s) {
    std::vector<uint64_t> host(options.bytes[s] / sizeof(uint64_t) + 1, 0);
    const auto h = options.spmd ? taskgrid::enter_data(host.data(), options.bytes[s], 0)
                                : taskgrid::enter_data(host.data(), options.bytes[s]);
    std::vector<char> buffer(options.bytes[s], 1);
    uint64_t expected = options.hops;
    chain(options, comm, h, host, expected, rank);  // warm-up
    if (options.spmd) ping_pong(comm, rank, buffer, options.hops);
    std::vector<double> hop;
    for (int r = 0; r < options.rounds; ++r) {
      expected += options.hops;
      hop.push_back(chain(options, comm, h, host, expected, rank));
      if (options.spmd) {
        // The runtime idle, its threads past their spinning and yielding (2 ms,
        // comm/idle_backoff.h) and asleep, so that MPI has the cores to itself.
        taskgrid::wait_all();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        one_way[s].push_back(ping_pong(comm, rank, buffer, options.hops));
      }
    }
    taskgrid::exit_data(h);
    if (rank == 0) {
      const double t = median(hop) * 1e6, m = median(one_way[s]) * 1e6;
      const bool met = t <= 1.5 * m + 0.3;
      std::printf("%10zu %16.3f %16.3f %8.2f %14s\n", options.bytes[s], t, m, t / m,
                  met ? "met" : "not met");
    }
  }
  if (rank == 0) std::printf("hop bench: ok (every chain's count checked)\n");
  const int status = taskgrid::finish(0);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return status;
}
