// taskgrid-pgas-bench: the TaskGrid PGAS layer (taskgrid::pgas) against raw
// MPI in one job, interleaved, so that both see the same machine at the same
// moments. See README.md next to this file.
//
//   mpiexec.mpich -n 2 taskgrid-pgas-bench [--sections latency,bandwidth,collectives]
//       [--max-bytes 64M] [--rounds 5] [--iters N] [--reps N] [--window 16] [--csv FILE]
//
// Rank 0 drives the one-sided and point-to-point operations, rank 1 is their
// target; every rank takes part in the collectives. For each section and size,
// every contender (a system doing an operation) times one batch per round;
// the rounds alternate the systems (the order is reversed every other round).
// Each batch starts after an MPI_Barrier and counts as the slowest rank's
// time. Per (section, op, size, system) the median and the minimum over the
// rounds of the time per operation are reported, as a table on stdout and as
// CSV (--csv).
#include <mpi.h>
#include <unistd.h>  // environ

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "taskgrid/pgas.hpp"

namespace {

namespace pgas = taskgrid::pgas;

constexpr const char* kProgram = "taskgrid-pgas-bench";
constexpr int kDriver = 0;
constexpr int kTarget = 1;
constexpr int kPingTag = 71;
constexpr int kStreamTag = 72;
constexpr int kAckTag = 73;

constexpr size_t KiB = size_t{1} << 10;
constexpr size_t MiB = size_t{1} << 20;
constexpr size_t GiB = size_t{1} << 30;

// The sections' size ranges (powers of `factor` from first to last, clipped to
// --max-bytes; a section whose first size exceeds it runs at --max-bytes alone,
// so that a small smoke run still covers every operation).
struct SizeRange {
  size_t first, last, factor;
};
constexpr SizeRange kLatencySizes{8, 8 * KiB, 2};
constexpr SizeRange kBandwidthSizes{64 * KiB, 64 * MiB, 4};
constexpr SizeRange kCollectiveSizes{128 * KiB, 64 * MiB, 2};

// Default batch lengths (--iters, --reps override them).
constexpr int kLatencyIterations = 1000;
constexpr size_t kBandwidthBatchBytes = 256 * MiB;  // a batch moves about this much
constexpr size_t kCollectiveBatchBytes = 128 * MiB;
constexpr int kCollectiveMaxReps = 100;
constexpr int kCollectiveMinReps = 10;
// The untimed warm-up batch before a size's rounds, as a fraction of a batch.
constexpr int kWarmupDivisor = 5;

// Room in the global segment beyond the benchmark's allocation (the layer's
// header and the arena's alignment).
constexpr size_t kSegmentSlack = 1 * MiB;

enum class Section { latency, bandwidth, collectives };
constexpr Section kAllSections[] = {Section::latency, Section::bandwidth, Section::collectives};

const char* section_name(Section section) {
  switch (section) {
    case Section::latency:
      return "latency";
    case Section::bandwidth:
      return "bandwidth";
    case Section::collectives:
      return "collectives";
  }
  return "?";
}

struct Options {
  std::vector<Section> sections{std::begin(kAllSections), std::end(kAllSections)};
  size_t max_bytes = 64 * MiB;
  int rounds = 5;
  int iters = 0;  // 0: by section and size
  int reps = 0;   // 0: by size
  int window = 16;
  std::string csv_path;
};

const char* usage_text() {
  return "usage: mpiexec.mpich -n 2 taskgrid-pgas-bench [options]\n"
         "  --sections LIST   of latency,bandwidth,collectives (default: all three)\n"
         "  --max-bytes B     largest size, a power of two from 8 to 1G (K/M/G units;\n"
         "                    default 64M); also sizes the PGAS segment\n"
         "  --rounds N        alternating rounds per size (default 5)\n"
         "  --iters N         iterations per batch, latency and bandwidth (default:\n"
         "                    1000 operations; a bandwidth batch moves about 256 MiB)\n"
         "  --reps N          repetitions per batch, collectives (default: 100 up to\n"
         "                    1 MiB, then 128 MiB / size, at least 10)\n"
         "  --window K        bandwidth: messages in flight per completion (default 16,\n"
         "                    fewer where K x size exceeds max(--max-bytes, 1 MiB))\n"
         "  --csv FILE        also write the results as CSV\n";
}

// "65536", "64K", "64M", "1G": bytes with an optional binary unit; 0 when bad.
size_t parse_bytes(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long number = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str() || errno == ERANGE || text[0] == '-') return 0;
  const std::string unit = end;
  int shift = 0;
  if (unit == "K" || unit == "k")
    shift = 10;
  else if (unit == "M" || unit == "m")
    shift = 20;
  else if (unit == "G" || unit == "g")
    shift = 30;
  else if (!unit.empty())
    return 0;
  if (number > (GiB >> shift)) return 0;  // also keeps every MPI count within int
  return static_cast<size_t>(number) << shift;
}

