#include "sched/cost_model.h"

namespace taskgrid::sched {

double CostModel::task_seconds(uint32_t function, double cost_hint) const {
  if (cost_hint > 0) return cost_hint;
  auto it = mean_seconds_.find(function);
  return it == mean_seconds_.end() ? kUnknownTaskSeconds : it->second;
}

void CostModel::record_duration(uint32_t function, double seconds) {
  // Exponential moving average: follows drift, forgets start-up outliers.
  constexpr double kWeight = 0.125;
  auto [it, inserted] = mean_seconds_.try_emplace(function, seconds);
  if (!inserted) it->second += kWeight * (seconds - it->second);
}

}  // namespace taskgrid::sched
