// taskgrid-transfer-bench: what moving data to, from and between devices
// costs through TaskGrid, against the raw copies a hand-written program would
// make, measured in one job, alternating. See README.md next to this file.
//
//   mpiexec.mpich -n 2 taskgrid-transfer-bench [--min-bytes 4K] [--max-bytes 256M]
//       [--repeat 5] [--cases h2d,d2h,d2d_ranks] [--json FILE]
//
// Cases, for every power-of-two size B:
//   h2d        a CPU task on rank 0 writes B bytes (untimed); a device task on
//              rank 0 reads them: the runtime copies them to the device. Timed:
//              the reader's submit to wait. Raw: one host-to-device copy.
//   d2h        a device task on rank 0 writes B bytes, the program fetches them.
//              Timed: submit to fetch. Raw: one device-to-host copy.
//   d2d_ranks  a device task on rank 0 writes B bytes, a device task on rank 1
//              reads them. Timed on rank 1, from a barrier to its wait. Raw:
//              device-to-host copy on rank 0, MPI_Send/MPI_Recv, host-to-device
//              copy on rank 1 (timed the same way).
// Raw copies use pinned host memory and cudaMemcpyAsync on a CUDA device, and
// memcpy between host buffers on the emulated device (not a GPU figure).
//
// The program runs in spmd mode (every rank runs main and submits the same
// tasks) so that every rank can take part in its own MPI calls on a
// communicator of its own, beside the runtime.
//
// Every transfer is verified against the pattern it should carry: outside
// the timed region (a device task reading the same version, the fetched host
// buffer, the raw buffers), plus a sampled check inside the timed reader on
// the emulated device. A wrong byte ends the run with status 1, naming the
// case, size, rank and first wrong byte.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "taskgrid/device.hpp"
#include "taskgrid/taskgrid.hpp"

#ifdef TRANSFER_BENCH_CUDA
#include <cuda_runtime.h>
#endif

namespace {

constexpr const char* kProgram = "taskgrid-transfer-bench";
constexpr const char* kEmulatedLabel = "emulated: not a GPU figure";

constexpr size_t KiB = size_t{1} << 10;
constexpr size_t MiB = size_t{1} << 20;
constexpr size_t GiB = size_t{1} << 30;

// The patterns: a pool of pseudo-random 64-bit words; the pattern of seed s
// is the pool from word s on, so two seeds differ at (almost) every word.
constexpr uint32_t kSeeds = 4096;
constexpr int kRawTag = 91;

enum class Case : uint8_t { h2d, d2h, d2d_ranks };
constexpr Case kAllCases[] = {Case::h2d, Case::d2h, Case::d2d_ranks};

const char* case_name(Case c) {
  switch (c) {
    case Case::h2d:
      return "h2d";
    case Case::d2h:
      return "d2h";
    case Case::d2d_ranks:
      return "d2d_ranks";
  }
  return "?";
}

// ------------------------------------------------------------- options ---

struct Options {
  size_t min_bytes = 4 * KiB;
  size_t max_bytes = 256 * MiB;
  int repeat = 5;
  int handles = 1;
  std::vector<Case> cases{std::begin(kAllCases), std::end(kAllCases)};
  std::string json_path;
  bool inject_fault = false;
};

const char* usage_text() {
  return "usage: mpiexec.mpich -n 2 taskgrid-transfer-bench [options]\n"
         "  --min-bytes B     smallest size, a power of two from 8 to 1G (K/M/G units;\n"
         "                    default 4K)\n"
         "  --max-bytes B     largest size, a power of two from --min-bytes to 1G\n"
         "                    (default 256M)\n"
         "  --repeat N        timed iterations per size, after one warm-up (default 5)\n"
         "  --handles K       data handles per size, used in turn (default 1); each keeps\n"
         "                    its last version's copy on the device\n"
         "  --cases LIST      of h2d,d2h,d2d_ranks (default: all three)\n"
         "  --json FILE       also write the results as JSON (rank 0)\n"
         "  --inject-fault    test of the checks: the writer of the first timed\n"
         "                    iteration of each case corrupts one byte (the run fails)\n"
         "Needs devices on every rank: TASKGRID_DEVICE=cuda or TASKGRID_DEVICE=emulated.\n";
}

// "65536", "64K", "64M", "1G": bytes with an optional binary unit; 0 when bad.
size_t bytes_from_text(const std::string& text) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return 0;
  char* end = nullptr;
  errno = 0;
  const unsigned long long number = std::strtoull(text.c_str(), &end, 10);
  if (errno == ERANGE) return 0;
  const std::string unit = end;
  unsigned shift = 0;
  if (unit == "K" || unit == "k")
    shift = 10;
  else if (unit == "M" || unit == "m")
    shift = 20;
  else if (unit == "G" || unit == "g")
    shift = 30;
  else if (!unit.empty())
    return 0;
  if (number > (GiB >> shift)) return 0;  // at most 1 GiB: every MPI count fits an int
  return static_cast<size_t>(number) << shift;
}

bool power_of_two(size_t bytes) { return bytes != 0 && (bytes & (bytes - 1)) == 0; }

