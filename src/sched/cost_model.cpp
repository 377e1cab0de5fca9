#include "sched/cost_model.h"

namespace taskgrid::sched {

double CostModel::task_seconds(uint32_t function, double cost_hint, Executor executor) const {
  if (cost_hint > 0) return cost_hint;
  const uint64_t k = key(function, executor);
  if (last_mean_ && k == last_key_) return *last_mean_;
  auto it = mean_seconds_.find(k);
  return it == mean_seconds_.end() ? kUnknownTaskSeconds : it->second;
}

void CostModel::record_duration(uint32_t function, double seconds, Executor executor) {
  // Exponential moving average: follows drift, forgets start-up outliers.
  constexpr double kWeight = 0.125;
  const uint64_t k = key(function, executor);
  if (!last_mean_ || k != last_key_) {
    last_mean_ = &mean_seconds_.try_emplace(k, seconds).first->second;
    last_key_ = k;
  }
  *last_mean_ += kWeight * (seconds - *last_mean_);  // a first sample stays as it is
}

}  // namespace taskgrid::sched
