#include "mpi_exchange.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "mpi_abort.h"

#ifdef TASKBENCH_SMPI
#include <smpi/smpi.h>

#include <cstdlib>
#endif

namespace taskbench::mpi {

namespace {

#ifdef TASKBENCH_SMPI
// On SMPI (bench/sim/): the MPI library's own work per received message, in
// seconds (the platform's message_overhead, which taskgrid-sim passes as
// TASKBENCH_SMPI_RECEIVE_SECONDS). SMPI charges its receive overhead
// (smpi/or) only for messages sent detached, and the simulator sends none
// detached (smpi/send-is-detached-thresh:0, for speed at a thousand ranks),
// so the baseline charges it here, as the S4U backend charges TaskGrid's.
double smpi_receive_seconds() {
  static const double seconds = [] {
    const char* text = std::getenv("TASKBENCH_SMPI_RECEIVE_SECONDS");
    return text ? std::strtod(text, nullptr) : 0.0;
  }();
  return seconds;
}
#endif

size_t round_up(size_t value, size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

int to_int(size_t value, const char* what) {
  if (value > static_cast<size_t>(INT_MAX)) fatal(std::string(what) + " exceeds INT_MAX");
  return static_cast<int>(value);
}

// Appends `iv` to the interval list, merging it with the last one when they
// touch (inputs arrive sorted by first).
void append_merged(std::vector<Interval>& out, size_t begin, Interval iv) {
  if (out.size() > begin && iv.first <= out.back().last + 1) {
    out.back().last = std::max(out.back().last, iv.last);
  } else {
    out.push_back(iv);
  }
}

}  // namespace

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char message[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, message, &length) != MPI_SUCCESS)
    std::snprintf(message, sizeof message, "MPI error code %d", code);
  fatal(std::string(call) + " failed: " + message);
}

World initialize(int* argc, char*** argv, int required_thread_level) {
  int provided = 0;
  if (MPI_Init_thread(argc, argv, required_thread_level, &provided) != MPI_SUCCESS) {
    std::fputs("error: MPI_Init_thread failed\n", stderr);
    std::exit(1);
  }
  World world;
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
  set_fatal_handler(&abort_job);
  TASKBENCH_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  if (provided < required_thread_level)
    fatal("MPI provides thread level " + std::to_string(provided) + ", need " +
          std::to_string(required_thread_level));
  // The duplicate inherits MPI_ERRORS_RETURN and keeps our tags private.
  TASKBENCH_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &world.comm));

  void* value = nullptr;
  int found = 0;
  TASKBENCH_MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found));
  if (found) world.tag_ub = *static_cast<int*>(value);
  return world;
}

void finalize(World& world) {
  if (world.comm != MPI_COMM_NULL) TASKBENCH_MPI_CHECK(MPI_Comm_free(&world.comm));
  MPI_Finalize();
}

AlignedBuffer::AlignedBuffer(size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  char* p = static_cast<char*>(std::aligned_alloc(64, round_up(bytes, 64)));
  if (p == nullptr) fatal("out of memory allocating " + std::to_string(bytes) + " bytes");
  std::memset(p, 0, bytes);
  data_.reset(p);
}

void broadcast_bytes(char* data, size_t bytes, int root, MPI_Comm comm) {
  constexpr size_t kChunk = size_t{1} << 30;
  for (size_t offset = 0; offset < bytes; offset += kChunk) {
    const int count = static_cast<int>(std::min(kChunk, bytes - offset));
    TASKBENCH_MPI_CHECK(MPI_Bcast(data + offset, count, MPI_BYTE, root, comm));
  }
}

// ---------------------------------------------------------------------------
// GraphExchange: setup