bool cases_from_text(const std::string& text, std::vector<Case>& cases) {
  std::vector<bool> wanted(std::size(kAllCases), false);
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    bool known = false;
    for (size_t i = 0; i < std::size(kAllCases); ++i)
      if (name == case_name(kAllCases[i])) wanted[i] = known = true;
    if (!known) return false;
    start = comma + 1;
  }
  cases.clear();  // always in the canonical order
  for (size_t i = 0; i < std::size(kAllCases); ++i)
    if (wanted[i]) cases.push_back(kAllCases[i]);
  return true;
}

// On a bad option returns false with `error` set ("help" for --help).
bool parse_options(int argc, char** argv, Options& options, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    std::string value;
    bool has_value = false;
    if (const size_t equals = flag.find('='); flag.rfind("--", 0) == 0 && equals != flag.npos) {
      value = flag.substr(equals + 1);
      flag.resize(equals);
      has_value = true;
    }
    if (flag == "--help" || flag == "-h") {
      error = "help";
      return false;
    }
    if (flag == "--inject-fault") {
      if (has_value) {
        error = "option --inject-fault takes no value";
        return false;
      }
      options.inject_fault = true;
      continue;
    }
    const bool known = flag == "--min-bytes" || flag == "--max-bytes" || flag == "--repeat" ||
                       flag == "--handles" || flag == "--cases" || flag == "--json";
    if (!known) {
      error = flag.rfind("-", 0) == 0 ? "unknown option '" + flag + "'"
                                      : "unexpected argument '" + flag + "'";
      return false;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        error = "option " + flag + " needs a value";
        return false;
      }
      value = argv[++i];
    }
    if (flag == "--min-bytes" || flag == "--max-bytes") {
      const size_t bytes = bytes_from_text(value);
      if (bytes < 8 || !power_of_two(bytes)) {
        error = "option " + flag + ": '" + value + "' is not a power of two from 8 to 1G";
        return false;
      }
      (flag == "--min-bytes" ? options.min_bytes : options.max_bytes) = bytes;
    } else if (flag == "--repeat" || flag == "--handles") {
      const long maximum = flag == "--repeat" ? 100000 : 64;
      char* end = nullptr;
      const long number = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || number < 1 || number > maximum) {
        error = "option " + flag + ": '" + value + "' is not a whole number from 1 to " +
                std::to_string(maximum);
        return false;
      }
      (flag == "--repeat" ? options.repeat : options.handles) = static_cast<int>(number);
    } else if (flag == "--cases") {
      if (!cases_from_text(value, options.cases)) {
        error = "option --cases: '" + value + "' is not a comma-separated list of h2d, d2h, " +
                "d2d_ranks";
        return false;
      }
    } else {
      options.json_path = value;
    }
  }
  if (options.min_bytes > options.max_bytes) {
    error = "--min-bytes (" + std::to_string(options.min_bytes) + ") is above --max-bytes (" +
            std::to_string(options.max_bytes) + ")";
    return false;
  }
  return true;
}

// ------------------------------------------------------------ patterns ---

