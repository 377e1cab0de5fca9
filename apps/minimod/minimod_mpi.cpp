// taskgrid-minimod-mpi: the minimod acoustic isotropic kernel with the halo
// exchanged by MPI send/receive, the baseline for taskgrid-minimod (the
// model, stencil, time loop, checksum and report are minimod_common.hpp's).
//
//   mpiexec -n 4 taskgrid-minimod-mpi [--nx 128 --ny 128 --nz 128 --steps 100 --f0 10]
//
// Each rank keeps its slab with kRadius ghost planes below and above, twice
// (the current and the previous wavefield). Every step it receives its
// neighbours' edge planes straight into the current field's ghost planes and
// sends its own (non-blocking, MPI_PROC_NULL at the grid's bottom and top),
// waits for all four, then updates the slab.
#include <mpi.h>

#include <vector>

#include "minimod_common.hpp"

namespace {

constexpr const char* kProgram = "taskgrid-minimod-mpi";

// The message tags: the direction the planes travel in z.
constexpr int kTowardsLower = 0;
constexpr int kTowardsUpper = 1;

class MpiSlabs {
 public:
  explicit MpiSlabs(const minimod::Layout& layout)
      : layout_(layout),
        fields_{std::vector<double>(layout.slab_elements(layout.my_planes())),
                std::vector<double>(layout.slab_elements(layout.my_planes()))},
        lower_(layout.lower() >= 0 ? layout.lower() : MPI_PROC_NULL),
        upper_(layout.upper() >= 0 ? layout.upper() : MPI_PROC_NULL),
        halo_count_(static_cast<int>(layout.halo_elements())) {}

  double* field(int index) { return fields_[index].data(); }

  void exchange_halo(int index) {
    // halo exchange: begin
    double* u = field(index);
    MPI_Request requests[4];
    MPI_Irecv(u + layout_.lower_ghosts(), halo_count_, MPI_DOUBLE, lower_, kTowardsUpper,
              MPI_COMM_WORLD, &requests[0]);
    MPI_Irecv(u + layout_.upper_ghosts(layout_.rank), halo_count_, MPI_DOUBLE, upper_,
              kTowardsLower, MPI_COMM_WORLD, &requests[1]);
    MPI_Isend(u + layout_.bottom_edge(), halo_count_, MPI_DOUBLE, lower_, kTowardsLower,
              MPI_COMM_WORLD, &requests[2]);
    MPI_Isend(u + layout_.top_edge(layout_.rank), halo_count_, MPI_DOUBLE, upper_, kTowardsUpper,
              MPI_COMM_WORLD, &requests[3]);
    MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
    // halo exchange: end
  }

  void barrier() { MPI_Barrier(MPI_COMM_WORLD); }

  void max_on_root(std::vector<double>& values) { reduce_on_root(values, MPI_MAX); }
  void sum_on_root(std::vector<double>& values) { reduce_on_root(values, MPI_SUM); }

 private:
  void reduce_on_root(std::vector<double>& values, MPI_Op op) {
    const int count = static_cast<int>(values.size());
    if (layout_.rank == 0)
      MPI_Reduce(MPI_IN_PLACE, values.data(), count, MPI_DOUBLE, op, 0, MPI_COMM_WORLD);
    else
      MPI_Reduce(values.data(), nullptr, count, MPI_DOUBLE, op, 0, MPI_COMM_WORLD);
  }

  const minimod::Layout& layout_;
  std::vector<double> fields_[2];
  int lower_;
  int upper_;
  int halo_count_;
};
static_assert(minimod::SlabStore<MpiSlabs>);

}  // namespace

int main(int argc, char** argv) {
  // Only the main thread calls MPI; OpenMP threads only compute.
  int provided = 0, rank = 0, ranks = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int status = minimod::guarded_main(
      argc, argv, rank, ranks, kProgram,
      [](const minimod::Options& options, const minimod::Layout& layout) {
        MpiSlabs slabs(layout);
        minimod::run(options, layout, slabs, kProgram);
      },
      [] { MPI_Abort(MPI_COMM_WORLD, 1); });
  MPI_Finalize();
  return status;
}
