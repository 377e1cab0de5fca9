// miniamr-taskgrid: miniAMR as TaskGrid tasks in spmd mode.
//
//   mpiexec -n 2 miniamr-taskgrid --npx 2 [reference flags] [--print_checksums]
//   [--print_block_sums] (TASKGRID_THREADS=2 for two task threads per rank)
//
// Every rank runs this program and keeps the whole mesh (mesh.hpp), so all
// ranks submit the same tasks with no messages about the mesh itself; each
// block is a handle owned by the rank the mesh gives it. Per stage and
// variable group:
//   pack      in(block) -> out(face) for each face it sends (one task per block)
//   send      in(faces) task_comm::isend, one message per face, at most
//   recv      out(faces) task_comm::irecv  --max_comm_tasks per rank pair and direction
//                                          (the direction's channel: x 0, y 1, z 2)
//   update    inout(block), in(incoming faces): ghosts, boundary, stencil
// There is no barrier between stencil and exchange: a block's next pack
// waits only for its own update, and its update only for its neighbours'
// faces. The 27-point stencil exchanges x, then y, then z (an update task
// per direction; the last one runs the stencil).
// Checksums are tasks too: per rank, the sums of its blocks go through
// task_comm::iallreduce; the program checks them at the end of the
// timestep (the seed's delayed checksum), in the reference's order.
// Refinement is decided by every rank alone (the mesh is replicated); the
// cells follow as tasks on the blocks' new owners: split (in parent ->
// out child), consolidate (in 8 children -> out parent) and load-balance
// moves (in old -> out new), the runtime carrying the data between ranks.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <taskgrid/task_comm.hpp>
#include <taskgrid/taskgrid.hpp>
#include <tuple>
#include <type_traits>
#include <vector>

#include "block_data.hpp"
#include "faces.hpp"
#include "mesh.hpp"
#include "report.hpp"

namespace {

using namespace miniamr;
using taskgrid::DataAccess;
using taskgrid::DataHandle;
using taskgrid::TaskContext;

constexpr int kFaceTag = 17;
constexpr int kChecksumChannel = 3;  // channels 0-2: faces of x, y, z
constexpr int kChannelsNeeded = 4;
// Task priorities (among tasks ready at once on a rank).
constexpr int kUrgent = 2, kSoon = 1, kLater = 0;

// Task arguments: a fixed header followed by arrays, read with memcpy.
class ArgWriter {
 public:
  ArgWriter() { bytes_.reserve(256); }
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    // spmd ranks compare task arguments byte for byte: no padding bytes.
    static_assert(std::has_unique_object_representations_v<T>, "a task argument with padding");
    const auto* first = reinterpret_cast<const char*>(&value);
    bytes_.insert(bytes_.end(), first, first + sizeof(T));
  }
  const void* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  std::vector<char> bytes_;
};

class ArgReader {
 public:
  explicit ArgReader(TaskContext& ctx) : ctx_(ctx) {}
  template <typename T>
  T get() {
    const T value = ctx_.arg<T>(offset_);  // checked: never past the arguments
    offset_ += sizeof(T);
    return value;
  }

 private:
  TaskContext& ctx_;
  size_t offset_ = 0;
};

// ------------------------------------------------------------------ tasks --

void amr_init(TaskContext& ctx) {
  ArgReader args(ctx);
  const auto shape = args.get<BlockShape>();
  init_block(shape, args.get<int64_t>(), ctx.data_as<double>(0));
}

// in(block) -> out(face) per message.
void amr_pack(TaskContext& ctx) {
  ArgReader args(ctx);
  const auto shape = args.get<BlockShape>();
  const int count = args.get<int>();
  const double* block = ctx.data_as<const double>(0);
  for (int n = 0; n < count; ++n)
    pack_face(shape, block, args.get<FaceMessage>(),
              ctx.data_as<double>(static_cast<size_t>(n) + 1));
}