uint64_t mixed(uint64_t x) {  // a 64-bit finaliser: consecutive inputs give unrelated words
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// What every rank's tasks and raw copies read and write. Set before the first
// task; the task functions read it from the runtime's threads.
struct Shared {
  std::vector<uint64_t> pool;    // host pattern pool: max_bytes / 8 + kSeeds words
  char* device_pool = nullptr;   // the same on the CUDA device (CUDA only)
  char* check_buffer = nullptr;  // pinned, max_bytes: device data copied back for checking
  std::atomic<int> kind{-1};     // this rank's taskgrid::DeviceKind, set by the probe task
};
Shared shared;

const char* pattern(uint32_t seed) {
  return reinterpret_cast<const char*>(shared.pool.data() + seed);
}

// Seeds differ between cases, sizes and iterations (7919 is prime to kSeeds).
uint32_t seed_of(Case c, size_t size_index, int iteration) {
  const uint64_t mixed_in = 1 + static_cast<uint64_t>(c) * 1009 + size_index * 131 +
                            static_cast<uint64_t>(iteration) * 7919;
  return static_cast<uint32_t>(mixed_in % kSeeds);
}

// --------------------------------------------------------- verification ---

// The first wrong byte this rank has seen since the last reset (the smallest
// offset when several checks of one transfer disagree).
struct Mismatch {
  bool found = false;
  size_t offset = 0;
  unsigned expected = 0;
  unsigned actual = 0;
};
std::mutex mismatch_mutex;
Mismatch mismatch;

void record_mismatch(size_t offset, unsigned char expected, unsigned char actual) {
  const std::lock_guard lock(mismatch_mutex);
  if (mismatch.found && mismatch.offset <= offset) return;
  mismatch = {true, offset, expected, actual};
}

Mismatch take_mismatch() {
  const std::lock_guard lock(mismatch_mutex);
  const Mismatch found = mismatch;
  mismatch = {};
  return found;
}

// Compares every byte; records the first wrong one.
void check_all(const char* data, const char* expected, size_t bytes) {
  constexpr size_t kBlock = 64 * KiB;
  for (size_t at = 0; at < bytes; at += kBlock) {
    const size_t n = std::min(kBlock, bytes - at);
    if (std::memcmp(data + at, expected + at, n) == 0) continue;
    const auto wrong = std::mismatch(data + at, data + at + n, expected + at);
    record_mismatch(static_cast<size_t>(wrong.first - data),
                    static_cast<unsigned char>(*wrong.second),
                    static_cast<unsigned char>(*wrong.first));
    return;
  }
}

// The cheap check inside a timed reader: 64 words spread over the buffer and
// its last word.
void check_sampled(const char* data, const char* expected, size_t bytes) {
  const size_t words = bytes / sizeof(uint64_t);
  constexpr size_t kSamples = 64;
  for (size_t k = 0; k <= kSamples; ++k) {
    const size_t word = k == kSamples ? words - 1 : words * k / kSamples;
    const size_t at = word * sizeof(uint64_t);
    for (size_t b = at; b < at + sizeof(uint64_t); ++b)
      if (data[b] != expected[b]) {
        record_mismatch(b, static_cast<unsigned char>(expected[b]),
                        static_cast<unsigned char>(data[b]));
        break;
      }
  }
}

// ---------------------------------------------------------------- CUDA ---

#ifdef TRANSFER_BENCH_CUDA
void cuda_check(cudaError_t code, const char* what) {
  if (code != cudaSuccess)
    throw taskgrid::Error(std::string(kProgram) + ": " + what + ": " + cudaGetErrorString(code));
}
#else
[[noreturn]] void cuda_missing() {
  throw taskgrid::Error(std::string(kProgram) +
                        ": this build has no CUDA baseline (the CUDA toolkit was not found at "
                        "configure time, or TRANSFER_BENCH_CUDA=OFF); run it with "
                        "TASKGRID_DEVICE=emulated or rebuild with the CUDA toolkit");
}
#endif

// --------------------------------------------------------------- tasks ---
// Arguments of the data tasks: (uint32_t seed, uint32_t corrupt); `corrupt`
// set: the writer flips the byte in the middle (--inject-fault).

uint32_t seed_arg(const taskgrid::TaskContext& ctx) { return ctx.arg<uint32_t>(0); }
bool corrupt_arg(const taskgrid::TaskContext& ctx) { return ctx.arg<uint32_t>(4) != 0; }

// Which devices the ranks have: run with any_device on every rank.
void probe_on_cpu(taskgrid::TaskContext&) {
  shared.kind = static_cast<int>(taskgrid::DeviceKind::cpu);
}
void probe_on_device(taskgrid::TaskContext& ctx) {
  shared.kind = static_cast<int>(taskgrid::device_kind(ctx));
}
const taskgrid::FunctionId probe_task =
    taskgrid::register_device_function("transfer_bench.probe", probe_on_cpu, probe_on_device);

// h2d's writer: a CPU task.
void fill_on_cpu(taskgrid::TaskContext& ctx) {
  char* data = ctx.data_as<char>(0);
  const size_t bytes = ctx.size(0);
  std::memcpy(data, pattern(seed_arg(ctx)), bytes);
  if (corrupt_arg(ctx)) data[bytes / 2] = static_cast<char>(~data[bytes / 2]);
}
const taskgrid::FunctionId fill_cpu_task =
    taskgrid::register_function("transfer_bench.fill_cpu", fill_on_cpu);

// d2h's and d2d_ranks' writer: B bytes of the pattern written on the device
// (on CUDA a device-to-device copy from the device's pattern pool).
void fill_on_device(taskgrid::TaskContext& ctx) {
  const size_t bytes = ctx.size(0);
  const uint32_t seed = seed_arg(ctx);
  const bool corrupt = corrupt_arg(ctx);
  if (taskgrid::device_kind(ctx) == taskgrid::DeviceKind::emulated) {
    char* view = static_cast<char*>(taskgrid::emulated_view(ctx, 0));
    taskgrid::launch_host_work(ctx, [view, bytes, seed, corrupt] {
      std::memcpy(view, pattern(seed), bytes);
      if (corrupt) view[bytes / 2] = static_cast<char>(~view[bytes / 2]);
    });
    return;
  }
#ifdef TRANSFER_BENCH_CUDA
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  char* data = ctx.data_as<char>(0);
  cuda_check(cudaMemcpyAsync(data, shared.device_pool + size_t{seed} * sizeof(uint64_t), bytes,
                             cudaMemcpyDeviceToDevice, stream),
             "the writer's cudaMemcpyAsync");
  if (corrupt) {
    const auto wrong = static_cast<unsigned char>(~pattern(seed)[bytes / 2]);
    cuda_check(cudaMemsetAsync(data + bytes / 2, wrong, 1, stream), "cudaMemsetAsync");
  }
#else
  cuda_missing();
#endif
}
const taskgrid::FunctionId fill_device_task =
    taskgrid::register_device_function("transfer_bench.fill", nullptr, fill_on_device);

// The timed reader: the runtime has copied its input to the device before it
// runs. On the emulated device it checks 64 sampled words (cheap); on CUDA it
// launches nothing (any copy back would be timed too).
void read_on_device(taskgrid::TaskContext& ctx) {
  if (taskgrid::device_kind(ctx) != taskgrid::DeviceKind::emulated) return;
  const char* view = static_cast<const char*>(taskgrid::emulated_view(ctx, 0));
  const size_t bytes = ctx.size(0);
  const uint32_t seed = seed_arg(ctx);
  taskgrid::launch_host_work(ctx,
                             [view, bytes, seed] { check_sampled(view, pattern(seed), bytes); });
}
const taskgrid::FunctionId read_device_task =
    taskgrid::register_device_function("transfer_bench.read", nullptr, read_on_device);

// The untimed check: reads the same version on the same device (its replica
// is reused) and compares every byte.
void verify_on_device(taskgrid::TaskContext& ctx) {
  const size_t bytes = ctx.size(0);
  const uint32_t seed = seed_arg(ctx);
  if (taskgrid::device_kind(ctx) == taskgrid::DeviceKind::emulated) {
    const char* view = static_cast<const char*>(taskgrid::emulated_view(ctx, 0));
    taskgrid::launch_host_work(ctx, [view, bytes, seed] { check_all(view, pattern(seed), bytes); });
    return;
  }
#ifdef TRANSFER_BENCH_CUDA
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  cuda_check(
      cudaMemcpyAsync(shared.check_buffer, ctx.data(0), bytes, cudaMemcpyDeviceToHost, stream),
      "the check's cudaMemcpyAsync");
  const char* copy = shared.check_buffer;  // the host function must not call CUDA: it only compares
  taskgrid::launch_host_work(ctx, [copy, bytes, seed] { check_all(copy, pattern(seed), bytes); });
#else
  cuda_missing();
#endif
}
const taskgrid::FunctionId verify_device_task =
    taskgrid::register_device_function("transfer_bench.verify", nullptr, verify_on_device);

taskgrid::TaskOptions on(int rank, int device = taskgrid::TaskOptions::any_device) {
  taskgrid::TaskOptions options;
  options.rank = rank;
  options.device = device;
  return options;
}

// ------------------------------------------------------------- raw side ---

// The raw baseline's buffers: on CUDA a device buffer, pinned host memory and
// a stream of its own; on the emulated device two host buffers.
struct Raw {
  bool cuda = false;
  char* device = nullptr;
  char* host = nullptr;
  std::unique_ptr<char[]> device_storage, host_storage;
#ifdef TRANSFER_BENCH_CUDA
  cudaStream_t stream = nullptr;
#endif

  void open(bool on_cuda, size_t max_bytes) {
    cuda = on_cuda;
    if (!cuda) {
      device_storage.reset(new char[max_bytes]);
      host_storage.reset(new char[max_bytes]);
      device = device_storage.get();
      host = host_storage.get();
      std::memset(device, 0, max_bytes);  // touched now, not in the first timed copy
      std::memset(host, 0, max_bytes);
      return;
    }
#ifdef TRANSFER_BENCH_CUDA
    // Device 0, the device every data task of the benchmark asks for.
    cuda_check(cudaSetDevice(0), "cudaSetDevice");
    cuda_check(cudaMalloc(&device, max_bytes), "cudaMalloc (raw buffer)");
    cuda_check(cudaMallocHost(&host, max_bytes), "cudaMallocHost (raw buffer)");
    cuda_check(cudaMallocHost(&shared.check_buffer, max_bytes), "cudaMallocHost (check buffer)");
    const size_t pool_bytes = shared.pool.size() * sizeof(uint64_t);
    cuda_check(cudaMalloc(&shared.device_pool, pool_bytes), "cudaMalloc (pattern pool)");
    cuda_check(
        cudaMemcpy(shared.device_pool, shared.pool.data(), pool_bytes, cudaMemcpyHostToDevice),
        "cudaMemcpy (pattern pool)");
    cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
#else
    cuda_missing();
#endif
  }
  void close() {
#ifdef TRANSFER_BENCH_CUDA
    if (cuda) {
      cudaStreamDestroy(stream);
      cudaFree(device);
      cudaFreeHost(host);
      cudaFreeHost(shared.check_buffer);
      cudaFree(shared.device_pool);
      shared.check_buffer = shared.device_pool = nullptr;
    }
#endif
  }

  // The source of a raw host-to-device copy (untimed).
  void fill_host(uint32_t seed, size_t bytes) { std::memcpy(host, pattern(seed), bytes); }
  // The source of a raw device-to-host copy (untimed).
  void fill_device(uint32_t seed, size_t bytes) {
    if (!cuda) {
      std::memcpy(device, pattern(seed), bytes);
      return;
    }
#ifdef TRANSFER_BENCH_CUDA
    cuda_check(cudaMemcpyAsync(device, shared.device_pool + size_t{seed} * sizeof(uint64_t), bytes,
                               cudaMemcpyDeviceToDevice, stream),
               "cudaMemcpyAsync (raw fill)");
    cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
#endif
  }
  // Timed: one copy, complete on return.
  void host_to_device(size_t bytes) {
    if (!cuda) {
      std::memcpy(device, host, bytes);
      return;
    }
#ifdef TRANSFER_BENCH_CUDA
    cuda_check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream),
               "cudaMemcpyAsync (raw host to device)");
    cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
#endif
  }
  void device_to_host(size_t bytes) {
    if (!cuda) {
      std::memcpy(host, device, bytes);
      return;
    }
#ifdef TRANSFER_BENCH_CUDA
    cuda_check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync (raw device to host)");
    cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
#endif
  }
  // Untimed checks of where a raw copy landed.
  void check_device(uint32_t seed, size_t bytes) {
    const char* data = device;
#ifdef TRANSFER_BENCH_CUDA
    if (cuda) {
      cuda_check(cudaMemcpy(shared.check_buffer, device, bytes, cudaMemcpyDeviceToHost),
                 "cudaMemcpy (raw check)");
      data = shared.check_buffer;
    }
#endif
    check_all(data, pattern(seed), bytes);
  }
  void check_host(uint32_t seed, size_t bytes) const { check_all(host, pattern(seed), bytes); }
};

