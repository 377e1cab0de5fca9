// taskgrid-cannon-mpi: the MPI+OpenMP baseline of taskgrid-cannon. Same
// blocking, matrices, dgemm calls, checksum and report (cannon_common.hpp);
// the stripes travel by two-sided messages instead of one-sided gets.
//
//   mpiexec -n 4 taskgrid-cannon-mpi [--n 1024 --reps 3 --check]
//
// At every step a rank posts the receive of its next stripe from its right
// neighbour and the send of its current stripe to its left neighbour, then
// multiplies with the current stripe while they travel, and waits for both.
// Generation and verification loops use OpenMP; the dgemm uses OpenBLAS's
// own threads, exactly as in taskgrid-cannon.
#include <mpi.h>

#include <vector>

#include "cannon_common.hpp"

namespace {

constexpr const char* kProgram = "taskgrid-cannon-mpi";

class MpiRing {
 public:
  MpiRing(const cannon::Layout& layout, cannon::Blocks& blocks) : layout_(layout), blocks_(blocks) {
    for (std::vector<double>& buffer : buffers_) buffer.resize(layout.elements(layout.max_rows()));
    // Messages count whole rows, so no count overflows an int.
    MPI_Type_contiguous(layout.n, MPI_DOUBLE, &row_type_);
    MPI_Type_commit(&row_type_);
  }
  ~MpiRing() { MPI_Type_free(&row_type_); }
  MpiRing(const MpiRing&) = delete;
  MpiRing& operator=(const MpiRing&) = delete;

  void load_own_stripe() { blocks_.copy_own_stripe_to(buffers_[0].data()); }

  void multiply() {
    constexpr int kStripeTag = 1;
    int current = 0;
    for (int step = 0; step < layout_.ranks; ++step) {
      const int held = layout_.stripe_at(step);
      MPI_Request requests[2];
      int posted = 0;
      if (step + 1 < layout_.ranks) {
        const int next = layout_.stripe_at(step + 1);
        MPI_Irecv(buffers_[1 - current].data(), layout_.rows(next), row_type_, layout_.right(),
                  kStripeTag, MPI_COMM_WORLD, &requests[posted++]);
        MPI_Isend(buffers_[current].data(), layout_.rows(held), row_type_, layout_.left(),
                  kStripeTag, MPI_COMM_WORLD, &requests[posted++]);
      }
      cannon::multiply_stripe(layout_, blocks_, held, buffers_[current].data(), step == 0);
      MPI_Waitall(posted, requests, MPI_STATUSES_IGNORE);
      current = 1 - current;
    }
  }

  void barrier() { MPI_Barrier(MPI_COMM_WORLD); }

  double max_on_root(double value) {
    double result = value;
    MPI_Reduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return result;
  }

  void sum_on_root(std::vector<double>& values) {
    const int count = static_cast<int>(values.size());
    if (layout_.rank == 0)
      MPI_Reduce(MPI_IN_PLACE, values.data(), count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    else
      MPI_Reduce(values.data(), nullptr, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  }

 private:
  const cannon::Layout& layout_;
  cannon::Blocks& blocks_;
  std::vector<double> buffers_[2];
  MPI_Datatype row_type_ = MPI_DATATYPE_NULL;
};
static_assert(cannon::StripeRing<MpiRing>);

}  // namespace

int main(int argc, char** argv) {
  // Only the main thread calls MPI; OpenMP regions make no MPI calls.
  return cannon::guarded_main(argc, argv, MPI_THREAD_FUNNELED, kProgram,
                              [](const cannon::Options& options, const cannon::Layout& layout) {
                                cannon::Blocks blocks(layout);
                                MpiRing ring(layout, blocks);
                                cannon::run(options, layout, blocks, ring, kProgram);
                              });
}
