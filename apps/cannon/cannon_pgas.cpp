// taskgrid-cannon: C = A x B with the stripes of B rotated around a ring of
// ranks by one-sided get (the TaskGrid PGAS layer). The algorithm, matrices,
// checksum and report are those of cannon_common.hpp; the reference is
// taskgrid-cannon-mpi.
//
//   mpiexec -n 4 taskgrid-cannon [--n 1024 --reps 3 --check]
//
// Each rank has two stripe buffers in its global segment (symmetric, sized
// for the largest block). At every step it starts fetching the next stripe
// from its right neighbour's current buffer into its other buffer, multiplies
// with its current one meanwhile, completes the fetch (fence), and waits at a
// barrier: its left neighbour may still be reading its current buffer, which
// is the one it fills next. The segment is sized from n and the number of
// ranks; TASKGRID_PGAS_SEGMENT, when set, overrides it and must be as large.
#include <mpi.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "cannon_common.hpp"
#include "taskgrid/pgas.hpp"

namespace {

namespace pgas = taskgrid::pgas;

constexpr const char* kProgram = "taskgrid-cannon";

size_t round_up_to_64(size_t bytes) { return (bytes + 63) / 64 * 64; }

size_t stripe_buffer_bytes(const cannon::Layout& layout) {
  return round_up_to_64(layout.elements(layout.max_rows()) * sizeof(double));
}

// Two stripe buffers, plus room for whatever else the layer keeps there.
size_t segment_bytes_for(const cannon::Layout& layout) {
  constexpr size_t kSlack = size_t{4} << 20;
  return 2 * stripe_buffer_bytes(layout) + kSlack;
}

class PgasRing {
 public:
  PgasRing(const cannon::Layout& layout, cannon::Blocks& blocks)
      : layout_(layout), blocks_(blocks) {
    const size_t bytes = stripe_buffer_bytes(layout);
    if (pgas::segment_size() < 2 * bytes)
      throw std::runtime_error("the global segment (" + std::to_string(pgas::segment_size()) +
                               " bytes, TASKGRID_PGAS_SEGMENT) cannot hold two stripe buffers of " +
                               std::to_string(bytes) + " bytes");
    for (pgas::Memory& buffer : buffers_) buffer = pgas::alloc(bytes);
  }

  // Collective; call before pgas::finalize.
  void release() {
    pgas::barrier();  // nobody reads a buffer any more
    for (pgas::Memory& buffer : buffers_) pgas::free(buffer);
  }

  void load_own_stripe() { blocks_.copy_own_stripe_to(stripe(0)); }

  void multiply() {
    int current = 0;
    for (int step = 0; step < layout_.ranks; ++step) {
      const int held = layout_.stripe_at(step);
      const bool last_step = step + 1 == layout_.ranks;
      // The right neighbour holds the stripe after ours in its current
      // buffer; the fence after the dgemm completes the get.
      pgas::Operation incoming;
      if (!last_step) {
        const int next = layout_.stripe_at(step + 1);
        incoming = pgas::get_nb(stripe(1 - current), layout_.right(), buffers_[current], 0,
                                layout_.elements(layout_.rows(next)) * sizeof(double));
      }
      cannon::multiply_stripe(layout_, blocks_, held, stripe(current), step == 0);
      // After the last step nothing is in flight, and the next multiply
      // starts with a barrier anyway.
      if (last_step) break;
      pgas::fence();    // our next stripe has arrived
      pgas::barrier();  // and our left neighbour has fetched our current one
      current = 1 - current;
    }
  }

  void barrier() { pgas::barrier(); }

  double max_on_root(double value) {
    double result = value;
    pgas::reduce(&value, &result, 1, pgas::ReduceOp::max, 0);
    return result;
  }

  void sum_on_root(std::vector<double>& values) {
    pgas::reduce(values.data(), values.data(), values.size(), pgas::ReduceOp::sum, 0);
  }

 private:
  double* stripe(int index) { return pgas::local_as<double>(buffers_[index]); }

  const cannon::Layout& layout_;
  cannon::Blocks& blocks_;
  pgas::Memory buffers_[2];
};
static_assert(cannon::StripeRing<PgasRing>);

}  // namespace

int main(int argc, char** argv) {
  // MPI comes up first (the layer adopts it): the segment's size depends on
  // the number of ranks.
  pgas::prepare_mpi_init();
  return cannon::guarded_main(argc, argv, MPI_THREAD_MULTIPLE, kProgram,
                              [&](const cannon::Options& options, const cannon::Layout& layout) {
                                pgas::init(&argc, &argv, segment_bytes_for(layout));
                                {
                                  cannon::Blocks blocks(layout);
                                  PgasRing ring(layout, blocks);
                                  cannon::run(options, layout, blocks, ring, kProgram);
                                  ring.release();
                                }
                                pgas::finalize();
                              });
}