// ---------------------------------------------------------- the driver ---

using Clock = std::chrono::steady_clock;
double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Waits for `request` without spinning: MPICH's blocking calls poll a core,
// which the measured ranks would lose on a small machine.
void wait_quietly(MPI_Request& request) {
  int done = 0;
  while (true) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    const timespec pause{0, 100000};  // 100 µs
    nanosleep(&pause, nullptr);
  }
}

// A barrier of every rank of `comm`. The ranks taking part in a measurement
// wait in MPI_Wait, the others quietly. (Every rank calls MPI_Ibarrier: a
// blocking and a non-blocking collective never match.)
void sync(MPI_Comm comm, bool taking_part) {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibarrier(comm, &request);
  if (taking_part)
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  else
    wait_quietly(request);
}

std::string load_average() {
  std::ifstream file("/proc/loadavg");
  std::string line;
  if (!file || !std::getline(file, line)) return "unknown";
  return line;
}

struct Stats {
  double fastest = 0, median = 0;  // seconds
};
Stats stats_of(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  const size_t n = seconds.size();
  Stats s;
  s.fastest = seconds.front();
  s.median = n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  return s;
}
double gbps(size_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
}

struct Record {
  Case c;
  size_t bytes;
  std::vector<double> taskgrid, raw;  // seconds per timed iteration
};

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(ch));
      out += escaped;
      continue;
    }
    out += ch;
  }
  return out + "\"";
}

