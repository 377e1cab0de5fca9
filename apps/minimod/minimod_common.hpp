// What the three minimod programs share, so that they compute bit-identical
// wavefields: options, the slab decomposition, the velocity model, the
// stencil, the Ricker source, the time loop, the checksum and the report.
// Only how a slab's ghost planes are filled differs (one-sided put in
// taskgrid-minimod, send/receive in taskgrid-minimod-mpi, nothing in
// taskgrid-minimod-serial): each program supplies it as a `SlabStore`.
//
// The acoustic isotropic constant-density wave equation on an nx x ny x nz
// grid (x fastest, z slowest), second order in time, eighth order in space:
//   u_next = 2 u - u_prev + (v dt)^2 * Laplacian(u)   (+ the source term)
// with zero (Dirichlet) values outside the grid.
//
// Rank r of P owns the z-planes [first_plane(r), first_plane(r + 1)) (slabs
// differ by at most one plane). A slab is stored with kRadius ghost planes
// below and above, and every plane with kRadius zero columns and rows around
// it, so the stencil needs no branch: ghost planes at the grid's bottom and
// top, and the padding, stay zero. Two wavefields alternate: the update
// overwrites u_prev with u_next point by point.
//
// Every point's new value is one expression over the same operands in a
// fixed order (build with -ffp-contract=off), so neither the decomposition
// nor the number of OpenMP threads changes a bit. The checksum is the sum of
// u^2 over the grid (a plain sum would hardly see the wave's shape: the
// Laplacian sums to zero away from the boundary): each rank sums its planes
// row by row into one slot per plane of an nz-vector that is zero elsewhere;
// the vectors are summed onto rank 0 (x + 0 is exact) and rank 0 adds the
// slots in plane order, as the serial program does.
#pragma once

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

namespace minimod {

// The stencil's half-width: also the halo's thickness in planes.
constexpr int kRadius = 4;

struct Options {
  int nx = 128;
  int ny = 128;
  int nz = 128;
  int steps = 100;
  double f0 = 10.0;  // Hz
};

inline const char* usage_text() {
  return "options: --nx N --ny N --nz N --steps S --f0 HZ\n"
         "  an nx x ny x nz grid (default 128 each; z is split over the ranks, every\n"
         "  slab at least 4 planes thick when there is more than one rank),\n"
         "  S time steps (default 100), f0 the Ricker source's peak frequency (default 10)\n";
}

// Parses the options; on a bad one returns false with `error` set.
inline bool parse_options(int argc, char** argv, Options& options, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    int* whole = nullptr;
    if (flag == "--nx") whole = &options.nx;
    if (flag == "--ny") whole = &options.ny;
    if (flag == "--nz") whole = &options.nz;
    if (flag == "--steps") whole = &options.steps;
    if (!whole && flag != "--f0") {
      error = "unknown option '" + flag + "'";
      return false;
    }
    if (i + 1 >= argc) {
      error = "option " + flag + " needs a value";
      return false;
    }
    const char* text = argv[++i];
    char* end = nullptr;
    if (!whole) {
      const double value = std::strtod(text, &end);
      if (*end != '\0' || !(value > 0.0 && value <= 1e4)) {
        error = "option --f0: '" + std::string(text) + "' is not a frequency above 0, at most 1e4";
        return false;
      }
      options.f0 = value;
      continue;
    }
    const long value = std::strtol(text, &end, 10);
    const long minimum = flag == "--steps" ? 0 : 1;
    const long maximum = flag == "--steps" ? 1L << 24 : 1L << 14;
    if (*end != '\0' || value < minimum || value > maximum) {
      error = "option " + flag + ": '" + text + "' is not a whole number from " +
              std::to_string(minimum) + " to " + std::to_string(maximum);
      return false;
    }
    *whole = static_cast<int>(value);
  }
  return true;
}

// A slab thinner than the halo would need planes from beyond its neighbours:
// such decompositions are refused rather than exchanged over several ranks.
inline bool check_decomposition(const Options& options, int ranks, std::string& error) {
  const int thinnest = options.nz / ranks;
  if (ranks == 1 || thinnest >= kRadius) return true;
  error = "--nz " + std::to_string(options.nz) + " over " + std::to_string(ranks) +
          " ranks gives slabs of " + std::to_string(thinnest) + " planes, thinner than the " +
          std::to_string(kRadius) + "-plane halo: use at most " +
          std::to_string(std::max(options.nz / kRadius, 1)) + " ranks";
  return false;
}

// The slab decomposition, seen from `rank`; offsets and sizes in doubles.
struct Layout {
  int nx = 0;
  int ny = 0;
  int nz = 0;
  int ranks = 1;
  int rank = 0;

  int first_plane(int slab) const {
    return static_cast<int>(static_cast<int64_t>(nz) * slab / ranks);
  }
  int planes(int slab) const { return first_plane(slab + 1) - first_plane(slab); }
  int my_planes() const { return planes(rank); }
  int max_planes() const { return (nz + ranks - 1) / ranks; }
  // Neighbours, -1 at the grid's bottom and top.
  int lower() const { return rank > 0 ? rank - 1 : -1; }
  int upper() const { return rank + 1 < ranks ? rank + 1 : -1; }

