// halo2d-task-comm: the 2-D 5-point Jacobi halo exchange written with
// TaskGrid tasks and task-aware communication (taskgrid/task_comm.hpp).
//
//   [TASKGRID_MODE=spmd] mpiexec -n 4 halo2d-task-comm [--nx 256 --ny 256 --iters 20
//                                                     --px N --py N --tiles 2]
//
// Same decomposition, initial values, update and checksum as halo2d-mpi (see
// halo2d_common.hpp), so both print the same "checksum %.17g" line. Each
// rank's block is split into tiles x tiles tiles; every tile is a TaskGrid
// handle owned by its rank, twice (Jacobi: the iteration reads one and
// writes the other). Per iteration and tile:
//
//   pack     in(tile)            -> out(edge[side])   boundary row/column
//   send     in(edge[side])      task_comm::isend to the neighbour's rank
//   recv     out(halo[side])     task_comm::irecv, on the neighbour's rank
//   compute  in(tile), in(ghosts) -> out(next tile)   unpack + update
//
// A ghost comes from the neighbour tile's edge handle when the neighbour is
// on the same rank, else from the halo handle its receive task filled. A
// message's channel is the direction it travels (4 channels), so the four
// directions post independently; every message uses the same tag, and
// several tiles of a rank talk to the same peer at once: the runtime keeps
// them apart by posting each channel's operations in submission order.
// The checksum is one task per rank on a channel of its own (channel 4):
// it sums the rank's block and joins a task_comm::iallreduce. Every rank
// then fetches the tiles (the owner's host buffers receive them), checks its
// fetched block against its slot of the reduction, and rank 0 prints.
//
// In spmd mode every rank runs main and submits the whole sequence, every
// rank's tasks with rank hints. The program needs 5 channels and sets
// TASKGRID_CHANNELS=5 unless the environment already sets it. It also runs
// in cluster mode (rank 0 submits, the data starts and ends on rank 0).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <taskgrid/task_comm.hpp>
#include <taskgrid/taskgrid.hpp>
#include <vector>

#include "halo2d_common.hpp"