std::string json_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

std::string json_seconds(const std::vector<double>& seconds) {
  std::string out = "[";
  for (size_t i = 0; i < seconds.size(); ++i) out += (i ? ", " : "") + json_number(seconds[i]);
  return out + "]";
}

class Bench {
 public:
  Bench(const Options& options, MPI_Comm comm, int rank, int ranks)
      : options_(options), comm_(comm), rank_(rank), ranks_(ranks) {}

  // Returns the job's status for this rank: 0, 1 (a wrong byte), 2 (cannot run).
  int run(std::FILE* json) {
    const std::string load_start = load_average();
    if (!probe_devices()) return 2;
    kind_ = static_cast<taskgrid::DeviceKind>(shared.kind.load());
    const bool emulated = kind_ == taskgrid::DeviceKind::emulated;
    raw_label_ = emulated ? std::string(
                                "memcpy between host buffers (d2d_ranks: + MPI_Send/MPI_Recv "
                                "of host buffers); ") +
                                kEmulatedLabel
                          : "cudaMemcpyAsync with pinned host memory (cudaMallocHost) "
                            "(d2d_ranks: D2H, MPI_Send/MPI_Recv, H2D)";

    shared.pool.resize(options_.max_bytes / sizeof(uint64_t) + kSeeds);
    for (size_t i = 0; i < shared.pool.size(); ++i) shared.pool[i] = mixed(i);
    raw_.open(kind_ == taskgrid::DeviceKind::cuda, options_.max_bytes);
    const size_t user_bytes = options_.max_bytes * static_cast<size_t>(options_.handles);
    user_.reset(new char[user_bytes]);
    std::memset(user_.get(), 0, user_bytes);

    if (rank_ == 0) print_header(load_start);
    int status = 0;
    std::vector<std::string> skipped;
    for (Case c : options_.cases) {
      if (c == Case::d2d_ranks && ranks_ < 2) {
        const std::string why = "needs at least 2 ranks (mpiexec.mpich -n 2), this run has 1";
        if (rank_ == 0) std::printf("%-10s skipped: %s\n", case_name(c), why.c_str());
        skipped.push_back(std::string(case_name(c)) + ": " + why);
        continue;
      }
      size_t size_index = 0;
      for (size_t bytes = options_.min_bytes; bytes <= options_.max_bytes;
           bytes *= 2, ++size_index) {
        Record record{c, bytes, {}, {}};
        status = measure(record, size_index);
        if (status != 0) break;
        if (rank_ == 0) print_line(record);
        records_.push_back(std::move(record));
      }
      if (status != 0) break;
    }
    raw_.close();
    const std::string load_end = load_average();
    if (rank_ == 0) {
      if (status == 0)
        std::printf("every transfer verified; load average at the end: %s\n", load_end.c_str());
      if (emulated) std::printf("(%s)\n", kEmulatedLabel);
      std::fflush(stdout);
      if (json) write_json(json, load_start, load_end, skipped, status);
    }
    return status;
  }

