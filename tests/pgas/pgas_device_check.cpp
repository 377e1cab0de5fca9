// Collectives on device memory, checked exactly on every rank:
//   mpiexec -n N taskgrid-pgas-device-check [--expect-path nccl|staged] [--mib M]
//                                           [--scenario NAME]
// Each rank allocates device buffers of several sizes (0, 1, odd sizes and a
// few MiB: more than one staging step), broadcasts from every root and
// all-reduces (sum and max of double and int64, min of int32, on the world
// and on a split group, in place and not), copies the results back and
// compares every element. It prints one line per rank, in rank order:
//   pgas device collectives: rank R path P backend B: broadcast ok, allreduce ok (N checks), ...
// then, on rank 0, "pgas device collectives: ok on N ranks, path P (why)" or
// "pgas device collectives: FAILED on N ranks". The exit status is 0 only when
// every check passed (and the path is --expect-path's); 1 on a mismatch or
// another path; an error (no device backend, TASKGRID_NCCL=yes where NCCL
// cannot be used) ends the job with "error: taskgrid: rank R: ..." and a
// non-zero status.
//
// Device: TASKGRID_DEVICE (cuda, emulated, auto), path: TASKGRID_NCCL (auto,
// yes, no). Scenarios for the misuse tests: misuse-range (a range outside a
// device buffer), misuse-count (rank 1 passes another count).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "taskgrid/pgas.h"
#include "taskgrid/pgas.hpp"
#include "taskgrid/taskgrid.hpp"

namespace pgas = taskgrid::pgas;

