// Groups of ranks, barriers and collectives on host memory (through MPI on
// the group's communicator, after the agreement check).
#include <algorithm>
#include <climits>
#include <string>

#include "pgas/collectives.h"
#include "pgas/device.h"
#include "pgas/state.h"

namespace taskgrid::pgas {

namespace {

constexpr int kCreateGroupTag = 31315;
// Collectives move at most this many elements per MPI call (counts are int).
constexpr size_t kMaxElements = size_t{1} << 28;

std::string label_of(const std::vector<int>& world_ranks) {
  std::string text = "group {";
  for (size_t i = 0; i < world_ranks.size(); ++i) {
    if (i == 8) {
      text += ", ... (" + std::to_string(world_ranks.size()) + " ranks)";
      break;
    }
    if (i > 0) text += ',';
    text += std::to_string(world_ranks[i]);
  }
  return text + "}";
}

uint64_t hash_of(const std::vector<int>& ranks) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a over the ranks, in order
  for (int rank : ranks) {
    hash ^= static_cast<uint64_t>(static_cast<uint32_t>(rank));
    hash *= 1099511628211ull;
  }
  return hash;
}

Group register_group(State& s, MPI_Comm comm, std::vector<int> world_ranks) {
  auto g = std::make_unique<GroupState>();
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  g->comm = comm;
  MPI_Comm_rank(comm, &g->my_rank);
  g->label = label_of(world_ranks);
  g->world_ranks = std::move(world_ranks);
  std::vector<int> members(g->world_ranks.size());
  for (size_t i = 0; i < members.size(); ++i) members[i] = static_cast<int>(i);
  g->agreement = std::make_unique<Agreement>(comm, std::move(members), g->world_ranks, g->label,
                                             s.timeout_seconds);
  s.groups.push_back(std::move(g));
  return GroupAccess::make(static_cast<uint32_t>(s.groups.size()));
}

// The world ranks of `comm`'s members, by their rank in it.
std::vector<int> world_ranks_of(State& s, MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::vector<int> ranks(static_cast<size_t>(size));
  MPI_Allgather(&s.rank, 1, MPI_INT, ranks.data(), 1, MPI_INT, comm);
  return ranks;
}

MPI_Datatype mpi_type(DataType type) {
  switch (type) {
    case DataType::int32:
      return MPI_INT32_T;
    case DataType::int64:
      return MPI_INT64_T;
    case DataType::uint32:
      return MPI_UINT32_T;
    case DataType::uint64:
      return MPI_UINT64_T;
    case DataType::float32:
      return MPI_FLOAT;
    case DataType::float64:
      return MPI_DOUBLE;
  }
  throw Error("pgas: unknown data type " + std::to_string(static_cast<int>(type)));
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return MPI_SUM;
    case ReduceOp::prod:
      return MPI_PROD;
    case ReduceOp::min:
      return MPI_MIN;
    case ReduceOp::max:
      return MPI_MAX;
  }
  throw Error("pgas: unknown reduction " + std::to_string(static_cast<int>(op)));
}

}  // namespace

GroupState& group_state(State& s, const Group& group, const char* call) {
  if (!group) throw Error(std::string(call) + ": an empty group (Group{})");
  if (group.id() > s.groups.size())
    throw Error(std::string(call) + ": unknown group #" + std::to_string(group.id()));
  GroupState& g = *s.groups[group.id() - 1];
  if (!g.live) throw Error(std::string(call) + ": " + g.label + " was freed");
  return g;
}

GroupState& member_state(State& s, const Group& group, const char* call) {
  GroupState& g = group_state(s, group, call);
  if (g.my_rank < 0)
    throw Error(std::string(call) + ": rank " + std::to_string(s.rank) + " is not a member of " +
                g.label);
  return g;
}

size_t type_size(DataType type) {
  switch (type) {
    case DataType::int32:
    case DataType::uint32:
    case DataType::float32:
      return 4;
    case DataType::int64:
    case DataType::uint64:
    case DataType::float64:
      return 8;
  }
  return 0;
}

void check_root(const GroupState& g, int root, const char* call) {
  if (root < 0 || root >= static_cast<int>(g.world_ranks.size()))
    throw Error(std::string(call) + ": root " + std::to_string(root) + " is not a rank of " +
                g.label + " (0.." + std::to_string(g.world_ranks.size() - 1) + ")");
}

