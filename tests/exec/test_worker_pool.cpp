// exec::WorkerPool starts its threads through the transport seam (the
// starter it is given) and runs every pushed task on them; the seam's
// default thread primitives (comm::Transport::start_thread, sleep_ns).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "exec/worker_pool.h"
#include "tests/support/counting_blocking.h"

namespace taskgrid::exec {
namespace {

struct Job {
  int priority = 0;  // exec::ReadyQueue's order
  std::thread::id ran_on;
  Job* next_finished = nullptr;  // the pool's stack of finished jobs
};

// A transport whose only real members are the seam's defaults: start_thread
// and sleep_ns are what is tested; the rest is never called.
class SeamOnly final : public comm::Transport {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int max_tag() const override { return 0; }
  void send_control(int, std::vector<char>&&) override { unused(); }
  bool receive_control(int&, std::vector<char>&) override { unused(); }
  void send_data(int, int, const void*, size_t, uint64_t) override { unused(); }
  void receive_data(int, int, void*, size_t, uint64_t) override { unused(); }
  void send_chunk(int, int, const void*, size_t, uint64_t) override { unused(); }
  void receive_chunk(int, int, void*, size_t, uint64_t) override { unused(); }
  size_t max_chunk() const override { return 0; }
  int create_group(const std::vector<int32_t>&, int) override { unused(); }
  int find_group(const std::vector<int32_t>&) override { unused(); }
  void broadcast_chunk(int, int, void*, size_t, uint64_t) override { unused(); }
  bool poll(std::vector<uint64_t>&) override { unused(); }
  size_t pending() const override { return 0; }
  bool copying_bulk_data() const override { return false; }
  bool same_node(int) const override { return true; }
  [[noreturn]] void abort_job(int) override { unused(); }