  size_t row_stride() const { return static_cast<size_t>(nx) + 2 * kRadius; }
  size_t plane_stride() const { return row_stride() * (static_cast<size_t>(ny) + 2 * kRadius); }
  // A slab of `plane_count` planes with its ghost planes.
  size_t slab_elements(int plane_count) const {
    return static_cast<size_t>(plane_count + 2 * kRadius) * plane_stride();
  }
  size_t halo_elements() const { return kRadius * plane_stride(); }
  // Where the halo planes start in slab `slab`: ghosts below, its own
  // bottom and top kRadius planes, ghosts above.
  size_t lower_ghosts() const { return 0; }
  size_t bottom_edge() const { return halo_elements(); }
  size_t top_edge(int slab) const { return static_cast<size_t>(planes(slab)) * plane_stride(); }
  size_t upper_ghosts(int slab) const {
    return static_cast<size_t>(planes(slab) + kRadius) * plane_stride();
  }
  // Point (x, y) of plane `local_plane` (0: the slab's first own plane).
  size_t index(int local_plane, int y, int x) const {
    return static_cast<size_t>(local_plane + kRadius) * plane_stride() +
           static_cast<size_t>(y + kRadius) * row_stride() + static_cast<size_t>(x + kRadius);
  }
};

// -------------------------------------------------------------- model ----

constexpr double kSpacing = 10.0;          // m, on every axis
constexpr double kUpperVelocity = 1500.0;  // m/s, the upper two thirds in z
constexpr double kLowerVelocity = 2500.0;  // m/s, below
// Well inside the stability limit of this stencil (v dt / h < 0.45).
constexpr double kTimeStep = 0.3 * kSpacing / kLowerVelocity;  // s

inline double velocity(int z, int nz) { return 3 * z < 2 * nz ? kUpperVelocity : kLowerVelocity; }

// (v dt)^2 at every point of this rank's slab, in the slab's layout (zero in
// the ghost planes and the padding, which are never updated).
inline std::vector<double> velocity_term(const Layout& layout) {
  std::vector<double> term(layout.slab_elements(layout.my_planes()), 0.0);
  const int first = layout.first_plane(layout.rank);
  for (int z = 0; z < layout.my_planes(); ++z) {
    const double courant = velocity(first + z, layout.nz) * kTimeStep;
    for (int y = 0; y < layout.ny; ++y)
      for (int x = 0; x < layout.nx; ++x) term[layout.index(z, y, x)] = courant * courant;
  }
  return term;
}

// The Ricker wavelet of peak frequency f0 at time t, delayed by 1 / f0 so
// that it starts near zero.
inline double ricker(double t, double f0) {
  const double arg = std::numbers::pi * f0 * (t - 1.0 / f0);
  const double a = arg * arg;
  return (1.0 - 2.0 * a) * std::exp(-a);
}

// The eighth-order second-derivative weights, divided by h^2 per axis.
struct Stencil {
  double centre = 0.0;  // c0 summed over the three axes
  double x[kRadius + 1] = {};
  double y[kRadius + 1] = {};
  double z[kRadius + 1] = {};

  static Stencil with_spacing(double hx, double hy, double hz) {
    constexpr double c[kRadius + 1] = {-205.0 / 72.0, 8.0 / 5.0, -1.0 / 5.0, 8.0 / 315.0,
                                       -1.0 / 560.0};
    Stencil stencil;
    stencil.centre = c[0] / (hx * hx) + c[0] / (hy * hy) + c[0] / (hz * hz);
    for (int k = 1; k <= kRadius; ++k) {
      stencil.x[k] = c[k] / (hx * hx);
      stencil.y[k] = c[k] / (hy * hy);
      stencil.z[k] = c[k] / (hz * hz);
    }
    return stencil;
  }
};

// One time step on this rank's slab: `prev` becomes u_next, computed from
// `cur` (whose ghost planes hold the neighbours' edge planes), then the
// source is added where the grid's centre is in the slab.
inline void advance(const Layout& layout, const Stencil& stencil, const double* velocity_terms,
                    const double* cur, double* prev, int step, double f0) {
  const auto sy = static_cast<ptrdiff_t>(layout.row_stride());
  const auto sz = static_cast<ptrdiff_t>(layout.plane_stride());
  const int planes = layout.my_planes(), ny = layout.ny, nx = layout.nx;
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = 0; z < planes; ++z) {
    for (int y = 0; y < ny; ++y) {
      const size_t row = layout.index(z, y, 0);
      const double* u = cur + row;
      const double* term = velocity_terms + row;
      double* out = prev + row;
      for (int x = 0; x < nx; ++x) {
        const double* p = u + x;
        double laplacian = stencil.centre * p[0];
        for (int k = 1; k <= kRadius; ++k)
          laplacian += stencil.x[k] * (p[-k] + p[k]) + stencil.y[k] * (p[-k * sy] + p[k * sy]) +
                       stencil.z[k] * (p[-k * sz] + p[k * sz]);
        out[x] = 2.0 * p[0] - out[x] + term[x] * laplacian;
      }
    }
  }
  const int source_plane = layout.nz / 2 - layout.first_plane(layout.rank);
  if (source_plane >= 0 && source_plane < planes) {
    const size_t at = layout.index(source_plane, ny / 2, nx / 2);
    prev[at] += velocity_terms[at] * ricker(step * kTimeStep, f0);
  }
}

