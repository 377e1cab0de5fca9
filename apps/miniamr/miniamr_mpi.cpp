// miniamr-mpi and miniamr-mpi_omp: miniAMR as the reference is structured,
// one MPI rank per core (miniamr-mpi), or with OpenMP fork-join inside each
// rank (miniamr-mpi_omp, the same source built with -fopenmp: stencils,
// block sums, packing, on-rank face copies, splitting and consolidating run
// as parallel loops; messages stay on the master thread).
//
//   mpiexec -n 2 miniamr-mpi --npx 2 [reference flags] [--print_checksums] [--print_block_sums]
//
// The mesh is replicated (mesh.hpp), so every rank derives the same face
// messages and block moves; a rank sends each peer one bundle per direction
// and variable group (--send_faces: one message per face), and a refinement
// step moves the cells of merged and load-balanced blocks in one bundle per
// pair of ranks.
#include <mpi.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <vector>

#include "block_data.hpp"
#include "faces.hpp"
#include "mesh.hpp"
#include "report.hpp"

namespace {

using namespace miniamr;

constexpr int kFaceTag = 17;
constexpr int kMoveTag = 18;

int thread_count() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void check_mpi(int status, const char* what, int rank) {
  if (status == MPI_SUCCESS) return;
  std::fprintf(stderr, "miniamr: rank %d: %s failed (MPI error %d)\n", rank, what, status);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

class MpiAmr {
 public:
  MpiAmr(const Params& params, int rank, int ranks, RunReport& report)
      : params_(params),
        rank_(rank),
        ranks_(ranks),
        shape_{params.nx, params.ny, params.nz, params.num_vars},
        mesh_(params, ranks),
        report_(report) {}

  // Returns the exit status: 1 when a checksum failed.
  int run(bool print_block_sums) {
    const auto& blocks = mesh_.blocks();
    cells_.assign(blocks.size(), {});
    const std::vector<int> local = my_leaves();
#pragma omp parallel for schedule(dynamic)
    for (size_t n = 0; n < local.size(); ++n) {
      const int leaf = local[n];
      cells_[static_cast<size_t>(leaf)].resize(shape_.values());
      init_block(shape_, blocks[static_cast<size_t>(leaf)].number,
                 cells_[static_cast<size_t>(leaf)].data());
    }
    for (int v = 0; v < params_.num_vars; ++v) report_.set_initial_sum(v, checksum(v));
    plan_routes();
    note_blocks_on_rank();

    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    if (params_.num_refine > 0 || params_.uniform_refine) refine(0);
    int status = 0;
    for (int ts = 1; ts <= params_.num_tsteps && status == 0; ++ts) {
      for (int stage = 0; stage < params_.stages_per_ts && status == 0; ++stage) {
        report_.count_stage(static_cast<int64_t>(mesh_.blocks().size()));
        for (int first = 0; first < params_.num_vars && status == 0;
             first += params_.comm_group()) {
          const int vars = std::min(params_.comm_group(), params_.num_vars - first);
          double t = MPI_Wtime();
          exchange(first, vars);
          timers_.comm += MPI_Wtime() - t;
          for (int v = first; v < first + vars && status == 0; ++v) {
            t = MPI_Wtime();
            run_stencil(v);
            timers_.calc += MPI_Wtime() - t;
            if (stage % params_.checksum_freq == 0) {
              t = MPI_Wtime();
              if (!report_.check_sum(ts, stage, v, checksum(v))) status = 1;
              timers_.checksum += MPI_Wtime() - t;
            }
          }
        }
      }
      if (status == 0 && params_.num_refine > 0 && !params_.uniform_refine) {
        const double t = MPI_Wtime();
        mesh_.move_objects();
        if (ts % params_.refine_freq == 0) refine(ts);
        timers_.refine += MPI_Wtime() - t;
      }
    }
    timers_.total = MPI_Wtime() - start;
    int most = 0;
    MPI_Allreduce(&max_blocks_on_rank_, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (status == 0) {
      report_.print_summary(mesh_, timers_, most);
      if (print_block_sums) print_sums();
    }
    return status;
  }

 private:
  std::vector<int> my_leaves() const {
    std::vector<int> local;
    const auto& blocks = mesh_.blocks();
    for (size_t n = 0; n < blocks.size(); ++n)
      if (blocks[n].owner == rank_) local.push_back(static_cast<int>(n));
    return local;
  }
  bool mine(int leaf) const { return mesh_.blocks()[static_cast<size_t>(leaf)].owner == rank_; }
  int owner(int leaf) const { return mesh_.blocks()[static_cast<size_t>(leaf)].owner; }

  void note_blocks_on_rank() {
    max_blocks_on_rank_ = std::max(max_blocks_on_rank_, static_cast<int>(my_leaves().size()));
  }

  void run_stencil(int v) {
    const std::vector<int>& local = local_;
#pragma omp parallel
    {
      std::vector<double> work;
#pragma omp for schedule(dynamic)
      for (size_t n = 0; n < local.size(); ++n)
        stencil(shape_, params_.stencil, cells_[static_cast<size_t>(local[n])].data(), v, work);
    }
  }

  double checksum(int v) {
    const std::vector<int> local = my_leaves();  // also before the first refinement's routes
    std::vector<double>& sums = sums_;
    sums.assign(mesh_.blocks().size(), 0.0);
#pragma omp parallel for schedule(dynamic)
    for (size_t n = 0; n < local.size(); ++n)
      sums[static_cast<size_t>(local[n])] =
          block_sum(shape_, cells_[static_cast<size_t>(local[n])].data(), v);
    // Every block's sum reaches every rank unchanged (x + 0 is exact); the
    // total is then added in block order, as on one rank.
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE,
                            MPI_SUM, MPI_COMM_WORLD),
              "MPI_Allreduce (checksum)", rank_);
    double total = 0.0;
    for (double sum : sums) total += sum;
    return total;
  }

  // Who sends what to whom, per direction: derived once per mesh (after
  // each refinement), used by every exchange.
  struct Route {
    std::vector<FaceTransfer> local;
    std::map<int, std::vector<FaceTransfer>> sends, receives;  // by peer rank
  };
  void plan_routes() {
    local_ = my_leaves();
    plans_ = plan_faces(mesh_, params_.stencil == 27);
    for (int direction = 0; direction < 3; ++direction) {
      Route route;
      for (const FaceTransfer& transfer : plans_[static_cast<size_t>(direction)].transfers) {
        const bool receive = mine(transfer.receiver), send = mine(transfer.sender);
        if (receive && send)
          route.local.push_back(transfer);
        else if (receive)
          route.receives[owner(transfer.sender)].push_back(transfer);
        else if (send)
          route.sends[owner(transfer.receiver)].push_back(transfer);
      }
      routes_[static_cast<size_t>(direction)] = std::move(route);
    }
  }

  static void set_vars(std::vector<FaceTransfer>& list, int first_var, int vars) {
    for (FaceTransfer& t : list) t.message.first_var = first_var, t.message.vars = vars;
  }

  // One direction at a time (the 27-point stencil's planes carry the ghosts
  // of earlier directions). Buffers persist between exchanges.
  void exchange(int first_var, int vars) {
    for (int direction = 0; direction < 3; ++direction) {
      const DirectionPlan& plan = plans_[static_cast<size_t>(direction)];
      Route& route = routes_[static_cast<size_t>(direction)];
      set_vars(route.local, first_var, vars);
      // Receives first, then sends, then the work that needs no message.
      requests_.clear();
      for (auto& [peer, list] : route.receives) {
        set_vars(list, first_var, vars);
        size_t total = 0;
        for (const FaceTransfer& t : list) total += face_message_size(shape_, t.message);
        auto& buffer = inbox_[peer];
        if (buffer.size() < total) buffer.resize(total);
        post(buffer.data(), list, peer, requests_, /*receive=*/true);
      }
      const size_t receive_requests = requests_.size();
      for (auto& [peer, list] : route.sends) {
        set_vars(list, first_var, vars);
        offsets_.resize(list.size());
        size_t total = 0;
        for (size_t n = 0; n < list.size(); ++n)
          offsets_[n] = total, total += face_message_size(shape_, list[n].message);
        auto& buffer = outbox_[peer];
        if (buffer.size() < total) buffer.resize(total);
        double* out = buffer.data();
#pragma omp parallel for schedule(dynamic)
        for (size_t n = 0; n < list.size(); ++n)
          pack_face(shape_, cells_[static_cast<size_t>(list[n].sender)].data(), list[n].message,
                    out + offsets_[n]);
        post(out, list, peer, requests_, /*receive=*/false);
      }
#pragma omp parallel
      {
        std::vector<double> face;
#pragma omp for schedule(dynamic)
        for (size_t n = 0; n < route.local.size(); ++n) {
          face.resize(face_message_size(shape_, route.local[n].message));
          pack_face(shape_, cells_[static_cast<size_t>(route.local[n].sender)].data(),
                    route.local[n].message, face.data());
          unpack_face(shape_, cells_[static_cast<size_t>(route.local[n].receiver)].data(),
                      route.local[n].message, face.data());
        }
#pragma omp for schedule(dynamic)
        for (size_t n = 0; n < plan.boundaries.size(); ++n)
          if (mine(plan.boundaries[n].leaf))
            apply_boundary(shape_, cells_[static_cast<size_t>(plan.boundaries[n].leaf)].data(),
                           plan.boundaries[n].face, first_var, vars, params_.stencil == 27);
      }
      check_mpi(
          MPI_Waitall(static_cast<int>(receive_requests), requests_.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall (faces in)", rank_);
      for (auto& [peer, list] : route.receives) {
        const double* in = inbox_[peer].data();
        for (const FaceTransfer& t : list) {
          unpack_face(shape_, cells_[static_cast<size_t>(t.receiver)].data(), t.message, in);
          in += face_message_size(shape_, t.message);
        }
      }
      check_mpi(MPI_Waitall(static_cast<int>(requests_.size() - receive_requests),
                            requests_.data() + receive_requests, MPI_STATUSES_IGNORE),
                "MPI_Waitall (faces out)", rank_);
    }
  }

  // One message per peer, or one per face (--send_faces): MPI keeps
  // messages of one source and tag in order, so both sides agree.
  void post(double* buffer, const std::vector<FaceTransfer>& list, int peer,
            std::vector<MPI_Request>& requests, bool receive) {
    auto one = [&](double* at, size_t count) {
      MPI_Request request;
      const int status = receive ? MPI_Irecv(at, static_cast<int>(count), MPI_DOUBLE, peer,
                                             kFaceTag, MPI_COMM_WORLD, &request)
                                 : MPI_Isend(at, static_cast<int>(count), MPI_DOUBLE, peer,
                                             kFaceTag, MPI_COMM_WORLD, &request);
      check_mpi(status, receive ? "MPI_Irecv (faces)" : "MPI_Isend (faces)", rank_);
      requests.push_back(request);
    };
    if (!params_.send_faces) {
      size_t total = 0;
      for (const FaceTransfer& t : list) total += face_message_size(shape_, t.message);
      one(buffer, total);
      return;
    }
    for (const FaceTransfer& t : list) {
      const size_t count = face_message_size(shape_, t.message);
      one(buffer, count);
      buffer += count;
    }
  }

  // Moves and derives cells from the old tree to the new one.
  void redistribute(const Transition& transition) {
    if (transition.sources.empty()) return;  // nothing changed
    const auto& old_blocks = transition.old_blocks;
    const auto& blocks = mesh_.blocks();
    bool changes = old_blocks.size() != blocks.size();
    for (size_t n = 0; n < transition.sources.size() && !changes; ++n)
      changes =
          transition.sources[n].kind != Transition::Kind::kKeep ||
          old_blocks[static_cast<size_t>(transition.sources[n].old[0])].owner != blocks[n].owner;
    if (!changes) return;

    // Which old blocks each rank pair must move, in one order on both sides.
    std::map<int, std::vector<int>> sends, receives;
    std::set<std::pair<int, int>> listed;  // (old block, destination)
    for (size_t n = 0; n < blocks.size(); ++n) {
      const Transition::Source& source = transition.sources[n];
      const int needed = source.kind == Transition::Kind::kMerge ? 8 : 1;
      for (int slot = 0; slot < needed; ++slot) {
        const int old = source.old[static_cast<size_t>(slot)];
        const int from = old_blocks[static_cast<size_t>(old)].owner, to = blocks[n].owner;
        if (from == to || !listed.insert({old, to}).second) continue;
        if (from == rank_) sends[to].push_back(old);
        if (to == rank_) receives[from].push_back(old);
      }
    }
    const size_t values = shape_.values();
    std::vector<MPI_Request> requests;
    std::map<int, std::vector<double>> inbox, outbox;
    for (auto& [peer, list] : receives) {
      auto& buffer = inbox[peer];
      buffer.resize(list.size() * values);
      MPI_Request request;
      check_mpi(MPI_Irecv(buffer.data(), static_cast<int>(buffer.size()), MPI_DOUBLE, peer,
                          kMoveTag, MPI_COMM_WORLD, &request),
                "MPI_Irecv (blocks)", rank_);
      requests.push_back(request);
    }
    for (auto& [peer, list] : sends) {
      auto& buffer = outbox[peer];
      buffer.resize(list.size() * values);
      for (size_t n = 0; n < list.size(); ++n)
        std::copy_n(cells_[static_cast<size_t>(list[n])].data(), values,
                    buffer.data() + n * values);
      MPI_Request request;
      check_mpi(MPI_Isend(buffer.data(), static_cast<int>(buffer.size()), MPI_DOUBLE, peer,
                          kMoveTag, MPI_COMM_WORLD, &request),
                "MPI_Isend (blocks)", rank_);
      requests.push_back(request);
    }
    check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
              "MPI_Waitall (blocks)", rank_);
    std::vector<const double*> old_cells(old_blocks.size(), nullptr);
    for (size_t n = 0; n < old_blocks.size(); ++n)
      if (!cells_[n].empty()) old_cells[n] = cells_[n].data();
    for (auto& [peer, list] : receives)
      for (size_t n = 0; n < list.size(); ++n)
        old_cells[static_cast<size_t>(list[n])] = inbox[peer].data() + n * values;

    std::vector<std::vector<double>> next(blocks.size());
    std::vector<int> local;
    for (size_t n = 0; n < blocks.size(); ++n)
      if (blocks[n].owner == rank_) local.push_back(static_cast<int>(n));
#pragma omp parallel for schedule(dynamic)
    for (size_t m = 0; m < local.size(); ++m) {
      const size_t n = static_cast<size_t>(local[m]);
      const Transition::Source& source = transition.sources[n];
      std::vector<double>& cells = next[n];
      const size_t first = static_cast<size_t>(source.old[0]);
      // A block that stays here keeps its storage (no other new block reads
      // it: a kept block is neither a split parent nor a merged child).
      if (source.kind == Transition::Kind::kKeep && !cells_[first].empty()) {
        cells = std::move(cells_[first]);
        continue;
      }
      cells.resize(values);
      switch (source.kind) {
        case Transition::Kind::kKeep:
          std::copy_n(old_cells[first], values, cells.data());
          break;
        case Transition::Kind::kSplit:
          split_into_child(shape_, old_cells[static_cast<size_t>(source.old[0])], source.octant,
                           cells.data());
          break;
        case Transition::Kind::kMerge:
          std::fill(cells.begin(), cells.end(), 0.0);
          for (int octant = 0; octant < 8; ++octant)
            consolidate_child(
                shape_, old_cells[static_cast<size_t>(source.old[static_cast<size_t>(octant)])],
                octant, cells.data());
          break;
      }
    }
    cells_ = std::move(next);
  }

  void refine(int ts) {
    mesh_.refine(
        ts,
        [&](const Transition& transition) {
          redistribute(transition);
          note_blocks_on_rank();
        },
        [&](const Mesh& mesh) { report_.refined(mesh, ts); });
    plan_routes();
  }

  void print_sums() {
    const auto& blocks = mesh_.blocks();
    const size_t vars = static_cast<size_t>(params_.num_vars);
    std::vector<double> sums(blocks.size() * vars, 0.0);
    for (size_t n = 0; n < blocks.size(); ++n)
      if (blocks[n].owner == rank_)
        for (size_t v = 0; v < vars; ++v)
          sums[n * vars + v] = block_sum(shape_, cells_[n].data(), static_cast<int>(v));
    check_mpi(MPI_Reduce(rank_ == 0 ? MPI_IN_PLACE : sums.data(), sums.data(),
                         static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD),
              "MPI_Reduce (block sums)", rank_);
    if (rank_ == 0) report_.print_block_sums(mesh_, sums);
  }

  Params params_;
  int rank_, ranks_;
  BlockShape shape_;
  Mesh mesh_;
  RunReport& report_;
  std::vector<std::vector<double>> cells_;  // by leaf; empty where another rank holds it
  std::array<DirectionPlan, 3> plans_;
  std::array<Route, 3> routes_;
  std::map<int, std::vector<double>> inbox_, outbox_;  // by peer rank
  std::vector<MPI_Request> requests_;
  std::vector<size_t> offsets_;
  std::vector<int> local_;    // the leaves this rank holds
  std::vector<double> sums_;  // a checksum's block sums
  Timers timers_;
  int max_blocks_on_rank_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Params params;
  bool print_checksums = false, print_block_sums = false;
  if (const int status =
          parse_command_line(argc, argv, rank, ranks, params, print_checksums, print_block_sums);
      status >= 0) {
    MPI_Finalize();
    return status;
  }
#ifdef _OPENMP
  const char* variant = "mpi_omp";
#else
  const char* variant = "mpi";
#endif
  RunReport report(params, variant, ranks, thread_count(), rank == 0);
  report.print_checksums = print_checksums;
  int status = 0;
  try {
    MpiAmr amr(params, rank, ranks, report);
    status = amr.run(print_block_sums);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "miniamr: rank %d: %s\n", rank, error.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::fflush(stdout);
  MPI_Finalize();
  return status;
}
