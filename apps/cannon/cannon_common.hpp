// What the two cannon programs share, so that they multiply the same
// matrices the same way and report alike: options, the row-block partition,
// the matrices, the per-stripe dgemm, the timed driver, the checksum, the
// verification and the output. Only how a stripe of B travels to the next
// rank differs (one-sided get in taskgrid-cannon, send/receive in
// taskgrid-cannon-mpi): each program supplies it as a `StripeRing`.
//
// C = A x B, all n x n, row-major. Rank r of P owns row block r of A and C
// (rows [first_row(r), first_row(r + 1)); blocks differ by at most one row)
// and starts with row block r of B, its "stripe". At step s it holds stripe
// k = (r + s) mod P and adds A_r[:, columns of block k] x B_k to C_r; then
// every rank passes its stripe to its left neighbour. After P steps C_r is
// complete. The order of the P products is fixed, and both programs make the
// same dgemm calls on the same data, so their results agree bit for bit at a
// given rank count and BLAS thread count.
//
// The checksum is the sum of all elements of C: each rank sums its rows left
// to right into one slot per row of an n-vector that is zero elsewhere; the
// vectors are summed onto rank 0 (x + 0 is exact, so the reduction order does
// not matter) and rank 0 adds the slots in row order.
#pragma once

#include <cblas.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace cannon {

struct Options {
  int n = 1024;
  int reps = 3;
  bool check = false;
  bool corrupt = false;  // testing only: perturb one element of C before the check
};

inline const char* usage_text() {
  return "options: --n N --reps R --check\n"
         "  n x n matrices (default 1024, at least the number of ranks),\n"
         "  R timed multiplies after one warm-up (default 3; the median is reported),\n"
         "  --check: every rank recomputes its rows of C with one dgemm and compares\n";
}

// Parses the options; on a bad one returns false with `error` set.
inline bool parse_options(int argc, char** argv, Options& options, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--check") {
      options.check = true;
      continue;
    }
    if (flag == "--corrupt") {
      options.corrupt = true;
      continue;
    }
    int* target = nullptr;
    if (flag == "--n") target = &options.n;
    if (flag == "--reps") target = &options.reps;
    if (!target) {
      error = "unknown option '" + flag + "'";
      return false;
    }
    if (i + 1 >= argc) {
      error = "option " + flag + " needs a value";
      return false;
    }
    char* end = nullptr;
    const long value = std::strtol(argv[++i], &end, 10);
    constexpr long kMaximum = 1L << 20;
    if (*end != '\0' || value < 1 || value > kMaximum) {
      error = "option " + flag + ": '" + argv[i] + "' is not a whole number from 1 to " +
              std::to_string(kMaximum);
      return false;
    }
    *target = static_cast<int>(value);
  }
  if (options.corrupt && !options.check) {
    error = "--corrupt needs --check";
    return false;
  }
  return true;
}

// The row-block partition of n rows over the ranks, seen from `rank`.
struct Layout {
  int n = 0;
  int ranks = 1;
  int rank = 0;

  int first_row(int block) const {
    return static_cast<int>(static_cast<int64_t>(n) * block / ranks);
  }
  int rows(int block) const { return first_row(block + 1) - first_row(block); }
  int max_rows() const { return (n + ranks - 1) / ranks; }
  int my_rows() const { return rows(rank); }
  // Elements of a block of `rows` full rows.
  size_t elements(int row_count) const {
    return static_cast<size_t>(row_count) * static_cast<size_t>(n);
  }
  // The ring: a rank receives its next stripe from the right and passes its
  // current one to the left.
  int right() const { return (rank + 1) % ranks; }
  int left() const { return (rank + ranks - 1) % ranks; }
  // The stripe this rank holds at `step`.
  int stripe_at(int step) const { return (rank + step) % ranks; }
};

