#include "sched/placement.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::sched {
namespace {

class RoundRobin final : public PlacementPolicy {
 public:
  explicit RoundRobin(int ranks) : ranks_(ranks) {}
  const char* name() const override { return scheduler_name(Scheduler::round_robin); }
  int place(const PlacementRequest&) override {
    const int rank = next_;
    next_ = (next_ + 1) % ranks_;
    return rank;
  }

 private:
  int ranks_;
  int next_ = 0;
};

// A value per rank (heft: its earliest free CPU slot; locality: its tasks
// in flight) in a tree of minima over rank ranges, so that a policy finds
// the least loaded ranks without visiting every rank: an update and a
// search cost O(log ranks).
class RankMinima {
 public:
  explicit RankMinima(size_t ranks) : leaves_(std::bit_ceil(std::max<size_t>(ranks, 1))) {
    nodes_.assign(2 * leaves_, std::numeric_limits<double>::infinity());
    for (size_t r = 0; r < ranks; ++r) set(r, 0.0);
  }
  void set(size_t rank, double value) {
    size_t node = leaves_ + rank;
    nodes_[node] = value;
    for (node /= 2; node >= 1; node /= 2)
      nodes_[node] = std::min(nodes_[2 * node], nodes_[2 * node + 1]);
  }
  double minimum() const { return nodes_[1]; }
  // The lowest rank >= `from` whose value `fits` (a predicate that, true of
  // a value, is true of every smaller one), or -1.
  template <typename Fits>
  int64_t first(size_t from, const Fits& fits) const {
    return first_in(1, 0, leaves_, from, fits);
  }

 private:
  template <typename Fits>
  int64_t first_in(size_t node, size_t begin, size_t end, size_t from, const Fits& fits) const {
    if (end <= from || !fits(nodes_[node])) return -1;
    if (node >= leaves_) return static_cast<int64_t>(begin);
    const size_t middle = begin + (end - begin) / 2;
    const int64_t left = first_in(2 * node, begin, middle, from, fits);
    return left >= 0 ? left : first_in(2 * node + 1, middle, end, from, fits);
  }
  size_t leaves_;
  std::vector<double> nodes_;  // nodes_[1] is the root; leaves from nodes_[leaves_]
};

// Most input bytes already in place; ties go to the rank with the fewest
// tasks in flight, then to the lowest rank, so tasks without inputs spread
// out. Only the ranks holding an input can hold most bytes; without inputs,
// the tree of tasks in flight finds the least loaded rank (O(log ranks)).
class Locality final : public PlacementPolicy {
 public:
  explicit Locality(int ranks)
      : in_flight_(static_cast<size_t>(ranks), 0), fewest_(in_flight_.size()) {}
  const char* name() const override { return scheduler_name(Scheduler::locality); }
  int place(const PlacementRequest& request) override {
    held_.clear();
    for (size_t i = 0; i < request.num_inputs; ++i) {
      const data::VersionInfo& v = *request.inputs[i].version;
      for (int holder : v.holders) {
        if (holder < 0 || static_cast<size_t>(holder) >= in_flight_.size()) continue;
        auto it = std::find_if(held_.begin(), held_.end(),
                               [holder](const Held& h) { return h.rank == holder; });
        if (it == held_.end()) it = held_.insert(held_.end(), Held{holder, 0});
        it->bytes += v.bytes + 1;
      }
    }
    if (held_.empty()) {
      const double fewest = fewest_.minimum();
      return static_cast<int>(fewest_.first(0, [fewest](double n) { return n <= fewest; }));
    }
    const Held* best = &held_.front();
    for (const Held& h : held_) {
      const int64_t mine = in_flight_[static_cast<size_t>(h.rank)];
      const int64_t theirs = in_flight_[static_cast<size_t>(best->rank)];
      if (h.bytes > best->bytes ||
          (h.bytes == best->bytes && (mine < theirs || (mine == theirs && h.rank < best->rank))))
        best = &h;
    }
    return best->rank;
  }
  void placed(const PlacementRequest&, int rank) override { count(rank, +1); }
  void completed(int rank) override { count(rank, -1); }

