// The bookkeeping collectives (comm/collectives.h) and the spmd divergence
// check built on them.
//
// Without arguments: the loopback collectives of 1-8 ranks in one process
// (a thread per rank), and DivergenceCheck over them. MPI is not initialised.
// With --mpi (under mpiexec, see collectives.cmake): the same collective
// checks over MpiCollectives on MPI_COMM_WORLD, every rank running the same
// tests in the same order. The checks use EXPECT (never ASSERT) so that a
// failing rank still makes every later collective call and nobody hangs.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "comm/loopback/collectives.h"
#include "comm/mpi/collectives.h"
#include "plan/divergence_check.h"

namespace taskgrid {
namespace {

void step_task(TaskContext&) {}
void copy_task(TaskContext&) {}
TASKGRID_REGISTER(step_task);
TASKGRID_REGISTER(copy_task);

// ------------------------------------------------------ shared checks ---

void check_identity(comm::Collectives& c, int expected_size) {
  EXPECT_EQ(c.size(), expected_size);
  EXPECT_GE(c.rank(), 0);
  EXPECT_LT(c.rank(), c.size());
  EXPECT_GE(c.ranks_on_node(), 1);
  EXPECT_LE(c.ranks_on_node(), c.size());
}

void check_allreduce(comm::Collectives& c) {
  const auto rank = static_cast<uint64_t>(c.rank());
  const auto size = static_cast<uint64_t>(c.size());
  // Each position's maximum comes from a different rank.
  std::vector<uint64_t> values = {rank, size - rank, rank == 0 ? ~uint64_t{0} : 7, 42,
                                  (rank * 7919) % 13};
  c.allreduce_max(values.data(), values.size());
  uint64_t expected_last = 0;
  for (uint64_t r = 0; r < size; ++r) expected_last = std::max(expected_last, (r * 7919) % 13);
  EXPECT_EQ(values[0], size - 1);
  EXPECT_EQ(values[1], size);
  EXPECT_EQ(values[2], ~uint64_t{0});
  EXPECT_EQ(values[3], 42u);
  EXPECT_EQ(values[4], expected_last);
  c.allreduce_max(values.data(), 0);  // nothing to reduce, still collective
  EXPECT_EQ(c.max_over_ranks(-10 - c.rank()), -10);
  EXPECT_EQ(c.max_over_ranks(c.rank() == c.size() - 1 ? -1 : -5), -1);
  EXPECT_EQ(c.max_over_ranks(int64_t{1} << 40), int64_t{1} << 40);
}

void check_gather(comm::Collectives& c) {
  // Different sizes per rank, rank 1 (when there is one) gives nothing, and
  // each root in turn.
  for (int root = 0; root < c.size(); ++root) {
    const size_t bytes = c.rank() == 1 ? 0 : static_cast<size_t>(c.rank()) * 37 + 3;
    std::vector<char> mine(bytes);
    for (size_t i = 0; i < bytes; ++i) mine[i] = static_cast<char>(c.rank() * 11 + root + i);
    const std::vector<std::vector<char>> all = c.gather(root, mine.data(), mine.size());
    if (c.rank() != root) {
      EXPECT_TRUE(all.empty()) << "rank " << c.rank() << " root " << root;
      continue;
    }
    EXPECT_EQ(all.size(), static_cast<size_t>(c.size()));
    for (int r = 0; r < std::min(c.size(), static_cast<int>(all.size())); ++r) {
      const std::vector<char>& got = all[static_cast<size_t>(r)];
      const size_t expected = r == 1 ? 0 : static_cast<size_t>(r) * 37 + 3;
      EXPECT_EQ(got.size(), expected) << "from rank " << r;
      for (size_t i = 0; i < std::min(got.size(), expected); ++i)
        EXPECT_EQ(got[i], static_cast<char>(r * 11 + root + i)) << "rank " << r << " byte " << i;
    }
  }
}

void check_broadcast(comm::Collectives& c) {
  for (int root : {0, c.size() - 1, c.size() / 2}) {
    std::vector<uint32_t> data(1000 + static_cast<size_t>(root), 0xDEADu);
    if (c.rank() == root)
      for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint32_t>(i * 3 + root);
    c.broadcast(root, data.data(), data.size() * sizeof(uint32_t));
    size_t wrong = 0;
    for (size_t i = 0; i < data.size(); ++i) wrong += data[i] != i * 3 + root;
    EXPECT_EQ(wrong, 0u) << "rank " << c.rank() << " root " << root;
  }
  c.broadcast(0, nullptr, 0);
}

// Every rank has arrived before any leaves: counted with an atomic in one
// process; over MPI, with an all-reduce of "done before the barrier".
void check_barrier(comm::Collectives& c, std::atomic<int>* arrived) {
  for (int round = 1; round <= 20; ++round) {
    if (arrived) {
      arrived->fetch_add(1);
      c.barrier();
      EXPECT_GE(arrived->load(), round * c.size());
      c.barrier();  // nobody starts the next round while others still check
    } else {
      c.barrier();
    }
  }
}

void check_measure_link(comm::Collectives& c) {
  const comm::LinkEstimate link = c.measure_link();
  if (c.size() < 2) {
    EXPECT_EQ(link.latency_seconds, 0.0);
    EXPECT_EQ(link.bandwidth_bytes_per_second, 0.0);
    return;
  }
  EXPECT_GT(link.latency_seconds, 0.0);
  EXPECT_GT(link.bandwidth_bytes_per_second, 0.0);
  // Every rank has rank 0's figures, bit for bit.
  double figures[2] = {link.latency_seconds, link.bandwidth_bytes_per_second};
  c.broadcast(0, figures, sizeof figures);
  EXPECT_EQ(figures[0], link.latency_seconds);
  EXPECT_EQ(figures[1], link.bandwidth_bytes_per_second);
}

void check_all(comm::Collectives& c, int size, std::atomic<int>* arrived) {
  check_identity(c, size);
  check_allreduce(c);
  check_gather(c);
  check_broadcast(c);
  check_barrier(c, arrived);
  check_measure_link(c);
}

// ----------------------------------------------------------- loopback ---

// Runs body(rank's collectives) on `ranks` threads.
void run_ranks(int ranks, const std::function<void(comm::Collectives&)>& body) {
  comm::loopback::LoopbackCollectiveGroup group(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) threads.emplace_back([&, r] { body(group.collectives(r)); });
  for (std::thread& t : threads) t.join();
}

class LoopbackCollectives : public ::testing::TestWithParam<int> {};

TEST_P(LoopbackCollectives, AllCalls) {
  const int ranks = GetParam();
  std::atomic<int> arrived{0};
  run_ranks(ranks, [&](comm::Collectives& c) { check_all(c, ranks, &arrived); });
}

TEST_P(LoopbackCollectives, ManyRoundsInARow) {
  // Back-to-back collectives of different kinds: a rank that runs ahead into
  // the next call must not disturb the one before.
  const int ranks = GetParam();
  run_ranks(ranks, [&](comm::Collectives& c) {
    for (int round = 0; round < 200; ++round) {
      uint64_t value = static_cast<uint64_t>(round * 31 + c.rank());
      c.allreduce_max(&value, 1);
      EXPECT_EQ(value, static_cast<uint64_t>(round * 31 + ranks - 1));
      int word = c.rank() == round % ranks ? round : -1;
      c.broadcast(round % ranks, &word, sizeof word);
      EXPECT_EQ(word, round);
      const auto all = c.gather(round % ranks, &round, sizeof round);
      if (c.rank() == round % ranks) {
        EXPECT_EQ(all.size(), static_cast<size_t>(ranks));
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, LoopbackCollectives, ::testing::Range(1, 9));

TEST(LoopbackCollectiveGroup, RanksPerNode) {
  comm::loopback::LoopbackCollectiveGroup group(4, 2);
  EXPECT_EQ(group.size(), 4);
  EXPECT_EQ(group.collectives(3).ranks_on_node(), 2);
  EXPECT_EQ(comm::loopback::LoopbackCollectiveGroup(3).collectives(0).ranks_on_node(), 3);
}

// ------------------------------------------- divergence check (loopback) ---

FunctionId step_id() { return function_id(step_task); }
FunctionId copy_id() { return function_id(copy_task); }

struct Submitter {
  plan::DivergenceCheck& check;
  void task(FunctionId f, std::initializer_list<DataAccess> accesses, int hint = -1,
            uint64_t arg = 0, size_t arg_bytes = sizeof(uint64_t)) {
    check.record_task(f.value, accesses.begin(), accesses.size(), hint, &arg, arg_bytes);
  }
};

DataAccess access(uint64_t handle, AccessMode mode) { return {DataHandle{handle}, mode}; }

// Runs `program` on every rank with a DivergenceCheck; returns rank 0's
// reports of every compare() (empty strings where the ranks agreed).
std::vector<std::string> run_divergence(
    int ranks, uint64_t interval,
    const std::function<void(int rank, plan::DivergenceCheck&,
                             std::vector<std::optional<std::string>>&)>& program) {
  std::vector<std::optional<std::string>> rank0;
  run_ranks(ranks, [&](comm::Collectives& c) {
    plan::DivergenceCheck check(c, interval);
    std::vector<std::optional<std::string>> results;
    program(c.rank(), check, results);
    if (c.rank() == 0) rank0 = results;
  });
  std::vector<std::string> out;
  for (const auto& r : rank0) out.push_back(r ? (r->empty() ? "<empty>" : *r) : "");
  return out;
}

TEST(DivergenceCheck, AgreeingRanksPassEveryCheck) {
  for (int ranks : {1, 2, 5}) {
    const auto reports = run_divergence(
        ranks, 16,
        [](int, plan::DivergenceCheck& check, std::vector<std::optional<std::string>>& out) {
          Submitter s{check};
          check.record_data(64, 0);
          for (int i = 0; i < 100; ++i) {
            s.task(step_id(), {access(1, AccessMode::in), access(2, AccessMode::out)}, i % 3, i);
            if (check.due()) out.push_back(check.compare());
          }
          out.push_back(check.compare());
          EXPECT_FALSE(check.due());
        });
    ASSERT_EQ(reports.size(), 7u);  // 101 submissions: 6 interval points and the end
    for (const std::string& r : reports) EXPECT_EQ(r, "");
  }
}

TEST(DivergenceCheck, ComparesThroughTheWaiter) {
  // The planner's waiter runs the engine while the ranks compare: every
  // comparison must go through it, and still find what it finds without.
  for (int ranks : {1, 3}) {
    std::atomic<int> waits{0}, unfinished{0};
    const auto reports = run_divergence(
        ranks, 8,
        [&](int rank, plan::DivergenceCheck& check, std::vector<std::optional<std::string>>& out) {
          check.set_waiter([&](const std::function<bool()>& done) {
            waits += 1;
            while (!done()) unfinished += 1;
          });
          Submitter s{check};
          for (int i = 0; i < 20; ++i) {
            s.task(step_id(), {access(1, AccessMode::inout)}, -1, i);
            if (check.due()) out.push_back(check.compare());
          }
          if (rank == ranks - 1) s.task(step_id(), {access(2, AccessMode::inout)}, -1, 0);
          out.push_back(check.compare());
        });
    ASSERT_EQ(reports.size(), 3u);  // 2 interval points and the end
    EXPECT_EQ(reports[0], "");
    EXPECT_EQ(reports[1], "");
    if (ranks == 1)
      EXPECT_EQ(reports[2], "");  // one rank agrees with itself
    else
      EXPECT_NE(reports[2].find("spmd ranks submitted different sequences"), std::string::npos)
          << reports[2];
    EXPECT_EQ(waits.load(), 3 * ranks);  // every comparison, on every rank
    EXPECT_EQ(unfinished.load(), 0);     // loopback's all-reduce completes at once
  }
}

TEST(DivergenceCheck, ExtraTaskNamesFirstDifferenceOnEveryRank) {
  // The error_cases program in one process: rank 2 of 4 submits an extra task.
  const auto reports = run_divergence(
      4, 1024,
      [](int rank, plan::DivergenceCheck& check, std::vector<std::optional<std::string>>& out) {
        check.record_data(64, 0);
        check.record_data(64, 3);
        Submitter s{check};
        for (int i = 0; i < 50; ++i) {
          s.task(step_id(), {access(1, AccessMode::inout)}, -1, 0, 0);
          if (i == 20 && rank == 2) s.task(step_id(), {access(2, AccessMode::inout)}, -1, 0, 0);
          s.task(step_id(), {access(2, AccessMode::inout)}, -1, 0, 0);
        }
        out.push_back(check.compare());
      });
  ASSERT_EQ(reports.size(), 1u);
  const std::string& r = reports[0];
  EXPECT_NE(r.find("spmd ranks submitted different sequences; first difference:"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("rank 0: submission #45 is task 'step_task' with 1 accesses (inout handle 1), "
                   "rank hint -1, 0 argument bytes"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("rank 2: submission #45 is task 'step_task' with 1 accesses (inout handle 2)"),
            std::string::npos)
      << r;
  EXPECT_EQ(r.find("no longer recorded"), std::string::npos) << r;
}

TEST(DivergenceCheck, EveryFieldCounts) {
  // One submission differs on rank 1 in a single field; each must be caught,
  // at the right position.
  struct Variant {
    const char* what;
    std::function<void(Submitter&, bool)> submit;
  };
  const std::vector<Variant> variants = {
      {"function",
       [](Submitter& s, bool other) { s.task(other ? copy_id() : step_id(), {}, -1, 5); }},
      {"handle",
       [](Submitter& s, bool other) {
         s.task(step_id(), {access(1, AccessMode::in), access(other ? 4 : 3, AccessMode::in)});
       }},
      {"mode",
       [](Submitter& s, bool other) {
         s.task(step_id(), {access(1, other ? AccessMode::inout : AccessMode::out)});
       }},
      {"fourth access",
       [](Submitter& s, bool other) {
         s.task(step_id(), {access(1, AccessMode::in), access(2, AccessMode::in),
                            access(3, AccessMode::in), access(other ? 9 : 4, AccessMode::out)});
       }},
      {"hint", [](Submitter& s, bool other) { s.task(step_id(), {}, other ? 1 : 0); }},
      {"argument byte",
       [](Submitter& s, bool other) { s.task(step_id(), {}, -1, other ? 0x100 : 0); }},
      {"argument length",
       [](Submitter& s, bool other) { s.task(step_id(), {}, -1, 0, other ? 7 : 8); }},
      {"data size", [](Submitter& s, bool other) { s.check.record_data(other ? 65 : 64, 0); }},
      {"data owner", [](Submitter& s, bool other) { s.check.record_data(64, other ? 1 : 0); }},
  };
  for (const Variant& v : variants) {
    const auto reports = run_divergence(
        2, 64,
        [&](int rank, plan::DivergenceCheck& check, std::vector<std::optional<std::string>>& out) {
          Submitter s{check};
          for (int i = 0; i < 10; ++i) s.task(step_id(), {access(1, AccessMode::inout)}, -1, i);
          v.submit(s, rank == 1);
          for (int i = 0; i < 5; ++i) s.task(step_id(), {access(1, AccessMode::inout)}, -1, i);
          out.push_back(check.compare());
        });
    ASSERT_EQ(reports.size(), 1u) << v.what;
    EXPECT_NE(reports[0].find("rank 0: submission #11 "), std::string::npos)
        << v.what << ": " << reports[0];
    EXPECT_NE(reports[0].find("rank 1: submission #11 "), std::string::npos)
        << v.what << ": " << reports[0];
  }
}

TEST(DivergenceCheck, ArgumentsOfEveryLength) {
  // Each length from 0 to 40 bytes, with the difference in each byte in turn.
  for (size_t bytes = 1; bytes <= 40; ++bytes) {
    for (size_t at = 0; at < bytes; ++at) {
      const auto reports =
          run_divergence(2, 64,
                         [&](int rank, plan::DivergenceCheck& check,
                             std::vector<std::optional<std::string>>& out) {
                           std::vector<unsigned char> args(bytes, 0x5A);
                           if (rank == 1) args[at] ^= 1;
                           check.record_task(step_id().value, nullptr, 0, -1, args.data(), bytes);
                           out.push_back(check.compare());
                         });
      ASSERT_EQ(reports.size(), 1u);
      EXPECT_NE(reports[0].find("rank 1: submission #1 is task 'step_task' with 0 accesses (), "
                                "rank hint -1, " +
                                std::to_string(bytes) + " argument bytes"),
                std::string::npos)
          << bytes << " bytes, at " << at << ": " << reports[0];
    }
  }
}

TEST(DivergenceCheck, ShorterSequenceSubmittedNothing) {
  const auto reports = run_divergence(
      3, 1024,
      [](int rank, plan::DivergenceCheck& check, std::vector<std::optional<std::string>>& out) {
        Submitter s{check};
        for (int i = 0; i < (rank == 1 ? 7 : 9); ++i) s.task(step_id(), {}, -1, i);
        out.push_back(check.compare());
      });
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_NE(reports[0].find("rank 1: submitted nothing as submission #8 (it has 7)"),
            std::string::npos)
      << reports[0];
  EXPECT_NE(reports[0].find("rank 0: submission #8 is task 'step_task'"), std::string::npos)
      << reports[0];
}

TEST(DivergenceCheck, DifferenceAfterAnAgreeingCheckAndTheRingWrapping) {
  // Several agreeing checks first (the ring wraps many times), then the
  // difference: numbers count from the start of the job.
  const auto reports = run_divergence(
      2, 16,
      [](int rank, plan::DivergenceCheck& check, std::vector<std::optional<std::string>>& out) {
        Submitter s{check};
        for (int i = 0; i < 1000; ++i) {
          s.task(step_id(), {access(1, AccessMode::inout)}, -1, i);
          if (check.due()) {
            const auto r = check.compare();
            if (r) out.push_back(r);
          }
        }
        s.task(step_id(), {access(rank == 0 ? 1 : 2, AccessMode::in)}, -1);
        out.push_back(check.compare());
      });
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_NE(reports[0].find("rank 1: submission #1001 is task 'step_task' with 1 accesses (in "
                            "handle 2)"),
            std::string::npos)
      << reports[0];
}

TEST(DivergenceCheck, DataBurstBeyondTheRingIsReportedAsApproximate) {
  // enter_data is no check point: a long burst can outrun the ring. The
  // report then says that the difference may be earlier.
  const auto reports = run_divergence(
      2, 16,
      [](int rank, plan::DivergenceCheck& check, std::vector<std::optional<std::string>>& out) {
        check.record_data(rank == 0 ? 8 : 9, 0);
        for (int i = 0; i < 500; ++i) check.record_data(8, 0);
        out.push_back(check.compare());
      });
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_NE(reports[0].find("is enter_data(8 bytes, owner 0)"), std::string::npos) << reports[0];
  EXPECT_NE(reports[0].find("are no longer recorded; the difference may be earlier"),
            std::string::npos)
      << reports[0];
}

TEST(DivergenceCheck, IntervalIsCapped) {
  comm::loopback::LoopbackCollectiveGroup group(1);
  plan::DivergenceCheck check(group.collectives(0), uint64_t{1} << 40);
  for (uint64_t i = 0; i < plan::DivergenceCheck::kMaxInterval; ++i) {
    EXPECT_FALSE(check.due());
    check.record_data(1, 0);
  }
  EXPECT_TRUE(check.due());
  EXPECT_FALSE(check.compare());
  EXPECT_FALSE(check.due());
}

// ---------------------------------------------------------------- MPI ---

bool mpi_initialized() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  return initialized != 0;
}

TEST(MpiCollectives, AllCalls) {
  if (!mpi_initialized()) GTEST_SKIP() << "run with --mpi under mpiexec";
  int world = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  comm::mpi::MpiCollectives c(MPI_COMM_WORLD);
  check_all(c, world, nullptr);
}

TEST(MpiCollectives, OwnCommunicator) {
  // A message of the program's on the parent communicator, with the tag the
  // gather uses inside, stays where it is until the program receives it.
  if (!mpi_initialized()) GTEST_SKIP() << "run with --mpi under mpiexec";
  comm::mpi::MpiCollectives c(MPI_COMM_WORLD);
  const int peer = (c.rank() + 1) % c.size();
  const int from = (c.rank() + c.size() - 1) % c.size();
  int sent = 1000 + c.rank(), received = -1;
  MPI_Request request;
  MPI_Isend(&sent, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &request);
  const int word = 7;
  const auto all = c.gather(0, &word, sizeof word);
  c.barrier();
  MPI_Recv(&received, 1, MPI_INT, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  EXPECT_EQ(received, 1000 + from);
  if (c.rank() == 0) {
    EXPECT_EQ(all.size(), static_cast<size_t>(c.size()));
  }
}

// The default thread count divides a rank's cores among the ranks that may
// run on them: every rank of the node where nothing is bound, only those
// bound to the same CPUs otherwise. Each rank binds itself here (to CPU
// rank % 2 of those it may use, or to all of them), builds the collectives
// (which read the masks) and restores its mask.
TEST(MpiCollectives, RanksSharingCoresFollowTheAffinityMasks) {
  if (!mpi_initialized()) GTEST_SKIP() << "run with --mpi under mpiexec";
  cpu_set_t original;
  ASSERT_EQ(sched_getaffinity(0, sizeof original, &original), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &original)) cpus.push_back(cpu);
  // Every rank must take part in each collective below, whatever it finds.
  int usable_everywhere = static_cast<int>(cpus.size());
  MPI_Allreduce(MPI_IN_PLACE, &usable_everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  int size = 1;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  {
    comm::mpi::MpiCollectives unbound(MPI_COMM_WORLD);
    EXPECT_EQ(unbound.ranks_sharing_cores(), unbound.ranks_on_node()) << "rank " << rank;
  }
  if (usable_everywhere >= 2) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[static_cast<size_t>(rank % 2)], &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    comm::mpi::MpiCollectives bound(MPI_COMM_WORLD);
    ASSERT_EQ(sched_setaffinity(0, sizeof original, &original), 0);
    // Ranks of the same parity share one CPU (all ranks are on this node).
    const int same_parity = (size + 1 - rank % 2) / 2;
    EXPECT_EQ(bound.ranks_on_node(), size);
    EXPECT_EQ(bound.ranks_sharing_cores(), same_parity) << "rank " << rank;
  }
}

TEST(MpiCollectives, DivergenceCheckOverMpi) {
  if (!mpi_initialized()) GTEST_SKIP() << "run with --mpi under mpiexec";
  comm::mpi::MpiCollectives c(MPI_COMM_WORLD);
  plan::DivergenceCheck check(c, 8);
  Submitter s{check};
  for (int i = 0; i < 20; ++i) {
    s.task(step_id(), {access(1, AccessMode::inout)}, -1, i);
    if (check.due()) {
      EXPECT_FALSE(check.compare());
    }
  }
  if (c.rank() == c.size() - 1) s.task(copy_id(), {access(3, AccessMode::out)}, -1);
  const auto report = check.compare();
  ASSERT_TRUE(report.has_value());  // every rank sees the mismatch
  if (c.rank() == 0) {
    EXPECT_NE(report->find("rank " + std::to_string(c.size() - 1) +
                           ": submission #21 is task 'copy_task' with 1 accesses (out handle 3)"),
              std::string::npos)
        << *report;
    EXPECT_NE(report->find("rank 0: submitted nothing as submission #21 (it has 20)"),
              std::string::npos)
        << *report;
  } else {
    EXPECT_TRUE(report->empty());
  }
}

}  // namespace
}  // namespace taskgrid

int main(int argc, char** argv) {
  bool mpi = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mpi") == 0) {
      mpi = true;
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      break;
    }
  }
  ::testing::InitGoogleTest(&argc, argv);
  if (!mpi) {
    // Plain runs (and test discovery) leave the MPI tests out altogether.
    std::string filter = ::testing::GTEST_FLAG(filter);
    filter += filter.find('-') == std::string::npos ? "-MpiCollectives.*" : ":MpiCollectives.*";
    ::testing::GTEST_FLAG(filter) = filter;
    return RUN_ALL_TESTS();
  }
  MPI_Init(&argc, &argv);
  const int failed = RUN_ALL_TESTS();
  MPI_Finalize();
  return failed;
}
