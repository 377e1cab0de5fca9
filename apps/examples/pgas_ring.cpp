// The PGAS example of the README: every rank puts a block into its right
// neighbour's memory, then all of them sum what they received.
//   mpiexec.mpich -n 4 build/bin/pgas_ring
#include <cstdio>
#include <vector>

#include "taskgrid/pgas.hpp"

namespace pgas = taskgrid::pgas;

int main(int argc, char** argv) {
  try {
    pgas::init(&argc, &argv);  // collective; TASKGRID_PGAS_SEGMENT sets the segment size
    const int me = pgas::rank(), ranks = pgas::num_ranks();
    const size_t count = 1000;
    pgas::Memory inbox = pgas::alloc(count * sizeof(double));  // same offset on every rank

    std::vector<double> block(count, me + 1.0);
    const int right = (me + 1) % ranks;
    pgas::Operation op = pgas::put_nb(right, inbox, 0, block.data(), count * sizeof(double));
    pgas::wait(op);   // or pgas::fence(): every operation of this rank, at its target
    pgas::barrier();  // everyone's puts have landed

    const double* received = pgas::local_as<double>(inbox);
    double mine = 0, total = 0;
    for (size_t i = 0; i < count; ++i) mine += received[i];
    pgas::allreduce(&mine, &total, 1, pgas::ReduceOp::sum);
    if (me == 0) std::printf("pgas_ring: %d ranks, total %.0f\n", ranks, total);

    pgas::free(inbox);  // collective
    pgas::finalize();
  } catch (const std::exception& error) {
    pgas::abort_job(error.what());  // "error: taskgrid: rank R: ..." and the job ends
  }
  return 0;
}