 private:
  // Every rank runs the probe on every rank; false (after a message) when a
  // rank has no device or the ranks' devices differ.
  bool probe_devices() {
    for (int r = 0; r < ranks_; ++r) taskgrid::submit(probe_task, {}, on(r));
    taskgrid::wait_all();
    int mine = shared.kind;
    std::vector<int> kinds(static_cast<size_t>(ranks_));
    MPI_Allgather(&mine, 1, MPI_INT, kinds.data(), 1, MPI_INT, comm_);
    for (int r = 0; r < ranks_; ++r) {
      const auto kind = static_cast<taskgrid::DeviceKind>(kinds[static_cast<size_t>(r)]);
      std::string problem;
      if (kind == taskgrid::DeviceKind::cpu)
        problem = "rank " + std::to_string(r) +
                  " has no device: run with TASKGRID_DEVICE=cuda on GPUs or "
                  "TASKGRID_DEVICE=emulated";
      else if (kinds[static_cast<size_t>(r)] != kinds[0])
        problem = "the ranks have devices of different kinds (rank 0: " + kind_name(kinds[0]) +
                  ", rank " + std::to_string(r) + ": " + kind_name(kinds[static_cast<size_t>(r)]) +
                  ")";
#ifndef TRANSFER_BENCH_CUDA
      else if (kind == taskgrid::DeviceKind::cuda)
        problem = "rank " + std::to_string(r) +
                  " has CUDA devices, but this build has no CUDA baseline (the CUDA toolkit was "
                  "not found at configure time, or TRANSFER_BENCH_CUDA=OFF)";
#endif
      if (!problem.empty()) {
        if (rank_ == 0) std::fprintf(stderr, "%s: %s\n", kProgram, problem.c_str());
        return false;
      }
    }
    return true;
  }

  static std::string kind_name(int kind) {
    switch (static_cast<taskgrid::DeviceKind>(kind)) {
      case taskgrid::DeviceKind::cpu:
        return "none";
      case taskgrid::DeviceKind::cuda:
        return "cuda";
      case taskgrid::DeviceKind::emulated:
        return "emulated";
    }
    return "?";
  }

  void print_header(const std::string& load) const {
    std::printf("%s: %d rank%s, load average %s (/proc/loadavg)\n", kProgram, ranks_,
                ranks_ == 1 ? "" : "s", load.c_str());
    const std::string label =
        kind_ == taskgrid::DeviceKind::emulated ? std::string(" (") + kEmulatedLabel + ")" : "";
    std::printf("device kind: %s on every rank%s\n", kind_name(static_cast<int>(kind_)).c_str(),
                label.c_str());
    std::printf("raw baseline: %s\n", raw_label_.c_str());
    std::printf(
        "sizes %zu to %zu bytes; per size 1 warm-up, then %d timed iterations, taskgrid and "
        "raw alternating\n",
        options_.min_bytes, options_.max_bytes, options_.repeat);
    std::printf("GB/s = 1e9 bytes/s; ratio = raw median GB/s / taskgrid median GB/s\n\n");
    std::printf("%-10s %11s  %11s %11s  %11s %11s  %8s\n", "case", "bytes", "tg fastest",
                "tg median", "raw fastest", "raw median", "raw/tg");
    std::fflush(stdout);
  }

  void print_line(const Record& record) const {
    const Stats tg = stats_of(record.taskgrid), raw = stats_of(record.raw);
    std::printf("%-10s %11zu  %11.3f %11.3f  %11.3f %11.3f  %8.2f\n", case_name(record.c),
                record.bytes, gbps(record.bytes, tg.fastest), gbps(record.bytes, tg.median),
                gbps(record.bytes, raw.fastest), gbps(record.bytes, raw.median),
                raw.median > 0 ? tg.median / raw.median : 0.0);
    std::fflush(stdout);
  }

  // One size of one case: a warm-up, then --repeat iterations, each a
  // TaskGrid transfer followed by a raw one. Returns 0 or 1 (a wrong byte).
  int measure(Record& record, size_t size_index) {
    const size_t bytes = record.bytes;
    std::vector<taskgrid::DataHandle> handles;  // handle k: user_ from k * bytes
    for (int k = 0; k < options_.handles; ++k)
      handles.push_back(
          taskgrid::enter_data(user_.get() + static_cast<size_t>(k) * bytes, bytes, 0));
    int status = 0;
    for (int iteration = 0; iteration <= options_.repeat && status == 0; ++iteration) {
      const uint32_t seed = seed_of(record.c, size_index, iteration);
      const bool corrupt = options_.inject_fault && size_index == 0 && iteration == 1;
      const int timer = record.c == Case::d2d_ranks ? 1 : 0;  // the rank whose clock counts
      const size_t k = static_cast<size_t>(iteration % options_.handles);
      char* host = user_.get() + k * bytes;
      const double tg =
          timed_on(timer, taskgrid_transfer(record.c, handles[k], host, bytes, seed, corrupt));
      status = verdict(record.c, "taskgrid", bytes, iteration);
      if (status != 0) break;
      const double raw = timed_on(timer, raw_transfer(record.c, bytes, seed));
      status = verdict(record.c, "raw", bytes, iteration);
      if (iteration > 0) {
        record.taskgrid.push_back(tg);
        record.raw.push_back(raw);
      }
    }
    for (taskgrid::DataHandle handle : handles) taskgrid::release(handle);
    return status;
  }

