// The miniAMR command line: the reference's flags, names and defaults, so
// that a deck written for the public miniAMR runs unchanged on all three of
// our programs (miniamr-mpi, miniamr-mpi_omp, miniamr-taskgrid).
#pragma once

#include <array>
#include <string>
#include <vector>

namespace miniamr {

// One object driving refinement: the reference's `--object` arguments in
// their order (type bounce cx cy cz mx my mz sx sy sz ix iy iz).
struct Object {
  int type = 0;
  bool bounce = false;
  std::array<double, 3> center{};
  std::array<double, 3> move{};  // added to the center per timestep
  std::array<double, 3> size{};  // half extents
  std::array<double, 3> grow{};  // added to the size per timestep
};

struct Params {
  int max_blocks = 500;  // per rank, as in the reference (only checked, see mesh.cpp)
  int num_refine = 5;
  int block_change = 0;  // 0: num_refine
  bool uniform_refine = false;
  int nx = 10, ny = 10, nz = 10;  // cells per block and direction
  int num_vars = 40;
  int comm_vars = 0;                       // variables exchanged together; 0: all
  int init_x = 1, init_y = 1, init_z = 1;  // level-0 blocks per rank and direction
  int npx = 1, npy = 1, npz = 1;
  int inbalance = 0;  // percent
  int lb_opt = 1;
  int refine_freq = 5;
  int error_tol = 8;  // checksums must agree within 10^-error_tol
  int num_tsteps = 20;
  int stages_per_ts = 20;
  int checksum_freq = 5;
  int stencil = 7;
  int report_perf = 12;
  bool report_diffusion = false;
  bool refine_ghost = false;
  bool send_faces = false;
  bool separate_buffers = false;
  // TaskGrid's own: communication tasks per neighbour and direction (the
  // seed's limit), and whether checksums are checked late (Section IV-C).
  int max_comm_tasks = 8;
  std::vector<Object> objects;

  int ranks() const { return npx * npy * npz; }
  int comm_group() const { return comm_vars > 0 ? comm_vars : num_vars; }
};

// Parses argv[1..argc) as the reference does (`--flag value`). On a bad
// flag or value it throws std::invalid_argument naming the flag.
Params parse_params(int argc, const char* const* argv);

// Checks the values against each other and against the number of ranks the
// job has; throws std::invalid_argument with the cause.
void check_params(const Params& params, int job_ranks);

std::string usage_text();

}  // namespace miniamr