 private:
  struct Held {
    int rank;
    size_t bytes;  // its input bytes, plus one per input (a zero-byte input counts too)
  };
  void count(int rank, int64_t change) {
    int64_t& n = in_flight_[static_cast<size_t>(rank)];
    n += change;
    fewest_.set(static_cast<size_t>(rank), static_cast<double>(n));
  }
  std::vector<int64_t> in_flight_;
  RankMinima fewest_;       // of in_flight_
  std::vector<Held> held_;  // of the task being placed: ranks holding an input
};

// Heterogeneous Earliest Finish Time, applied as tasks arrive (a window of
// one). Each rank's executors are its `threads` CPU slots and, per device,
// `streams_per_device` device slots, each with an estimated free time. A
// task is estimated on every executor its implementations and hints allow,
// with the duration measured for that kind of executor.
class Heft final : public PlacementPolicy {
 public:
  Heft(int ranks, int threads, const CostModel& costs, const DeviceSlots& devices)
      : ranks_(static_cast<size_t>(ranks)),
        scans_(ranks_.size() <= kScanRanks),
        earliest_(scans_ ? 0 : ranks_.size()),
        costs_(costs) {
    for (size_t r = 0; r < ranks_.size(); ++r) {
      ranks_[r].cpu.assign(static_cast<size_t>(threads), 0.0);
      const int count = r < devices.devices_per_rank.size() ? devices.devices_per_rank[r] : 0;
      ranks_[r].devices.assign(
          static_cast<size_t>(std::max(0, count)),
          std::vector<double>(static_cast<size_t>(std::max(1, devices.streams_per_device)), 0.0));
      any_devices_ |= count > 0;
    }
  }
  const char* name() const override { return scheduler_name(Scheduler::heft); }

  int place(const PlacementRequest& request) override { return best(request, -1).rank; }

  void placed(const PlacementRequest& request, int rank) override {
    // Hinted tasks bypass place(): book them on the chosen rank's best executor.
    if (cpus_only(request)) {  // the hot path, kept inline
      const Choice choice = estimate(request, static_cast<size_t>(rank), kCpu,
                                     estimated_task_seconds(costs_, request));
      *choice.slot = choice.finish;
      cpu_booked(choice.rank);
      last_finish_ = choice.finish;
      last_device_ = request.device_hint;
      return;
    }
    book(request, best(request, rank));
  }

  int place_and_book(const PlacementRequest& request) override {
    const Choice choice = best(request, -1);
    book(request, choice);
    return choice.rank;
  }

  double estimated_finish() const override { return last_finish_; }
  int chosen_device(int) const override { return last_device_; }

 private:
  static constexpr int kCpu = TaskOptions::on_cpu;
  static constexpr uint32_t kCalibrationTasks = 4;
  struct Rank {
    std::vector<double> cpu;                   // per thread
    std::vector<std::vector<double>> devices;  // per device, per stream
  };
  struct Choice {
    int rank;
    int device;     // kCpu, or a device of the rank
    double* slot;   // its executor that is free first
    double finish;  // the task's estimated finish there
  };

  // The task on rank r's `device` (kCpu: its CPU threads): when its inputs
  // can be there, and that executor's earliest free slot.
  Choice estimate(const PlacementRequest& request, size_t r, int device, double duration) {
    // Versions made on devices exist only where there are devices: a job
    // without any takes the loop without device costs (the hot path).
    return any_devices_ ? estimate_with<true>(request, r, device, duration)
                        : estimate_with<false>(request, r, device, duration);
  }
  template <bool kDevices>
  Choice estimate_with(const PlacementRequest& request, size_t r, int device, double duration) {
    double data_ready = request.now;
    for (size_t i = 0; i < request.num_inputs; ++i) {
      const data::VersionInfo& v = *request.inputs[i].version;
      double arrival = v.ready_at;
      if (!v.holds(static_cast<int>(r))) arrival += costs_.transfer_seconds(v.bytes);
      // A version made on a device stays there until something elsewhere
      // needs it: then it is copied off that device, and onto another.
      if constexpr (kDevices) {
        const bool made_here = v.producer == static_cast<int>(r) && v.device == device;
        if (device != kCpu && !made_here) arrival += costs_.device_transfer_seconds(v.bytes);
        if (v.device >= 0 && (device == kCpu || v.producer != static_cast<int>(r)))
          arrival += costs_.device_transfer_seconds(v.bytes);
      }
      data_ready = std::max(data_ready, arrival);
    }
    std::vector<double>& slots =
        device == kCpu ? ranks_[r].cpu : ranks_[r].devices[static_cast<size_t>(device)];
    double* slot = &*std::min_element(slots.begin(), slots.end());
    return {static_cast<int>(r), device, slot,
            std::max({data_ready, *slot, request.now}) + duration};
  }

