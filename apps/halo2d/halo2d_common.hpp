// What the two halo2d programs share, so that they compute bit-identical
// results: options, the decomposition, initial and boundary values, the
// 5-point update and the checksum's summation order.
//
// The grid has ny rows and nx columns (row-major). Ranks form a px x py
// process grid (rank = ry * px + rx); rank (rx, ry) owns a block of rows
// [split(ny, py, ry), split(ny, py, ry + 1)) and columns likewise. The
// TaskGrid program further splits each block into tiles x tiles tiles.
//
// One iteration is Jacobi: every point's new value depends only on itself
// and its four neighbours from the previous iteration, through one
// expression evaluated in a fixed order, so no decomposition or tiling
// changes a single bit. Outside the grid the values are fixed (1 above the
// top row, 0 elsewhere).
//
// The checksum is the sum of all points: each rank sums its block in
// row-major order; the per-rank sums are combined by an allreduce of a
// vector with one slot per rank (x + 0 is exact, so the reduction order does
// not matter), and rank 0 adds the slots in rank order.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace halo2d {

struct Options {
  int nx = 256;
  int ny = 256;
  int iters = 20;
  int px = 0;  // 0: chosen from the number of ranks
  int py = 0;
  int tiles = 2;  // per dimension, per rank (TaskGrid program only)
};

inline const char* usage_text() {
  return "options: --nx N --ny N --iters N --px N --py N --tiles N\n"
         "  grid nx x ny (default 256 x 256), iters Jacobi iterations (default 20),\n"
         "  px x py process grid = number of ranks (default: as square as possible),\n"
         "  tiles x tiles tasks per rank block (TaskGrid program; default 2)\n";
}

// Parses the options; on a bad one returns false with `error` set.
inline bool parse_options(int argc, char** argv, Options& options, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    int* target = nullptr;
    if (flag == "--nx") target = &options.nx;
    if (flag == "--ny") target = &options.ny;
    if (flag == "--iters") target = &options.iters;
    if (flag == "--px") target = &options.px;
    if (flag == "--py") target = &options.py;
    if (flag == "--tiles") target = &options.tiles;
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
    const long minimum = flag == "--iters" || flag == "--px" || flag == "--py" ? 0 : 1;
    if (*end != '\0' || value < minimum || value > (1L << 24)) {
      error = "option " + flag + ": '" + argv[i] + "' is not a whole number from " +
              std::to_string(minimum) + " to " + std::to_string(1L << 24);
      return false;
    }
    *target = static_cast<int>(value);
  }
  return true;
}

// Completes px and py for `ranks` ranks (as square as possible, px >= py)
// and checks the decomposition: every rank block (and tile) is non-empty.
inline bool choose_process_grid(Options& options, int ranks, int tiles, std::string& error) {
  if (options.px == 0 && options.py == 0) {
    int py = 1;
    for (int d = 1; d * d <= ranks; ++d)
      if (ranks % d == 0) py = d;
    options.py = py;
    options.px = ranks / py;
  } else if (options.px == 0) {
    options.px = ranks % options.py == 0 ? ranks / options.py : 0;
  } else if (options.py == 0) {
    options.py = ranks % options.px == 0 ? ranks / options.px : 0;
  }
  if (options.px * options.py != ranks) {
    error = "the process grid px x py must have one rank per block (" + std::to_string(ranks) +
            " ranks)";
    return false;
  }
  if (options.nx < options.px * tiles || options.ny < options.py * tiles) {
    error = "the grid " + std::to_string(options.nx) + " x " + std::to_string(options.ny) +
            " is too small for " + std::to_string(options.px) + " x " + std::to_string(options.py) +
            " blocks of " + std::to_string(tiles) + " x " + std::to_string(tiles) + " tiles";
    return false;
  }
  return true;
}

// First index of part `k` when `n` items are split into `parts` parts.
inline int split(int n, int parts, int k) {
  return static_cast<int>(static_cast<int64_t>(n) * k / parts);
}

// The initial value of global point (row i, column j): a hash in [0, 1).
inline double initial_value(int i, int j) {
  uint64_t x = (static_cast<uint64_t>(static_cast<uint32_t>(i)) << 32) | static_cast<uint32_t>(j);
  x += 0x9E3779B97F4A7C15ULL;  // splitmix64
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

// Fixed values just outside the grid.
constexpr double kTopBoundary = 1.0;
constexpr double kOtherBoundary = 0.0;

// The update of one point; the evaluation order is part of the contract.
inline double update(double centre, double up, double down, double left, double right) {
  return ((((centre + up) + down) + left) + right) * 0.2;
}

// Updates columns [j0, j1) of a row of width w: `mid` is the row, `up` and
// `down` the rows above and below, `left` and `right` the values just
// outside its first and last column.
inline void stencil_row(const double* up, const double* mid, const double* down, double left,
                        double right, double* out, int w, int j0, int j1) {
  int j = j0;
  if (j == 0 && j < j1) {
    out[0] = update(mid[0], up[0], down[0], left, w > 1 ? mid[1] : right);
    j = 1;
  }
  const int inner_end = j1 < w - 1 ? j1 : w - 1;
  for (; j < inner_end; ++j) out[j] = update(mid[j], up[j], down[j], mid[j - 1], mid[j + 1]);
  if (j1 == w && w - 1 >= j && w > 1)
    out[w - 1] = update(mid[w - 1], up[w - 1], down[w - 1], mid[w - 2], right);
}

// Adds a row's values to `sum`, left to right.
inline double accumulate_row(double sum, const double* row, int w) {
  for (int j = 0; j < w; ++j) sum += row[j];
  return sum;
}

}  // namespace halo2d
