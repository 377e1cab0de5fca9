#include "comm/mpi/transport.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>

#include "comm/mpi/affinity.h"

namespace taskgrid::comm::mpi {

MpiTransport::MpiTransport(MPI_Comm comm, size_t max_chunk)
    : max_chunk_(max_chunk == 0 || max_chunk > kMaxChunk ? kMaxChunk : max_chunk) {
  for (MPI_Comm* mine : {&comm_, &data_comm_, &bulk_comm_, &group_parent_}) {
    MPI_Comm_dup(comm, mine);
    MPI_Comm_set_errhandler(*mine, MPI_ERRORS_RETURN);
  }
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  arriving_ = std::make_unique<std::atomic<uint64_t>[]>(static_cast<size_t>(size_));
  int* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &found);
  if (found && tag_ub) max_tag_ = *tag_ub;
  // Which ranks share a node: each is named by the lowest rank on it.
  MPI_Comm node;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  int32_t leader = rank_;
  MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT32_T, MPI_MIN, node);
  node_of_rank_.resize(static_cast<size_t>(size_));
  MPI_Allgather(&leader, 1, MPI_INT32_T, node_of_rank_.data(), 1, MPI_INT32_T, comm_);
  set_up_doorbells(node);
  MPI_Comm_free(&node);
}

void MpiTransport::set_up_doorbells(MPI_Comm node) {
  doorbells_.assign(static_cast<size_t>(size_), nullptr);
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  can_probe_while_idle_ = provided == MPI_THREAD_MULTIPLE;
  int node_size = 1;
  MPI_Comm_size(node, &node_size);
  // Only the ranks that may run on this rank's cores compete for them (a
  // launcher that binds each rank to cores of its own leaves none).
  const std::vector<bool> sharing = ranks_sharing_my_cores(node);
  const int competing = static_cast<int>(std::count(sharing.begin(), sharing.end(), true));
  const int usable = usable_cores();
  int more_ranks_than_cores = usable > 0 && competing > usable ? 1 : 0;
  // Every rank of the node must agree (one may be bound to fewer cores).
  MPI_Allreduce(MPI_IN_PLACE, &more_ranks_than_cores, 1, MPI_INT, MPI_MAX, node);
  oversubscribed_ = more_ranks_than_cores > 0;
  usable_cores_ = usable;
  cores_per_rank_ = usable / competing;
  // A slot per rank, each on its own cache line: a rank's sleeping and
  // waking does not disturb its neighbours' lines.
  constexpr MPI_Aint kSlot = 64;
  static_assert(sizeof(WakeupWords) <= kSlot);
  void* base = nullptr;
  MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
  int ok = MPI_Win_allocate_shared(kSlot, 1, MPI_INFO_NULL, node, &base, &doorbell_window_) ==
           MPI_SUCCESS;
  // All or none: a rank without its window would never ring the others.
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, node);
  if (!ok) {
    if (doorbell_window_ != MPI_WIN_NULL) MPI_Win_free(&doorbell_window_);
    return;
  }
  own_doorbell_ = new (base) WakeupWords;
  // Only atomics touch the slots (no RMA call): a fence, then a barrier so
  // that every slot is constructed before anybody rings it.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  MPI_Barrier(node);
  MPI_Group node_group, world_group;
  MPI_Comm_group(node, &node_group);
  MPI_Comm_group(comm_, &world_group);
  for (int peer = 0; peer < node_size; ++peer) {
    MPI_Aint bytes = 0;
    int unit = 0;
    void* slot = nullptr;
    MPI_Win_shared_query(doorbell_window_, peer, &bytes, &unit, &slot);
    int world = MPI_UNDEFINED;
    MPI_Group_translate_ranks(node_group, 1, &peer, world_group, &world);
    if (world != MPI_UNDEFINED && slot) {
      doorbells_[static_cast<size_t>(world)] = static_cast<WakeupWords*>(slot);
      if (world != rank_ && sharing[static_cast<size_t>(peer)])
        node_doorbells_.push_back(static_cast<WakeupWords*>(slot));
    }
  }
  doorbells_[static_cast<size_t>(rank_)] = nullptr;  // this rank wakes itself through notify()
  MPI_Group_free(&node_group);
  MPI_Group_free(&world_group);
}

