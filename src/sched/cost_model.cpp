#include "sched/cost_model.h"

namespace taskgrid::sched {

double CostModel::task_seconds(uint32_t function, double cost_hint, Executor executor) const {
  if (cost_hint > 0) return cost_hint;
  return measured_seconds(function, executor).value_or(kUnknownTaskSeconds);
}

std::optional<double> CostModel::measured_seconds(uint32_t function, Executor executor) const {
  const uint64_t k = key(function, executor);
  if (last_mean_ && k == last_key_) return *last_mean_;
  auto it = mean_seconds_.find(k);
  if (it == mean_seconds_.end()) return std::nullopt;
  return it->second;
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