// in(faces): one isend each; out(faces): one irecv each. The task completes
// with its messages.
void amr_send(TaskContext& ctx) {
  ArgReader args(ctx);
  const int peer = args.get<int>(), count = args.get<int>();
  for (int n = 0; n < count; ++n)
    taskgrid::task_comm::isend(ctx, ctx.data(static_cast<size_t>(n)), args.get<int>(), MPI_DOUBLE,
                               peer, kFaceTag);
}
void amr_recv(TaskContext& ctx) {
  ArgReader args(ctx);
  const int peer = args.get<int>(), count = args.get<int>();
  for (int n = 0; n < count; ++n)
    taskgrid::task_comm::irecv(ctx, ctx.data(static_cast<size_t>(n)), args.get<int>(), MPI_DOUBLE,
                               peer, kFaceTag);
}

// inout(block), in(face) per message: ghosts, the domain's boundary, and
// (when `points` is not 0) the stencil on the group's variables.
void amr_update(TaskContext& ctx) {
  ArgReader args(ctx);
  const auto shape = args.get<BlockShape>();
  const int points = args.get<int>(), first_var = args.get<int>(), vars = args.get<int>();
  const int incoming = args.get<int>(), boundaries = args.get<int>();
  const bool ghost_rows = args.get<int>() != 0;
  double* block = ctx.data_as<double>(0);
  for (int n = 0; n < incoming; ++n)
    unpack_face(shape, block, args.get<FaceMessage>(),
                ctx.data_as<const double>(static_cast<size_t>(n) + 1));
  for (int n = 0; n < boundaries; ++n)
    apply_boundary(shape, block, args.get<int>(), first_var, vars, ghost_rows);
  if (points == 0) return;
  thread_local std::vector<double> work;
  for (int v = first_var; v < first_var + vars; ++v) stencil(shape, points, block, v, work);
}

// in(this rank's blocks) -> out(sums): each block's sums of variables
// [first_var, first_var + vars) in its slots of a zeroed vector of
// leaves x vars, allreduced into the second half.
void amr_checksum(TaskContext& ctx) {
  ArgReader args(ctx);
  const auto shape = args.get<BlockShape>();
  const int leaves = args.get<int>(), first_var = args.get<int>(), vars = args.get<int>();
  const int blocks = args.get<int>();
  const size_t slots = static_cast<size_t>(leaves) * static_cast<size_t>(vars);
  double* sums = ctx.data_as<double>(static_cast<size_t>(blocks));
  std::fill(sums, sums + slots, 0.0);
  for (int n = 0; n < blocks; ++n) {
    const int leaf = args.get<int>();
    for (int v = 0; v < vars; ++v)
      sums[static_cast<size_t>(leaf) * static_cast<size_t>(vars) + static_cast<size_t>(v)] =
          block_sum(shape, ctx.data_as<const double>(static_cast<size_t>(n)), first_var + v);
  }
  taskgrid::task_comm::iallreduce(ctx, sums, sums + slots, static_cast<int>(slots), MPI_DOUBLE,
                                  MPI_SUM);
}

void amr_split(TaskContext& ctx) {
  ArgReader args(ctx);
  const auto shape = args.get<BlockShape>();
  split_into_child(shape, ctx.data_as<const double>(0), args.get<int>(), ctx.data_as<double>(1));
}

void amr_merge(TaskContext& ctx) {
  ArgReader args(ctx);
  const auto shape = args.get<BlockShape>();
  double* parent = ctx.data_as<double>(8);
  std::fill(parent, parent + shape.values(), 0.0);
  for (int octant = 0; octant < 8; ++octant)
    consolidate_child(shape, ctx.data_as<const double>(static_cast<size_t>(octant)), octant,
                      parent);
}

void amr_copy(TaskContext& ctx) { std::memcpy(ctx.data(1), ctx.data(0), ctx.size(0)); }

