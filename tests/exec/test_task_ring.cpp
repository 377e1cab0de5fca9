// exec::TaskRing, the lock-free hand-off of ready tasks: FIFO, full and empty
// reported, across many laps, and every item taken exactly once when many
// threads push and pop at once.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "exec/task_ring.h"

namespace taskgrid::exec {
namespace {

TEST(TaskRing, RoundsItsCapacityUpToAPowerOfTwo) {
  EXPECT_EQ(TaskRing<int>(5).capacity(), 8u);
  EXPECT_EQ(TaskRing<int>(8).capacity(), 8u);
  EXPECT_EQ(TaskRing<int>(1).capacity(), 2u);
}

TEST(TaskRing, IsFifoReportsFullAndEmptyAndWrapsAround) {
  TaskRing<int> ring(4);
  std::vector<int> items(4 * 25);
  EXPECT_EQ(ring.try_pop(), nullptr);
  size_t pushed = 0;
  size_t popped = 0;
  // Fill, then pop a few and push a few, lap after lap.
  while (pushed < items.size()) {
    while (pushed < items.size() && ring.try_push(&items[pushed])) ++pushed;
    EXPECT_EQ(ring.approximate_size(), pushed - popped);
    if (pushed - popped == ring.capacity()) {
      int extra = 0;
      EXPECT_FALSE(ring.try_push(&extra));
    }
    for (int i = 0; i < 3 && popped < pushed; ++i) EXPECT_EQ(ring.try_pop(), &items[popped++]);
  }
  while (popped < pushed) EXPECT_EQ(ring.try_pop(), &items[popped++]);
  EXPECT_EQ(ring.try_pop(), nullptr);
  EXPECT_EQ(ring.approximate_size(), 0u);
}

TEST(TaskRing, ManyProducersAndConsumersTakeEveryItemExactlyOnce) {
  constexpr int kThreads = 4;
  constexpr int kPerProducer = 20000;
  TaskRing<int> ring(64);  // small: producers find it full often
  std::vector<int> items(kThreads * kPerProducer);
  std::vector<std::atomic<int>> taken(items.size());
  std::atomic<int> consumed{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kThreads; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) {
        int* item = &items[static_cast<size_t>(p * kPerProducer + i)];
        while (!ring.try_push(item)) std::this_thread::yield();
      }
    });
    threads.emplace_back([&] {
      while (consumed.load() < static_cast<int>(items.size())) {
        int* item = ring.try_pop();
        if (!item) {
          std::this_thread::yield();
          continue;
        }
        taken[static_cast<size_t>(item - items.data())].fetch_add(1);
        consumed.fetch_add(1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& count : taken) ASSERT_EQ(count.load(), 1);
  EXPECT_EQ(ring.try_pop(), nullptr);
}

// One producer, one consumer: each producer's items come out in its order.
TEST(TaskRing, OneProducerAndOneConsumerKeepTheOrder) {
  constexpr int kItems = 100000;
  TaskRing<int> ring(16);
  std::vector<int> items(kItems);
  std::thread producer([&] {
    for (int& item : items)
      while (!ring.try_push(&item)) std::this_thread::yield();
  });
  for (int i = 0; i < kItems; ++i) {
    int* item = nullptr;
    while (!(item = ring.try_pop())) std::this_thread::yield();
    ASSERT_EQ(item, &items[static_cast<size_t>(i)]);
  }
  producer.join();
}

}  // namespace
}  // namespace taskgrid::exec