bool MpiTransport::message_waiting() {
  if (!can_probe_while_idle_) return false;
  int flag = 0;
  for (MPI_Comm comm : {data_comm_, bulk_comm_}) {
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
    if (flag) return true;
  }
  return false;
}

void MpiTransport::idle(IdleBackoff& backoff, Wakeup& wakeup, bool streaming) {
  if (!own_doorbell_) {
    backoff.idle(wakeup, streaming);
    return;
  }
  // Rung by every sender of the node, a sleeper wakes as soon as a message
  // comes (from another node: within the sleep's bound, 500 µs). Where the
  // node's ranks outnumber its cores and more of them are awake than it has
  // cores, an idle rank sleeps early, so that the rank with work has the
  // core: at 3 ranks on 2 cores (Task Bench stencil, 40 µs tasks) 5 µs
  // spinning and 20 µs yielding did best of the combinations tried, 1.4-1.6x
  // faster than yielding for 2 ms. With a rank asleep, the others poll as
  // on a node of their own (comm::phases_on_shared_node).
  static constexpr IdlePhases kSharing{std::chrono::microseconds{5}, std::chrono::microseconds{20}};
  const IdlePhases& phases = oversubscribed_
                                 ? phases_on_shared_node(awake_ranks_on_node(), usable_cores_,
                                                         IdleBackoff::kPolling, kSharing)
                                 : IdleBackoff::kPolling;
  backoff.idle(wakeup, streaming, phases, [this] { return message_waiting(); });
}

int MpiTransport::awake_ranks_on_node() const {
  int awake = 1;  // this rank, which is polling
  for (const WakeupWords* bell : node_doorbells_)
    awake += bell->sleep.sleepers.load(std::memory_order_relaxed) == 0 ? 1 : 0;
  return awake;
}

MpiTransport::~MpiTransport() {
  if (doorbell_window_ != MPI_WIN_NULL) {
    own_doorbell_->~WakeupWords();
    MPI_Win_free(&doorbell_window_);
  }
  for (MPI_Comm& group : group_comms_) MPI_Comm_free(&group);
  for (MPI_Comm* mine : {&comm_, &data_comm_, &bulk_comm_, &group_parent_})
    if (*mine != MPI_COMM_NULL) MPI_Comm_free(mine);
}

void MpiTransport::check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(call) + " failed on rank " + std::to_string(rank_) + ": " +
                           std::string(text, static_cast<size_t>(length)));
}

uint32_t MpiTransport::new_operation(Operation::Kind kind, uint64_t cookie, size_t bytes,
                                     int peer) {
  uint32_t index;
  if (!free_operations_.empty()) {
    index = free_operations_.back();
    free_operations_.pop_back();
  } else {
    operations_.emplace_back();
    index = static_cast<uint32_t>(operations_.size() - 1);
  }
  Operation& operation = operations_[index];
  operation.kind = kind;
  operation.cookie = cookie;
  operation.chunks_left = 0;
  operation.key = 0;
  operation.from = -1;
  operation.arriving = 0;
  operation.bulk = peer >= 0 && copied_locally(peer, bytes);
  if (operation.bulk) bulk_operations_ += 1;
  return index;
}

void MpiTransport::add_request(MPI_Request request, uint32_t operation) {
  requests_.push_back(request);
  request_operation_.push_back(operation);
  operations_[operation].chunks_left += 1;
}

size_t MpiTransport::pending() const {
  return requests_.size() + expected_.size() + stashed_.size() + finished_early_.size();
}

void MpiTransport::send_control(int dest, std::vector<char>&& batch) {
  const uint32_t op = new_operation(Operation::Kind::control, 0);
  operations_[op].buffer = std::move(batch);
  MPI_Request request;
  check(MPI_Isend(operations_[op].buffer.data(), static_cast<int>(operations_[op].buffer.size()),
                  MPI_BYTE, dest, kControlTag, data_comm_, &request),
        "MPI_Isend (control)");
  add_request(request, op);
  ring(dest);
}

bool MpiTransport::receive_control(int& source, std::vector<char>& batch) {
  if (!control_waiting_ && !probe_arrivals()) return false;
  control_waiting_ = false;
  batch.resize(static_cast<size_t>(control_count_));
  check(MPI_Mrecv(batch.data(), control_count_, MPI_BYTE, &control_message_, MPI_STATUS_IGNORE),
        "MPI_Mrecv");
  source = control_source_;
  return true;
}