namespace {

int me = 0;
int ranks = 1;
int checks = 0;
int mismatches = 0;
std::string first_mismatch;

void expect(bool ok, const std::string& what) {
  ++checks;
  if (ok) return;
  if (mismatches++ == 0) first_mismatch = what;
  std::fprintf(stderr, "pgas device collectives: rank %d: mismatch: %s\n", me, what.c_str());
}

// Exact values: small integers (doubles hold them exactly, so a sum is the
// same in any order).
template <typename T>
T value(int rank, size_t i, int salt) {
  return static_cast<T>(
      static_cast<int64_t>(
          (i * 7 + static_cast<size_t>(rank) * 13 + static_cast<size_t>(salt) * 5) % 201) -
      100);
}

template <typename T>
const char* type_name() {
  if constexpr (std::is_same_v<T, double>)
    return "double";
  else if constexpr (std::is_same_v<T, int64_t>)
    return "int64";
  else
    return "int32";
}

template <typename T>
std::string describe(const char* what, size_t count, int i, size_t index, T got, T want) {
  return std::string(what) + " of " + std::to_string(count) + " " + type_name<T>() + " (root/op " +
         std::to_string(i) + "): element " + std::to_string(index) + " is " + std::to_string(got) +
         ", expected " + std::to_string(want);
}

// Broadcast from every root of `group`; every member ends with the root's values.
template <typename T>
void check_broadcast(size_t count, const pgas::Group& group) {
  T* buffer = static_cast<T*>(pgas::device_alloc(count * sizeof(T)));
  std::vector<T> host(count);
  for (int root = 0; root < group.size(); ++root) {
    const int salt = root + 1;
    for (size_t i = 0; i < count; ++i)
      host[i] = group.rank() == root ? value<T>(root, i, salt) : static_cast<T>(-7777);
    pgas::copy_to_device(buffer, host.data(), count * sizeof(T));
    pgas::device_broadcast(buffer, count, root, group);
    std::fill(host.begin(), host.end(), static_cast<T>(0));
    pgas::copy_from_device(host.data(), buffer, count * sizeof(T));
    bool ok = true;
    for (size_t i = 0; i < count && ok; ++i)
      if (host[i] != value<T>(root, i, salt)) {
        expect(false, describe("broadcast", count, root, i, host[i], value<T>(root, i, salt)));
        ok = false;
      }
    if (ok) expect(true, "");
  }
  pgas::device_free(buffer);
}

template <typename T>
T reduced(pgas::ReduceOp op, const pgas::Group& group, size_t i, int salt) {
  T result = value<T>(group.world_rank(0), i, salt);
  for (int r = 1; r < group.size(); ++r) {
    const T v = value<T>(group.world_rank(r), i, salt);
    if (op == pgas::ReduceOp::sum) result = static_cast<T>(result + v);
    if (op == pgas::ReduceOp::max) result = std::max(result, v);
    if (op == pgas::ReduceOp::min) result = std::min(result, v);
  }
  return result;
}

// All-reduce in place and into another buffer; the send buffer stays as it was.
template <typename T>
void check_allreduce(size_t count, pgas::ReduceOp op, const pgas::Group& group) {
  T* send = static_cast<T*>(pgas::device_alloc(count * sizeof(T)));
  T* recv = static_cast<T*>(pgas::device_alloc(count * sizeof(T)));
  const int salt = 10 + static_cast<int>(op);
  std::vector<T> host(count);
  for (int in_place = 0; in_place < 2; ++in_place) {
    for (size_t i = 0; i < count; ++i) host[i] = value<T>(me, i, salt);
    pgas::copy_to_device(send, host.data(), count * sizeof(T));
    T* to = in_place ? send : recv;
    pgas::device_allreduce(send, to, count, op, group);
    pgas::copy_from_device(host.data(), to, count * sizeof(T));
    bool ok = true;
    for (size_t i = 0; i < count && ok; ++i) {
      const T want = reduced<T>(op, group, i, salt);
      if (host[i] != want) {
        expect(false, describe(in_place ? "allreduce in place" : "allreduce", count,
                               static_cast<int>(op), i, host[i], want));
        ok = false;
      }
    }
    if (ok) expect(true, "");
    if (!in_place) {
      pgas::copy_from_device(host.data(), send, count * sizeof(T));
      bool unchanged = true;
      for (size_t i = 0; i < count && unchanged; ++i) unchanged = host[i] == value<T>(me, i, salt);
      expect(unchanged, "allreduce changed its send buffer (" + std::to_string(count) + " " +
                            type_name<T>() + ")");
    }
  }
  pgas::device_free(send);
  pgas::device_free(recv);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The fastest of a few runs of `run` (after one to warm up), in GB/s of `bytes`.
template <typename Run>
double bandwidth(size_t bytes, Run run) {
  run();
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    pgas::barrier();
    const auto start = std::chrono::steady_clock::now();
    run();
    best = std::min(best, seconds_since(start));
  }
  return static_cast<double>(bytes) / best / 1e9;
}

int run_collectives(const std::string& expect_path, size_t large_mib) {
  const pgas::Group world = pgas::world();
  const size_t large = (large_mib << 20) / sizeof(double) + 3;  // odd, over a staging step
  const std::vector<size_t> sizes = {0, 1, 3, 1000, 65537, large};
  for (size_t count : sizes) {
    check_broadcast<double>(count, world);
    check_broadcast<int64_t>(count, world);
    check_allreduce<double>(count, pgas::ReduceOp::sum, world);
    check_allreduce<double>(count, pgas::ReduceOp::max, world);
    check_allreduce<int64_t>(count, pgas::ReduceOp::sum, world);
    check_allreduce<int64_t>(count, pgas::ReduceOp::max, world);
  }
  check_broadcast<int32_t>(1001, world);
  check_allreduce<int32_t>(1001, pgas::ReduceOp::min, world);

  // A group of half the ranks: its own path, its own members' values.
  pgas::Group half = pgas::split(world, me % 2, me);
  check_broadcast<double>(4099, half);
  check_allreduce<int64_t>(4099, pgas::ReduceOp::sum, half);
  pgas::free_group(half);

  // The C API on the same buffers.
  {
    void* buffer = nullptr;
    const int64_t mine = me + 1;
    int64_t total = 0;
    bool ok = tg_pgas_device_alloc(sizeof mine, &buffer) == TG_SUCCESS &&
              tg_pgas_copy_to_device(buffer, &mine, sizeof mine) == TG_SUCCESS &&
              tg_pgas_device_allreduce(buffer, buffer, 1, TG_PGAS_INT64, TG_PGAS_SUM,
                                       tg_pgas_world()) == TG_SUCCESS &&
              tg_pgas_copy_from_device(&total, buffer, sizeof total) == TG_SUCCESS &&
              tg_pgas_device_free(buffer) == TG_SUCCESS;
    tg_pgas_device_path path = TG_PGAS_PATH_UNDECIDED;
    ok = ok && tg_pgas_device_collective_path(tg_pgas_world(), &path) == TG_SUCCESS;
    expect(ok && total == int64_t{ranks} * (ranks + 1) / 2 &&
               static_cast<int>(path) == static_cast<int>(pgas::device_collective_path(world)),
           "the C API's all-reduce of one int64 (" + std::string(tg_last_error()) + ")");
  }

  // Bandwidth of the largest size (bytes of one rank's buffer per second).
  const size_t bytes = large * sizeof(double);
  auto* buffer = static_cast<double*>(pgas::device_alloc(bytes));
  std::vector<double> host(large, 1.0);
  pgas::copy_to_device(buffer, host.data(), bytes);
  const double broadcast_rate =
      bandwidth(bytes, [&] { pgas::device_broadcast(buffer, large, 0, world); });
  const double allreduce_rate = bandwidth(
      bytes, [&] { pgas::device_allreduce(buffer, buffer, large, pgas::ReduceOp::max, world); });
  pgas::device_free(buffer);

  const std::string path = pgas::device_path_name(pgas::device_collective_path(world));
  const bool path_ok = expect_path.empty() || expect_path == path;
  char line[1024];
  std::snprintf(line, sizeof line,
                "pgas device collectives: rank %d path %s backend %s: broadcast %s, allreduce %s "
                "(%d checks); %.1f MiB: broadcast %.3f GB/s, allreduce %.3f GB/s; device %d; %s\n",
                me, path.c_str(), pgas::device_backend(), mismatches ? "FAILED" : "ok",
                mismatches ? "FAILED" : "ok", checks, static_cast<double>(bytes) / (1 << 20),
                broadcast_rate, allreduce_rate, pgas::device_index(),
                pgas::device_collective_reason(world).c_str());
  for (int r = 0; r < ranks; ++r) {  // one line per rank, in rank order
    if (r == me) {
      std::fputs(line, stdout);
      if (!path_ok)
        std::printf("pgas device collectives: rank %d: path %s, expected %s\n", me, path.c_str(),
                    expect_path.c_str());
      std::fflush(stdout);
    }
    pgas::barrier();
  }
  int64_t failed = (mismatches || !path_ok) ? 1 : 0;
  pgas::allreduce(&failed, &failed, 1, pgas::ReduceOp::sum);
  if (me == 0) {
    if (failed)
      std::printf("pgas device collectives: FAILED on %d ranks (%lld ranks failed)\n", ranks,
                  static_cast<long long>(failed));
    else
      std::printf("pgas device collectives: ok on %d ranks, path %s (%s)\n", ranks, path.c_str(),
                  pgas::device_collective_reason(world).c_str());
    std::fflush(stdout);
  }
  return failed ? 1 : 0;
}

// Misuse: must end the job with a message naming the cause.
void misuse_range() {
  auto* buffer = static_cast<double*>(pgas::device_alloc(10 * sizeof(double)));
  pgas::device_broadcast(buffer + 4, 7, 0);  // [32, 88) of an 80-byte buffer
}

void misuse_count() {
  auto* buffer = static_cast<double*>(pgas::device_alloc(16 * sizeof(double)));
  pgas::device_allreduce(buffer, buffer, me == 1 ? 8 : 16, pgas::ReduceOp::sum);
}

}  // namespace

