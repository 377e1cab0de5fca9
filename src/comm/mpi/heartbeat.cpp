#include "comm/mpi/heartbeat.h"

#include <mpi.h>

#include <deque>

namespace taskgrid::comm::mpi {
namespace {

constexpr int kTag = 1;
// Beats to a rank that does not receive (it is stopped) pile up unsent; past
// this many the link stops adding to them: someone will report that rank.
constexpr size_t kMaxPending = 256;

class MpiHeartbeatLink final : public HeartbeatLink {
 public:
  MpiHeartbeatLink() {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    post_receive();
  }

  ~MpiHeartbeatLink() override {
    MPI_Cancel(&receive_);
    MPI_Wait(&receive_, MPI_STATUS_IGNORE);
    bool unfinished = false;
    for (Pending& pending : sends_) {
      int done = 0;
      MPI_Test(&pending.request, &done, MPI_STATUS_IGNORE);
      if (!done) {
        MPI_Request_free(&pending.request);
        unfinished = true;
      }
    }
    // MPI may still read an unfinished send's message (its receiver stopped
    // watching first): those few bytes stay allocated for the process's life.
    // A deque's move keeps its elements where they are.
    if (unfinished) new std::deque<Pending>(std::move(sends_));
    MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void send(int dest, const HeartbeatMessage& message) override {
    retire_finished();
    if (sends_.size() >= kMaxPending) return;
    sends_.push_back({message, MPI_REQUEST_NULL});
    Pending& pending = sends_.back();
    MPI_Isend(&pending.message, sizeof pending.message, MPI_BYTE, dest, kTag, comm_,
              &pending.request);
  }

  bool receive(int& source, HeartbeatMessage& message) override {
    int done = 0;
    MPI_Status status;
    MPI_Test(&receive_, &done, &status);
    if (!done) return false;
    source = status.MPI_SOURCE;
    message = incoming_;
    post_receive();
    return true;
  }

 private:
  struct Pending {
    HeartbeatMessage message;
    MPI_Request request;
  };

  void post_receive() {
    MPI_Irecv(&incoming_, sizeof incoming_, MPI_BYTE, MPI_ANY_SOURCE, kTag, comm_, &receive_);
  }
  void retire_finished() {
    while (!sends_.empty()) {
      int done = 0;
      MPI_Test(&sends_.front().request, &done, MPI_STATUS_IGNORE);
      if (!done) break;
      sends_.pop_front();
    }
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  MPI_Request receive_ = MPI_REQUEST_NULL;
  HeartbeatMessage incoming_;
  std::deque<Pending> sends_;
};

}  // namespace

std::unique_ptr<HeartbeatLink> make_mpi_heartbeat_link() {
  return std::make_unique<MpiHeartbeatLink>();
}

}  // namespace taskgrid::comm::mpi