// A deterministic value in [-0.5, 0.5) for element (i, j) of the matrix
// `seed` names: an integer hash, so no rank needs another's data to build
// its blocks, and no short period lets a misplaced block go unnoticed.
inline double matrix_value(uint64_t seed, int i, int j) {
  uint64_t x =
      seed ^ ((static_cast<uint64_t>(static_cast<uint32_t>(i)) << 32) | static_cast<uint32_t>(j));
  x ^= x >> 33;  // the 64-bit finaliser of MurmurHash3
  x *= 0xFF51AFD7ED558CCDULL;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ULL;
  x ^= x >> 33;
  return static_cast<double>(x >> 11) * 0x1.0p-53 - 0.5;
}
constexpr uint64_t kSeedA = 0x243F6A8885A308D3ULL;
constexpr uint64_t kSeedB = 0x13198A2E03707344ULL;

// Rows [first, first + count) of matrix `seed`, row-major into `out`.
inline void generate_rows(uint64_t seed, int n, int first, int count, double* out) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < count; ++i)
    for (int j = 0; j < n; ++j)
      out[static_cast<size_t>(i) * static_cast<size_t>(n) + static_cast<size_t>(j)] =
          matrix_value(seed, first + i, j);
}

// This rank's data: its rows of A and C and its own stripe of B (kept so
// that every multiply starts from the same state).
struct Blocks {
  std::vector<double> a;
  std::vector<double> own_stripe;
  std::vector<double> c;

  explicit Blocks(const Layout& layout)
      : a(layout.elements(layout.my_rows())), own_stripe(a.size()), c(a.size()) {
    const int first = layout.first_row(layout.rank);
    generate_rows(kSeedA, layout.n, first, layout.my_rows(), a.data());
    generate_rows(kSeedB, layout.n, first, layout.my_rows(), own_stripe.data());
  }

  void copy_own_stripe_to(double* buffer) const {
    std::memcpy(buffer, own_stripe.data(), own_stripe.size() * sizeof(double));
  }
};

// C_r (+)= A_r[:, columns of block `stripe`] x B_stripe; the first step
// overwrites C, so C needs no clearing between multiplies.
inline void multiply_stripe(const Layout& layout, Blocks& blocks, int stripe,
                            const double* stripe_data, bool first_step) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, layout.my_rows(), layout.n,
              layout.rows(stripe), 1.0, blocks.a.data() + layout.first_row(stripe), layout.n,
              stripe_data, layout.n, first_step ? 0.0 : 1.0, blocks.c.data(), layout.n);
}

// How a program moves the stripes, and the few collectives the driver needs
// (values on rank 0 only).
template <typename Ring>
concept StripeRing = requires(Ring ring, double value, std::vector<double>& values) {
  ring.load_own_stripe();  // before a multiply: this rank's stripe is current
  ring.multiply();         // the P steps: C_r = A_r x B
  ring.barrier();
  { ring.max_on_root(value) } -> std::same_as<double>;
  ring.sum_on_root(values);
};

// Ends the job after a message on stderr. MPICH's launcher tears the job
// down on MPI_Abort and may drop output it has not forwarded yet (seen: the
// whole message lost in one run of a thousand): give it a moment first.
[[noreturn]] inline void abort_after_message() {
  std::fflush(stderr);
  std::fflush(stdout);
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::exit(1);
}

// Prints the error as the runtime does and ends the job.
[[noreturn]] inline void abort_job(const std::exception& error) {
  int initialized = 0, rank = -1;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "error: taskgrid: rank %d: %s\n", rank, error.what());
  abort_after_message();
}

// Recomputes this rank's rows of C directly (A_r x the whole B, generated
// here) and ends the job at the first element off by more than 1e-9 * n.
inline void verify(const Layout& layout, const Blocks& blocks) {
  const int n = layout.n, rows = layout.my_rows(), first = layout.first_row(layout.rank);
  std::vector<double> b(layout.elements(n));
  generate_rows(kSeedB, n, 0, n, b.data());
  std::vector<double> expected(blocks.c.size());
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, n, n, 1.0, blocks.a.data(), n,
              b.data(), n, 0.0, expected.data(), n);
  const double tolerance = 1e-9 * n;
  // Written so that a NaN counts as wrong.
  auto wrong = [&](size_t k) { return !(std::abs(blocks.c[k] - expected[k]) <= tolerance); };
  const auto count = static_cast<int64_t>(expected.size());
  int64_t wrong_elements = 0;