void agree_collective(GroupState& g, CallKind kind, size_t count, DataType type, uint64_t op,
                      int root, const char* call) {
  CallRecord record;
  record.kind = kind;
  record.args[0] = count;
  record.args[1] = static_cast<uint64_t>(type);
  record.args[2] = op;
  record.args[3] = static_cast<uint64_t>(root);
  g.agreement->agree(record, call);
}

void check_type_and_op(DataType type, ReduceOp op) {
  mpi_type(type);  // each throws for a value that names nothing
  mpi_op(op);
}

void mpi_broadcast(GroupState& g, void* data, size_t count, DataType type, int root,
                   const char* call) {
  const MPI_Datatype datatype = mpi_type(type);
  char* cursor = static_cast<char*>(data);
  for (size_t done = 0; done < count;) {
    const size_t piece = std::min(count - done, kMaxElements);
    check_mpi(MPI_Bcast(cursor, static_cast<int>(piece), datatype, root, g.comm), call);
    cursor += piece * type_size(type);
    done += piece;
  }
}

void mpi_allreduce(GroupState& g, const void* send, void* recv, size_t count, DataType type,
                   ReduceOp op, const char* call) {
  const MPI_Datatype datatype = mpi_type(type);
  const MPI_Op mpi_operation = mpi_op(op);
  const size_t element = type_size(type);
  for (size_t done = 0; done < count;) {
    const size_t piece = std::min(count - done, kMaxElements);
    const char* from = static_cast<const char*>(send) + done * element;
    char* to = static_cast<char*>(recv) + done * element;
    check_mpi(MPI_Allreduce(send == recv ? MPI_IN_PLACE : from, to, static_cast<int>(piece),
                            datatype, mpi_operation, g.comm),
              call);
    done += piece;
  }
}

int Group::size() const {
  State& s = state("pgas::Group::size");
  return static_cast<int>(group_state(s, *this, "pgas::Group::size").world_ranks.size());
}

int Group::rank() const {
  State& s = state("pgas::Group::rank");
  return group_state(s, *this, "pgas::Group::rank").my_rank;
}

int Group::world_rank(int group_rank) const {
  State& s = state("pgas::Group::world_rank");
  const GroupState& g = group_state(s, *this, "pgas::Group::world_rank");
  check_root(g, group_rank, "pgas::Group::world_rank");
  return g.world_ranks[static_cast<size_t>(group_rank)];
}

Group world() {
  state("pgas::world");
  return GroupAccess::make(1);
}

Group create_group(std::span<const int> world_ranks) {
  State& s = state("pgas::create_group");
  std::vector<int> ranks(world_ranks.begin(), world_ranks.end());
  if (ranks.empty()) throw Error("pgas::create_group: an empty list of ranks");
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= s.ranks)
      throw Error("pgas::create_group: rank " + std::to_string(sorted[i]) +
                  " is not a rank of the job (0.." + std::to_string(s.ranks - 1) + ")");
    if (i > 0 && sorted[i] == sorted[i - 1])
      throw Error("pgas::create_group: rank " + std::to_string(sorted[i]) + " is listed twice");
  }
  if (!std::binary_search(sorted.begin(), sorted.end(), s.rank))
    throw Error("pgas::create_group: rank " + std::to_string(s.rank) + " is not in " +
                label_of(ranks) + "; only the listed ranks call create_group");
  // No communicator of the group exists yet: the check runs between its
  // members on the layer's spare copy of the world, rooted at the lowest rank.
  Agreement agreement(s.adhoc_comm, sorted, sorted, label_of(ranks), s.timeout_seconds);
  CallRecord record;
  record.kind = CallKind::create_group;
  record.args[0] = ranks.size();
  record.args[1] = hash_of(ranks);
  agreement.agree(record, "pgas::create_group");

  MPI_Group world_group, members;
  MPI_Comm_group(s.world_comm, &world_group);
  MPI_Group_incl(world_group, static_cast<int>(ranks.size()), ranks.data(), &members);
  MPI_Comm comm = MPI_COMM_NULL;
  const int code = MPI_Comm_create_group(s.world_comm, members, kCreateGroupTag, &comm);
  MPI_Group_free(&members);
  MPI_Group_free(&world_group);
  check_mpi(code, "pgas::create_group");
  return register_group(s, comm, std::move(ranks));
}