TASKGRID_REGISTER(amr_init);
TASKGRID_REGISTER(amr_pack);
TASKGRID_REGISTER(amr_send);
TASKGRID_REGISTER(amr_recv);
TASKGRID_REGISTER(amr_update);
TASKGRID_REGISTER(amr_checksum);
TASKGRID_REGISTER(amr_split);
TASKGRID_REGISTER(amr_merge);
TASKGRID_REGISTER(amr_copy);

// ---------------------------------------------------------------- program --

// A checksum on its way: one handle per rank (each rank's task writes its
// own; every rank registers, fetches and releases all of them, the same
// sequence everywhere), and this rank's host copy of its own.
struct PendingSums {
  int ts = 0, stage = 0, first_var = 0, vars = 0;
  std::vector<DataHandle> per_rank;
  std::vector<double> host;  // [contribution | result], leaves x vars each
};

// Handles that a refinement no longer needs, kept for the blocks and faces
// of the same size and owner that it makes (a handle whose next access
// writes all of it needs nothing else). New ones are entered without a
// copy (enter_data_alloc: their first task writes them). Every rank keeps
// the same pool: the mesh, hence the sequence, is the same everywhere.
class HandlePool {
 public:
  DataHandle take(size_t bytes, int owner) {
    auto& free = free_[{bytes, owner}];
    if (free.empty()) return taskgrid::enter_data_alloc(nullptr, bytes, owner);
    const DataHandle handle = free.back();
    free.pop_back();
    return handle;
  }
  void give(DataHandle handle, size_t bytes, int owner) { free_[{bytes, owner}].push_back(handle); }

 private:
  std::map<std::pair<size_t, int>, std::vector<DataHandle>> free_;
};

// One direction's (or, for the 7-point stencil, all directions') messages.
struct Phase {
  std::vector<FaceTransfer> transfers;
  std::vector<DataHandle> faces;           // per transfer: the sender's packed face
  std::vector<DataHandle> arrivals;        // per transfer: the receiver's copy (other ranks only)
  std::vector<size_t> bytes;               // per transfer
  std::vector<std::pair<int, int>> ranks;  // per transfer: the sender's and the receiver's
  std::vector<std::vector<int>> outgoing, incoming, boundary;  // per leaf
  // Per pair of ranks and direction, the transfers in at most
  // max_comm_tasks groups (the seed's limit per neighbour and direction);
  // each direction's messages use the channel of that number.
  struct Message {
    int from = 0, to = 0, channel = 0;
    std::vector<int> transfers;
  };
  std::vector<Message> messages;
};

class TaskAmr {
 public:
  TaskAmr(const Params& params, int rank, int ranks, RunReport& report)
      : params_(params),
        rank_(rank),
        ranks_(ranks),
        shape_{params.nx, params.ny, params.nz, params.num_vars},
        mesh_(params, ranks),
        report_(report) {
    timers_.tasks = true;
  }

