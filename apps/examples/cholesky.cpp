// cholesky: tiled right-looking Cholesky factorisation A = L L^T with one data
// handle per tile of the lower triangle and OpenBLAS kernels (dpotrf, dtrsm,
// dsyrk, dgemm). Works in both modes (TASKGRID_MODE picks):
//
//   cluster  rank 0 submits; the scheduler (TASKGRID_SCHEDULER) places tasks.
//   spmd     every rank submits; tiles have 2-D block-cyclic owners over a
//            P x Q grid of the ranks, and each task runs on the owner of the
//            tile it writes.
//
// Prints the time from the first submission until the factor is complete
// (cluster: wait_all; spmd: every tile in rank 0's buffer, exit_data(h, 0)) and, with
// --check 1 (the default), the residual ||A - L L^T||_F / ||A||_F, failing
// above 1e-12.
//
//   mpiexec.mpich -n 4 build/bin/cholesky --n 512 --tile 128
//   mpiexec.mpich -n 4 env TASKGRID_MODE=spmd build/bin/cholesky --n 512 --tile 128
#include <cblas.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "taskgrid/taskgrid.hpp"

// LAPACK's Fortran entry (OpenBLAS exports it; LAPACKE is not always installed).
extern "C" void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info,
                        size_t uplo_length);

namespace {

constexpr double kTolerance = 1e-12;

// Every kernel works on b x b column-major tiles; b travels as the argument.
void tile_potrf(taskgrid::TaskContext& ctx) {
  const int b = ctx.arg<int>();
  int info = 0;
  dpotrf_("L", &b, ctx.data_as<double>(0), &b, &info, 1);
  if (info != 0) throw std::runtime_error("dpotrf: info " + std::to_string(info));
}
TASKGRID_REGISTER(tile_potrf);

// A_ik := A_ik L_kk^-T  (in: L_kk, inout: A_ik)
void tile_trsm(taskgrid::TaskContext& ctx) {
  const int b = ctx.arg<int>();
  cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, b, b, 1.0,
              ctx.data_as<double>(0), b, ctx.data_as<double>(1), b);
}
TASKGRID_REGISTER(tile_trsm);

// A_ii := A_ii - A_ik A_ik^T  (in: A_ik, inout: A_ii; lower triangle only)
void tile_syrk(taskgrid::TaskContext& ctx) {
  const int b = ctx.arg<int>();
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, b, b, -1.0, ctx.data_as<double>(0), b, 1.0,
              ctx.data_as<double>(1), b);
}
TASKGRID_REGISTER(tile_syrk);

// A_ij := A_ij - A_ik A_jk^T  (in: A_ik, A_jk, inout: A_ij)
void tile_gemm(taskgrid::TaskContext& ctx) {
  const int b = ctx.arg<int>();
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, b, b, b, -1.0, ctx.data_as<double>(0), b,
              ctx.data_as<double>(1), b, 1.0, ctx.data_as<double>(2), b);
}
TASKGRID_REGISTER(tile_gemm);

// spmd: gathers a tile on rank 0 for the check (in: tile, out: rank 0's copy).

struct Settings {
  int n = 512;
  int tile = 128;
  bool check = true;
};

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const int value = std::atoi(argv[++i]);
    if (flag == "--n") {
      s.n = value;
    } else if (flag == "--tile") {
      s.tile = value;
    } else if (flag == "--check") {
      s.check = value != 0;
    } else {
      throw std::invalid_argument("unknown flag " + flag + " (--n N --tile B --check 0|1)");
    }
  }
  if (s.n <= 0 || s.tile <= 0 || s.n % s.tile != 0)
    throw std::invalid_argument("--n must be a positive multiple of --tile");
  return s;
}

// Symmetric, diagonally dominant (so positive definite): entries in [0, 1), n on the diagonal.
std::vector<double> make_matrix(int n) {
  std::vector<double> a(static_cast<size_t>(n) * n);
  std::mt19937_64 rng(20261127);
  std::uniform_real_distribution<double> draw(0.0, 1.0);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      const double v = draw(rng) + (i == j ? n : 0.0);
      a[static_cast<size_t>(j) * n + i] = v;
      a[static_cast<size_t>(i) * n + j] = v;
    }
  return a;
}

