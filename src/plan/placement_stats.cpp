#include "plan/placement_stats.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "core/function_registry.h"

namespace taskgrid::plan {
namespace {

// The report names this many functions, the most used first.
constexpr size_t kFunctionsShown = 6;

[[gnu::format(printf, 1, 2)]] std::string format(const char* pattern, ...) {
  char line[512];
  va_list values;
  va_start(values, pattern);
  std::vsnprintf(line, sizeof line, pattern, values);
  va_end(values);
  return line;
}

const char* policy_rule(const char* policy) {
  if (std::strcmp(policy, "heft") == 0)
    return "heft: earliest estimated finish over the ranks, from durations measured per "
           "function; a function not measured yet is assumed to work through its input bytes "
           "at 1 GB/s (TaskOptions::cost overrides)";
  if (std::strcmp(policy, "round_robin") == 0) return "round_robin: ranks in turn";
  if (std::strcmp(policy, "locality") == 0)
    return "locality: the rank holding most input bytes, then the least busy";
  return "spmd: owner computes (the owner of the first data written, else of the first read)";
}

}  // namespace

void PlacementStats::count(uint32_t function, int rank, bool hinted, bool inputs_there,
                           double estimate) {
  PerRank& r = ranks_[static_cast<size_t>(rank)];
  r.tasks += 1;
  r.hinted += hinted;
  r.inputs_there += !hinted && inputs_there;
  r.uncalibrated += estimate > 0;
  PerFunction& f = functions_[function];
  if (f.tasks.empty()) f.tasks.assign(ranks_.size(), 0);
  f.tasks[static_cast<size_t>(rank)] += 1;
  if (estimate > 0) {
    f.uncalibrated += 1;
    f.estimated_seconds += estimate;
  }
}

std::string PlacementStats::report(const char* policy, const sched::CostModel& costs) const {
  const bool heft = std::strcmp(policy, "heft") == 0;
  std::string out = format("taskgrid placement: %s", policy_rule(policy));
  // What a move cost heft: the network as measured at start-up.
  if (heft)
    out += format("; network (start-up ping-pong): latency %.1f us, %.0f MB/s",
                  costs.latency() * 1e6, costs.bandwidth() * 1e-6);
  out += "\n";
  for (size_t r = 0; r < ranks_.size(); ++r) {
    const PerRank& p = ranks_[r];
    out +=
        format("taskgrid placement: rank %zu: %" PRIu64 " tasks: %" PRIu64 " by rank hint, %" PRIu64
               " where their inputs were, %" PRIu64 " moved from their inputs",
               r, p.tasks, p.hinted, p.inputs_there, p.tasks - p.hinted - p.inputs_there);
    if (heft) out += format("; %" PRIu64 " placed uncalibrated", p.uncalibrated);
    out += "\n";
  }
  if (!heft) return out;
  // Per function: tasks per rank, heft's assumption, the measured mean.
  std::vector<std::pair<uint32_t, const PerFunction*>> order;
  for (const auto& [id, f] : functions_) order.emplace_back(id, &f);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    uint64_t ta = 0, tb = 0;
    for (uint64_t t : a.second->tasks) ta += t;
    for (uint64_t t : b.second->tasks) tb += t;
    return ta != tb ? ta > tb : a.first < b.first;
  });
  for (size_t i = 0; i < std::min(order.size(), kFunctionsShown); ++i) {
    const PerFunction& f = *order[i].second;
    const detail::RegisteredFunction* registered =
        detail::find_function(FunctionId{order[i].first});
    std::string by_rank;
    for (uint64_t t : f.tasks) {
      if (!by_rank.empty()) by_rank += '/';
      by_rank += std::to_string(t);
    }
    out += format("taskgrid placement: function %s: tasks by rank %s",
                  registered ? registered->name : "?", by_rank.c_str());
    if (f.uncalibrated > 0)
      out += format(", %" PRIu64 " placed uncalibrated (assumed %.3f ms each)", f.uncalibrated,
                    f.estimated_seconds / static_cast<double>(f.uncalibrated) * 1e3);
    if (const auto measured = costs.measured_seconds(order[i].first))
      out += format(", measured %.3f ms", *measured * 1e3);
    else
      out += ", not measured";
    out += "\n";
  }
  if (order.size() > kFunctionsShown)
    out += format("taskgrid placement: (%zu more functions)\n", order.size() - kFunctionsShown);
  return out;
}

}  // namespace taskgrid::plan