bool parse_sections(const std::string& text, std::vector<Section>& sections) {
  std::vector<bool> wanted(std::size(kAllSections), false);
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    bool known = false;
    for (size_t i = 0; i < std::size(kAllSections); ++i) {
      if (name == section_name(kAllSections[i])) wanted[i] = known = true;
    }
    if (!known) return false;
    start = comma + 1;
  }
  sections.clear();  // in the canonical order, each once
  for (size_t i = 0; i < std::size(kAllSections); ++i)
    if (wanted[i]) sections.push_back(kAllSections[i]);
  return true;
}

// Parses the options; on a bad one returns false with `error` set.
bool parse_options(int argc, char** argv, Options& options, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      error = "help";
      return false;
    }
    if (i + 1 >= argc) {
      error = flag.rfind("--", 0) == 0 ? "option " + flag + " needs a value"
                                       : "unexpected argument '" + flag + "'";
      return false;
    }
    const std::string value = argv[++i];
    const auto whole_number = [&](int& target, long maximum) {
      char* end = nullptr;
      const long number = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || number < 1 || number > maximum) {
        error = "option " + flag + ": '" + value + "' is not a whole number from 1 to " +
                std::to_string(maximum);
        return false;
      }
      target = static_cast<int>(number);
      return true;
    };
    if (flag == "--sections") {
      if (!parse_sections(value, options.sections)) {
        error = "option --sections: '" + value +
                "' is not a comma-separated list of latency, bandwidth, collectives";
        return false;
      }
    } else if (flag == "--max-bytes") {
      const size_t bytes = parse_bytes(value);
      if (bytes < 8 || (bytes & (bytes - 1)) != 0) {
        error = "option --max-bytes: '" + value + "' is not a power of two from 8 to 1G";
        return false;
      }
      options.max_bytes = bytes;
    } else if (flag == "--rounds") {
      if (!whole_number(options.rounds, 1000)) return false;
    } else if (flag == "--iters") {
      if (!whole_number(options.iters, 100000000)) return false;
    } else if (flag == "--reps") {
      if (!whole_number(options.reps, 100000000)) return false;
    } else if (flag == "--window") {
      if (!whole_number(options.window, 1024)) return false;
    } else if (flag == "--csv") {
      options.csv_path = value;
    } else {
      error = "unknown option '" + flag + "'";
      return false;
    }
  }
  return true;
}

std::vector<size_t> sizes_of(const SizeRange& range, size_t max_bytes) {
  if (range.first > max_bytes) return {max_bytes};
  std::vector<size_t> sizes;
  for (size_t bytes = range.first; bytes <= std::min(range.last, max_bytes); bytes *= range.factor)
    sizes.push_back(bytes);
  return sizes;
}

// The bytes each side of the one-sided comparison owns (the pgas allocation,
// the raw window, the local buffer): room for a window of messages at the
// small bandwidth sizes even when --max-bytes is small.
size_t transfer_area_bytes(const Options& options) { return std::max(options.max_bytes, 1 * MiB); }

// Messages in flight per completion in the bandwidth section at `bytes`.
int window_at(const Options& options, size_t bytes) {
  const size_t fit = transfer_area_bytes(options) / bytes;
  return static_cast<int>(std::clamp<size_t>(fit, 1, static_cast<size_t>(options.window)));
}

int collective_reps_at(const Options& options, size_t bytes) {
  if (options.reps > 0) return options.reps;
  return static_cast<int>(
      std::clamp<size_t>(kCollectiveBatchBytes / bytes, kCollectiveMinReps, kCollectiveMaxReps));
}

int bandwidth_iterations_at(const Options& options, size_t bytes, int window) {
  if (options.iters > 0) return options.iters;
  const size_t window_bytes = bytes * static_cast<size_t>(window);
  return static_cast<int>(std::max<size_t>(1, kBandwidthBatchBytes / window_bytes));
}

int as_count(size_t bytes) { return static_cast<int>(bytes); }  // bytes <= 1 GiB (parse_bytes)