  // The executor where the task would finish first, on `only_rank` or on
  // any rank (-1); devices before CPUs, then the lowest rank, on ties.
  Choice best(const PlacementRequest& request, int only_rank) {
    const int hint = request.device_hint;
    const size_t first = only_rank < 0 ? 0 : static_cast<size_t>(only_rank);
    const size_t end = only_rank < 0 ? ranks_.size() : first + 1;
    if (cpus_only(request)) {
      // CPUs only, the common case (and the hot path of every task): the
      // wire keeps the hint.
      const double duration = estimated_task_seconds(costs_, request);
      Choice choice;
      if (only_rank < 0 && !scans_) {
        choice = earliest_cpu_finish(request, duration);
      } else {
        choice = estimate(request, first, kCpu, duration);
        for (size_t r = first + 1; r < end; ++r) {
          const Choice other = estimate(request, r, kCpu, duration);
          if (other.finish < choice.finish) choice = other;
        }
      }
      choice.device = hint;
      last_finish_ = choice.finish;
      last_device_ = hint;
      return choice;
    }
    // Calibration: until a device duration of the function is measured, its
    // first tasks that may use a device go to devices, so that the copies a
    // device needs do not count against it while durations are unknown.
    const bool on_cpus = request.has_cpu && hint < 0 && !calibrating(request.function);
    const double cpu_seconds = estimated_task_seconds(costs_, request);
    const double device_seconds = estimated_task_seconds(costs_, request, Executor::device);
    Choice choice{-1, kCpu, nullptr, 0};
    auto consider = [&](const Choice& other) {
      if (choice.rank < 0 || other.finish < choice.finish) choice = other;
    };
    for (size_t r = first; r < end; ++r) {
      const int devices = static_cast<int>(ranks_[r].devices.size());
      for (int d = hint >= 0 ? hint : 0; d < (hint >= 0 ? std::min(hint + 1, devices) : devices);
           ++d)
        consider(estimate(request, r, d, device_seconds));
      if (on_cpus) consider(estimate(request, r, kCpu, cpu_seconds));
    }
    if (choice.rank < 0) {
      // No executor here can run it (a device-only function or a device
      // hint where no rank has that device): its rank's engine says why.
      choice = estimate(request, first, kCpu, cpu_seconds);
      choice.device = hint;
    } else if (choice.device == kCpu && ranks_[static_cast<size_t>(choice.rank)].devices.empty()) {
      choice.device = hint;  // nothing to choose from: the wire keeps the hint
    }
    last_finish_ = choice.finish;
    last_device_ = choice.device;
    return choice;
  }
  // Whether only CPU threads can run the task (the wire then keeps its hint).
  bool cpus_only(const PlacementRequest& request) const {
    return !any_devices_ || !request.has_device || request.device_hint == kCpu;
  }
  bool calibrating(uint32_t function) const {
    if (!any_devices_ || costs_.measured(function, Executor::device)) return false;
    auto it = device_tasks_.find(function);
    return it == device_tasks_.end() || it->second < kCalibrationTasks;
  }
  // The CPU executor of any rank where the task would finish first; on
  // ties, the lowest rank (what a scan of every rank chooses). Only the
  // ranks holding an input are estimated one by one: every other rank gets
  // the inputs at the same time (by transfers), so its finish grows only
  // with its earliest free slot, and the tree finds the first of them that
  // finishes as early as the best.
  Choice earliest_cpu_finish(const PlacementRequest& request, double duration) {
    holders_.clear();
    double remote_ready = request.now;  // as estimate() computes it for a rank holding none
    for (size_t i = 0; i < request.num_inputs; ++i) {
      const data::VersionInfo& v = *request.inputs[i].version;
      remote_ready = std::max(remote_ready, v.ready_at + costs_.transfer_seconds(v.bytes));
      for (int holder : v.holders)
        if (holder >= 0 && static_cast<size_t>(holder) < ranks_.size() &&
            std::find(holders_.begin(), holders_.end(), holder) == holders_.end())
          holders_.push_back(holder);
    }
    const auto finish_remote = [&](double slot) {
      return std::max({remote_ready, slot, request.now}) + duration;
    };
    Choice held{-1, kCpu, nullptr, 0};
    for (int holder : holders_) {
      const Choice here = estimate(request, static_cast<size_t>(holder), kCpu, duration);
      if (held.rank < 0 || here.finish < held.finish ||
          (here.finish == held.finish && here.rank < held.rank))
        held = here;
    }
    // No rank holding no input finishes before the earliest slot of all
    // allows; where only holders have that slot, one of them finishes no
    // later than any other rank (its inputs are there no later).
    double best = finish_remote(earliest_.minimum());
    if (held.rank >= 0) best = std::min(best, held.finish);
    const auto fits = [&](double slot) { return finish_remote(slot) <= best; };
    int64_t other = earliest_.first(0, fits);
    while (other >= 0 &&
           std::find(holders_.begin(), holders_.end(), static_cast<int>(other)) != holders_.end())
      other = earliest_.first(static_cast<size_t>(other) + 1, fits);
    const bool held_is_best = held.rank >= 0 && held.finish == best;
    if (held_is_best && (other < 0 || held.rank < other)) return held;
    if (other < 0) throw std::logic_error("heft: no rank finishes the task first");
    return estimate(request, static_cast<size_t>(other), kCpu, duration);
  }
  // A CPU slot of `rank` was booked: its earliest free slot may have moved.
  void cpu_booked(int rank) {
    if (scans_) return;
    const std::vector<double>& slots = ranks_[static_cast<size_t>(rank)].cpu;
    earliest_.set(static_cast<size_t>(rank), *std::min_element(slots.begin(), slots.end()));
  }
  void book(const PlacementRequest& request, const Choice& choice) {
    if (any_devices_ && choice.device >= 0) {
      uint32_t& count = device_tasks_[request.function];
      count += count < kCalibrationTasks;
    }
    *choice.slot = choice.finish;
    cpu_booked(choice.rank);
    last_finish_ = choice.finish;
    last_device_ = choice.device;
  }