// ||A - L L^T||_F / ||A||_F, with L the lower triangle of the factored tiles.
double residual(const std::vector<double>& a, const std::vector<std::vector<double>>& tiles, int n,
                int b) {
  const int nt = n / b;
  std::vector<double> l(static_cast<size_t>(n) * n, 0.0);
  for (int tj = 0; tj < nt; ++tj)
    for (int ti = tj; ti < nt; ++ti) {
      const std::vector<double>& t = tiles[static_cast<size_t>(ti) * nt + tj];
      for (int j = 0; j < b; ++j)
        for (int i = 0; i < b; ++i) {
          const int row = ti * b + i, col = tj * b + j;
          if (row >= col) l[static_cast<size_t>(col) * n + row] = t[static_cast<size_t>(j) * b + i];
        }
    }
  std::vector<double> diff = a;  // A - L L^T
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, -1.0, l.data(), n, l.data(), n, 1.0,
              diff.data(), n);
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += diff[i] * diff[i];
    den += a[i] * a[i];
  }
  return std::sqrt(num / den);
}

// The owner of tile (i, j) over a P x Q grid of the ranks, P the largest
// divisor of the rank count up to its square root.
int block_cyclic_owner(int i, int j, int ranks) {
  int p = 1;
  for (int d = 1; d * d <= ranks; ++d)
    if (ranks % d == 0) p = d;
  const int q = ranks / p;
  return (i % p) * q + j % q;
}

int program(int argc, char** argv) {
  Settings s;
  try {
    s = parse(argc, argv);
  } catch (const std::invalid_argument& error) {
    std::fprintf(stderr, "cholesky: %s\n", error.what());
    return 2;
  }
  const int n = s.n, b = s.tile, nt = n / b;
  const bool spmd = taskgrid::is_spmd();
  const int ranks = taskgrid::num_ranks();
  const std::vector<double> a = make_matrix(n);

  // Tile (i, j) of the lower triangle, column-major, in its own buffer.
  const size_t tile_bytes = static_cast<size_t>(b) * b * sizeof(double);
  std::vector<std::vector<double>> tiles(static_cast<size_t>(nt) * nt);
  std::vector<taskgrid::DataHandle> h(tiles.size());
  const auto at = [nt](int i, int j) { return static_cast<size_t>(i) * nt + j; };
  for (int tj = 0; tj < nt; ++tj)
    for (int ti = tj; ti < nt; ++ti) {
      std::vector<double>& t = tiles[at(ti, tj)];
      t.resize(static_cast<size_t>(b) * b);
      for (int j = 0; j < b; ++j)
        for (int i = 0; i < b; ++i)
          t[static_cast<size_t>(j) * b + i] =
              a[static_cast<size_t>(tj * b + j) * n + static_cast<size_t>(ti * b + i)];
      h[at(ti, tj)] =
          spmd ? taskgrid::enter_data(t.data(), tile_bytes, block_cyclic_owner(ti, tj, ranks))
               : taskgrid::enter_data(t.data(), tile_bytes);
    }

  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < nt; ++k) {
    taskgrid::submit(tile_potrf, {taskgrid::inout(h[at(k, k)])}, b);
    for (int i = k + 1; i < nt; ++i)
      taskgrid::submit(tile_trsm, {taskgrid::in(h[at(k, k)]), taskgrid::inout(h[at(i, k)])}, b);
    for (int i = k + 1; i < nt; ++i) {
      taskgrid::submit(tile_syrk, {taskgrid::in(h[at(i, k)]), taskgrid::inout(h[at(i, i)])}, b);
      for (int j = k + 1; j < i; ++j)
        taskgrid::submit(
            tile_gemm,
            {taskgrid::in(h[at(i, k)]), taskgrid::in(h[at(j, k)]), taskgrid::inout(h[at(i, j)])},
            b);
    }
  }
  // spmd: the factor is complete once rank 0 holds every tile (its own
  // wait_all covers only its own tasks): every rank asks for each tile in
  // rank 0's buffer, as the same calls in the same order.
  if (spmd) {
    for (taskgrid::DataHandle handle : h)
      if (handle.id) taskgrid::exit_data(handle, 0);
  } else {
    taskgrid::wait_all();
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!spmd)
    for (taskgrid::DataHandle handle : h)
      if (handle.id) taskgrid::exit_data(handle);

  if (taskgrid::rank() != 0) return 0;
  std::printf("cholesky: %s, %d ranks, n %d, tile %d, %d tasks, time %.3f ms\n",
              spmd ? "spmd" : "cluster", ranks, n, b, nt * (nt + 1) * (nt + 2) / 6, ms);
  if (!s.check) return 0;
  const double r = residual(a, tiles, n, b);
  std::printf("cholesky: residual %.3e (limit %.0e): %s\n", r, kTolerance,
              r <= kTolerance ? "ok" : "FAILED");
  return r <= kTolerance ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // One BLAS thread per task: the runtime already runs tasks in parallel. Set
  // before start(): serving ranks never return to main.
  openblas_set_num_threads(1);
  return taskgrid::run(argc, argv, program, {.mode = taskgrid::Mode::from_environment});
}
