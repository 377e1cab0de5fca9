#include "sched/placement.h"

#include <algorithm>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::sched {
namespace {

class RoundRobin final : public PlacementPolicy {
 public:
  explicit RoundRobin(int ranks) : ranks_(ranks) {}
  const char* name() const override { return "round_robin"; }
  int place(const PlacementRequest&) override {
    const int rank = next_;
    next_ = (next_ + 1) % ranks_;
    return rank;
  }

 private:
  int ranks_;
  int next_ = 0;
};

// Most input bytes already in place; ties go to the rank with the fewest
// tasks in flight, so tasks without inputs spread out.
class Locality final : public PlacementPolicy {
 public:
  explicit Locality(int ranks)
      : in_flight_(static_cast<size_t>(ranks), 0), bytes_(in_flight_.size()) {}
  const char* name() const override { return "locality"; }
  int place(const PlacementRequest& request) override {
    std::fill(bytes_.begin(), bytes_.end(), 0);
    for (size_t i = 0; i < request.num_inputs; ++i) {
      const data::VersionInfo& v = *request.inputs[i].version;
      for (int holder : v.holders) bytes_[static_cast<size_t>(holder)] += v.bytes + 1;
    }
    size_t best = 0;
    for (size_t r = 1; r < bytes_.size(); ++r) {
      if (bytes_[r] > bytes_[best] ||
          (bytes_[r] == bytes_[best] && in_flight_[r] < in_flight_[best]))
        best = r;
    }
    return static_cast<int>(best);
  }
  void placed(const PlacementRequest&, int rank) override {
    in_flight_[static_cast<size_t>(rank)] += 1;
  }
  void completed(int rank) override { in_flight_[static_cast<size_t>(rank)] -= 1; }

 private:
  std::vector<int64_t> in_flight_;
  std::vector<size_t> bytes_;
};

// Heterogeneous Earliest Finish Time, applied as tasks arrive (a window of
// one): each rank has `threads` worker slots with an estimated free time.
class Heft final : public PlacementPolicy {
 public:
  Heft(int ranks, int threads, const CostModel& costs)
      : slots_(static_cast<size_t>(ranks), std::vector<double>(static_cast<size_t>(threads), 0.0)),
        costs_(costs) {}
  const char* name() const override { return "heft"; }

  int place(const PlacementRequest& request) override { return best(request).rank; }

  void placed(const PlacementRequest& request, int rank) override {
    // Hinted tasks bypass place(): book them on the chosen rank too.
    book(estimate(request, static_cast<size_t>(rank), duration_of(request)));
  }

  int place_and_book(const PlacementRequest& request) override {
    // The slot and finish place() found are what placed() would compute
    // again for the same rank: book them without a second pass.
    const Choice choice = best(request);
    book(choice);
    return choice.rank;
  }

  double estimated_finish() const override { return last_finish_; }

 private:
  struct Choice {
    int rank;
    double* slot;   // its earliest free thread
    double finish;  // the task's estimated finish there
  };
  double duration_of(const PlacementRequest& request) const {
    return costs_.task_seconds(request.function, request.cost_hint);
  }
  // The task on rank r: when its inputs can be there, and its earliest free thread.
  Choice estimate(const PlacementRequest& request, size_t r, double duration) {
    double data_ready = request.now;
    for (size_t i = 0; i < request.num_inputs; ++i) {
      const data::VersionInfo& v = *request.inputs[i].version;
      double arrival = v.ready_at;
      if (!v.holds(static_cast<int>(r))) arrival += costs_.transfer_seconds(v.bytes);
      data_ready = std::max(data_ready, arrival);
    }
    double* slot = &*std::min_element(slots_[r].begin(), slots_[r].end());
    return {static_cast<int>(r), slot, std::max({data_ready, *slot, request.now}) + duration};
  }
  // The rank where the task would finish first (the lowest on ties).
  Choice best(const PlacementRequest& request) {
    const double duration = duration_of(request);
    Choice choice = estimate(request, 0, duration);
    for (size_t r = 1; r < slots_.size(); ++r) {
      const Choice other = estimate(request, r, duration);
      if (other.finish < choice.finish) choice = other;
    }
    last_finish_ = choice.finish;
    return choice;
  }
  void book(const Choice& choice) {
    *choice.slot = choice.finish;
    last_finish_ = choice.finish;
  }

  std::vector<std::vector<double>> slots_;
  const CostModel& costs_;
  double last_finish_ = 0;
};

}  // namespace

std::unique_ptr<PlacementPolicy> make_policy(const std::string& name, int ranks,
                                             int threads_per_rank, const CostModel& costs) {
  if (name == "round_robin") return std::make_unique<RoundRobin>(ranks);
  if (name == "locality") return std::make_unique<Locality>(ranks);
  if (name == "heft") return std::make_unique<Heft>(ranks, std::max(1, threads_per_rank), costs);
  throw Error("taskgrid: TASKGRID_SCHEDULER=\"" + name +
              "\" is not a scheduler; choose round_robin, locality or heft");
}

}  // namespace taskgrid::sched
