// Transport over non-blocking MPI point-to-point on a private communicator.
#pragma once

#include <mpi.h>

#include <string>

#include "comm/transport.h"

namespace taskgrid::comm {

class MpiTransport final : public Transport {
 public:
  // Duplicates `comm` so TaskGrid's tags never meet the program's messages.
  // Transfers larger than `max_chunk` bytes travel as several messages.
  explicit MpiTransport(MPI_Comm comm, size_t max_chunk = kMaxChunk);
  ~MpiTransport() override;
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int max_tag() const override { return max_tag_; }
  MPI_Comm communicator() const { return comm_; }

  void send_control(int dest, std::vector<char>&& batch) override;
  bool receive_control(int& source, std::vector<char>& batch) override;
  void send_data(int dest, int tag, const void* data, size_t bytes, uint64_t cookie) override;
  void receive_data(int source, int tag, void* data, size_t bytes, uint64_t cookie) override;
  bool poll(std::vector<uint64_t>& finished) override;
  size_t pending() const override { return requests_.size(); }
  [[noreturn]] void abort_job(int status) override;

  static constexpr int kControlTag = 1;
  // Transfers are cut into chunks of at most this size (MPI counts are int).
  static constexpr size_t kMaxChunk = size_t{1} << 30;
  size_t max_chunk() const { return max_chunk_; }

 private:
  // One logical operation: a control send or a (chunked) data transfer.
  struct Operation {
    uint64_t cookie = 0;
    uint32_t chunks_left = 0;
    bool is_control = false;
    std::vector<char> control_buffer;
  };
  uint32_t new_operation();
  void add_request(MPI_Request request, uint32_t operation);
  void check(int code, const char* call);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int max_tag_ = 32767;
  size_t max_chunk_ = kMaxChunk;
  std::vector<MPI_Request> requests_;
  std::vector<uint32_t> request_operation_;  // parallel to requests_
  std::vector<Operation> operations_;
  std::vector<uint32_t> free_operations_;
  std::vector<int> completed_indices_;
};

}  // namespace taskgrid::comm