GraphExchange::GraphExchange(const TaskGraph& graph, const World& world, int64_t tag_base)
    : graph_(&graph),
      comm_(world.comm),
      rank_(world.rank),
      distribution_{graph.max_width, world.size},
      tag_base_(tag_base),
      tag_modulus_(world.tag_ub + 1) {
  const BlockDistribution& dist = distribution_;
  local_first_ = dist.first(rank_);
  local_count_ = dist.first(rank_ + 1) - local_first_;
  const int64_t local_end = local_first_ + local_count_;
  auto is_local = [&](int64_t p) { return p >= local_first_ && p < local_end; };

  output_bytes_ = static_cast<size_t>(graph.output_bytes);
  output_stride_ = round_up(output_bytes_, 64);
  scratch_stride_ = round_up(static_cast<size_t>(graph.scratch_bytes), 64);

  // One output travels as one message; beyond INT_MAX bytes as one element
  // of a struct type made of 1 GiB blocks plus the remainder.
  if (output_bytes_ <= static_cast<size_t>(INT_MAX)) {
    datatype_count_ = static_cast<int>(output_bytes_);
  } else {
    constexpr size_t kBlock = size_t{1} << 30;
    MPI_Datatype block;
    TASKBENCH_MPI_CHECK(MPI_Type_contiguous(static_cast<int>(kBlock), MPI_BYTE, &block));
    int lengths[2] = {to_int(output_bytes_ / kBlock, "output blocks"),
                      static_cast<int>(output_bytes_ % kBlock)};
    MPI_Aint displacements[2] = {0, static_cast<MPI_Aint>(output_bytes_ / kBlock * kBlock)};
    MPI_Datatype types[2] = {block, MPI_BYTE};
    TASKBENCH_MPI_CHECK(MPI_Type_create_struct(2, lengths, displacements, types, &datatype_));
    TASKBENCH_MPI_CHECK(MPI_Type_commit(&datatype_));
    TASKBENCH_MPI_CHECK(MPI_Type_free(&block));
    datatype_count_ = 1;
    owns_datatype_ = true;
  }

  const int64_t nsets = graph.num_dependence_sets();
  dsets_.resize(static_cast<size_t>(nsets));
  std::vector<Interval> intervals;
  intervals.reserve(static_cast<size_t>(std::max<int64_t>(graph.max_dependencies(), 1)));
  std::vector<std::pair<int64_t, int64_t>> remote_uses;  // (producer, local consumer)
  std::vector<int64_t> remote_points;                    // all dsets: the receive slots

  // Receive side: raw inputs of every local point, and per remote producer
  // the local consumers that share its single receive buffer.
  for (DsetPlan& plan : dsets_) {
    const int64_t dset = &plan - dsets_.data();
    plan.input_begin.reserve(static_cast<size_t>(local_count_) + 1);
    remote_uses.clear();
    for (int64_t p = local_first_; p < local_end; ++p) {
      plan.input_begin.push_back(plan.inputs.size());
      graph.dependencies(dset, p, intervals);
      for (const Interval& iv : intervals) {
        for (int64_t q = iv.first; q <= iv.last; ++q) {
          if (is_local(q)) {
            plan.inputs.push_back({q, q - local_first_, false});
          } else {
            plan.inputs.push_back({q, -1, true});
            remote_uses.emplace_back(q, p);
          }
        }
      }
      max_inputs_ = std::max(max_inputs_, plan.inputs.size() - plan.input_begin.back());
    }
    plan.input_begin.push_back(plan.inputs.size());

    std::sort(remote_uses.begin(), remote_uses.end());
    for (size_t i = 0; i < remote_uses.size();) {
      const int64_t q = remote_uses[i].first;
      ReceiveEntry entry;
      entry.point = q;
      entry.source = static_cast<int>(dist.owner(q));
      entry.tag = tag_of(q);
      entry.slot = -1;  // assigned once all dependence sets are known
      entry.consumers_begin = plan.consumers.size();
      for (; i < remote_uses.size() && remote_uses[i].first == q; ++i)
        append_merged(plan.consumers, entry.consumers_begin,
                      {remote_uses[i].second, remote_uses[i].second});
      entry.consumers_end = plan.consumers.size();
      plan.receives.push_back(entry);
      remote_points.push_back(q);
    }
  }

  // One receive slot per remote producer, shared by all dependence sets.
  std::sort(remote_points.begin(), remote_points.end());
  remote_points.erase(std::unique(remote_points.begin(), remote_points.end()), remote_points.end());
  receive_slots_ = static_cast<int64_t>(remote_points.size());
  auto slot_of = [&](int64_t q) {
    return std::lower_bound(remote_points.begin(), remote_points.end(), q) - remote_points.begin();
  };
  for (DsetPlan& plan : dsets_) {
    for (InputEntry& entry : plan.inputs)
      if (entry.remote) entry.slot = slot_of(entry.point);
    for (ReceiveEntry& entry : plan.receives) entry.slot = slot_of(entry.point);
  }

  // Send side: per local producer, the other ranks holding effective
  // consumers, each with its consumer intervals (cut at rank boundaries).
  std::vector<std::pair<int64_t, Interval>> pieces;  // (destination, consumers)
  for (DsetPlan& plan : dsets_) {
    const int64_t dset = &plan - dsets_.data();
    plan.send_begin.reserve(static_cast<size_t>(local_count_) + 1);
    for (int64_t q = local_first_; q < local_end; ++q) {
      plan.send_begin.push_back(plan.sends.size());
      graph.reverse_dependencies(dset, q, intervals);
      pieces.clear();
      for (const Interval& iv : intervals) {
        for (int64_t a = iv.first; a <= iv.last;) {
          const int64_t dest = dist.owner(a);
          const int64_t b = std::min(iv.last, dist.first(dest + 1) - 1);
          if (dest != rank_) pieces.push_back({dest, {a, b}});
          a = b + 1;
        }
      }
      std::sort(pieces.begin(), pieces.end(), [](const auto& x, const auto& y) {
        return x.first != y.first ? x.first < y.first : x.second.first < y.second.first;
      });
      for (size_t i = 0; i < pieces.size();) {
        const int64_t dest = pieces[i].first;
        SendEntry entry{static_cast<int>(dest), plan.consumers.size(), 0};
        for (; i < pieces.size() && pieces[i].first == dest; ++i)
          append_merged(plan.consumers, entry.consumers_begin, pieces[i].second);
        entry.consumers_end = plan.consumers.size();
        plan.sends.push_back(entry);
      }
    }
    plan.send_begin.push_back(plan.sends.size());
  }

  send_tags_.resize(static_cast<size_t>(local_count_));
  for (int64_t i = 0; i < local_count_; ++i) send_tags_[i] = tag_of(local_first_ + i);

  size_t max_receives = 0;
  size_t max_sends = 0;
  for (const DsetPlan& plan : dsets_) {
    max_receives = std::max(max_receives, plan.receives.size());
    max_sends = std::max(max_sends, plan.sends.size());
  }
  to_int(max_receives, "receives per timestep");
  to_int(max_sends, "sends per timestep");
  for (int parity = 0; parity < 2; ++parity) {
    receive_requests_[parity].assign(max_receives, MPI_REQUEST_NULL);
    send_requests_[parity].assign(max_sends, MPI_REQUEST_NULL);
  }

  const size_t local = static_cast<size_t>(local_count_);
  outputs_ = AlignedBuffer(2 * local * output_stride_);
  receives_ = AlignedBuffer(2 * static_cast<size_t>(receive_slots_) * output_stride_);
  scratch_ = AlignedBuffer(local * scratch_stride_);
  for (size_t i = 0; i < local; ++i)
    prepare_scratch(scratch_.data() + i * scratch_stride_,
                    static_cast<size_t>(graph.scratch_bytes));
}