size_t MpiTransport::data_piece_bytes(size_t bytes) const {
  if (bytes <= max_chunk_) return bytes;
  // At most kMaxChunksPerTransfer chunks: every chunk's receive is posted at
  // once, and MPI runs out of requests long before a tiny chunk limit
  // (TASKGRID_CHUNK_BYTES=1) would run out of chunks. Both ends compute the
  // same sizes from the same limit (a job-wide setting) and byte count.
  const size_t fewest = (bytes + kMaxChunksPerTransfer - 1) / kMaxChunksPerTransfer;
  return std::max(max_chunk_, fewest);
}

void MpiTransport::send_data_piece(int dest, int tag, const void* data, size_t bytes, size_t total,
                                   uint64_t cookie) {
  if (total <= max_chunk_) {
    send_data(dest, tag, data, bytes, cookie);
    return;
  }
  if (bytes > data_piece_bytes(total))
    throw std::logic_error("taskgrid: a data piece larger than the transfer's pieces");
  const uint32_t op = new_operation(Operation::Kind::data, cookie, bytes, dest);
  MPI_Request request;
  check(MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, dest, tag, bulk_comm_, &request),
        "MPI_Isend (data piece)");
  add_request(request, op);
  ring(dest);
}

template <typename Post>
void MpiTransport::for_each_chunk(void* data, size_t bytes, Post&& post) const {
  const size_t size = data_piece_bytes(bytes);
  char* at = static_cast<char*>(data);
  for (size_t left = bytes; left > 0;) {
    const size_t chunk = left < size ? left : size;
    post(at, static_cast<int>(chunk));
    at += chunk;
    left -= chunk;
  }
}

void MpiTransport::send_data(int dest, int tag, const void* data, size_t bytes, uint64_t cookie) {
  if (bytes <= kAtOnceBytes && bytes <= max_chunk_) {
    // Sent eagerly, such a send is complete at once: one test now costs a
    // fifth of a later MPI_Testsome (callgrind, MPICH) and keeps no request.
    MPI_Request request;
    check(MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, dest, tag, data_comm_, &request),
          "MPI_Isend (data)");
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test (data)");
    if (done) {
      finished_early_.push_back(cookie);
    } else {
      add_request(request, new_operation(Operation::Kind::data, cookie, bytes, dest));
    }
    ring(dest);
    return;
  }
  const uint32_t op = new_operation(Operation::Kind::data, cookie, bytes, dest);
  if (bytes <= max_chunk_) {
    MPI_Request request;
    check(MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, dest, tag, data_comm_, &request),
          "MPI_Isend (data)");
    add_request(request, op);
    ring(dest);
    return;
  }
  // Chunks share one tag: MPI's non-overtaking rule keeps them in order.
  for_each_chunk(const_cast<void*>(data), bytes, [&](char* at, int chunk) {
    MPI_Request request;
    check(MPI_Isend(at, chunk, MPI_BYTE, dest, tag, bulk_comm_, &request), "MPI_Isend (bulk data)");
    add_request(request, op);
  });
  ring(dest);
}

void MpiTransport::receive_data(int source, int tag, void* data, size_t bytes, uint64_t cookie) {
  if (bytes > max_chunk_) {
    const uint32_t op = new_operation(Operation::Kind::data, cookie, bytes, source);
    arriving_until_done(op, source, bytes);
    for_each_chunk(data, bytes, [&](char* at, int chunk) {
      MPI_Request request;
      check(MPI_Irecv(at, chunk, MPI_BYTE, source, tag, bulk_comm_, &request),
            "MPI_Irecv (bulk data)");
      add_request(request, op);
    });
    return;
  }
  const uint64_t key = key_of(source, tag);
  const Expected expected{data, bytes, cookie};
  if (auto it = stashed_.find(key); it != stashed_.end()) {
    // It arrived first. Copy now if complete, else when it completes.
    if (it->second.complete) {
      deliver_stash(it->second, expected, finished_early_);
      stashed_.erase(it);
    } else {
      it->second.expected = true;
      it->second.expectation = expected;  // counted as arriving since its envelope came
    }
    return;
  }
  if (!expected_.emplace(key, expected).second)
    throw std::runtime_error("taskgrid: two transfers expected from rank " +
                             std::to_string(source) + " with tag " + std::to_string(tag));
  arriving(source, bytes);
}

