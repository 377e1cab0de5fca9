// The MPI transport's doorbells (comm/mpi/transport.h): under mpiexec -n 2
// and -n 4 on one node, every rank has one, the ranks agree whether the node
// is oversubscribed, and a message wakes a peer that sleeps on its doorbell
// (without the ring it would sleep its minute: the test's timeout fails it).
#include <gtest/gtest.h>
#include <mpi.h>
#include <sched.h>

#include <chrono>
#include <thread>
#include <vector>

#include "comm/idle_backoff.h"
#include "comm/mpi/transport.h"

namespace taskgrid::comm::mpi {
namespace {

using namespace std::chrono_literals;

TEST(Doorbells, EveryRankOfTheNodeHasOneAndTheRanksAgreeOnSharing) {
  MpiTransport transport(MPI_COMM_WORLD);
  EXPECT_NE(transport.doorbell(), nullptr);
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  cpu_set_t cores;
  ASSERT_EQ(sched_getaffinity(0, sizeof cores, &cores), 0);
  int fewer_cores = ranks > CPU_COUNT(&cores) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &fewer_cores, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(transport.oversubscribed(), fewer_cores == 1);
  // Every rank of this test runs on the one node: its cores are shared.
  EXPECT_EQ(transport.cores_per_rank(), CPU_COUNT(&cores) / ranks);
  for (int peer = 0; peer < ranks; ++peer) EXPECT_TRUE(transport.same_node(peer));
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(Doorbells, AMessageWakesAPeerSleepingOnItsDoorbell) {
  MpiTransport transport(MPI_COMM_WORLD);
  ASSERT_NE(transport.doorbell(), nullptr);
  const int rank = transport.rank();
  // Pairs (0, 1), (2, 3): the even rank sends to the odd one once it sleeps.
  const int peer = rank ^ 1;
  if (peer < transport.size()) {
    if (rank % 2 == 1) {
      Wakeup wakeup(system_blocking(), transport.doorbell());
      const auto start = std::chrono::steady_clock::now();
      wakeup.wait_for(60s);  // nothing but the ring ends it early
      EXPECT_LT(std::chrono::steady_clock::now() - start, 30s) << "rank " << rank;
      EXPECT_GE(transport.doorbell()->sleep.sequence.load(), 1u);
      int source = -1;
      std::vector<char> batch;
      std::vector<uint64_t> finished;
      while (!transport.receive_control(source, batch)) transport.poll(finished);
      EXPECT_EQ(source, peer);
      EXPECT_EQ(batch, (std::vector<char>{'d', 'i', 'n', 'g'}));
    } else {
      while (!transport.sleeping(peer)) std::this_thread::yield();
      // The sleeper is not counted awake (the idle policy's count).
      EXPECT_LE(transport.awake_ranks_on_node(), transport.size() - 1) << "rank " << rank;
      EXPECT_GE(transport.awake_ranks_on_node(), 1);
      transport.send_control(peer, {'d', 'i', 'n', 'g'});
      std::vector<uint64_t> finished;
      while (transport.pending() > 0) transport.poll(finished);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace taskgrid::comm::mpi

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const int failed = RUN_ALL_TESTS();
  MPI_Finalize();
  return failed;
}