// One slot per grid plane: the sum of u^2 over this rank's planes (row by
// row, x ascending), zero for the other ranks' planes.
inline std::vector<double> plane_sums(const Layout& layout, const double* field) {
  std::vector<double> sums(static_cast<size_t>(layout.nz), 0.0);
  const int first = layout.first_plane(layout.rank), planes = layout.my_planes();
#pragma omp parallel for schedule(static)
  for (int z = 0; z < planes; ++z) {
    double sum = 0.0;
    for (int y = 0; y < layout.ny; ++y) {
      const double* row = field + layout.index(z, y, 0);
      for (int x = 0; x < layout.nx; ++x) sum += row[x] * row[x];
    }
    sums[static_cast<size_t>(first + z)] = sum;
  }
  return sums;
}

inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

// ------------------------------------------------------------- driver ----

// Where a program keeps its two wavefields (each a slab with ghost planes,
// at least layout.slab_elements(my_planes()) doubles), how it fills their
// ghost planes, and the few collectives the driver needs (results on rank 0).
template <typename Slabs>
concept SlabStore = requires(Slabs slabs, int index, std::vector<double>& values) {
  { slabs.field(index) } -> std::same_as<double*>;  // index 0 or 1
  slabs.exchange_halo(index);  // field `index`'s ghosts <- the neighbours' edge planes
  slabs.barrier();
  slabs.max_on_root(values);  // element by element, in place
  slabs.sum_on_root(values);
};

// Zeroes both wavefields, runs the time steps (each timed on every rank; a
// step's time is the slowest rank's), and prints the report on rank 0.
template <SlabStore Slabs>
void run(const Options& options, const Layout& layout, Slabs& slabs, const char* program) {
  const Stencil stencil = Stencil::with_spacing(kSpacing, kSpacing, kSpacing);
  const std::vector<double> velocity_terms = velocity_term(layout);
  for (int index = 0; index < 2; ++index)
    std::fill_n(slabs.field(index), layout.slab_elements(layout.my_planes()), 0.0);
  slabs.barrier();  // nobody's ghosts are written before their owner has zeroed them

  std::vector<double> step_seconds(static_cast<size_t>(options.steps));
  for (int step = 0; step < options.steps; ++step) {
    const int current = step % 2;
    const auto start = std::chrono::steady_clock::now();
    slabs.exchange_halo(current);
    advance(layout, stencil, velocity_terms.data(), slabs.field(current), slabs.field(1 - current),
            step, options.f0);
    step_seconds[static_cast<size_t>(step)] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  slabs.max_on_root(step_seconds);
  std::vector<double> sums = plane_sums(layout, slabs.field(options.steps % 2));
  slabs.sum_on_root(sums);

  if (layout.rank != 0) return;
  double checksum = 0.0;
  for (double sum : sums) checksum += sum;
  std::printf("program %s\n", program);
  std::printf("ranks %d\n", layout.ranks);
  std::printf("threads %d\n", omp_get_max_threads());
  std::printf("grid %d %d %d\n", layout.nx, layout.ny, layout.nz);
  std::printf("steps %d\n", options.steps);
  std::printf("f0 %.17g\n", options.f0);
  std::printf("time_per_step_s %.6g\n", median(step_seconds));
  std::printf("checksum %.17g\n", checksum);
  std::fflush(stdout);
}

// The frame of every program's main, after MPI (if any) is up: the options
// (on a bad one rank 0 prints why and the usage, and it returns 2), then
// `body(options, layout)`. An exception is reported as the runtime reports
// errors, then `abort_job()` ends the job (MPI_Abort in the MPI programs).
template <typename Body, typename AbortJob>
int guarded_main(int argc, char** argv, int rank, int ranks, const char* program, Body&& body,
                 AbortJob&& abort_job) {
  try {
    Options options;
    std::string error;
    if (!parse_options(argc, argv, options, error) || !check_decomposition(options, ranks, error)) {
      if (rank == 0) std::fprintf(stderr, "%s: %s\n%s", program, error.c_str(), usage_text());
      return 2;
    }
    const Layout layout{options.nx, options.ny, options.nz, ranks, rank};
    body(options, layout);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: taskgrid: rank %d: %s\n", rank, error.what());
    std::fflush(stderr);
    // MPICH's launcher may drop output it has not forwarded when the job is
    // torn down: give it a moment before the abort.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    abort_job();
  }
  return 1;
}

}  // namespace minimod
