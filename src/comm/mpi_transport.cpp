#include "comm/mpi_transport.h"

#include <cstdio>
#include <stdexcept>

namespace taskgrid::comm {

MpiTransport::MpiTransport(MPI_Comm comm, size_t max_chunk)
    : max_chunk_(max_chunk == 0 || max_chunk > kMaxChunk ? kMaxChunk : max_chunk) {
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  int* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &found);
  if (found && tag_ub) max_tag_ = *tag_ub;
}

MpiTransport::~MpiTransport() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiTransport::check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(call) + " failed on rank " + std::to_string(rank_) + ": " +
                           std::string(text, static_cast<size_t>(length)));
}

uint32_t MpiTransport::new_operation() {
  if (!free_operations_.empty()) {
    const uint32_t index = free_operations_.back();
    free_operations_.pop_back();
    return index;
  }
  operations_.emplace_back();
  return static_cast<uint32_t>(operations_.size() - 1);
}

void MpiTransport::add_request(MPI_Request request, uint32_t operation) {
  requests_.push_back(request);
  request_operation_.push_back(operation);
}

void MpiTransport::send_control(int dest, std::vector<char>&& batch) {
  const uint32_t op = new_operation();
  Operation& operation = operations_[op];
  operation.is_control = true;
  operation.chunks_left = 1;
  operation.control_buffer = std::move(batch);
  MPI_Request request;
  check(MPI_Isend(operation.control_buffer.data(),
                  static_cast<int>(operation.control_buffer.size()), MPI_BYTE, dest, kControlTag,
                  comm_, &request),
        "MPI_Isend (control)");
  add_request(request, op);
}

bool MpiTransport::receive_control(int& source, std::vector<char>& batch) {
  int flag = 0;
  MPI_Message message;
  MPI_Status status;
  check(MPI_Improbe(MPI_ANY_SOURCE, kControlTag, comm_, &flag, &message, &status), "MPI_Improbe");
  if (!flag) return false;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  batch.resize(static_cast<size_t>(count));
  check(MPI_Mrecv(batch.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE), "MPI_Mrecv");
  source = status.MPI_SOURCE;
  return true;
}

void MpiTransport::send_data(int dest, int tag, const void* data, size_t bytes, uint64_t cookie) {
  const uint32_t op = new_operation();
  Operation& operation = operations_[op];
  operation.cookie = cookie;
  operation.is_control = false;
  operation.chunks_left = 0;
  // Chunks share one tag: MPI's non-overtaking rule keeps them in order.
  const char* at = static_cast<const char*>(data);
  size_t left = bytes;
  do {
    const size_t chunk = left < max_chunk_ ? left : max_chunk_;
    MPI_Request request;
    check(MPI_Isend(at, static_cast<int>(chunk), MPI_BYTE, dest, tag, comm_, &request),
          "MPI_Isend (data)");
    add_request(request, op);
    operations_[op].chunks_left += 1;
    at += chunk;
    left -= chunk;
  } while (left > 0);
}

void MpiTransport::receive_data(int source, int tag, void* data, size_t bytes, uint64_t cookie) {
  const uint32_t op = new_operation();
  Operation& operation = operations_[op];
  operation.cookie = cookie;
  operation.is_control = false;
  operation.chunks_left = 0;
  char* at = static_cast<char*>(data);
  size_t left = bytes;
  do {
    const size_t chunk = left < max_chunk_ ? left : max_chunk_;
    MPI_Request request;
    check(MPI_Irecv(at, static_cast<int>(chunk), MPI_BYTE, source, tag, comm_, &request),
          "MPI_Irecv (data)");
    add_request(request, op);
    operations_[op].chunks_left += 1;
    at += chunk;
    left -= chunk;
  } while (left > 0);
}

bool MpiTransport::poll(std::vector<uint64_t>& finished) {
  if (requests_.empty()) return false;
  completed_indices_.resize(requests_.size());
  int count = 0;
  check(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count,
                     completed_indices_.data(), MPI_STATUSES_IGNORE),
        "MPI_Testsome");
  if (count <= 0) return false;
  for (int i = 0; i < count; ++i) {
    const uint32_t op = request_operation_[static_cast<size_t>(completed_indices_[static_cast<size_t>(i)])];
    Operation& operation = operations_[op];
    if (--operation.chunks_left > 0) continue;
    if (operation.is_control) {
      operation.control_buffer = {};
    } else {
      finished.push_back(operation.cookie);
    }
    free_operations_.push_back(op);
  }
  // Drop the completed (now MPI_REQUEST_NULL) slots, keeping the arrays parallel.
  size_t kept = 0;
  for (size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i] == MPI_REQUEST_NULL) continue;
    requests_[kept] = requests_[i];
    request_operation_[kept] = request_operation_[i];
    ++kept;
  }
  requests_.resize(kept);
  request_operation_.resize(kept);
  return true;
}

void MpiTransport::abort_job(int status) {
  MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);
}

}  // namespace taskgrid::comm