int main(int argc, char** argv) {
  std::string expect_path;
  std::string scenario = "collectives";
  size_t large_mib = 6;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--expect-path" && i + 1 < argc) {
      expect_path = argv[++i];
    } else if (arg == "--scenario" && i + 1 < argc) {
      scenario = argv[++i];
    } else if (arg == "--mib" && i + 1 < argc) {
      large_mib = static_cast<size_t>(std::strtoul(argv[++i], nullptr, 10));
    } else {
      std::fprintf(stderr,
                   "usage: taskgrid-pgas-device-check [--expect-path nccl|staged] [--mib M] "
                   "[--scenario collectives|misuse-range|misuse-count]\n");
      return 2;
    }
  }
  if (!expect_path.empty() && expect_path != "nccl" && expect_path != "staged") {
    std::fprintf(stderr, "taskgrid-pgas-device-check: --expect-path takes nccl or staged\n");
    return 2;
  }
  int status = 0;
  try {
    pgas::init(&argc, &argv);
    me = pgas::rank();
    ranks = pgas::num_ranks();
    if (scenario == "collectives")
      status = run_collectives(expect_path, large_mib);
    else if (scenario == "misuse-range")
      misuse_range();
    else if (scenario == "misuse-count")
      misuse_count();
    else
      throw taskgrid::Error("unknown scenario " + scenario);
    pgas::finalize();
  } catch (const std::exception& error) {
    pgas::abort_job(error.what());
  }
  return status;
}
