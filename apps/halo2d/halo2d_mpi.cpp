// halo2d-mpi: the 2-D 5-point Jacobi halo exchange in plain MPI, the
// reference for halo2d-task-comm (same decomposition, initial values, update
// and checksum: see halo2d_common.hpp).
//
//   mpiexec -n 4 halo2d-mpi [--nx 256 --ny 256 --iters 20 --px N --py N]
//
// Each rank keeps its block with a one-point ghost frame, twice (Jacobi).
// Per iteration it posts the four receives and sends (non-blocking), updates
// the points that need no ghost value while they travel, waits, then updates
// the block's outer rows and columns. --tiles is accepted and ignored, so
// both programs take the same command line. Rank 0 prints the checksum
// ("checksum %.17g") and the time of the iterations plus the checksum.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "halo2d_common.hpp"

namespace {

enum Side { kNorth = 0, kSouth = 1, kWest = 2, kEast = 3 };

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  halo2d::Options options;
  std::string error;
  if (!halo2d::parse_options(argc, argv, options, error) ||
      !halo2d::choose_process_grid(options, ranks, 1, error)) {
    if (rank == 0) std::fprintf(stderr, "halo2d-mpi: %s\n%s", error.c_str(), halo2d::usage_text());
    MPI_Finalize();
    return 2;
  }
  const int px = options.px, py = options.py;
  const int rx = rank % px, ry = rank / px;
  const int i0 = halo2d::split(options.ny, py, ry), bh = halo2d::split(options.ny, py, ry + 1) - i0;
  const int j0 = halo2d::split(options.nx, px, rx), bw = halo2d::split(options.nx, px, rx + 1) - j0;
  const size_t ld = static_cast<size_t>(bw) + 2;  // padded row length

  // Two padded copies; ghost cells on the grid's border keep the boundary values.
  std::vector<double> a((static_cast<size_t>(bh) + 2) * ld, halo2d::kOtherBoundary);
  std::vector<double> b(a.size(), halo2d::kOtherBoundary);
  auto at = [ld](std::vector<double>& v, int i, int j) -> double& {
    return v[static_cast<size_t>(i + 1) * ld + static_cast<size_t>(j + 1)];
  };
  if (ry == 0)
    for (int j = 0; j < bw; ++j) at(a, -1, j) = at(b, -1, j) = halo2d::kTopBoundary;
  for (int i = 0; i < bh; ++i)
    for (int j = 0; j < bw; ++j) at(a, i, j) = halo2d::initial_value(i0 + i, j0 + j);

  int neighbour[4];
  neighbour[kNorth] = ry > 0 ? rank - px : MPI_PROC_NULL;
  neighbour[kSouth] = ry < py - 1 ? rank + px : MPI_PROC_NULL;
  neighbour[kWest] = rx > 0 ? rank - 1 : MPI_PROC_NULL;
  neighbour[kEast] = rx < px - 1 ? rank + 1 : MPI_PROC_NULL;
  std::vector<double> send_west(static_cast<size_t>(bh)), send_east(send_west.size());
  std::vector<double> recv_west(send_west.size()), recv_east(send_west.size());

  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  std::vector<double>* cur = &a;
  std::vector<double>* nxt = &b;
  for (int iter = 0; iter < options.iters; ++iter) {
    std::vector<double>& u = *cur;
    std::vector<double>& v = *nxt;
    // The tag is the direction the message travels.
    MPI_Request requests[8];
    MPI_Irecv(&at(u, -1, 0), bw, MPI_DOUBLE, neighbour[kNorth], kSouth, MPI_COMM_WORLD,
              &requests[0]);
    MPI_Irecv(&at(u, bh, 0), bw, MPI_DOUBLE, neighbour[kSouth], kNorth, MPI_COMM_WORLD,
              &requests[1]);
    MPI_Irecv(recv_west.data(), bh, MPI_DOUBLE, neighbour[kWest], kEast, MPI_COMM_WORLD,
              &requests[2]);
    MPI_Irecv(recv_east.data(), bh, MPI_DOUBLE, neighbour[kEast], kWest, MPI_COMM_WORLD,
              &requests[3]);
    for (int i = 0; i < bh; ++i) {
      send_west[static_cast<size_t>(i)] = at(u, i, 0);
      send_east[static_cast<size_t>(i)] = at(u, i, bw - 1);
    }
    MPI_Isend(&at(u, 0, 0), bw, MPI_DOUBLE, neighbour[kNorth], kNorth, MPI_COMM_WORLD,
              &requests[4]);
    MPI_Isend(&at(u, bh - 1, 0), bw, MPI_DOUBLE, neighbour[kSouth], kSouth, MPI_COMM_WORLD,
              &requests[5]);
    MPI_Isend(send_west.data(), bh, MPI_DOUBLE, neighbour[kWest], kWest, MPI_COMM_WORLD,
              &requests[6]);
    MPI_Isend(send_east.data(), bh, MPI_DOUBLE, neighbour[kEast], kEast, MPI_COMM_WORLD,
              &requests[7]);

    auto row = [&](int i, int first, int last) {
      halo2d::stencil_row(&at(u, i - 1, 0), &at(u, i, 0), &at(u, i + 1, 0), at(u, i, -1),
                          at(u, i, bw), &at(v, i, 0), bw, first, last);
    };
    // Points that need no ghost value, while the messages travel.
    for (int i = 1; i < bh - 1; ++i) row(i, 1, bw - 1);
    MPI_Waitall(8, requests, MPI_STATUSES_IGNORE);
    if (neighbour[kWest] != MPI_PROC_NULL)
      for (int i = 0; i < bh; ++i) at(u, i, -1) = recv_west[static_cast<size_t>(i)];
    if (neighbour[kEast] != MPI_PROC_NULL)
      for (int i = 0; i < bh; ++i) at(u, i, bw) = recv_east[static_cast<size_t>(i)];
    // The block's outer rows and columns.
    row(0, 0, bw);
    if (bh > 1) row(bh - 1, 0, bw);
    for (int i = 1; i < bh - 1; ++i) {
      row(i, 0, 1);
      row(i, std::max(bw - 1, 1), bw);
    }
    std::swap(cur, nxt);
  }

  double local = 0.0;
  for (int i = 0; i < bh; ++i) local = halo2d::accumulate_row(local, &at(*cur, i, 0), bw);
  std::vector<double> slots(static_cast<size_t>(ranks), 0.0);
  slots[static_cast<size_t>(rank)] = local;
  MPI_Allreduce(MPI_IN_PLACE, slots.data(), ranks, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rank == 0) {
    double total = 0.0;
    for (double slot : slots) total += slot;
    std::printf("halo2d-mpi: nx %d ny %d iters %d px %d py %d ranks %d\n", options.nx, options.ny,
                options.iters, px, py, ranks);
    std::printf("checksum %.17g\n", total);
    std::printf("time_s %.6f\n", seconds);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