  // Up to this many ranks a scan of all of them costs less than the tree
  // (bench/planner's HeadPlacesAll: 125 against 131 ns a task at 4 ranks,
  // 573 against 148 at 64).
  static constexpr size_t kScanRanks = 8;
  std::vector<Rank> ranks_;
  const bool scans_;          // ranks_.size() <= kScanRanks: earliest_ unused
  RankMinima earliest_;       // of ranks_' CPU slots
  std::vector<int> holders_;  // of the task being placed: ranks holding an input
  bool any_devices_ = false;
  // Tasks placed on devices per function, up to kCalibrationTasks.
  std::unordered_map<uint32_t, uint32_t> device_tasks_;
  const CostModel& costs_;
  double last_finish_ = 0;
  int last_device_ = TaskOptions::any_device;
};

}  // namespace

double estimated_task_seconds(const CostModel& costs, const PlacementRequest& request,
                              Executor executor) {
  if (request.cost_hint > 0) return request.cost_hint;
  if (const std::optional<double> measured = costs.measured_seconds(request.function, executor))
    return *measured;
  double bytes = 0;
  for (size_t i = 0; i < request.num_inputs; ++i)
    bytes += static_cast<double>(request.inputs[i].version->bytes);
  return std::max(bytes / CostModel::kUnknownTaskBytesPerSecond, CostModel::kUnknownTaskSeconds);
}

bool uncalibrated(const CostModel& costs, const PlacementRequest& request, Executor executor) {
  return request.cost_hint <= 0 && !costs.measured(request.function, executor);
}

const char* scheduler_name(Scheduler scheduler) {
  switch (scheduler) {
    case Scheduler::round_robin:
      return "round_robin";
    case Scheduler::locality:
      return "locality";
    case Scheduler::heft:
      return "heft";
  }
  return "?";
}

std::optional<Scheduler> parse_scheduler(std::string_view name) {
  for (Scheduler scheduler : {Scheduler::round_robin, Scheduler::locality, Scheduler::heft})
    if (name == scheduler_name(scheduler)) return scheduler;
  return std::nullopt;
}

bool needs_task_durations(Scheduler scheduler) { return scheduler == Scheduler::heft; }

std::unique_ptr<PlacementPolicy> make_policy(Scheduler scheduler, int ranks, int threads_per_rank,
                                             const CostModel& costs, const DeviceSlots& devices) {
  switch (scheduler) {
    case Scheduler::round_robin:
      return std::make_unique<RoundRobin>(ranks);
    case Scheduler::locality:
      return std::make_unique<Locality>(ranks);
    case Scheduler::heft:
      break;
  }
  return std::make_unique<Heft>(ranks, std::max(1, threads_per_rank), costs, devices);
}

}  // namespace taskgrid::sched