#pragma omp parallel for schedule(static) reduction(+ : wrong_elements)
  for (int64_t k = 0; k < count; ++k) wrong_elements += wrong(static_cast<size_t>(k)) ? 1 : 0;
  if (wrong_elements == 0) return;
  for (size_t k = 0; k < expected.size(); ++k) {
    if (!wrong(k)) continue;
    const size_t row = k / static_cast<size_t>(n), column = k % static_cast<size_t>(n);
    std::fprintf(stderr, "cannon: rank %d: wrong result at (%zu,%zu): got %.17g expected %.17g\n",
                 layout.rank, static_cast<size_t>(first) + row, column, blocks.c[k], expected[k]);
    abort_after_message();
  }
}

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

// One warm-up and `options.reps` timed multiplies (each timed from a common
// start to the slowest rank's end), then the checksum, the optional check and
// the report on rank 0.
template <StripeRing Ring>
void run(const Options& options, const Layout& layout, Blocks& blocks, Ring& ring,
         const char* program) {
  std::vector<double> seconds;
  for (int rep = 0; rep <= options.reps; ++rep) {
    ring.load_own_stripe();
    ring.barrier();
    const auto start = std::chrono::steady_clock::now();
    ring.multiply();
    const double local =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double slowest = ring.max_on_root(local);
    if (rep > 0) seconds.push_back(slowest);  // rep 0 is the warm-up
  }

  const int first = layout.first_row(layout.rank), n = layout.n;
  std::vector<double> row_sums(static_cast<size_t>(n), 0.0);
  for (int i = 0; i < layout.my_rows(); ++i) {
    const double* row = blocks.c.data() + layout.elements(i);
    double sum = 0.0;
    for (int j = 0; j < n; ++j) sum += row[j];
    row_sums[static_cast<size_t>(first + i)] = sum;
  }
  ring.sum_on_root(row_sums);

  if (options.check) {
    if (options.corrupt && layout.rank == layout.ranks - 1) blocks.c[0] += 1.0;
    verify(layout, blocks);
    ring.barrier();  // every rank has passed
  }

  if (layout.rank != 0) return;
  double checksum = 0.0;
  for (double sum : row_sums) checksum += sum;
  const double time_per_multiply = median(seconds);
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * n;
  std::printf("program %s\n", program);
  std::printf("ranks %d\n", layout.ranks);
  std::printf("threads %d\n", omp_get_max_threads());
  std::printf("n %d\n", n);
  std::printf("reps %d\n", options.reps);
  std::printf("time_per_multiply_s %.6g\n", time_per_multiply);
  std::printf("gflops %.6g\n", flops / time_per_multiply * 1e-9);
  std::printf("checksum %.17g\n", checksum);
  if (options.check) std::printf("check ok\n");
  std::fflush(stdout);
}

// The frame of both programs' main: MPI at `thread_level`, the options (on
// a bad one rank 0 prints why and the usage, and the job exits 2), then
// `body(options, layout)`; an exception ends the job through abort_job.
template <typename Body>
int guarded_main(int& argc, char**& argv, int thread_level, const char* program, Body&& body) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, thread_level, &provided);
  try {
    Layout layout;
    MPI_Comm_rank(MPI_COMM_WORLD, &layout.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &layout.ranks);
    Options options;
    std::string error;
    bool ok = parse_options(argc, argv, options, error);
    if (ok && options.n < layout.ranks) {
      error = "--n " + std::to_string(options.n) + " is smaller than the number of ranks (" +
              std::to_string(layout.ranks) + ")";
      ok = false;
    }
    if (!ok) {
      if (layout.rank == 0)
        std::fprintf(stderr, "%s: %s\n%s", program, error.c_str(), usage_text());
      MPI_Finalize();
      return 2;
    }
    layout.n = options.n;
    body(options, layout);
  } catch (const std::exception& error) {
    abort_job(error);
  }
  MPI_Finalize();
  return 0;
}

}  // namespace cannon