namespace {

using taskgrid::DataAccess;
using taskgrid::DataHandle;
using taskgrid::TaskContext;

enum Side { kNorth = 0, kSouth = 1, kWest = 2, kEast = 3 };
constexpr int opposite(int side) { return side ^ 1; }
// A message leaving a tile through `side` travels in that direction and
// uses channel `side`; the checksum has its own channel.
constexpr int kChecksumChannel = 4;
constexpr int kChannelsNeeded = 5;
// One tag for every halo message: tiles and directions are told apart by
// channel and submission order, not by tags.
constexpr int kHaloTag = 1;

// ------------------------------------------------------------------ tasks --

struct PackArgs {
  int32_t h, w, side;
};

// in(tile) -> out(edge): the tile's boundary row or column on one side.
void halo2d_pack(TaskContext& ctx) {
  const auto args = ctx.arg<PackArgs>();
  const double* tile = ctx.data_as<const double>(0);
  double* edge = ctx.data_as<double>(1);
  const size_t w = static_cast<size_t>(args.w), h = static_cast<size_t>(args.h);
  switch (args.side) {
    case kNorth:
      std::memcpy(edge, tile, w * sizeof(double));
      break;
    case kSouth:
      std::memcpy(edge, tile + (h - 1) * w, w * sizeof(double));
      break;
    case kWest:
      for (size_t i = 0; i < h; ++i) edge[i] = tile[i * w];
      break;
    default:
      for (size_t i = 0; i < h; ++i) edge[i] = tile[i * w + w - 1];
      break;
  }
}

struct ExchangeArgs {
  int32_t peer, count;
};

// in(edge): sends it; the task completes when the send has.
void halo2d_send(TaskContext& ctx) {
  const auto args = ctx.arg<ExchangeArgs>();
  taskgrid::task_comm::isend(ctx, ctx.data(0), args.count, MPI_DOUBLE, args.peer, kHaloTag);
}

// out(halo): receives into it; its readers start once the message is in.
void halo2d_recv(TaskContext& ctx) {
  const auto args = ctx.arg<ExchangeArgs>();
  taskgrid::task_comm::irecv(ctx, ctx.data(0), args.count, MPI_DOUBLE, args.peer, kHaloTag);
}

struct ComputeArgs {
  int32_t h, w;
  uint32_t sides;  // bit s: an input for side s follows the tile (order N, S, W, E)
};

// in(tile), in(ghost) per inner side -> out(next tile).
void halo2d_compute(TaskContext& ctx) {
  const auto args = ctx.arg<ComputeArgs>();
  const int h = args.h, w = args.w;
  const double* tile = ctx.data_as<const double>(0);
  const double* ghost[4] = {};
  size_t index = 1;
  for (int side = 0; side < 4; ++side)
    if (args.sides & (1u << side)) ghost[side] = ctx.data_as<const double>(index++);
  double* out = ctx.data_as<double>(index);
  // The grid's border: rows of fixed values.
  thread_local std::vector<double> top, bottom;
  if (!ghost[kNorth]) {
    top.assign(static_cast<size_t>(w), halo2d::kTopBoundary);
    ghost[kNorth] = top.data();
  }
  if (!ghost[kSouth]) {
    bottom.assign(static_cast<size_t>(w), halo2d::kOtherBoundary);
    ghost[kSouth] = bottom.data();
  }
  const size_t ld = static_cast<size_t>(w);
  for (int i = 0; i < h; ++i) {
    const size_t row = static_cast<size_t>(i) * ld;
    const double* up = i > 0 ? tile + row - ld : ghost[kNorth];
    const double* down = i < h - 1 ? tile + row + ld : ghost[kSouth];
    const double left = ghost[kWest] ? ghost[kWest][i] : halo2d::kOtherBoundary;
    const double right = ghost[kEast] ? ghost[kEast][i] : halo2d::kOtherBoundary;
    halo2d::stencil_row(up, tile + row, down, left, right, out + row, w, 0, w);
  }
}

struct ChecksumArgs {
  int32_t rank, ranks, tiles, block_h, block_w;
};

// in(the rank's tiles, row-major) -> out(slots): sums the block in row-major
// order into this rank's slot of a zeroed vector and allreduces it. The
// output holds [contribution | result], ranks doubles each.
void halo2d_checksum(TaskContext& ctx) {
  const auto args = ctx.arg<ChecksumArgs>();
  const int t = args.tiles;
  double sum = 0.0;
  for (int ti = 0; ti < t; ++ti) {
    const int th = halo2d::split(args.block_h, t, ti + 1) - halo2d::split(args.block_h, t, ti);
    for (int i = 0; i < th; ++i) {
      for (int tj = 0; tj < t; ++tj) {
        const int tw = halo2d::split(args.block_w, t, tj + 1) - halo2d::split(args.block_w, t, tj);
        const double* tile = ctx.data_as<const double>(static_cast<size_t>(ti * t + tj));
        sum = halo2d::accumulate_row(sum, tile + static_cast<size_t>(i) * static_cast<size_t>(tw),
                                     tw);
      }
    }
  }
  double* slots = ctx.data_as<double>(static_cast<size_t>(t * t));
  const size_t n = static_cast<size_t>(args.ranks);
  for (size_t r = 0; r < n; ++r) slots[r] = 0.0;
  slots[static_cast<size_t>(args.rank)] = sum;
  // The contribution lives in the task's output, valid until the task completes.
  taskgrid::task_comm::iallreduce(ctx, slots, slots + n, args.ranks, MPI_DOUBLE, MPI_SUM);
}

TASKGRID_REGISTER(halo2d_pack);
TASKGRID_REGISTER(halo2d_send);
TASKGRID_REGISTER(halo2d_recv);
TASKGRID_REGISTER(halo2d_compute);
TASKGRID_REGISTER(halo2d_checksum);

// ------------------------------------------------------------------ setup --

struct Tile {
  int rank = 0;
  int i0 = 0, j0 = 0;  // first global row and column
  int h = 0, w = 0;
  int neighbour[4] = {-1, -1, -1, -1};  // tile index, -1 on the grid's border
  DataHandle grid[2];                   // Jacobi: even and odd iterations
  DataHandle edge[4];                   // packed boundary (sides with a neighbour)
  DataHandle halo[4];                   // received ghost (sides with a remote neighbour)
  std::vector<double> host;             // the owner's copy (spmd), rank 0's (cluster)
};

int edge_length(const Tile& tile, int side) {
  return side == kNorth || side == kSouth ? tile.w : tile.h;
}

int fail(const std::string& message) {
  if (taskgrid::rank() == 0)
    std::fprintf(stderr, "halo2d-task-comm: %s\n%s", message.c_str(), halo2d::usage_text());
  taskgrid::finish();
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  setenv("TASKGRID_CHANNELS", std::to_string(kChannelsNeeded).c_str(), 0);
  taskgrid::start(&argc, &argv, taskgrid::Mode::from_environment);  // both modes
  const int ranks = taskgrid::num_ranks(), me = taskgrid::rank();
  const bool spmd = taskgrid::is_spmd();

  halo2d::Options options;
  std::string error;
  if (!halo2d::parse_options(argc, argv, options, error) ||
      !halo2d::choose_process_grid(options, ranks, options.tiles, error))
    return fail(error);
  if (std::atoi(std::getenv("TASKGRID_CHANNELS")) < kChannelsNeeded)
    return fail("needs TASKGRID_CHANNELS >= " + std::to_string(kChannelsNeeded) +
                " (4 halo directions and the checksum)");
  const int px = options.px, py = options.py, t = options.tiles;

  // Tiles in rank order, each rank's in row-major order: index (r * t + ti) * t + tj.
  std::vector<Tile> tiles(static_cast<size_t>(ranks * t * t));
  auto tile_index = [&](int gti, int gtj) {  // global tile row and column
    const int r = (gti / t) * px + gtj / t;
    return (r * t + gti % t) * t + gtj % t;
  };
  for (int r = 0; r < ranks; ++r) {
    const int rx = r % px, ry = r / px;
    const int bi = halo2d::split(options.ny, py, ry),
              bh = halo2d::split(options.ny, py, ry + 1) - bi;
    const int bj = halo2d::split(options.nx, px, rx),
              bw = halo2d::split(options.nx, px, rx + 1) - bj;
    for (int ti = 0; ti < t; ++ti) {
      for (int tj = 0; tj < t; ++tj) {
        Tile& tile = tiles[static_cast<size_t>((r * t + ti) * t + tj)];
        tile.rank = r;
        tile.i0 = bi + halo2d::split(bh, t, ti);
        tile.h = bi + halo2d::split(bh, t, ti + 1) - tile.i0;
        tile.j0 = bj + halo2d::split(bw, t, tj);
        tile.w = bj + halo2d::split(bw, t, tj + 1) - tile.j0;
        const int gti = ry * t + ti, gtj = rx * t + tj;
        if (gti > 0) tile.neighbour[kNorth] = tile_index(gti - 1, gtj);
        if (gti < py * t - 1) tile.neighbour[kSouth] = tile_index(gti + 1, gtj);
        if (gtj > 0) tile.neighbour[kWest] = tile_index(gti, gtj - 1);
        if (gtj < px * t - 1) tile.neighbour[kEast] = tile_index(gti, gtj + 1);
      }
    }
  }

  // Data. Every rank registers every handle (spmd: the same sequence); only
  // the owner's host buffer is read (at enter_data) and filled (at fetch), so
  // the other ranks pass a placeholder. Scratch handles start from zeros.
  auto holds_host = [&](int owner) { return spmd ? owner == me : me == 0; };
  // Cluster mode: the data starts on rank 0 and the runtime moves it.
  auto enter = [&](void* host, size_t bytes, int owner) {
    return spmd ? taskgrid::enter_data(host, bytes, owner) : taskgrid::enter_data(host, bytes);
  };
  int longest_edge = 1;
  for (const Tile& tile : tiles) longest_edge = std::max({longest_edge, tile.h, tile.w});
  std::vector<double> zeros(static_cast<size_t>(longest_edge), 0.0);
  double placeholder = 0.0;
  for (Tile& tile : tiles) {
    const size_t bytes = static_cast<size_t>(tile.h) * static_cast<size_t>(tile.w) * sizeof(double);
    void* host = &placeholder;
    if (holds_host(tile.rank)) {
      tile.host.resize(static_cast<size_t>(tile.h) * static_cast<size_t>(tile.w));
      for (int i = 0; i < tile.h; ++i)
        for (int j = 0; j < tile.w; ++j)
          tile.host[static_cast<size_t>(i) * static_cast<size_t>(tile.w) + static_cast<size_t>(j)] =
              halo2d::initial_value(tile.i0 + i, tile.j0 + j);
      host = tile.host.data();
    }
    // Both register the host buffer: whichever holds the result is fetched into it.
    tile.grid[0] = enter(host, bytes, tile.rank);
    tile.grid[1] = enter(host, bytes, tile.rank);
    for (int side = 0; side < 4; ++side) {
      const int other = tile.neighbour[side];
      if (other < 0) continue;
      const size_t edge_bytes = static_cast<size_t>(edge_length(tile, side)) * sizeof(double);
      void* scratch = holds_host(tile.rank) ? static_cast<void*>(zeros.data()) : &placeholder;
      tile.edge[side] = enter(scratch, edge_bytes, tile.rank);
      if (tiles[static_cast<size_t>(other)].rank != tile.rank)
        tile.halo[side] = enter(scratch, edge_bytes, tile.rank);
    }
  }
  std::vector<DataHandle> slots(static_cast<size_t>(ranks));
  const size_t slot_count = 2 * static_cast<size_t>(ranks);  // [contribution | result]
  std::vector<std::vector<double>> all_slots(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    void* host = &placeholder;
    if (holds_host(r)) {
      all_slots[static_cast<size_t>(r)].assign(slot_count, 0.0);
      host = all_slots[static_cast<size_t>(r)].data();
    }
    slots[static_cast<size_t>(r)] = enter(host, slot_count * sizeof(double), r);
  }

  // ---------------------------------------------------------- iterations --
  const auto start = std::chrono::steady_clock::now();
  std::vector<DataAccess> accesses;
  for (int iter = 0; iter < options.iters; ++iter) {
    const int cur = iter % 2, nxt = 1 - cur;
    for (Tile& tile : tiles) {
      for (int side = 0; side < 4; ++side) {
        if (tile.neighbour[side] < 0) continue;
        taskgrid::TaskOptions pack_options;
        pack_options.rank = tile.rank;
        taskgrid::submit(halo2d_pack,
                         {taskgrid::in(tile.grid[cur]), taskgrid::out(tile.edge[side])},
                         pack_options, PackArgs{tile.h, tile.w, side});
      }
    }
    // The k-th send from rank A to rank B on a channel meets B's k-th receive
    // from A on it: each receive is submitted right after its send.
    for (Tile& tile : tiles) {
      for (int side = 0; side < 4; ++side) {
        if (tile.neighbour[side] < 0) continue;
        Tile& other = tiles[static_cast<size_t>(tile.neighbour[side])];
        if (other.rank == tile.rank) continue;
        const int count = edge_length(tile, side);
        taskgrid::TaskOptions send_options;
        send_options.rank = tile.rank;
        send_options.channel = side;
        taskgrid::submit(halo2d_send, {taskgrid::in(tile.edge[side])}, send_options,
                         ExchangeArgs{other.rank, count});
        taskgrid::TaskOptions recv_options;
        recv_options.rank = other.rank;
        recv_options.channel = side;
        taskgrid::submit(halo2d_recv, {taskgrid::out(other.halo[opposite(side)])}, recv_options,
                         ExchangeArgs{tile.rank, count});
      }
    }
    for (Tile& tile : tiles) {
      accesses.clear();
      accesses.push_back(taskgrid::in(tile.grid[cur]));
      ComputeArgs args{tile.h, tile.w, 0};
      for (int side = 0; side < 4; ++side) {
        if (tile.neighbour[side] < 0) continue;
        const Tile& other = tiles[static_cast<size_t>(tile.neighbour[side])];
        accesses.push_back(
            taskgrid::in(other.rank == tile.rank ? other.edge[opposite(side)] : tile.halo[side]));
        args.sides |= 1u << side;
      }
      accesses.push_back(taskgrid::out(tile.grid[nxt]));
      taskgrid::TaskOptions compute_options;
      compute_options.rank = tile.rank;
      taskgrid::submit_packed(taskgrid::function_id(halo2d_compute), accesses.data(),
                              accesses.size(), compute_options, &args, sizeof args);
    }
  }

  // ------------------------------------------------------------ checksum --
  const int final_grid = options.iters % 2;
  for (int r = 0; r < ranks; ++r) {
    accesses.clear();
    for (int k = 0; k < t * t; ++k)
      accesses.push_back(taskgrid::in(tiles[static_cast<size_t>(r * t * t + k)].grid[final_grid]));
    accesses.push_back(taskgrid::out(slots[static_cast<size_t>(r)]));
    const int rx = r % px, ry = r / px;
    const ChecksumArgs args{
        r, ranks, t, halo2d::split(options.ny, py, ry + 1) - halo2d::split(options.ny, py, ry),
        halo2d::split(options.nx, px, rx + 1) - halo2d::split(options.nx, px, rx)};
    taskgrid::TaskOptions checksum_options;
    checksum_options.rank = r;
    checksum_options.channel = kChecksumChannel;
    taskgrid::submit_packed(taskgrid::function_id(halo2d_checksum), accesses.data(),
                            accesses.size(), checksum_options, &args, sizeof args);
  }
  for (Tile& tile : tiles) taskgrid::fetch(tile.grid[final_grid]);
  for (DataHandle h : slots) taskgrid::fetch(h);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Each rank checks its fetched block against its slot of the reduction.
  int status = 0;
  for (int r = 0; r < ranks; ++r) {
    if (!holds_host(r)) continue;
    double local = 0.0;
    for (int ti = 0; ti < t; ++ti) {
      const Tile& first = tiles[static_cast<size_t>((r * t + ti) * t)];
      for (int i = 0; i < first.h; ++i)
        for (int tj = 0; tj < t; ++tj) {
          const Tile& tile = tiles[static_cast<size_t>((r * t + ti) * t + tj)];
          local = halo2d::accumulate_row(
              local, tile.host.data() + static_cast<size_t>(i) * static_cast<size_t>(tile.w),
              tile.w);
        }
    }
    const double reduced = all_slots[static_cast<size_t>(r)][static_cast<size_t>(ranks + r)];
    if (local != reduced) {
      std::fprintf(stderr,
                   "halo2d-task-comm: rank %d: the fetched block sums to %.17g, the reduction "
                   "says %.17g\n",
                   r, local, reduced);
      status = 1;
    }
  }
  if (me == 0) {
    const std::vector<double>& result = all_slots[0];
    double total = 0.0;
    for (int r = 0; r < ranks; ++r) total += result[static_cast<size_t>(ranks + r)];
    std::printf("halo2d-task-comm: nx %d ny %d iters %d px %d py %d tiles %d ranks %d mode %s\n",
                options.nx, options.ny, options.iters, px, py, t, ranks, spmd ? "spmd" : "cluster");
    std::printf("checksum %.17g\n", total);
    std::printf("time_s %.6f\n", seconds);
    std::fflush(stdout);
  }
  taskgrid::finish();
  return status;
}