void MpiTransport::send_chunk(int dest, int tag, const void* data, size_t bytes, uint64_t cookie) {
  if (bytes > max_chunk_) throw std::logic_error("taskgrid: a chunk larger than the chunk limit");
  const uint32_t op = new_operation(Operation::Kind::data, cookie, bytes, dest);
  MPI_Request request;
  check(MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, dest, tag, bulk_comm_, &request),
        "MPI_Isend (chunk)");
  add_request(request, op);
  ring(dest);
}

void MpiTransport::receive_chunk(int source, int tag, void* data, size_t bytes, uint64_t cookie) {
  if (bytes > max_chunk_) throw std::logic_error("taskgrid: a chunk larger than the chunk limit");
  const uint32_t op = new_operation(Operation::Kind::data, cookie, bytes, source);
  arriving_until_done(op, source, bytes);
  MPI_Request request;
  check(MPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, source, tag, bulk_comm_, &request),
        "MPI_Irecv (chunk)");
  add_request(request, op);
}

int MpiTransport::create_group(const std::vector<int32_t>& members, int tag) {
  if (int id = find_group(members)) return id;
  // Created without the lock: MPI_Comm_create_group blocks until every member
  // joins, and meanwhile the polling thread must go on moving the data the
  // other members' programs may wait for before they can join. One thread
  // creates groups, so no set is created twice.
  MPI_Group all, group;
  MPI_Comm_group(group_parent_, &all);
  MPI_Group_incl(all, static_cast<int>(members.size()), members.data(), &group);
  MPI_Comm comm = MPI_COMM_NULL;
  const int code = MPI_Comm_create_group(group_parent_, group, tag, &comm);
  MPI_Group_free(&group);
  MPI_Group_free(&all);
  if (code == MPI_SUCCESS && comm == MPI_COMM_NULL)
    throw std::runtime_error("taskgrid: rank " + std::to_string(rank_) +
                             " created a broadcast group it is not a member of");
  check(code, "MPI_Comm_create_group (broadcast group)");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  bool local = false;
  for (int32_t member : members) local |= member != rank_ && same_node(member);
  std::lock_guard lock(groups_mutex_);
  group_comms_.push_back(comm);
  group_copies_locally_.push_back(local);
  const int id = static_cast<int>(group_comms_.size());
  group_ids_.emplace(members, id);
  return id;
}

int MpiTransport::find_group(const std::vector<int32_t>& members) {
  std::lock_guard lock(groups_mutex_);
  auto it = group_ids_.find(members);
  return it == group_ids_.end() ? 0 : it->second;
}

void MpiTransport::broadcast_chunk(int group, int root, void* data, size_t bytes, uint64_t cookie) {
  if (bytes > max_chunk_) throw std::logic_error("taskgrid: a chunk larger than the chunk limit");
  MPI_Comm comm;
  bool local;
  {
    std::lock_guard lock(groups_mutex_);
    comm = group_comms_.at(static_cast<size_t>(group - 1));
    local = group_copies_locally_[static_cast<size_t>(group - 1)];
  }
  const uint32_t op = new_operation(Operation::Kind::data, cookie);
  // MPI copies within the node only while every member polls (see copying_bulk_data).
  if (local && bytes >= kBulkBytes) {
    operations_[op].bulk = true;
    bulk_operations_ += 1;
  }
  MPI_Request request;
  check(MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm, &request), "MPI_Ibcast");
  add_request(request, op);
}

void MpiTransport::deliver_stash(Stashed& stash, const Expected& expected,
                                 std::vector<uint64_t>& finished) {
  if (stash.bytes.size() != expected.bytes)
    throw std::runtime_error("taskgrid: a transfer of " + std::to_string(stash.bytes.size()) +
                             " bytes arrived where " + std::to_string(expected.bytes) +
                             " were expected");
  if (expected.bytes) std::memcpy(expected.data, stash.bytes.data(), expected.bytes);
  finished.push_back(expected.cookie);
}

