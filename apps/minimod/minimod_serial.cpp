// taskgrid-minimod-serial: the minimod acoustic isotropic kernel in one
// process, the reference for taskgrid-minimod and taskgrid-minimod-mpi (the
// model, stencil, time loop, checksum and report are minimod_common.hpp's).
//
//   taskgrid-minimod-serial [--nx 128 --ny 128 --nz 128 --steps 100 --f0 10]
//
// The whole grid is one slab: its ghost planes are the zero boundary, and
// there is no halo to exchange. Needs no MPI.
#include <cstdlib>
#include <vector>

#include "minimod_common.hpp"

namespace {

constexpr const char* kProgram = "taskgrid-minimod-serial";

class SerialSlabs {
 public:
  explicit SerialSlabs(const minimod::Layout& layout)
      : fields_{std::vector<double>(layout.slab_elements(layout.my_planes())),
                std::vector<double>(layout.slab_elements(layout.my_planes()))} {}

  double* field(int index) { return fields_[index].data(); }
  void exchange_halo(int) {}
  void barrier() {}
  void max_on_root(std::vector<double>&) {}
  void sum_on_root(std::vector<double>&) {}

 private:
  std::vector<double> fields_[2];
};
static_assert(minimod::SlabStore<SerialSlabs>);

}  // namespace

int main(int argc, char** argv) {
  return minimod::guarded_main(
      argc, argv, 0, 1, kProgram,
      [](const minimod::Options& options, const minimod::Layout& layout) {
        SerialSlabs slabs(layout);
        minimod::run(options, layout, slabs, kProgram);
      },
      [] { std::exit(1); });
}