Group split(const Group& parent, int colour, int key) {
  State& s = state("pgas::split");
  GroupState& p = member_state(s, parent, "pgas::split");
  CallRecord record;
  record.kind = CallKind::split;
  p.agreement->agree(record, "pgas::split");
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(p.comm, colour < 0 ? MPI_UNDEFINED : colour, key, &comm), "pgas::split");
  if (comm == MPI_COMM_NULL) return Group{};
  return register_group(s, comm, world_ranks_of(s, comm));
}

Group merge(const Group& a, const Group& b) {
  State& s = state("pgas::merge");
  const GroupState* in_a = a ? &group_state(s, a, "pgas::merge") : nullptr;
  const GroupState* in_b = b ? &group_state(s, b, "pgas::merge") : nullptr;
  if (in_a && in_a->my_rank < 0) in_a = nullptr;
  if (in_b && in_b->my_rank < 0) in_b = nullptr;
  CallRecord record;
  record.kind = CallKind::merge;
  world_group(s).agreement->agree(record, "pgas::merge");
  // a's members first, in a's order, then b's members that are not in a.
  const int colour = (in_a || in_b) ? 0 : MPI_UNDEFINED;
  const int key = in_a ? in_a->my_rank : in_b ? (1 << 24) + in_b->my_rank : 0;
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(s.world_comm, colour, key, &comm), "pgas::merge");
  if (comm == MPI_COMM_NULL) return Group{};
  return register_group(s, comm, world_ranks_of(s, comm));
}

void free_group(Group& group) {
  State& s = state("pgas::free_group");
  if (group.id() == 1) throw Error("pgas::free_group: the world group cannot be freed");
  GroupState& g = member_state(s, group, "pgas::free_group");
  CallRecord record;
  record.kind = CallKind::free_group;
  g.agreement->agree(record, "pgas::free_group");
  release_group_device(s, group.id());
  MPI_Comm_free(&g.comm);
  g.live = false;
  g.agreement.reset();
  GroupAccess::clear(group);
}

void barrier(const Group& group) {
  State& s = state("pgas::barrier");
  GroupState& g = member_state(s, group, "pgas::barrier");
  check_mpi(MPI_Win_flush_all(s.window), "pgas::barrier");
  // The check is itself a barrier: the root answers once every member came.
  CallRecord record;
  record.kind = CallKind::barrier;
  g.agreement->agree(record, "pgas::barrier");
  // Memory barrier for this rank's own loads of what others put here.
  MPI_Win_sync(s.window);
}

void broadcast(void* data, size_t count, DataType type, int root, const Group& group) {
  State& s = state("pgas::broadcast");
  GroupState& g = member_state(s, group, "pgas::broadcast");
  check_root(g, root, "pgas::broadcast");
  mpi_type(type);  // throws for an unknown type
  agree_collective(g, CallKind::broadcast, count, type, 0, root, "pgas::broadcast");
  mpi_broadcast(g, data, count, type, root, "pgas::broadcast");
}

void reduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op, int root,
            const Group& group) {
  State& s = state("pgas::reduce");
  GroupState& g = member_state(s, group, "pgas::reduce");
  check_root(g, root, "pgas::reduce");
  const MPI_Datatype datatype = mpi_type(type);
  const MPI_Op mpi_operation = mpi_op(op);
  agree_collective(g, CallKind::reduce, count, type, static_cast<uint64_t>(op), root,
                   "pgas::reduce");
  const bool root_in_place = send == recv && g.my_rank == root;
  const size_t element = type_size(type);
  for (size_t done = 0; done < count;) {
    const size_t piece = std::min(count - done, kMaxElements);
    const char* from = static_cast<const char*>(send) + done * element;
    char* to = recv ? static_cast<char*>(recv) + done * element : nullptr;
    check_mpi(MPI_Reduce(root_in_place ? MPI_IN_PLACE : from, g.my_rank == root ? to : nullptr,
                         static_cast<int>(piece), datatype, mpi_operation, root, g.comm),
              "pgas::reduce");
    done += piece;
  }
}

void allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op,
               const Group& group) {
  State& s = state("pgas::allreduce");
  GroupState& g = member_state(s, group, "pgas::allreduce");
  check_type_and_op(type, op);
  agree_collective(g, CallKind::allreduce, count, type, static_cast<uint64_t>(op), 0,
                   "pgas::allreduce");
  mpi_allreduce(g, send, recv, count, type, op, "pgas::allreduce");
}

}  // namespace taskgrid::pgas