bool MpiTransport::probe_arrivals() {
  // One probe per engine pass finds both kinds of message (control batches
  // and data share a communicator; data tags start above kControlTag):
  // MPI_Improbe is a few hundred instructions, with MPICH's lock.
  probed_ = true;
  if (control_waiting_) return true;  // a matched batch first, or it would be lost
  for (;;) {
    int flag = 0;
    MPI_Message message;
    MPI_Status status;
    check(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, data_comm_, &flag, &message, &status),
          "MPI_Improbe");
    if (!flag) return false;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    if (status.MPI_TAG == kControlTag) {
      // Received by receive_control, into the caller's buffer.
      control_waiting_ = true;
      control_message_ = message;
      control_count_ = count;
      control_source_ = status.MPI_SOURCE;
      return true;
    }
    data_matched_ = true;
    const uint64_t key = key_of(status.MPI_SOURCE, status.MPI_TAG);
    MPI_Request request;
    if (auto it = expected_.find(key); it != expected_.end()) {
      if (static_cast<size_t>(count) != it->second.bytes)
        throw std::runtime_error("taskgrid: a transfer of " + std::to_string(count) +
                                 " bytes from rank " + std::to_string(status.MPI_SOURCE) +
                                 " arrived where " + std::to_string(it->second.bytes) +
                                 " were expected");
      if (static_cast<size_t>(count) <= kAtOnceBytes) {
        // Sent eagerly (its bytes are here already): received now, its task
        // can start in this pass without a request to test.
        check(MPI_Mrecv(it->second.data, count, MPI_BYTE, &message, MPI_STATUS_IGNORE),
              "MPI_Mrecv");
        arrived(status.MPI_SOURCE, static_cast<size_t>(count));
        finished_early_.push_back(it->second.cookie);
      } else {
        const uint32_t op = new_operation(Operation::Kind::data, it->second.cookie,
                                          static_cast<size_t>(count), status.MPI_SOURCE);
        arriving_until_done(op, status.MPI_SOURCE, static_cast<size_t>(count), true);
        check(MPI_Imrecv(it->second.data, count, MPI_BYTE, &message, &request), "MPI_Imrecv");
        add_request(request, op);
      }
      expected_.erase(it);
      continue;
    }
    // Not expected yet: receive it aside (a message left unreceived would hide
    // every later one from MPI_Improbe).
    Stashed& stash = stashed_[key];
    stash.bytes.resize(static_cast<size_t>(count));
    if (static_cast<size_t>(count) <= kAtOnceBytes) {
      check(MPI_Mrecv(stash.bytes.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE),
            "MPI_Mrecv (stash)");
      stash.complete = true;
      continue;
    }
    const uint32_t op =
        new_operation(Operation::Kind::stash, 0, static_cast<size_t>(count), status.MPI_SOURCE);
    operations_[op].key = key;
    // Not asked for yet, but on its way: the sender's beats queue behind it too.
    arriving_until_done(op, status.MPI_SOURCE, static_cast<size_t>(count));
    check(MPI_Imrecv(stash.bytes.data(), count, MPI_BYTE, &message, &request),
          "MPI_Imrecv (stash)");
    add_request(request, op);
  }
}

bool MpiTransport::poll(std::vector<uint64_t>& finished) {
  // receive_control probed in this pass already (data behind a control
  // batch it stopped at waits for the next pass).
  if (!probed_) probe_arrivals();
  probed_ = false;
  bool any = data_matched_;
  data_matched_ = false;
  if (!finished_early_.empty()) {
    finished.insert(finished.end(), finished_early_.begin(), finished_early_.end());
    finished_early_.clear();
    any = true;
  }
  if (requests_.empty()) return any;
  completed_indices_.resize(requests_.size());
  int count = 0;
  check(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count,
                     completed_indices_.data(), MPI_STATUSES_IGNORE),
        "MPI_Testsome");
  if (count <= 0) return any;
  for (int i = 0; i < count; ++i) {
    const uint32_t op =
        request_operation_[static_cast<size_t>(completed_indices_[static_cast<size_t>(i)])];
    Operation& operation = operations_[op];
    if (--operation.chunks_left > 0) continue;
    switch (operation.kind) {
      case Operation::Kind::control:
        operation.buffer = {};
        break;
      case Operation::Kind::data:
        finished.push_back(operation.cookie);
        break;
      case Operation::Kind::stash: {
        auto it = stashed_.find(operation.key);
        it->second.complete = true;
        if (it->second.expected) {
          deliver_stash(it->second, it->second.expectation, finished);
          stashed_.erase(it);
        }
        break;
      }
    }
    if (operation.from >= 0) arrived(operation.from, operation.arriving);
    operation.from = -1;
    if (operation.bulk) bulk_operations_ -= 1;
    operation.bulk = false;
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

}  // namespace taskgrid::comm::mpi