// The raw MPI side's window: the same kind as the layer's segment (allocated
// by MPI, one passive epoch on every rank for its whole life).
MPI_Win open_raw_window(size_t bytes) {
  MPI_Win window = MPI_WIN_NULL;
  void* base = nullptr;
  MPI_Win_allocate(static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &window);
  std::memset(base, 0, bytes);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, window);
  return window;
}

// Everything the operations read and write, allocated once for the largest
// size. Freed by release() (collective), never by a destructor: an exception
// must reach abort_job without one rank waiting in a collective.
struct Buffers {
  pgas::Memory global;       // the PGAS side: transfer_area_bytes on every rank
  MPI_Win raw;               // the raw MPI side: the same size
  std::vector<char> local;   // put sources, get and receive destinations
  std::vector<double> send;  // collectives
  std::vector<double> receive;

  Buffers(size_t area_bytes, size_t collective_bytes)
      : global(pgas::alloc(area_bytes)),
        raw(open_raw_window(area_bytes)),
        local(area_bytes, 1),  // written now, so no first touch falls in a timed batch
        send(collective_bytes / sizeof(double), 1.0),
        receive(send.size(), 0.0) {
    std::memset(pgas::local(global), 0, area_bytes);
  }

  void release() {
    pgas::barrier();  // nobody reads or writes them any more
    pgas::free(global);
    MPI_Win_unlock_all(raw);
    MPI_Win_free(&raw);
  }

  char* local_at(size_t offset) { return local.data() + offset; }
};

// One system doing one operation at one size. Every rank calls
// run(iterations); ranks with nothing to do return at once.
struct Contender {
  std::string op;
  std::string system;
  int iterations = 1;                // per timed batch
  int operations_per_iteration = 1;  // a bandwidth window's messages; 2 one-way trips a ping-pong
  std::function<void(int iterations)> run;
};

struct Result {
  std::string section, op, system;
  size_t bytes = 0;
  int operations_per_round = 0;
  std::vector<double> seconds_per_operation;  // one per round (rank 0 only)
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

// One batch: a barrier, `iterations` iterations, then the slowest rank's
// seconds (on rank 0; the reduction is outside the timed part).
double timed_batch(Contender& contender, int iterations) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  contender.run(iterations);
  const double local =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double slowest = 0.0;
  MPI_Reduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return slowest;
}

// A warm-up batch per contender, then `rounds` rounds of one batch each,
// in the contenders' order on even rounds and reversed on odd ones, so
// that no system always runs right after the same other.
std::vector<Result> compare(Section section, size_t bytes, std::vector<Contender>& contenders,
                            int rounds) {
  for (Contender& contender : contenders)
    timed_batch(contender, std::max(1, contender.iterations / kWarmupDivisor));
  std::vector<Result> results;
  for (const Contender& contender : contenders)
    results.push_back({section_name(section),
                       contender.op,
                       contender.system,
                       bytes,
                       contender.iterations * contender.operations_per_iteration,
                       {}});
  for (int round = 0; round < rounds; ++round) {
    for (size_t k = 0; k < contenders.size(); ++k) {
      const size_t index = round % 2 == 0 ? k : contenders.size() - 1 - k;
      Contender& contender = contenders[index];
      const double seconds = timed_batch(contender, contender.iterations);
      results[index].seconds_per_operation.push_back(seconds / results[index].operations_per_round);
    }
  }
  return results;
}

// ------------------------------------------------------------ sections ----

