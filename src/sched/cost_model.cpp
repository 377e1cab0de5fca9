#include "sched/cost_model.h"

namespace taskgrid::sched {

double CostModel::task_seconds(uint32_t function, double cost_hint) const {
  if (cost_hint > 0) return cost_hint;
  if (last_mean_ && function == last_function_) return *last_mean_;
  auto it = mean_seconds_.find(function);
  return it == mean_seconds_.end() ? kUnknownTaskSeconds : it->second;
}

void CostModel::record_duration(uint32_t function, double seconds) {
  // Exponential moving average: follows drift, forgets start-up outliers.
  constexpr double kWeight = 0.125;
  if (!last_mean_ || function != last_function_) {
    last_mean_ = &mean_seconds_.try_emplace(function, seconds).first->second;
    last_function_ = function;
  }
  *last_mean_ += kWeight * (seconds - *last_mean_);  // a first sample stays as it is
}

}  // namespace taskgrid::sched