  // The seconds this rank timed (d2d_ranks: rank 1, the others rank 0).
  // Every rank leaves the barrier before the timer at once: in spmd mode each
  // wait and fetch is also a collective check of the ranks' submission
  // sequences (TASKGRID_CHECK_INTERVAL), so a rank arriving late would be
  // timed too.
  double taskgrid_transfer(Case c, taskgrid::DataHandle h, const char* host, size_t bytes,
                           uint32_t seed, bool corrupt) {
    const uint32_t flag = corrupt ? 1 : 0;
    const uint32_t clean = 0;
    double seconds = 0;
    switch (c) {
      case Case::h2d: {
        taskgrid::submit(fill_cpu_task, {taskgrid::out(h)}, on(0), seed, flag);
        taskgrid::wait(h);
        sync(comm_, true);
        const auto start = Clock::now();
        taskgrid::submit(read_device_task, {taskgrid::in(h)}, on(0, 0), seed, clean);
        taskgrid::wait(h);
        seconds = seconds_between(start, Clock::now());
        taskgrid::submit(verify_device_task, {taskgrid::in(h)}, on(0, 0), seed, clean);
        taskgrid::wait(h);
        break;
      }
      case Case::d2h: {
        sync(comm_, true);
        const auto start = Clock::now();
        taskgrid::submit(fill_device_task, {taskgrid::out(h)}, on(0, 0), seed, flag);
        taskgrid::fetch(h);
        seconds = seconds_between(start, Clock::now());
        if (rank_ == 0) check_all(host, pattern(seed), bytes);  // what fetch wrote
        break;
      }
      case Case::d2d_ranks: {
        // Timed on rank 1, from the barrier to its reader's end; rank 0
        // serves the transfer from its engine meanwhile.
        sync(comm_, true);
        const auto start = Clock::now();
        taskgrid::submit(fill_device_task, {taskgrid::out(h)}, on(0, 0), seed, flag);
        taskgrid::submit(read_device_task, {taskgrid::in(h)}, on(1, 0), seed, clean);
        taskgrid::wait(h);
        seconds = seconds_between(start, Clock::now());
        taskgrid::submit(verify_device_task, {taskgrid::in(h)}, on(1, 0), seed, clean);
        taskgrid::wait(h);
        break;
      }
    }
    return seconds;
  }

  double raw_transfer(Case c, size_t bytes, uint32_t seed) {
    double seconds = 0;
    switch (c) {
      case Case::h2d:
        if (rank_ == 0) raw_.fill_host(seed, bytes);
        sync(comm_, rank_ == 0);
        if (rank_ == 0) {
          const auto start = Clock::now();
          raw_.host_to_device(bytes);
          seconds = seconds_between(start, Clock::now());
          raw_.check_device(seed, bytes);
        }
        break;
      case Case::d2h:
        if (rank_ == 0) raw_.fill_device(seed, bytes);
        sync(comm_, rank_ == 0);
        if (rank_ == 0) {
          const auto start = Clock::now();
          raw_.device_to_host(bytes);
          seconds = seconds_between(start, Clock::now());
          raw_.check_host(seed, bytes);
        }
        break;
      case Case::d2d_ranks: {
        // Timed on rank 1, from the barrier to its host-to-device copy's end.
        if (rank_ == 0) raw_.fill_device(seed, bytes);
        sync(comm_, rank_ <= 1);
        const auto start = Clock::now();
        const int count = static_cast<int>(bytes);  // at most 1 GiB
        if (rank_ == 0) {
          raw_.device_to_host(bytes);
          MPI_Send(raw_.host, count, MPI_BYTE, 1, kRawTag, comm_);
        } else if (rank_ == 1) {
          MPI_Recv(raw_.host, count, MPI_BYTE, 0, kRawTag, comm_, MPI_STATUS_IGNORE);
          raw_.host_to_device(bytes);
        }
        seconds = seconds_between(start, Clock::now());
        if (rank_ == 1) raw_.check_device(seed, bytes);
        break;
      }
    }
    return seconds;
  }

  // `seconds` as the timing rank saw them, on every rank (quietly).
  double timed_on(int timer, double seconds) {
    if (timer == 0) return seconds;  // only rank 0 reports
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Ibcast(&seconds, 1, MPI_DOUBLE, timer, comm_, &request);
    wait_quietly(request);
    return seconds;
  }