GraphExchange::~GraphExchange() {
  if (owns_datatype_) MPI_Type_free(&datatype_);
}

// Tag = producer point plus a per-graph base, modulo MPI_TAG_UB + 1.
//
// Ordering invariant (why the tags need not be unique): between any pair of
// ranks, the sender issues its messages in (graph, timestep, producer point)
// order - graphs run one after another, timesteps in order, points ascending
// - and the receiver posts exactly one receive per message in the same
// order (receives sorted by producer; those of t+1 posted after those of t).
// MPI does not let messages with the same (source, tag, communicator)
// overtake each other, so even when tags repeat - the receives of t and t+1
// for the same producer are outstanding together, and the modulus may fold
// points or graphs onto one tag - every message lands in the receive meant
// for it. The per-graph base only keeps tags distinct where they fit.
int GraphExchange::tag_of(int64_t point) const {
  return static_cast<int>((tag_base_ + point) % tag_modulus_);
}

// ---------------------------------------------------------------------------
// GraphExchange: timed path

Step GraphExchange::step(int64_t timestep) const {
  const TaskGraph& g = *graph_;
  Step s;
  s.timestep = timestep;
  s.dset = g.dependence_set_at(timestep);
  if (s.dset < 0 || s.dset >= static_cast<int64_t>(dsets_.size()))
    fatal("timestep " + std::to_string(timestep) + " has dependence set " + std::to_string(s.dset) +
          " outside [0, " + std::to_string(dsets_.size()) + ")");
  s.first = g.offset_at(timestep);
  s.last = s.first + g.width_at(timestep) - 1;
  s.prev_first = g.offset_at(timestep - 1);
  s.prev_last = s.prev_first + g.width_at(timestep - 1) - 1;
  s.local_first = std::max(local_first_, s.first);
  s.local_end = std::max(s.local_first, std::min(local_first_ + local_count_, s.last + 1));
  return s;
}

