// The MPI transport's count of bytes arriving from each rank
// (bytes_arriving_from, which the failure detector reads): a receive counts
// from the moment it is asked for until its data is all here, by every path
// a transfer takes (chunked and pre-posted, probed and received at once,
// probed and received in the background, stashed before it was asked for),
// and only on the receiving side. Pairs of ranks (0, 1), (2, 3).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "comm/mpi/transport.h"

namespace taskgrid::comm::mpi {
namespace {

constexpr int kTag = 40;
constexpr uint64_t kCookie = 7;
constexpr size_t kChunk = 4096;

// Polls until the transfer `cookie` has finished.
void finish(MpiTransport& transport, uint64_t cookie) {
  std::vector<uint64_t> finished;
  while (std::find(finished.begin(), finished.end(), cookie) == finished.end())
    transport.poll(finished);
}

// A transport whose transfers are chunked above kChunk, and this rank's
// partner: the odd rank receives, the even one sends.
struct Pair {
  explicit Pair(size_t size) : transport(MPI_COMM_WORLD), bytes(size) {
    transport.set_max_chunk(kChunk);
    rank = transport.rank();
    peer = rank ^ 1;
    paired = peer < transport.size();
    data.assign(size, static_cast<char>(rank));
  }
  bool receives() const { return paired && rank % 2 == 1; }
  bool sends() const { return paired && rank % 2 == 0; }
  MpiTransport transport;
  size_t bytes;
  int rank = 0;
  int peer = 0;
  bool paired = false;
  std::vector<char> data;
};

class Arrivals : public ::testing::TestWithParam<size_t> {};
// Chunked transfers are pre-posted, never stashed.
class StashedArrivals : public ::testing::TestWithParam<size_t> {};

// The receiver asks first, then the sender sends.
TEST_P(Arrivals, AReceiveCountsUntilItsDataIsHere) {
  Pair pair(GetParam());
  MpiTransport& transport = pair.transport;
  if (pair.receives()) {
    EXPECT_EQ(transport.bytes_arriving_from(pair.peer), 0u);
    transport.receive_data(pair.peer, kTag, pair.data.data(), pair.bytes, kCookie);
    EXPECT_EQ(transport.bytes_arriving_from(pair.peer), pair.bytes) << pair.bytes << " bytes";
  }
  MPI_Barrier(MPI_COMM_WORLD);  // the sender sends now
  if (pair.sends()) transport.send_data(pair.peer, kTag, pair.data.data(), pair.bytes, kCookie);
  if (pair.paired) finish(transport, kCookie);
  EXPECT_EQ(transport.bytes_arriving_from(pair.peer), 0u)
      << pair.bytes << " bytes, rank " << pair.rank << " (a send is no arrival)";
  if (pair.receives()) {
    EXPECT_EQ(pair.data, std::vector<char>(pair.bytes, static_cast<char>(pair.peer)));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The sender sends first: the receiver stashes it, then asks for it.
TEST_P(StashedArrivals, AReceiveOfAStashedMessageCountsUntilItIsHere) {
  Pair pair(GetParam());
  MpiTransport& transport = pair.transport;
  if (pair.sends()) transport.send_data(pair.peer, kTag, pair.data.data(), pair.bytes, kCookie);
  MPI_Barrier(MPI_COMM_WORLD);
  if (pair.receives()) {
    std::vector<uint64_t> finished;
    transport.poll(finished);  // stashes it, or starts to
    transport.receive_data(pair.peer, kTag, pair.data.data(), pair.bytes, kCookie);
    EXPECT_LE(transport.bytes_arriving_from(pair.peer), pair.bytes);
  }
  if (pair.paired) finish(transport, kCookie);
  EXPECT_EQ(transport.bytes_arriving_from(pair.peer), 0u) << pair.bytes << " bytes";
  if (pair.receives()) {
    EXPECT_EQ(pair.data, std::vector<char>(pair.bytes, static_cast<char>(pair.peer)));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Eager (at most MpiTransport::kAtOnceBytes), probed in the background, chunked.
INSTANTIATE_TEST_SUITE_P(EveryPath, Arrivals,
                         ::testing::Values(size_t{512}, size_t{3000}, 16 * kChunk + 100));
INSTANTIATE_TEST_SUITE_P(EveryPath, StashedArrivals, ::testing::Values(size_t{512}, size_t{3000}));

}  // namespace
}  // namespace taskgrid::comm::mpi