 private:
  [[noreturn]] static void unused() { std::abort(); }
};

TEST(WorkerPool, StartsItsThreadsThroughTheSeamAndRunsEveryTaskOnThem) {
  SeamOnly seam;
  std::mutex mutex;
  std::set<std::thread::id> started;
  int starts = 0;
  auto start_thread = [&](std::function<void()> body) {
    ++starts;
    return seam.start_thread([&mutex, &started, body = std::move(body)] {
      {
        std::lock_guard lock(mutex);
        started.insert(std::this_thread::get_id());
      }
      body();
    });
  };
  std::atomic<int> finished{0};
  constexpr int kJobs = 200;
  std::vector<Job> jobs(kJobs);
  {
    WorkerPool<Job> pool(
        3, [](Job* job) { job->ran_on = std::this_thread::get_id(); }, [&] { ++finished; },
        start_thread);
    EXPECT_EQ(starts, 3);
    for (Job& job : jobs) pool.push(&job);
    std::vector<Job*> done;
    while (done.size() < jobs.size()) {
      pool.take_finished(done);
      std::this_thread::yield();
    }
  }  // stop() joins the threads through the seam
  EXPECT_EQ(finished.load(), kJobs);
  std::lock_guard lock(mutex);
  EXPECT_EQ(started.size(), 3u);
  for (const Job& job : jobs) EXPECT_EQ(started.count(job.ran_on), 1u);
}

TEST(WorkerPool, IdleWorkersSleepAndWakeThroughTheGivenBlocking) {
  SeamOnly seam;
  comm::CountingBlocking blocking;
  std::atomic<int> finished{0};
  Job job;
  {
    WorkerPool<Job> pool(
        2, [](Job* j) { j->ran_on = std::this_thread::get_id(); }, [&] { ++finished; },
        [&](std::function<void()> body) { return seam.start_thread(std::move(body)); }, blocking);
    // Nothing to do: both workers go to sleep through the seam.
    while (blocking.waits() < 2) std::this_thread::yield();
    pool.push(&job);
    while (finished.load() == 0) std::this_thread::yield();
  }
  EXPECT_GE(blocking.wakes(), 1u);  // the push woke a sleeper
  EXPECT_NE(job.ran_on, std::this_thread::get_id());
}

// Where the rank's threads fit its cores, an idle worker spins before it
// sleeps: a task pushed meanwhile runs with no sleep and no wake call.
TEST(WorkerPool, ASpinningWorkerTakesATaskWithoutSleeping) {
  SeamOnly seam;
  comm::CountingBlocking blocking;
  std::atomic<int> finished{0};
  Job job;
  {
    WorkerPool<Job> pool(
        1, [](Job* j) { j->ran_on = std::this_thread::get_id(); }, [&] { ++finished; },
        [&](std::function<void()> body) { return seam.start_thread(std::move(body)); }, blocking,
        60'000'000'000);
    while (blocking.spins() < 1 && blocking.waits() < 1) std::this_thread::yield();
    pool.push(&job);
    while (finished.load() == 0) std::this_thread::yield();
  }  // stop() ends the next spin
  EXPECT_EQ(blocking.waits(), 0u);
  EXPECT_EQ(blocking.wakes(), 0u);
  EXPECT_NE(job.ran_on, std::this_thread::get_id());
}

// A helper (the engine's thread) that leaves tasks to waiting workers (while
// data is on its way) takes one only when more are ready than workers wait
// for: inside a task it would poll nothing.
TEST(WorkerPool, AHelperTakesATaskOnlyWhenNoWaitingWorkerWillTakeIt) {
  SeamOnly seam;
  comm::CountingBlocking blocking;
  std::atomic<int> started{0};
  std::atomic<bool> release{false};
  std::atomic<int> finished{0};
  std::vector<Job> jobs(4);
  {
    WorkerPool<Job> pool(
        2,
        [&](Job* job) {
          job->ran_on = std::this_thread::get_id();
          started.fetch_add(1);
          if (job->priority == 1)
            while (!release.load()) std::this_thread::yield();
        },
        [&] { ++finished; },
        [&](std::function<void()> body) { return seam.start_thread(std::move(body)); }, blocking);
    while (blocking.waits() < 2) std::this_thread::yield();  // both workers wait
    pool.push(&jobs[0]);
    EXPECT_EQ(pool.try_pop(true), nullptr);  // a waiting worker takes it
    while (finished.load() < 1) std::this_thread::yield();
    // Both workers busy (held until released): the helper takes the next one.
    jobs[1].priority = jobs[2].priority = 1;
    pool.push(&jobs[1]);
    pool.push(&jobs[2]);
    while (started.load() < 3) std::this_thread::yield();
    pool.push(&jobs[3]);
    EXPECT_EQ(pool.try_pop(true), &jobs[3]);
    release.store(true);
    while (finished.load() < 3) std::this_thread::yield();
  }
  EXPECT_NE(jobs[0].ran_on, std::this_thread::get_id());
}

// The lock-free ring and the locked queue beside it give the order the
// locked queue alone gives (exec::ReadyQueue): positive priorities first,
// then plain tasks FIFO, those that overflowed the ring included, then the
// negative ones. No workers: the helper's try_pop() takes them all.
TEST(WorkerPool, PopsInTheReadyQueuesOrderWhenTheRingOverflows) {
  SeamOnly seam;
  constexpr int kJobs = 5000;  // several times the ring
  std::vector<Job> jobs(kJobs);
  ReadyQueue<Job> reference;
  WorkerPool<Job> pool(
      0, [](Job*) {}, [] {},
      [&](std::function<void()> body) { return seam.start_thread(std::move(body)); });
  uint32_t random = 12345;
  auto next = [&random] { return random = random * 1664525u + 1013904223u; };
  size_t pushed = 0;
  std::vector<Job*> expected;
  std::vector<Job*> got;
  while (pushed < jobs.size() || !reference.empty()) {
    // Bursts of pushes, a few with a priority, then some pops.
    for (uint32_t n = next() % 1500; n > 0 && pushed < jobs.size(); --n, ++pushed) {
      Job& job = jobs[pushed];
      const uint32_t draw = next() % 20;
      job.priority = draw == 0 ? 1 + static_cast<int>(next() % 3) : draw == 1 ? -1 : 0;
      reference.push(&job);
      pool.push(&job);
    }
    for (uint32_t n = next() % 1200; n > 0 && !reference.empty(); --n) {
      expected.push_back(reference.pop());
      got.push_back(pool.try_pop());
    }
  }
  EXPECT_EQ(pool.try_pop(), nullptr);
  ASSERT_EQ(got.size(), jobs.size());
  EXPECT_EQ(got, expected);
}

// Many more tasks than the ring holds, of every priority, pushed while the
// workers run them and a helper takes some: each runs once and comes back
// finished once.
TEST(WorkerPool, EveryTaskRunsOnceAndComesBackOnceUnderLoad) {
  SeamOnly seam;
  constexpr int kJobs = 20000;
  std::vector<Job> jobs(kJobs);
  std::vector<std::atomic<int>> runs(kJobs);
  std::vector<Job*> done;
  {
    WorkerPool<Job> pool(
        3, [&](Job* job) { runs[static_cast<size_t>(job - jobs.data())].fetch_add(1); }, [] {},
        [&](std::function<void()> body) { return seam.start_thread(std::move(body)); },
        comm::system_blocking(), 20'000);
    for (int i = 0; i < kJobs; ++i) {
      jobs[static_cast<size_t>(i)].priority = i % 13 == 0 ? 2 : i % 17 == 0 ? -1 : 0;
      pool.push(&jobs[static_cast<size_t>(i)]);
      if (i % 7 == 0)
        if (Job* job = pool.try_pop()) {
          runs[static_cast<size_t>(job - jobs.data())].fetch_add(1);
          done.push_back(job);
        }
      if (i % 100 == 0) pool.take_finished(done);
    }
    while (done.size() < jobs.size()) {
      pool.take_finished(done);
      std::this_thread::yield();
    }
  }
  for (const auto& count : runs) ASSERT_EQ(count.load(), 1);
  std::vector<int> seen(kJobs);
  for (Job* job : done) seen[static_cast<size_t>(job - jobs.data())] += 1;
  for (int count : seen) ASSERT_EQ(count, 1);
}

TEST(TransportSeam, DefaultSleepWaitsAtLeastAsLongAsAsked) {
  SeamOnly seam;
  const auto before = std::chrono::steady_clock::now();
  seam.sleep_ns(2'000'000);
  EXPECT_GE(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(2));
}

}  // namespace
}  // namespace taskgrid::exec