void GraphExchange::reset() {
  if (outputs_.size() != 0) std::memset(outputs_.data(), 0, outputs_.size());
  if (receives_.size() != 0) std::memset(receives_.data(), 0, receives_.size());
}

char* GraphExchange::output(int64_t timestep, int64_t local_index) const {
  const size_t parity = static_cast<size_t>(timestep & 1);
  return outputs_.data() +
         (parity * static_cast<size_t>(local_count_) + static_cast<size_t>(local_index)) *
             output_stride_;
}

char* GraphExchange::receive_buffer(int64_t timestep, int64_t slot) const {
  const size_t parity = static_cast<size_t>(timestep & 1);
  return receives_.data() +
         (parity * static_cast<size_t>(receive_slots_) + static_cast<size_t>(slot)) *
             output_stride_;
}

// True when one of the consumer intervals [begin, end) is active at `step`.
// Sender and receiver evaluate the same predicate on mirrored edge sets
// (rdeps on one side, deps on the other), so they agree on every message.
bool GraphExchange::any_active(const DsetPlan& plan, size_t begin, size_t end,
                               const Step& step) const {
  for (size_t i = begin; i < end; ++i) {
    const Interval& iv = plan.consumers[i];
    if (iv.last >= step.first && iv.first <= step.last) return true;
  }
  return false;
}

void GraphExchange::post_receives(const Step& consumer) {
  const DsetPlan& plan = dsets_[static_cast<size_t>(consumer.dset)];
  const size_t parity = static_cast<size_t>(consumer.timestep & 1);
  MPI_Request* requests = receive_requests_[parity].data();
  int count = 0;
  for (const ReceiveEntry& entry : plan.receives) {
    if (entry.point < consumer.prev_first || entry.point > consumer.prev_last) continue;
    if (!any_active(plan, entry.consumers_begin, entry.consumers_end, consumer)) continue;
    TASKBENCH_MPI_CHECK(MPI_Irecv(receive_buffer(consumer.timestep, entry.slot), datatype_count_,
                                  datatype_, entry.source, entry.tag, comm_, &requests[count]));
    ++count;
  }
  receive_count_[parity] = count;
}

