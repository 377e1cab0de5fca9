// taskgrid-minimod: the minimod acoustic isotropic kernel with the halo
// exchanged by one-sided put (the TaskGrid PGAS layer). The model, stencil,
// time loop, checksum and report are minimod_common.hpp's; the reference is
// taskgrid-minimod-serial, the baseline taskgrid-minimod-mpi.
//
//   mpiexec -n 4 taskgrid-minimod [--nx 128 --ny 128 --nz 128 --steps 100 --f0 10]
//
// Both wavefields live in the global segment (symmetric allocations sized
// for the largest slab, ghost planes included). Every step a rank puts its
// bottom kRadius planes into its lower neighbour's upper ghost planes and its
// top kRadius planes into its upper neighbour's lower ghost planes, of the
// field everyone reads this step; fence() completes its puts, barrier()
// everyone's. Nobody then computes on ghosts that have not arrived, and no
// put lands in ghosts still being read: the field a rank fills next step is
// the one its neighbour reads now only after the next barrier. The segment is
// sized from the slab; TASKGRID_PGAS_SEGMENT, when set, overrides it and must
// be as large.
#include <mpi.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "minimod_common.hpp"
#include "taskgrid/pgas.hpp"

namespace {

namespace pgas = taskgrid::pgas;

constexpr const char* kProgram = "taskgrid-minimod";

size_t field_bytes(const minimod::Layout& layout) {
  const size_t bytes = layout.slab_elements(layout.max_planes()) * sizeof(double);
  return (bytes + 63) / 64 * 64;
}

// Two fields, plus room for whatever else the layer keeps in the segment.
size_t segment_bytes_for(const minimod::Layout& layout) {
  constexpr size_t kSlack = size_t{4} << 20;
  return 2 * field_bytes(layout) + kSlack;
}

class PgasSlabs {
 public:
  explicit PgasSlabs(const minimod::Layout& layout)
      : layout_(layout),
        lower_(layout.lower()),
        upper_(layout.upper()),
        upper_ghosts_of_lower_(lower_ >= 0 ? layout.upper_ghosts(lower_) * sizeof(double) : 0),
        lower_ghosts_of_upper_(layout.lower_ghosts() * sizeof(double)),
        halo_bytes_(layout.halo_elements() * sizeof(double)) {
    const size_t bytes = field_bytes(layout);
    if (pgas::segment_size() < 2 * bytes)
      throw std::runtime_error("the global segment (" + std::to_string(pgas::segment_size()) +
                               " bytes, TASKGRID_PGAS_SEGMENT) cannot hold two wavefields of " +
                               std::to_string(bytes) + " bytes");
    for (pgas::Memory& field : fields_) field = pgas::alloc(bytes);
  }

  // Collective; call before pgas::finalize.
  void release() {
    pgas::barrier();  // nobody reads or writes a field any more
    for (pgas::Memory& field : fields_) pgas::free(field);
  }

  double* field(int index) { return pgas::local_as<double>(fields_[index]); }

  void exchange_halo(int index) {
    // halo exchange: begin
    const double* u = field(index);
    pgas::Operation puts[2];
    if (lower_ >= 0)
      puts[0] = pgas::put_nb(lower_, fields_[index], upper_ghosts_of_lower_,
                             u + layout_.bottom_edge(), halo_bytes_);
    if (upper_ >= 0)
      puts[1] = pgas::put_nb(upper_, fields_[index], lower_ghosts_of_upper_,
                             u + layout_.top_edge(layout_.rank), halo_bytes_);
    pgas::fence();
    pgas::barrier();
    // halo exchange: end
  }

  void barrier() { pgas::barrier(); }

  void max_on_root(std::vector<double>& values) {
    pgas::reduce(values.data(), values.data(), values.size(), pgas::ReduceOp::max, 0);
  }
  void sum_on_root(std::vector<double>& values) {
    pgas::reduce(values.data(), values.data(), values.size(), pgas::ReduceOp::sum, 0);
  }

 private:
  const minimod::Layout& layout_;
  int lower_;  // neighbours, -1 at the grid's bottom and top
  int upper_;
  // Byte offsets of the ghost planes this rank fills in its neighbours' fields.
  size_t upper_ghosts_of_lower_;
  size_t lower_ghosts_of_upper_;
  size_t halo_bytes_;
  pgas::Memory fields_[2];
};
static_assert(minimod::SlabStore<PgasSlabs>);

}  // namespace

int main(int argc, char** argv) {
  // MPI comes up first (the layer adopts it): the segment's size depends on
  // the number of ranks.
  int provided = 0, rank = 0, ranks = 1;
  pgas::prepare_mpi_init();
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int status = minimod::guarded_main(
      argc, argv, rank, ranks, kProgram,
      [&](const minimod::Options& options, const minimod::Layout& layout) {
        pgas::init(&argc, &argv, segment_bytes_for(layout));
        {
          PgasSlabs slabs(layout);
          minimod::run(options, layout, slabs, kProgram);
          slabs.release();
        }
        pgas::finalize();
      },
      [] { MPI_Abort(MPI_COMM_WORLD, 1); });
  MPI_Finalize();
  return status;
}