// Blocking put/get of `bytes` (TaskGrid and raw MPI RMA), and a ping-pong
// (MPI point-to-point; its time per operation is half a round trip).
std::vector<Contender> latency_contenders(Buffers& buffers, size_t bytes, int iterations,
                                          int rank) {
  const bool driver = rank == kDriver, target = rank == kTarget;
  const int count = as_count(bytes);
  char* local = buffers.local_at(0);
  const pgas::Memory global = buffers.global;
  const MPI_Win window = buffers.raw;
  std::vector<Contender> contenders;
  contenders.push_back({"put", "taskgrid", iterations, 1, [=](int n) {
                          if (!driver) return;
                          for (int i = 0; i < n; ++i) pgas::put(kTarget, global, 0, local, bytes);
                        }});
  contenders.push_back({"put", "mpi_rma", iterations, 1, [=](int n) {
                          if (!driver) return;
                          for (int i = 0; i < n; ++i) {
                            MPI_Put(local, count, MPI_BYTE, kTarget, 0, count, MPI_BYTE, window);
                            MPI_Win_flush(kTarget, window);
                          }
                        }});
  contenders.push_back({"get", "taskgrid", iterations, 1, [=](int n) {
                          if (!driver) return;
                          for (int i = 0; i < n; ++i) pgas::get(local, kTarget, global, 0, bytes);
                        }});
  contenders.push_back({"get", "mpi_rma", iterations, 1, [=](int n) {
                          if (!driver) return;
                          for (int i = 0; i < n; ++i) {
                            MPI_Get(local, count, MPI_BYTE, kTarget, 0, count, MPI_BYTE, window);
                            MPI_Win_flush(kTarget, window);
                          }
                        }});
  contenders.push_back(
      {"p2p", "mpi_p2p", iterations, 2, [=](int n) {
         for (int i = 0; i < n && (driver || target); ++i) {
           if (driver) {
             MPI_Send(local, count, MPI_BYTE, kTarget, kPingTag, MPI_COMM_WORLD);
             MPI_Recv(local, count, MPI_BYTE, kTarget, kPingTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
           } else {
             MPI_Recv(local, count, MPI_BYTE, kDriver, kPingTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
             MPI_Send(local, count, MPI_BYTE, kDriver, kPingTag, MPI_COMM_WORLD);
           }
         }
       }});
  return contenders;
}

// Windows of `window` non-blocking messages to distinct offsets, each window
// completed at the target: put_nb/get_nb then fence (TaskGrid), MPI_Put/Get
// then MPI_Win_flush (raw MPI RMA), MPI_Isend/Irecv then a zero-byte
// acknowledgement from the receiver (MPI point-to-point).
std::vector<Contender> bandwidth_contenders(Buffers& buffers, size_t bytes, int window,
                                            int iterations, int rank) {
  const bool driver = rank == kDriver, target = rank == kTarget;
  const int count = as_count(bytes);
  char* local = buffers.local_at(0);
  const pgas::Memory global = buffers.global;
  const MPI_Win raw = buffers.raw;
  const auto offset = [bytes](int message) { return static_cast<size_t>(message) * bytes; };
  std::vector<Contender> contenders;
  contenders.push_back(
      {"put", "taskgrid", iterations, window, [=](int n) {
         if (!driver) return;
         for (int i = 0; i < n; ++i) {
           // fence() completes them all: the handles are not needed.
           for (int m = 0; m < window; ++m)
             static_cast<void>(pgas::put_nb(kTarget, global, offset(m), local + offset(m), bytes));
           pgas::fence();
         }
       }});
  contenders.push_back({"put", "mpi_rma", iterations, window, [=](int n) {
                          if (!driver) return;
                          for (int i = 0; i < n; ++i) {
                            for (int m = 0; m < window; ++m)
                              MPI_Put(local + offset(m), count, MPI_BYTE, kTarget,
                                      static_cast<MPI_Aint>(offset(m)), count, MPI_BYTE, raw);
                            MPI_Win_flush(kTarget, raw);
                          }
                        }});
  contenders.push_back(
      {"get", "taskgrid", iterations, window, [=](int n) {
         if (!driver) return;
         for (int i = 0; i < n; ++i) {
           for (int m = 0; m < window; ++m)
             static_cast<void>(pgas::get_nb(local + offset(m), kTarget, global, offset(m), bytes));
           pgas::fence();
         }
       }});
  contenders.push_back({"get", "mpi_rma", iterations, window, [=](int n) {
                          if (!driver) return;
                          for (int i = 0; i < n; ++i) {
                            for (int m = 0; m < window; ++m)
                              MPI_Get(local + offset(m), count, MPI_BYTE, kTarget,
                                      static_cast<MPI_Aint>(offset(m)), count, MPI_BYTE, raw);
                            MPI_Win_flush(kTarget, raw);
                          }
                        }});
  contenders.push_back({"p2p", "mpi_p2p", iterations, window, [=](int n) {
                          if (!driver && !target) return;
                          std::vector<MPI_Request> requests(static_cast<size_t>(window));
                          for (int i = 0; i < n; ++i) {
                            for (int m = 0; m < window; ++m) {
                              MPI_Request* request = &requests[static_cast<size_t>(m)];
                              if (driver)
                                MPI_Isend(local + offset(m), count, MPI_BYTE, kTarget, kStreamTag,
                                          MPI_COMM_WORLD, request);
                              else
                                MPI_Irecv(local + offset(m), count, MPI_BYTE, kDriver, kStreamTag,
                                          MPI_COMM_WORLD, request);
                            }
                            MPI_Waitall(window, requests.data(), MPI_STATUSES_IGNORE);
                            // The window counts as done when the receiver has it all.
                            if (driver)
                              MPI_Recv(nullptr, 0, MPI_BYTE, kTarget, kAckTag, MPI_COMM_WORLD,
                                       MPI_STATUS_IGNORE);
                            else
                              MPI_Send(nullptr, 0, MPI_BYTE, kDriver, kAckTag, MPI_COMM_WORLD);
                          }
                        }});
  return contenders;
}

// Broadcast from rank 0 and sum-all-reduce of doubles on every rank:
// TaskGrid's group collectives against the MPI ones on MPI_COMM_WORLD.
std::vector<Contender> collective_contenders(Buffers& buffers, size_t bytes, int reps) {
  const size_t count = bytes / sizeof(double);
  const int mpi_count = static_cast<int>(count);
  double* send = buffers.send.data();
  double* receive = buffers.receive.data();
  std::vector<Contender> contenders;
  contenders.push_back({"broadcast", "taskgrid", reps, 1, [=](int n) {
                          for (int i = 0; i < n; ++i) pgas::broadcast(send, count, 0);
                        }});
  contenders.push_back({"broadcast", "mpi", reps, 1, [=](int n) {
                          for (int i = 0; i < n; ++i)
                            MPI_Bcast(send, mpi_count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
                        }});
  contenders.push_back({"allreduce", "taskgrid", reps, 1, [=](int n) {
                          for (int i = 0; i < n; ++i)
                            pgas::allreduce(send, receive, count, pgas::ReduceOp::sum);
                        }});
  contenders.push_back({"allreduce", "mpi", reps, 1, [=](int n) {
                          for (int i = 0; i < n; ++i)
                            MPI_Allreduce(send, receive, mpi_count, MPI_DOUBLE, MPI_SUM,
                                          MPI_COMM_WORLD);
                        }});
  return contenders;
}

// ------------------------------------------------------------- output ----

// Rank 0's table on stdout and CSV file, written as results come.
class Report {
 public:
  explicit Report(std::FILE* csv) : csv_(csv) {
    if (csv_) {
      std::fprintf(csv_, "section,op,bytes,system,median_s,min_s,rounds,iterations\n");
      std::fflush(csv_);
    }
    std::printf("%-11s %-9s %10s %-8s %12s %12s %6s %10s %10s\n", "section", "op", "bytes",
                "system", "median", "min", "rounds", "iterations", "median");
    std::printf("%-11s %-9s %10s %-8s %12s %12s %6s %10s %10s\n", "", "", "", "", "per op",
                "per op", "", "per round", "GB/s");
  }
  ~Report() {
    if (csv_) std::fclose(csv_);
  }
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;

  void add(const Result& result) {
    const double middle = median(result.seconds_per_operation);
    const double fastest =
        *std::min_element(result.seconds_per_operation.begin(), result.seconds_per_operation.end());
    const auto rounds = result.seconds_per_operation.size();
    if (csv_) {
      std::fprintf(csv_, "%s,%s,%zu,%s,%.6e,%.6e,%zu,%d\n", result.section.c_str(),
                   result.op.c_str(), result.bytes, result.system.c_str(), middle, fastest, rounds,
                   result.operations_per_round);
      std::fflush(csv_);
    }
    std::printf("%-11s %-9s %10zu %-8s %12s %12s %6zu %10d %10.3f\n", result.section.c_str(),
                result.op.c_str(), result.bytes, result.system.c_str(), with_unit(middle).c_str(),
                with_unit(fastest).c_str(), rounds, result.operations_per_round,
                static_cast<double>(result.bytes) / middle * 1e-9);
    std::fflush(stdout);
  }

 private:
  static std::string with_unit(double seconds) {
    char text[32];
    if (seconds < 1e-3)
      std::snprintf(text, sizeof text, "%.3f us", seconds * 1e6);
    else if (seconds < 1.0)
      std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
    else
      std::snprintf(text, sizeof text, "%.3f s", seconds);
    return text;
  }

  std::FILE* csv_;
};

// The TASKGRID_* variables set (the layer's settings: TASKGRID_PGAS_SHM decides
// whether ranks of one node copy directly), for the record.
std::string taskgrid_environment() {
  std::string settings;
  for (char** variable = environ; *variable; ++variable) {
    if (std::strncmp(*variable, "TASKGRID_", 9) != 0) continue;
    settings += (settings.empty() ? "" : " ") + std::string(*variable);
  }
  return settings.empty() ? "no TASKGRID_* variables (the defaults)" : settings;
}

// Runs the selected sections; any error ends the job through abort_job.
void run_benchmark(const Options& options, int rank, int ranks, std::FILE* csv) {
  const size_t area_bytes = transfer_area_bytes(options);
  const size_t needed = area_bytes + kSegmentSlack;
  pgas::init(nullptr, nullptr, needed);
  if (pgas::segment_size() < needed)
    throw std::runtime_error("the global segment (" + std::to_string(pgas::segment_size()) +
                             " bytes, set by TASKGRID_PGAS_SEGMENT) is smaller than the " +
                             std::to_string(needed) + " bytes --max-bytes " +
                             std::to_string(options.max_bytes) + " needs");
  const bool collectives = std::find(options.sections.begin(), options.sections.end(),
                                     Section::collectives) != options.sections.end();
  Buffers buffers(area_bytes, collectives ? options.max_bytes : 0);
  std::optional<Report> report;
  if (rank == 0) {
    std::printf("%s: %d ranks, %d rounds, max bytes %zu\n", kProgram, ranks, options.rounds,
                options.max_bytes);
    std::printf("layer settings: %s\n\n", taskgrid_environment().c_str());
    report.emplace(csv);
  }
  const auto publish = [&](const std::vector<Result>& results) {
    if (report)
      for (const Result& result : results) report->add(result);
  };
  for (Section section : options.sections) {
    switch (section) {
      case Section::latency:
        for (size_t bytes : sizes_of(kLatencySizes, options.max_bytes)) {
          const int iterations = options.iters > 0 ? options.iters : kLatencyIterations;
          auto contenders = latency_contenders(buffers, bytes, iterations, rank);
          publish(compare(section, bytes, contenders, options.rounds));
        }
        break;
      case Section::bandwidth:
        for (size_t bytes : sizes_of(kBandwidthSizes, options.max_bytes)) {
          const int window = window_at(options, bytes);
          auto contenders = bandwidth_contenders(
              buffers, bytes, window, bandwidth_iterations_at(options, bytes, window), rank);
          publish(compare(section, bytes, contenders, options.rounds));
        }
        break;
      case Section::collectives:
        for (size_t bytes : sizes_of(kCollectiveSizes, options.max_bytes)) {
          auto contenders =
              collective_contenders(buffers, bytes, collective_reps_at(options, bytes));
          publish(compare(section, bytes, contenders, options.rounds));
        }
        break;
    }
  }
  report.reset();  // closes the CSV
  buffers.release();
  pgas::finalize();
}

// Prints the error as the runtime does and ends the job.
[[noreturn]] void abort_job(const char* what) {
  int initialized = 0, rank = -1;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "error: taskgrid: rank %d: %s\n", rank, what);
  std::fflush(stderr);
  if (initialized) MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    // The layer adopts this MPI; the raw side runs at the same thread level.
    int provided = 0;
    taskgrid::pgas::prepare_mpi_init();
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    Options options;
    std::string error;
    bool ok = parse_options(argc, argv, options, error);
    if (ok && ranks < 2) {
      error = "needs at least 2 processes (rank 0 drives, rank 1 is the target), got " +
              std::to_string(ranks) + ": run it with mpiexec.mpich -n 2";
      ok = false;
    }
    // Rank 0 opens the CSV now, so that a bad path fails before any measurement.
    std::FILE* csv = nullptr;
    bool show_usage = !ok;
    if (ok && rank == 0 && !options.csv_path.empty()) {
      csv = std::fopen(options.csv_path.c_str(), "w");
      if (!csv) {
        error = "cannot write --csv " + options.csv_path + ": " + std::strerror(errno);
        ok = false;
      }
    }
    int all_ok = ok ? 1 : 0;  // rank 0's verdict (only it opens the CSV)
    MPI_Bcast(&all_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!all_ok) {
      const bool help = error == "help";
      if (rank == 0) {
        if (help)
          std::printf("%s", usage_text());
        else
          std::fprintf(stderr, "%s: %s\n%s", kProgram, error.c_str(),
                       show_usage ? usage_text() : "");
      }
      MPI_Finalize();
      return help ? 0 : 2;
    }
    run_benchmark(options, rank, ranks, csv);
    MPI_Finalize();
  } catch (const std::exception& error) {
    abort_job(error.what());
  }
  return 0;
}