void GraphExchange::wait_receives(int64_t consumer_timestep) {
  const size_t parity = static_cast<size_t>(consumer_timestep & 1);
  if (receive_count_[parity] == 0) return;
  TASKBENCH_MPI_CHECK(
      MPI_Waitall(receive_count_[parity], receive_requests_[parity].data(), MPI_STATUSES_IGNORE));
#ifdef TASKBENCH_SMPI
  if (smpi_receive_seconds() > 0)
    smpi_execute_benched(receive_count_[parity] * smpi_receive_seconds());
#endif
  receive_count_[parity] = 0;
}

// Zero copy: MPI reads the output buffer in place. Local consumers read the
// same buffer meanwhile, which MPI-3 allows; it is only rewritten two
// timesteps later, after wait_sends().
void GraphExchange::send_output(const Step& consumer, int64_t point) {
  const DsetPlan& plan = dsets_[static_cast<size_t>(consumer.dset)];
  const int64_t index = point - local_first_;
  const int64_t producer_timestep = consumer.timestep - 1;
  const size_t parity = static_cast<size_t>(producer_timestep & 1);
  const size_t end = plan.send_begin[static_cast<size_t>(index) + 1];
  for (size_t i = plan.send_begin[static_cast<size_t>(index)]; i < end; ++i) {
    const SendEntry& entry = plan.sends[i];
    if (!any_active(plan, entry.consumers_begin, entry.consumers_end, consumer)) continue;
    TASKBENCH_MPI_CHECK(
        MPI_Isend(output(producer_timestep, index), datatype_count_, datatype_, entry.dest,
                  send_tags_[static_cast<size_t>(index)], comm_,
                  &send_requests_[parity][static_cast<size_t>(send_count_[parity])]));
    ++send_count_[parity];
  }
}

bool GraphExchange::begin_timestep(int64_t t, Step& current, Step& next) {
  current = next;
  const bool has_next = t + 1 < graph().timesteps;
  if (has_next) {
    next = step(t + 1);
    post_receives(next);
  }
  wait_receives(t);
  if (t >= 2) wait_sends(t - 2);  // before overwriting parity t % 2
  return has_next;
}

void GraphExchange::wait_sends(int64_t producer_timestep) {
  const size_t parity = static_cast<size_t>(producer_timestep & 1);
  if (send_count_[parity] == 0) return;
  TASKBENCH_MPI_CHECK(
      MPI_Waitall(send_count_[parity], send_requests_[parity].data(), MPI_STATUSES_IGNORE));
  send_count_[parity] = 0;
}

void GraphExchange::wait_all_sends() {
  wait_sends(0);
  wait_sends(1);
}

TaskArgs GraphExchange::task_args(const Step& step, int64_t point, TaskScratch& scratch,
                                  const BroadcastView& broadcast) const {
  const DsetPlan& plan = dsets_[static_cast<size_t>(step.dset)];
  const int64_t index = point - local_first_;
  const size_t end = plan.input_begin[static_cast<size_t>(index) + 1];
  size_t count = 0;
  for (size_t i = plan.input_begin[static_cast<size_t>(index)]; i < end; ++i) {
    const InputEntry& entry = plan.inputs[i];
    // Effective inputs: producers active at t-1 (none at t = 0).
    if (entry.point < step.prev_first || entry.point > step.prev_last) continue;
    const char* data = entry.remote ? receive_buffer(step.timestep, entry.slot)
                                    : output(step.timestep - 1, entry.slot);
    scratch.views[count] = {data, output_bytes_};
    scratch.points[count] = entry.point;
    ++count;
  }
  return TaskArgs{graph_,
                  step.timestep,
                  point,
                  output(step.timestep, index),
                  output_bytes_,
                  scratch.views.data(),
                  scratch.points.data(),
                  count,
                  scratch_.data() + static_cast<size_t>(index) * scratch_stride_,
                  static_cast<size_t>(graph_->scratch_bytes),
                  broadcast.data,
                  broadcast.bytes};
}

