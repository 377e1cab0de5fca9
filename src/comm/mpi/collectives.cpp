#include "comm/mpi/collectives.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "comm/mpi/affinity.h"

namespace taskgrid::comm::mpi {
namespace {

// MPI counts are ints: larger payloads travel in pieces of this many bytes.
constexpr size_t kPiece = size_t{1} << 30;
constexpr int kGatherTag = 1;
constexpr int kPingTag = 2;

void unsigned_max(void* in, void* inout, int* count, MPI_Datatype*) {
  const auto* a = static_cast<const uint64_t*>(in);
  auto* b = static_cast<uint64_t*>(inout);
  for (int i = 0; i < *count; ++i) b[i] = std::max(a[i], b[i]);
}

}  // namespace

MpiCollectives::MpiCollectives(MPI_Comm comm) {
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  MPI_Comm node;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &ranks_on_node_);
  const std::vector<bool> sharing = ranks_sharing_my_cores(node);
  ranks_sharing_cores_ = static_cast<int>(std::count(sharing.begin(), sharing.end(), true));
  MPI_Comm_free(&node);
  // Our own operation: Debian's MPICH 4.0.2 compares MPI_UINT64_T as signed
  // in MPI_MAX (the maximum of 2^63 and 1 comes out as 1).
  MPI_Op_create(&unsigned_max, 1, &max_);
}

MpiCollectives::~MpiCollectives() {
  // The runtime may finalize MPI before its state (this included) goes away.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (max_ != MPI_OP_NULL) MPI_Op_free(&max_);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiCollectives::allreduce_max(uint64_t* values, size_t count) {
  constexpr size_t kMaxCount = kPiece / sizeof(uint64_t);
  for (size_t done = 0; done < count; done += kMaxCount) {
    const size_t n = std::min(kMaxCount, count - done);
    MPI_Allreduce(MPI_IN_PLACE, values + done, static_cast<int>(n), MPI_UINT64_T, max_, comm_);
  }
}

std::function<bool()> MpiCollectives::start_allreduce_max(uint64_t* values, size_t count) {
  if (count > kPiece / sizeof(uint64_t)) return Collectives::start_allreduce_max(values, count);
  auto request = std::make_shared<MPI_Request>(MPI_REQUEST_NULL);
  // MPI's own MAX (defined on MPI_UINT64_T since MPI 2.2), not our operator:
  // a non-blocking reduction runs on whichever thread progresses MPI (the
  // engine's), and MPI's locks that order it after this thread's writes are
  // invisible to ThreadSanitizer, which then reports our operator's reads.
  MPI_Iallreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_UINT64_T, MPI_MAX, comm_,
                 request.get());
  return [request] {
    int done = 0;
    MPI_Test(request.get(), &done, MPI_STATUS_IGNORE);
    return done != 0;
  };
}

std::vector<std::vector<char>> MpiCollectives::gather(int root, const void* mine, size_t bytes) {
  // Sizes first, then the bytes point to point: MPI_Gatherv's int
  // displacements would limit the total to 2 GiB (a job's trace can be more).
  uint64_t my_bytes = bytes;
  std::vector<uint64_t> sizes(rank_ == root ? static_cast<size_t>(size_) : 0);
  MPI_Gather(&my_bytes, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, root, comm_);
  const char* source = static_cast<const char*>(mine);
  if (rank_ != root) {
    for (size_t done = 0; done < bytes; done += kPiece) {
      const size_t n = std::min(kPiece, bytes - done);
      MPI_Send(source + done, static_cast<int>(n), MPI_BYTE, root, kGatherTag, comm_);
    }
    return {};
  }
  std::vector<std::vector<char>> all(static_cast<size_t>(size_));
  std::vector<MPI_Request> requests;
  for (int r = 0; r < size_; ++r) {
    std::vector<char>& entry = all[static_cast<size_t>(r)];
    entry.resize(static_cast<size_t>(sizes[static_cast<size_t>(r)]));
    if (r == root) {
      if (bytes) std::memcpy(entry.data(), mine, bytes);
      continue;
    }
    for (size_t done = 0; done < entry.size(); done += kPiece) {
      const size_t n = std::min(kPiece, entry.size() - done);
      requests.emplace_back();
      MPI_Irecv(entry.data() + done, static_cast<int>(n), MPI_BYTE, r, kGatherTag, comm_,
                &requests.back());
    }
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  return all;
}

void MpiCollectives::broadcast(int root, void* data, size_t bytes) {
  char* base = static_cast<char*>(data);
  for (size_t done = 0; done < bytes; done += kPiece) {
    const size_t n = std::min(kPiece, bytes - done);
    MPI_Bcast(base + done, static_cast<int>(n), MPI_BYTE, root, comm_);
  }
}

void MpiCollectives::barrier() { MPI_Barrier(comm_); }

LinkEstimate MpiCollectives::measure_link() {
  if (size_ < 2) return {};
  // Latency from small messages, bandwidth from 1 MiB ones.
  double measured[2] = {0, 0};
  if (rank_ <= 1) {
    const int peer = 1 - rank_;
    constexpr int kSmallRounds = 20, kLargeRounds = 4;
    constexpr size_t kLarge = size_t{1} << 20;
    std::vector<char> buffer(kLarge);
    auto rounds = [&](int count, int bytes) {
      const double start = MPI_Wtime();
      for (int i = 0; i < count; ++i) {
        if (rank_ == 0) {
          MPI_Send(buffer.data(), bytes, MPI_BYTE, peer, kPingTag, comm_);
          MPI_Recv(buffer.data(), bytes, MPI_BYTE, peer, kPingTag, comm_, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buffer.data(), bytes, MPI_BYTE, peer, kPingTag, comm_, MPI_STATUS_IGNORE);
          MPI_Send(buffer.data(), bytes, MPI_BYTE, peer, kPingTag, comm_);
        }
      }
      return (MPI_Wtime() - start) / (2.0 * count);
    };
    rounds(2, 8);  // warm the connection
    const double latency = rounds(kSmallRounds, 8);
    const double large = rounds(kLargeRounds, static_cast<int>(kLarge));
    measured[0] = std::max(latency, 1e-7);
    measured[1] = static_cast<double>(kLarge) / std::max(large - latency, 1e-7);
  }
  // Rank 0's figures for everyone.
  MPI_Bcast(measured, 2, MPI_DOUBLE, 0, comm_);
  return {measured[0], measured[1]};
}

}  // namespace taskgrid::comm::mpi