  int run(bool print_block_sums) {
    const auto& blocks = mesh_.blocks();
    for (const MeshBlock& block : blocks) {
      const DataHandle handle = new_block(block.owner);
      ArgWriter args;
      args.put(shape_);
      args.put(block.number);
      submit(amr_init, {taskgrid::out(handle)}, block.owner, args);
      handles_.push_back(handle);
    }
    request_sums(0, 0, 0, params_.num_vars);
    {
      PendingSums initial = std::move(pending_.back());
      pending_.clear();
      collect(initial);
      for (int v = 0; v < params_.num_vars; ++v) report_.set_initial_sum(v, total_of(initial, v));
    }
    build_phases();
    note_blocks_on_rank();

    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    if (params_.num_refine > 0 || params_.uniform_refine) refine(0);
    int status = 0;
    for (int ts = 1; ts <= params_.num_tsteps && status == 0; ++ts) {
      for (int stage = 0; stage < params_.stages_per_ts; ++stage) {
        report_.count_stage(static_cast<int64_t>(mesh_.blocks().size()));
        for (int first = 0; first < params_.num_vars; first += params_.comm_group()) {
          const int vars = std::min(params_.comm_group(), params_.num_vars - first);
          const double t = MPI_Wtime();
          submit_stage(first, vars);
          timers_.submit += MPI_Wtime() - t;
          if (stage % params_.checksum_freq == 0)
            for (int v = first; v < first + vars; ++v) request_sums(ts, stage, v, 1);
        }
      }
      // The delayed checksum: this timestep's sums are checked now, while
      // the next timestep's tasks (or the refinement's) wait to be submitted.
      if (!check_pending()) status = 1;
      if (status == 0 && params_.num_refine > 0 && !params_.uniform_refine) {
        const double t = MPI_Wtime();
        mesh_.move_objects();
        if (ts % params_.refine_freq == 0) refine(ts);
        timers_.refine += MPI_Wtime() - t;
      }
    }
    taskgrid::wait_all();
    timers_.total = MPI_Wtime() - start;
    int most = 0;
    MPI_Allreduce(&max_blocks_on_rank_, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (status == 0) {
      report_.print_summary(mesh_, timers_, most);
      if (print_block_sums) print_sums();
    }
    return status;
  }

 private:
  void submit(taskgrid::TaskFunction fn, std::initializer_list<DataAccess> accesses, int rank,
              const ArgWriter& args, int channel = -1, int priority = 0) {
    submit(fn, std::vector<DataAccess>(accesses), rank, args, channel, priority);
  }
  void submit(taskgrid::TaskFunction fn, const std::vector<DataAccess>& accesses, int rank,
              const ArgWriter& args, int channel = -1, int priority = 0) {
    taskgrid::TaskOptions options;
    options.rank = rank;
    options.channel = channel;
    options.priority = priority;
    taskgrid::submit_packed(taskgrid::function_id(fn), accesses.data(), accesses.size(), options,
                            args.data(), args.size());
  }

  DataHandle new_block(int owner) { return pool_.take(shape_.values() * sizeof(double), owner); }

  void note_blocks_on_rank() {
    int mine = 0;
    for (const MeshBlock& block : mesh_.blocks()) mine += block.owner == rank_;
    max_blocks_on_rank_ = std::max(max_blocks_on_rank_, mine);
  }

  // Face handles for every transfer, and the rank pairs' message groups.
  void build_phases() {
    for (Phase& phase : phases_)
      for (size_t n = 0; n < phase.transfers.size(); ++n) {
        pool_.give(phase.faces[n], phase.bytes[n], phase.ranks[n].first);
        if (phase.arrivals[n].id != 0)
          pool_.give(phase.arrivals[n], phase.bytes[n], phase.ranks[n].second);
      }
    phases_.clear();
    const bool ghost_rows = params_.stencil == 27;
    auto plans = plan_faces(mesh_, ghost_rows);
    const auto& blocks = mesh_.blocks();
    const size_t leaves = blocks.size();
    const int groups = params_.stencil == 27 ? 3 : 1;
    FaceMessage widest;
    widest.vars = params_.comm_group();
    widest.with_ghost_rows = ghost_rows;
    for (int g = 0; g < groups; ++g) {
      Phase phase;
      phase.outgoing.resize(leaves), phase.incoming.resize(leaves), phase.boundary.resize(leaves);
      for (int d = 0; d < 3; ++d) {
        if (groups == 3 && d != g) continue;
        const DirectionPlan& plan = plans[static_cast<size_t>(d)];
        for (const FaceTransfer& t : plan.transfers) phase.transfers.push_back(t);
        for (const BoundaryFace& b : plan.boundaries)
          phase.boundary[static_cast<size_t>(b.leaf)].push_back(b.face);
      }
      std::map<std::tuple<int, int, int>, std::vector<int>> pairs;  // (from, to, direction)
      for (size_t n = 0; n < phase.transfers.size(); ++n) {
        const FaceTransfer& t = phase.transfers[n];
        FaceMessage sized = t.message;
        sized.vars = widest.vars;
        const size_t bytes = face_message_size(shape_, sized) * sizeof(double);
        const int from = blocks[static_cast<size_t>(t.sender)].owner;
        const int to = blocks[static_cast<size_t>(t.receiver)].owner;
        phase.faces.push_back(pool_.take(bytes, from));
        phase.arrivals.push_back(from == to ? DataHandle{} : pool_.take(bytes, to));
        phase.bytes.push_back(bytes);
        phase.ranks.push_back({from, to});
        phase.outgoing[static_cast<size_t>(t.sender)].push_back(static_cast<int>(n));
        phase.incoming[static_cast<size_t>(t.receiver)].push_back(static_cast<int>(n));
        if (from != to) pairs[{from, to, t.message.face / 2}].push_back(static_cast<int>(n));
      }
      for (auto& [key, list] : pairs) {
        const auto [from, to, direction] = key;
        const size_t groups_here =
            std::min(list.size(), static_cast<size_t>(params_.max_comm_tasks));
        for (size_t k = 0; k < groups_here; ++k) {
          const size_t begin = list.size() * k / groups_here,
                       end = list.size() * (k + 1) / groups_here;
          phase.messages.push_back({from, to, direction,
                                    std::vector<int>(list.begin() + static_cast<ptrdiff_t>(begin),
                                                     list.begin() + static_cast<ptrdiff_t>(end))});
        }
      }
      phases_.push_back(std::move(phase));
    }
  }

  void submit_stage(int first_var, int vars) {
    const auto& blocks = mesh_.blocks();
    std::vector<DataAccess> accesses;
    for (size_t p = 0; p < phases_.size(); ++p) {
      const Phase& phase = phases_[p];
      auto message_of = [&](int n) {
        FaceMessage m = phase.transfers[static_cast<size_t>(n)].message;
        m.first_var = first_var;
        m.vars = vars;
        return m;
      };
      for (size_t leaf = 0; leaf < blocks.size(); ++leaf) {
        const auto& out = phase.outgoing[leaf];
        if (out.empty()) continue;
        accesses.assign({taskgrid::in(handles_[leaf])});
        ArgWriter args;
        args.put(shape_);
        args.put(static_cast<int>(out.size()));
        bool remote = false;
        for (int n : out) {
          accesses.push_back(taskgrid::out(phase.faces[static_cast<size_t>(n)]));
          args.put(message_of(n));
          remote = remote || phase.arrivals[static_cast<size_t>(n)].id != 0;
        }
        // What other ranks wait for goes first (as the MPI program sends
        // before it copies on the rank).
        submit(amr_pack, accesses, blocks[leaf].owner, args, -1, remote ? kUrgent : kSoon);
      }
      // Each receive right after its send: the k-th send of a channel to a
      // peer meets the peer's k-th receive.
      for (const Phase::Message& message : phase.messages) {
        ArgWriter send_args, recv_args;
        send_args.put(message.to), send_args.put(static_cast<int>(message.transfers.size()));
        recv_args.put(message.from), recv_args.put(static_cast<int>(message.transfers.size()));
        std::vector<DataAccess> sends, recvs;
        for (int n : message.transfers) {
          const int count = static_cast<int>(face_message_size(shape_, message_of(n)));
          send_args.put(count), recv_args.put(count);
          sends.push_back(taskgrid::in(phase.faces[static_cast<size_t>(n)]));
          recvs.push_back(taskgrid::out(phase.arrivals[static_cast<size_t>(n)]));
        }
        submit(amr_send, sends, message.from, send_args, message.channel, kUrgent);
        submit(amr_recv, recvs, message.to, recv_args, message.channel, kUrgent);
      }
      const bool last = p + 1 == phases_.size();
      for (size_t leaf = 0; leaf < blocks.size(); ++leaf) {
        const auto& in = phase.incoming[leaf];
        accesses.assign({taskgrid::inout(handles_[leaf])});
        ArgWriter args;
        args.put(shape_);
        args.put(last ? params_.stencil : 0);
        args.put(first_var), args.put(vars);
        args.put(static_cast<int>(in.size()));
        args.put(static_cast<int>(phase.boundary[leaf].size()));
        args.put(params_.stencil == 27 ? 1 : 0);
        bool remote = false;
        for (int n : in) {
          const DataHandle arrival = phase.arrivals[static_cast<size_t>(n)];
          remote = remote || arrival.id != 0;
          accesses.push_back(
              taskgrid::in(arrival.id != 0 ? arrival : phase.faces[static_cast<size_t>(n)]));
          args.put(message_of(n));
        }
        for (int face : phase.boundary[leaf]) args.put(face);
        // Blocks whose faces are all on this rank first: the messages fly meanwhile.
        submit(amr_update, accesses, blocks[leaf].owner, args, -1, remote ? kLater : kSoon);
      }
    }
  }

  // A checksum task per rank on its blocks; the result is fetched later.
  void request_sums(int ts, int stage, int first_var, int vars) {
    const auto& blocks = mesh_.blocks();
    PendingSums pending;
    pending.ts = ts, pending.stage = stage, pending.first_var = first_var, pending.vars = vars;
    const size_t slots = blocks.size() * static_cast<size_t>(vars);
    pending.host.assign(2 * slots, 0.0);
    for (int r = 0; r < ranks_; ++r)
      pending.per_rank.push_back(taskgrid::enter_data_alloc(
          r == rank_ ? pending.host.data() : nullptr, 2 * slots * sizeof(double), r));
    for (int r = 0; r < ranks_; ++r) {
      std::vector<DataAccess> accesses;
      ArgWriter args;
      args.put(shape_);
      args.put(static_cast<int>(blocks.size())), args.put(first_var), args.put(vars);
      std::vector<int> leaves;
      for (size_t leaf = 0; leaf < blocks.size(); ++leaf)
        if (blocks[leaf].owner == r) leaves.push_back(static_cast<int>(leaf));
      args.put(static_cast<int>(leaves.size()));
      for (int leaf : leaves) {
        args.put(leaf);
        accesses.push_back(taskgrid::in(handles_[static_cast<size_t>(leaf)]));
      }
      accesses.push_back(taskgrid::out(pending.per_rank[static_cast<size_t>(r)]));
      submit(amr_checksum, accesses, r, args, kChecksumChannel);
    }
    pending_.push_back(std::move(pending));
  }

  // Waits for a checksum's tasks; this rank's host copy then holds it.
  void collect(PendingSums& pending) {
    for (DataHandle h : pending.per_rank) taskgrid::fetch(h);
    for (DataHandle h : pending.per_rank) taskgrid::release(h);
    pending.per_rank.clear();
  }

  double total_of(const PendingSums& pending, int v) const {
    const size_t leaves = pending.host.size() / 2 / static_cast<size_t>(pending.vars);
    const double* result = pending.host.data() + pending.host.size() / 2;
    double total = 0.0;
    for (size_t leaf = 0; leaf < leaves; ++leaf)
      total += result[leaf * static_cast<size_t>(pending.vars) +
                      static_cast<size_t>(v - pending.first_var)];
    return total;
  }

  bool check_pending() {
    bool ok = true;
    const double t = MPI_Wtime();
    for (PendingSums& pending : pending_) {
      collect(pending);
      if (ok && !report_.check_sum(pending.ts, pending.stage, pending.first_var,
                                   total_of(pending, pending.first_var)))
        ok = false;
    }
    pending_.clear();
    timers_.wait += MPI_Wtime() - t;
    return ok;
  }

  // Cells follow the mesh: tasks on the new owners.
  void follow(const Transition& transition) {
    if (transition.sources.empty()) return;
    const auto& blocks = mesh_.blocks();
    std::vector<DataHandle> next(blocks.size());
    std::vector<char> kept(transition.old_blocks.size(), 0);
    for (size_t n = 0; n < blocks.size(); ++n) {
      const Transition::Source& source = transition.sources[n];
      const int owner = blocks[n].owner;
      const size_t old = static_cast<size_t>(source.old[0]);
      if (source.kind == Transition::Kind::kKeep && transition.old_blocks[old].owner == owner) {
        next[n] = handles_[old];
        kept[old] = 1;
        continue;
      }
      next[n] = new_block(owner);
      ArgWriter args;
      args.put(shape_);
      switch (source.kind) {
        case Transition::Kind::kKeep:
          submit(amr_copy, {taskgrid::in(handles_[old]), taskgrid::out(next[n])}, owner, args);
          break;
        case Transition::Kind::kSplit:
          args.put(source.octant);
          submit(amr_split, {taskgrid::in(handles_[old]), taskgrid::out(next[n])}, owner, args);
          break;
        case Transition::Kind::kMerge: {
          std::vector<DataAccess> accesses;
          for (int child : source.old)
            accesses.push_back(taskgrid::in(handles_[static_cast<size_t>(child)]));
          accesses.push_back(taskgrid::out(next[n]));
          submit(amr_merge, accesses, owner, args);
          break;
        }
      }
    }
    for (size_t old = 0; old < handles_.size(); ++old)
      if (!kept[old])
        pool_.give(handles_[old], shape_.values() * sizeof(double),
                   transition.old_blocks[old].owner);
    handles_ = std::move(next);
  }

  void refine(int ts) {
    mesh_.refine(
        ts,
        [&](const Transition& transition) {
          follow(transition);
          note_blocks_on_rank();
        },
        [&](const Mesh& mesh) { report_.refined(mesh, ts); });
    build_phases();
  }

  void print_sums() {
    request_sums(params_.num_tsteps, 0, 0, params_.num_vars);
    PendingSums sums = std::move(pending_.back());
    pending_.clear();
    collect(sums);
    if (rank_ == 0)
      report_.print_block_sums(
          mesh_,
          std::vector<double>(sums.host.begin() + static_cast<ptrdiff_t>(sums.host.size() / 2),
                              sums.host.end()));
  }

  Params params_;
  int rank_, ranks_;
  BlockShape shape_;
  Mesh mesh_;
  RunReport& report_;
  HandlePool pool_;
  std::vector<DataHandle> handles_;  // per leaf
  std::vector<Phase> phases_;
  std::vector<PendingSums> pending_;
  Timers timers_;
  int max_blocks_on_rank_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  setenv("TASKGRID_CHANNELS", std::to_string(kChannelsNeeded).c_str(), 0);
  taskgrid::start(&argc, &argv, taskgrid::Mode::spmd);
  const int rank = taskgrid::rank(), ranks = taskgrid::num_ranks();
  Params params;
  bool print_checksums = false, print_block_sums = false;
  if (const int status =
          parse_command_line(argc, argv, rank, ranks, params, print_checksums, print_block_sums);
      status >= 0)
    return taskgrid::finish(status);
  if (std::atoi(std::getenv("TASKGRID_CHANNELS")) < kChannelsNeeded) {
    if (rank == 0)
      std::fprintf(stderr, "miniamr: rank 0: needs TASKGRID_CHANNELS >= %d\n", kChannelsNeeded);
    return taskgrid::finish(2);
  }
  const char* threads = std::getenv("TASKGRID_THREADS");
  RunReport report(params, "taskgrid", ranks, threads ? std::atoi(threads) : 1, rank == 0);
  report.print_checksums = print_checksums;
  TaskAmr amr(params, rank, ranks, report);
  const int status = amr.run(print_block_sums);
  std::fflush(stdout);
  return taskgrid::finish(status);
}
