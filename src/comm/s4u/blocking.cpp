#include "comm/s4u/blocking.h"

#include <mutex>

namespace taskgrid::comm::s4u {

S4uBlocking::Sleepers* S4uBlocking::sleepers(const void* word, bool make) {
  if (auto it = sleepers_.find(word); it != sleepers_.end()) return it->second.get();
  if (!make) return nullptr;
  // Creating them may switch actors: another one may have made them meanwhile.
  auto made = std::make_unique<Sleepers>(
      Sleepers{simgrid::s4u::Mutex::create(), simgrid::s4u::ConditionVariable::create()});
  return sleepers_.try_emplace(word, std::move(made)).first->second.get();
}

void S4uBlocking::wait(std::atomic<uint32_t>& word, uint32_t expected) {
  Sleepers* s = sleepers(&word, true);
  std::unique_lock lock(*s->mutex);
  if (word.load() == expected) s->condition->wait(lock);
}

void S4uBlocking::wait_for(std::atomic<uint32_t>& word, uint32_t expected, uint64_t timeout_ns) {
  Sleepers* s = sleepers(&word, true);
  std::unique_lock lock(*s->mutex);
  if (word.load() == expected) s->condition->wait_for(lock, static_cast<double>(timeout_ns) * 1e-9);
}

void S4uBlocking::wake_one(std::atomic<uint32_t>& word) {
  Sleepers* s = sleepers(&word, false);
  if (!s) return;  // nobody ever slept on it
  std::unique_lock lock(*s->mutex);
  s->condition->notify_one();
}

void S4uBlocking::wake_all(std::atomic<uint32_t>& word) {
  Sleepers* s = sleepers(&word, false);
  if (!s) return;
  std::unique_lock lock(*s->mutex);
  s->condition->notify_all();
}

}  // namespace taskgrid::comm::s4u