  // Every rank learns whether any saw a wrong byte; the ranks that did say
  // where. Returns the status: 0, or 1 after a wrong byte anywhere. Waits
  // quietly: an idle rank gets here while rank 0 still measures.
  int verdict(Case c, const char* side, size_t bytes, int iteration) {
    const Mismatch found = take_mismatch();
    int wrong = found.found ? 1 : 0, any = 0;
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Iallreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, comm_, &request);
    wait_quietly(request);
    if (found.found) {
      const std::string when =
          iteration == 0 ? std::string("warm-up") : "iteration " + std::to_string(iteration);
      std::fprintf(stderr,
                   "%s: verification failed: case %s (%s), %zu bytes, rank %d, %s: first wrong "
                   "byte at offset %zu (expected 0x%02x, found 0x%02x)\n",
                   kProgram, case_name(c), side, bytes, rank_, when.c_str(), found.offset,
                   found.expected, found.actual);
      std::fflush(stderr);
    }
    return any ? 1 : 0;
  }

  void write_json(std::FILE* json, const std::string& load_start, const std::string& load_end,
                  const std::vector<std::string>& skipped, int status) const {
    std::ostringstream out;
    out << "{\n  \"program\": " << json_string(kProgram) << ",\n  \"ranks\": " << ranks_
        << ",\n  \"device_kind\": " << json_string(kind_name(static_cast<int>(kind_)))
        << ",\n  \"emulated\": " << (kind_ == taskgrid::DeviceKind::emulated ? "true" : "false")
        << ",\n  \"raw_baseline\": " << json_string(raw_label_)
        << ",\n  \"load_average_start\": " << json_string(load_start)
        << ",\n  \"load_average_end\": " << json_string(load_end)
        << ",\n  \"repeat\": " << options_.repeat << ",\n  \"warmup\": 1"
        << ",\n  \"handles\": " << options_.handles
        << ",\n  \"verified\": " << (status == 0 ? "true" : "false") << ",\n  \"skipped\": [";
    for (size_t i = 0; i < skipped.size(); ++i) out << (i ? ", " : "") << json_string(skipped[i]);
    out << "],\n  \"records\": [";
    for (size_t i = 0; i < records_.size(); ++i) {
      const Record& r = records_[i];
      const Stats tg = stats_of(r.taskgrid), raw = stats_of(r.raw);
      out << (i ? "," : "") << "\n    {\"case\": " << json_string(case_name(r.c))
          << ", \"bytes\": " << r.bytes
          << ", \"taskgrid_gbps_fastest\": " << json_number(gbps(r.bytes, tg.fastest))
          << ", \"taskgrid_gbps_median\": " << json_number(gbps(r.bytes, tg.median))
          << ", \"raw_gbps_fastest\": " << json_number(gbps(r.bytes, raw.fastest))
          << ", \"raw_gbps_median\": " << json_number(gbps(r.bytes, raw.median))
          << ", \"ratio_raw_over_taskgrid\": "
          << json_number(raw.median > 0 ? tg.median / raw.median : 0)
          << ", \"emulated\": " << (kind_ == taskgrid::DeviceKind::emulated ? "true" : "false")
          << ", \"taskgrid_seconds\": " << json_seconds(r.taskgrid)
          << ", \"raw_seconds\": " << json_seconds(r.raw) << "}";
    }
    out << "\n  ]\n}\n";
    const std::string text = out.str();
    std::fwrite(text.data(), 1, text.size(), json);
  }

  const Options& options_;
  MPI_Comm comm_;
  int rank_, ranks_;
  taskgrid::DeviceKind kind_ = taskgrid::DeviceKind::cpu;
  std::string raw_label_;
  Raw raw_;
  std::unique_ptr<char[]> user_;  // every handle's host buffer (fetch writes it)
  std::vector<Record> records_;
};

}  // namespace

int main(int argc, char** argv) {
  // TaskGrid adopts this MPI; the raw side's calls run beside it on a
  // communicator of their own.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  Options options;
  std::string error;
  bool ok = parse_options(argc, argv, options, error);
  const bool show_usage = !ok;
  std::FILE* json = nullptr;
  if (ok && rank == 0 && !options.json_path.empty()) {
    json = std::fopen(options.json_path.c_str(), "w");  // before any measurement
    if (!json) {
      error = "cannot write --json " + options.json_path + ": " + std::strerror(errno);
      ok = false;
    }
  }
  int all_ok = ok ? 1 : 0;  // rank 0's verdict (only it opens the file)
  MPI_Bcast(&all_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!all_ok) {
    const bool help = error == "help";
    if (rank == 0) {
      if (help)
        std::printf("%s", usage_text());
      else
        std::fprintf(stderr, "%s: %s\n%s", kProgram, error.c_str(), show_usage ? usage_text() : "");
    }
    MPI_Finalize();
    return help ? 0 : 2;
  }

  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  taskgrid::start(&argc, &argv, taskgrid::Mode::spmd);
  int status = 0;
  {
    Bench bench(options, comm, rank, ranks);
    status = bench.run(json);
  }
  if (json) std::fclose(json);
  status = taskgrid::finish(status);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return status;
}