// ---------------------------------------------------------------------------
// Driver

int report_run(const World& world, const BenchConfig& config, const char* name, double elapsed,
               const ExecutionCounts& counts, int threads_per_rank) {
  int status = 0;
  const int64_t local_counts[2] = {counts.tasks, counts.inputs};
  int64_t total_counts[2] = {0, 0};
  TASKBENCH_MPI_CHECK(
      MPI_Reduce(local_counts, total_counts, 2, MPI_INT64_T, MPI_SUM, 0, world.comm));
  int max_threads = 0;
  TASKBENCH_MPI_CHECK(
      MPI_Reduce(&threads_per_rank, &max_threads, 1, MPI_INT, MPI_MAX, 0, world.comm));
  if (world.rank == 0) {
    RunInfo info;
    info.system = name;
    info.ranks = world.size;
    info.threads_per_rank = max_threads;
    info.elapsed_seconds = elapsed;
    info.counts.tasks = total_counts[0];
    info.counts.inputs = total_counts[1];
    status = finish_run(config, info);
    std::fflush(stdout);
  }
  TASKBENCH_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, world.comm));
  return status;
}

int run_system(int argc, char** argv, const char* name, int thread_level, System& system) {
  World world = initialize(&argc, &argv, thread_level);
  BenchConfig config;
  int status = 0;
  // Every rank parses the same argv and reaches the same verdict.
  if (!parse_command_line(argc, argv, config, status, world.rank == 0, system.own_flags())) {
    if (config.help && world.rank == 0) std::fputs(system.help_text(), stdout);
    finalize(world);
    return status;
  }
  if (const std::string problem = system.parse_flags(argc, argv, config); !problem.empty()) {
    if (world.rank == 0) std::fprintf(stderr, "error: %s\n", problem.c_str());
    finalize(world);
    return 2;
  }
  if (world.rank == 0) {
    std::fputs(configuration_text(config).c_str(), stdout);
    std::fflush(stdout);
  }

  // Untimed setup: plans, buffers, scratch, broadcast content.
  std::vector<std::unique_ptr<GraphExchange>> graphs;
  graphs.reserve(config.graphs.size());
  int64_t tag_base = 0;
  size_t max_inputs = 0;
  for (const TaskGraph& g : config.graphs) {
    graphs.push_back(std::make_unique<GraphExchange>(g, world, tag_base));
    tag_base = (tag_base + g.max_width) % (world.tag_ub + 1);
    max_inputs = std::max(max_inputs, graphs.back()->max_inputs());
  }
  const int threads = system.prepare(config, max_inputs);
  const size_t broadcast_size = static_cast<size_t>(config.broadcast_bytes);
  AlignedBuffer broadcast(broadcast_size);
  if (world.rank == 0) fill_broadcast(broadcast.data(), broadcast_size);
  const BroadcastView view{broadcast_size != 0 ? broadcast.data() : nullptr, broadcast_size};

  // Warm-up pass, then the timed pass (spec 8.4).
  ExecutionCounts counts;
  double elapsed = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (auto& graph : graphs) graph->reset();
    // Only the root holds the content before the pass; the others must get
    // it from the timed MPI_Bcast for the tasks' check to pass.
    if (world.rank != 0 && broadcast_size != 0) std::memset(broadcast.data(), 0, broadcast_size);
    counts = {};
    TASKBENCH_MPI_CHECK(MPI_Barrier(world.comm));
    const double start = MPI_Wtime();
    broadcast_bytes(broadcast.data(), broadcast_size, 0, world.comm);
    for (auto& graph : graphs) system.run_graph(*graph, view, counts);
    TASKBENCH_MPI_CHECK(MPI_Barrier(world.comm));
    elapsed = MPI_Wtime() - start;
  }

  status = report_run(world, config, name, elapsed, counts, threads);
  graphs.clear();  // frees datatypes before MPI_Finalize
  finalize(world);
  return status;
}

}  // namespace taskbench::mpi
