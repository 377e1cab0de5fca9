// Multi-rank checks of the PGAS layer: one scenario per run,
//   mpiexec -n N taskgrid-pgas-check SCENARIO
// Correct scenarios exit 0 only after every value was checked; misuse
// scenarios must end the job with a message (tests/pgas/pgas_layer.cmake runs
// them through expect_failure.py). A failed check prints
// "error: taskgrid: rank R: pgas_check: ..." and aborts the job.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "pgas/state.h"  // task_epilogue_fences
#include "taskgrid/pgas.hpp"
#include "taskgrid/taskgrid.hpp"

namespace pgas = taskgrid::pgas;

namespace {

int me = 0;
int ranks = 1;

// Through abort_job: it gives the launcher time to forward the message
// before the job is torn down.
[[noreturn]] void check_failed(const char* what, int line) {
  pgas::abort_job("pgas_check: check failed at line " + std::to_string(line) + ": " + what);
}
#define CHECK(condition) \
  if (!(condition)) check_failed(#condition, __LINE__)

// The byte a rank's allocation holds at `index` (distinct per rank and allocation).
unsigned char pattern(int rank, int salt, size_t index) {
  return static_cast<unsigned char>(
      (index * 131 + static_cast<size_t>(rank) * 17 + static_cast<size_t>(salt) * 29 + 7) & 0xff);
}

void fill(unsigned char* data, size_t bytes, int rank, int salt) {
  for (size_t i = 0; i < bytes; ++i) data[i] = pattern(rank, salt, i);
}

bool holds(const unsigned char* data, size_t bytes, int rank, int salt) {
  for (size_t i = 0; i < bytes; ++i)
    if (data[i] != pattern(rank, salt, i)) return false;
  return true;
}

// Runs `call`, which must throw taskgrid::Error containing `expected`.
void expect_error(const std::function<void()>& call, const std::string& expected) {
  try {
    call();
  } catch (const taskgrid::Error& error) {
    if (std::string(error.what()).find(expected) != std::string::npos) return;
    pgas::abort_job(std::string("pgas_check: wrong error: '") + error.what() + "' (expected '" +
                    expected + "')");
  }
  pgas::abort_job("pgas_check: no error (expected '" + expected + "')");
}

// ------------------------------------------------------------ scenarios ----

// Symmetric allocations of odd sizes; blocking and non-blocking put/get to
// every rank, at offsets that end exactly at the allocation's end.
void scenario_symmetric() {
  const size_t sizes[] = {0, 1, 7, 64, 4099, (size_t{1} << 20) + 5};
  int salt = 0;
  for (size_t bytes : sizes) {
    ++salt;
    pgas::Memory m = pgas::alloc(bytes);
    CHECK(m);
    CHECK(pgas::size(m, (me + 1) % ranks) == bytes);
    auto* mine = pgas::local_as<unsigned char>(m);
    fill(mine, bytes, me, salt);
    pgas::barrier();
    std::vector<unsigned char> buffer(bytes);
    for (int r = 0; r < ranks; ++r) {
      std::fill(buffer.begin(), buffer.end(), 0);
      pgas::get(buffer.data(), r, m, 0, bytes);
      CHECK(holds(buffer.data(), bytes, r, salt));
      // The last byte alone, and the tail from an odd offset.
      if (bytes > 0) {
        unsigned char last = 0;
        pgas::get(&last, r, m, bytes - 1, 1);
        CHECK(last == pattern(r, salt, bytes - 1));
        const size_t from = bytes / 3;
        std::vector<unsigned char> tail(bytes - from);
        pgas::Operation op = pgas::get_nb(tail.data(), r, m, from, tail.size());
        pgas::wait(op);
        CHECK(!op.pending());
        for (size_t i = 0; i < tail.size(); ++i) CHECK(tail[i] == pattern(r, salt, from + i));
      }
    }
    pgas::barrier();
    // Everyone writes its right neighbour's whole allocation: half blocking,
    // half non-blocking completed by fence.
    const int right = (me + 1) % ranks;
    fill(buffer.data(), bytes, me, salt + 100);
    const size_t half = bytes / 2;
    pgas::put(right, m, 0, buffer.data(), half);
    pgas::Operation op = pgas::put_nb(right, m, half, buffer.data() + half, bytes - half);
    pgas::fence();
    pgas::wait(op);  // after the fence: nothing left to do, and harmless
    CHECK(!op.pending());
    pgas::barrier();
    const int left = (me + ranks - 1) % ranks;
    CHECK(holds(mine, bytes, left, salt + 100));
    pgas::barrier();
    // A zero-byte transfer at the very end is legal; one byte past it is not.
    pgas::put(right, m, bytes, buffer.data(), 0);
    expect_error([&] { pgas::put(right, m, bytes, buffer.data(), 1); }, "are outside allocation");
    expect_error([&] { pgas::get(buffer.data(), right, m, 1, bytes); }, "are outside allocation");
    pgas::free(m);
  }
  // Many operations in flight to every rank at once, completed by one fence.
  constexpr size_t kPieces = 64, kPiece = 1000;
  pgas::Memory inbox = pgas::alloc(static_cast<size_t>(ranks) * kPieces * kPiece);
  std::vector<unsigned char> outgoing(kPieces * kPiece);
  fill(outgoing.data(), outgoing.size(), me, 7);
  for (size_t piece = 0; piece < kPieces; ++piece)
    for (int r = 0; r < ranks; ++r) {
      const size_t at = (static_cast<size_t>(me) * kPieces + piece) * kPiece;
      [[maybe_unused]] pgas::Operation op =
          pgas::put_nb(r, inbox, at, outgoing.data() + piece * kPiece, kPiece);
    }
  pgas::fence();
  pgas::barrier();
  for (int r = 0; r < ranks; ++r)
    CHECK(holds(pgas::local_as<unsigned char>(inbox) + static_cast<size_t>(r) * kPieces * kPiece,
                kPieces * kPiece, r, 7));
  pgas::barrier();
  pgas::free(inbox);
}

// Each rank its own size, zero on every third rank.
size_t asymmetric_size(int rank) {
  return rank % 3 == 0 ? 0 : static_cast<size_t>(rank) * 1000 + 13;
}

void scenario_asymmetric() {
  pgas::Memory before = pgas::alloc(100);  // symmetric and asymmetric blocks side by side
  pgas::Memory m = pgas::alloc_asymmetric(asymmetric_size(me));
  pgas::Memory after = pgas::alloc(200);
  for (int r = 0; r < ranks; ++r) CHECK(pgas::size(m, r) == asymmetric_size(r));
  fill(pgas::local_as<unsigned char>(m), asymmetric_size(me), me, 1);
  std::memset(pgas::local(before), 0x11, 100);
  std::memset(pgas::local(after), 0x22, 200);
  pgas::barrier();
  for (int r = 0; r < ranks; ++r) {
    const size_t bytes = asymmetric_size(r);
    std::vector<unsigned char> buffer(bytes + 1);
    pgas::get(buffer.data(), r, m, 0, bytes);
    CHECK(holds(buffer.data(), bytes, r, 1));
    pgas::get(buffer.data(), r, m, bytes, 0);
    expect_error([&] { pgas::get(buffer.data(), r, m, 0, bytes + 1); }, "are outside allocation");
  }
  pgas::barrier();
  // Write the right neighbour's part, then check the neighbouring blocks are untouched.
  const int right = (me + 1) % ranks;
  std::vector<unsigned char> data(asymmetric_size(right));
  fill(data.data(), data.size(), me, 2);
  pgas::put(right, m, 0, data.data(), data.size());
  pgas::barrier();
  const int left = (me + ranks - 1) % ranks;
  CHECK(holds(pgas::local_as<unsigned char>(m), asymmetric_size(me), left, 2));
  for (int i = 0; i < 100; ++i) CHECK(pgas::local_as<unsigned char>(before)[i] == 0x11);
  for (int i = 0; i < 200; ++i) CHECK(pgas::local_as<unsigned char>(after)[i] == 0x22);
  pgas::free(m);
  pgas::free(before);
  pgas::free(after);
}

// The allocator reuses freed space; exhaustion is an error on every rank,
// after which allocation works again.
void scenario_allocator() {
  const size_t segment = pgas::segment_size();
  std::vector<pgas::Memory> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(pgas::alloc(segment / 16));
  for (int i = 0; i < 8; i += 2) pgas::free(blocks[static_cast<size_t>(i)]);
  // Freed holes are reused: 4 more fit although the top is still in use.
  for (int i = 0; i < 4; ++i) blocks[static_cast<size_t>(2 * i)] = pgas::alloc(segment / 16);
  expect_error([&] { (void)pgas::alloc(segment); }, "out of global memory");
  expect_error([&] { (void)pgas::alloc_asymmetric(me == ranks - 1 ? segment : 8); },
               "out of global memory: rank " + std::to_string(ranks - 1));
  for (auto& block : blocks) pgas::free(block);
  // Everything is free again: one block up to the segment's very end fits
  // (the first 64 bytes hold the lock words), and its last byte is reachable.
  pgas::Memory big = pgas::alloc(segment - 64);
  const int right = (me + 1) % ranks;
  const unsigned char mark = static_cast<unsigned char>(0xA0 + me);
  pgas::put(right, big, segment - 65, &mark, 1);
  pgas::barrier();
  CHECK(pgas::local_as<unsigned char>(big)[segment - 65] == 0xA0 + (me + ranks - 1) % ranks);
  unsigned char last = 0;
  pgas::get(&last, right, big, segment - 65, 1);
  CHECK(last == mark);
  expect_error([&] { pgas::get(&last, right, big, segment - 64, 1); }, "are outside allocation");
  pgas::barrier();
  pgas::free(big);
  // Slots are reused, and a stale handle to a reused slot is refused.
  pgas::Memory first = pgas::alloc(8);
  pgas::free(first);
  pgas::Memory second = pgas::alloc(8);
  CHECK(second.slot == first.slot && second.generation != first.generation);
  char byte = 0;
  expect_error([&] { pgas::get(&byte, 0, first, 0, 1); }, "was freed");
  expect_error([&] { pgas::get(&byte, 0, pgas::Memory{}, 0, 1); }, "no allocation");
  expect_error([&] { pgas::get(&byte, ranks, second, 0, 1); }, "is not a rank of the job");
  pgas::free(second);
}

// A column of a row-major matrix into the neighbour's matrix, and back.
void scenario_strided() {
  constexpr size_t kRows = 37, kCols = 23;
  pgas::Memory m = pgas::alloc(kRows * kCols * sizeof(double));
  auto* mine = pgas::local_as<double>(m);
  std::fill(mine, mine + kRows * kCols, -1.0);
  pgas::barrier();
  const int right = (me + 1) % ranks;
  // Column 5 of my local matrix (stride kCols doubles) into column 9 of the neighbour's.
  std::vector<double> source(kRows * kCols);
  for (size_t i = 0; i < source.size(); ++i) source[i] = me * 10000.0 + static_cast<double>(i);
  pgas::put_strided(right, m, 9 * sizeof(double), kCols * sizeof(double), &source[5],
                    kCols * sizeof(double), sizeof(double), kRows);
  pgas::barrier();
  const int left = (me + ranks - 1) % ranks;
  for (size_t row = 0; row < kRows; ++row)
    for (size_t col = 0; col < kCols; ++col) {
      const double expected =
          col == 9 ? left * 10000.0 + static_cast<double>(row * kCols + 5) : -1.0;
      CHECK(mine[row * kCols + col] == expected);
    }
  // Two-column blocks of the neighbour back into a packed buffer.
  std::vector<double> packed(kRows * 2, 0.0);
  pgas::get_strided(packed.data(), 2 * sizeof(double), right, m, 8 * sizeof(double),
                    kCols * sizeof(double), 2 * sizeof(double), kRows);
  for (size_t row = 0; row < kRows; ++row) {
    CHECK(packed[2 * row] == -1.0);
    CHECK(packed[2 * row + 1] == me * 10000.0 + static_cast<double>(row * kCols + 5));
  }
  pgas::barrier();
  // The last block may end exactly at the allocation's end, not past it.
  expect_error(
      [&] {
        // From row 1 on, kRows rows end one row past the end.
        pgas::put_strided(right, m, kCols * sizeof(double), kCols * sizeof(double), source.data(),
                          kCols * sizeof(double), sizeof(double), kRows);
      },
      "are outside allocation");
  expect_error([&] { pgas::put_strided(right, m, 0, 4, source.data(), 8, 8, 3); },
               "written blocks would overlap");
  pgas::free(m);
}

void scenario_atomics() {
  constexpr int kAdds = 200;
  pgas::Memory m = pgas::alloc(4 * sizeof(int64_t));
  std::memset(pgas::local(m), 0, 4 * sizeof(int64_t));
  pgas::barrier();
  // Contended fetch-and-add on rank 0: the old values are a permutation of
  // 0 .. kAdds*ranks-1, so their sum is known and the final value is exact.
  int64_t sum_of_old = 0;
  for (int i = 0; i < kAdds; ++i) sum_of_old += pgas::fetch_add(0, m, 0, 1);
  int64_t total = 0;
  pgas::allreduce(&sum_of_old, &total, 1, pgas::ReduceOp::sum);
  const int64_t n = int64_t{kAdds} * ranks;
  pgas::barrier();
  CHECK(pgas::atomic_load(0, m, 0) == n);
  CHECK(total == n * (n - 1) / 2);
  // Compare-and-swap: exactly one rank claims word 1 of the last rank.
  const int last = ranks - 1;
  const int64_t previous = pgas::compare_swap(last, m, 8, 0, me + 1);
  int64_t winners = previous == 0 ? 1 : 0, all_winners = 0;
  pgas::allreduce(&winners, &all_winners, 1, pgas::ReduceOp::sum);
  CHECK(all_winners == 1);
  const int64_t owner = pgas::atomic_load(last, m, 8);
  CHECK(owner >= 1 && owner <= ranks);
  if (previous == 0) CHECK(owner == me + 1);
  // Increments by compare-and-swap retry loops on word 2 of rank 0.
  for (int i = 0; i < kAdds; ++i) {
    int64_t seen = pgas::atomic_load(0, m, 16);
    for (;;) {
      const int64_t old = pgas::compare_swap(0, m, 16, seen, seen + 1);
      if (old == seen) break;
      seen = old;
    }
  }
  pgas::barrier();
  CHECK(pgas::atomic_load(0, m, 16) == n);
  pgas::atomic_store(me, m, 24, 1000 + me);
  pgas::barrier();
  CHECK(pgas::atomic_load((me + 1) % ranks, m, 24) == 1000 + (me + 1) % ranks);
  expect_error([&] { (void)pgas::fetch_add(0, m, 4, 1); }, "not a multiple of 8");
  expect_error([&] { (void)pgas::fetch_add(0, m, 32, 1); }, "are outside allocation");
  pgas::barrier();
  pgas::free(m);
}

// Mutual exclusion: a read-modify-write by get and put (not atomic) under the
// lock of rank 0; an occupancy word counts the ranks inside the section.
void scenario_locks(bool use_lock) {
  // Without the lock, rounds for a fixed time rather than a fixed count, so
  // that the ranks' rounds surely overlap in time: on Open MPI a rank could
  // finish 2,000 rounds before the other began its first.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  pgas::Memory m = pgas::alloc(2 * sizeof(int64_t));
  std::memset(pgas::local(m), 0, 2 * sizeof(int64_t));
  pgas::barrier();
  int overlaps = 0;
  int rounds = 0;
  for (;; ++rounds) {
    if (use_lock ? rounds == 100 : std::chrono::steady_clock::now() >= until) break;
    if (use_lock) pgas::lock(0);
    if (pgas::fetch_add(0, m, 8, 1) != 0) ++overlaps;
    int64_t value = 0;
    pgas::get(&value, 0, m, 0, sizeof value);
    sched_yield();  // widen the window another rank would need to slip in
    ++value;
    pgas::put(0, m, 0, &value, sizeof value);
    pgas::fetch_add(0, m, 8, -1);
    if (use_lock) pgas::unlock(0);
  }
  pgas::barrier();
  int all_rounds = 0;
  pgas::allreduce(&rounds, &all_rounds, 1, pgas::ReduceOp::sum);
  int64_t counter = 0;
  pgas::get(&counter, 0, m, 0, sizeof counter);
  int all_overlaps = 0;
  pgas::allreduce(&overlaps, &all_overlaps, 1, pgas::ReduceOp::sum);
  if (me == 0)
    std::printf("locks: counter %lld of %d, overlaps %d\n", static_cast<long long>(counter),
                all_rounds, all_overlaps);
  CHECK(all_overlaps == 0);
  CHECK(counter == int64_t{all_rounds});
  if (use_lock) {
    expect_error([] { pgas::unlock(0); }, "does not hold the lock");
    pgas::lock(me);
    expect_error([] { pgas::lock(me); }, "already holds that lock");
    pgas::unlock(me);
  }
  pgas::barrier();
  pgas::free(m);
}

template <typename T>
void check_reductions(const pgas::Group& group, int salt) {
  const int n = group.size();
  const int r = group.rank();
  constexpr size_t kCount = 1001;
  std::vector<T> send(kCount), result(kCount);
  for (size_t i = 0; i < kCount; ++i)
    send[i] = static_cast<T>((static_cast<int>(i) + r + salt) % 5 + 1);
  const auto expected = [&](size_t i, pgas::ReduceOp op) {
    T value = op == pgas::ReduceOp::sum ? T(0) : op == pgas::ReduceOp::prod ? T(1) : T();
    for (int k = 0; k < n; ++k) {
      const T x = static_cast<T>((static_cast<int>(i) + k + salt) % 5 + 1);
      if (op == pgas::ReduceOp::sum)
        value = static_cast<T>(value + x);
      else if (op == pgas::ReduceOp::prod)
        value = static_cast<T>(value * x);
      else if (op == pgas::ReduceOp::min)
        value = k == 0 ? x : std::min(value, x);
      else
        value = k == 0 ? x : std::max(value, x);
    }
    return value;
  };
  for (auto op :
       {pgas::ReduceOp::sum, pgas::ReduceOp::prod, pgas::ReduceOp::min, pgas::ReduceOp::max}) {
    pgas::allreduce(send.data(), result.data(), kCount, op, group);
    for (size_t i = 0; i < kCount; ++i) CHECK(result[i] == expected(i, op));
    const int root = n - 1;
    std::fill(result.begin(), result.end(), T(0));
    pgas::reduce(send.data(), result.data(), kCount, op, root, group);
    if (r == root)
      for (size_t i = 0; i < kCount; ++i) CHECK(result[i] == expected(i, op));
    // In place.
    std::vector<T> in_place = send;
    pgas::allreduce(in_place.data(), in_place.data(), kCount, op, group);
    for (size_t i = 0; i < kCount; ++i) CHECK(in_place[i] == expected(i, op));
    in_place = send;
    pgas::reduce(in_place.data(), in_place.data(), kCount, op, 0, group);
    if (r == 0)
      for (size_t i = 0; i < kCount; ++i) CHECK(in_place[i] == expected(i, op));
  }
  std::vector<T> data(kCount, T(0));
  const int root = n > 1 ? 1 : 0;
  if (r == root)
    for (size_t i = 0; i < kCount; ++i)
      data[i] = static_cast<T>(i % 97 + static_cast<size_t>(salt));
  pgas::broadcast(data.data(), kCount, root, group);
  for (size_t i = 0; i < kCount; ++i)
    CHECK(data[i] == static_cast<T>(i % 97 + static_cast<size_t>(salt)));
}

void check_all_types(const pgas::Group& group, int salt) {
  check_reductions<int32_t>(group, salt);
  check_reductions<int64_t>(group, salt);
  check_reductions<uint32_t>(group, salt);
  check_reductions<uint64_t>(group, salt);
  check_reductions<float>(group, salt);
  check_reductions<double>(group, salt);
}

void scenario_groups() {
  pgas::Group world = pgas::world();
  CHECK(world.size() == ranks && world.rank() == me && world.world_rank(ranks - 1) == ranks - 1);
  check_all_types(world, 0);
  // Split by parity, reversed order by key.
  pgas::Group parity = pgas::split(world, me % 2, -me);
  const int parity_size = (ranks + 1 - me % 2) / 2;
  CHECK(parity.size() == parity_size);
  for (int i = 0; i < parity_size; ++i) {
    const int expected = me % 2 + 2 * (parity_size - 1 - i);  // highest world rank first
    CHECK(parity.world_rank(i) == expected);
  }
  CHECK(parity.world_rank(parity.rank()) == me);
  check_all_types(parity, 1);
  pgas::barrier(parity);
  // Only rank 0 joins no group.
  pgas::Group nonzero = pgas::split(world, me == 0 ? -1 : 0);
  CHECK(static_cast<bool>(nonzero) == (me != 0));
  // Created from a list, in the list's order: the ranks from the last down.
  std::vector<int> listed;
  for (int r = ranks - 1; r >= 0; r -= 2) listed.push_back(r);
  pgas::Group created;
  if (std::find(listed.begin(), listed.end(), me) != listed.end()) {
    created = pgas::create_group(listed);
    CHECK(created.size() == static_cast<int>(listed.size()));
    for (size_t i = 0; i < listed.size(); ++i)
      CHECK(created.world_rank(static_cast<int>(i)) == listed[i]);
    check_all_types(created, 2);
    pgas::barrier(created);
  }
  // Merge the two parity halves back: evens (a) first in their order, then odds.
  pgas::Group evens = me % 2 == 0 ? parity : pgas::Group{};
  pgas::Group odds = me % 2 == 1 ? parity : pgas::Group{};
  pgas::Group merged = pgas::merge(evens, odds);
  CHECK(merged.size() == ranks);
  std::vector<int> expected_order;
  for (int i = 0; i < (ranks + 1) / 2; ++i) expected_order.push_back(2 * ((ranks + 1) / 2 - 1 - i));
  for (int i = 0; i < ranks / 2; ++i) expected_order.push_back(1 + 2 * (ranks / 2 - 1 - i));
  for (int i = 0; i < ranks; ++i)
    CHECK(merged.world_rank(i) == expected_order[static_cast<size_t>(i)]);
  check_all_types(merged, 3);
  // Free, then use: an error.
  pgas::Group freed = parity;
  pgas::free_group(freed);
  CHECK(!freed);
  expect_error([&] { pgas::barrier(parity); }, "was freed");
  expect_error([&] { pgas::free_group(world); }, "cannot be freed");
  if (nonzero) expect_error([&] { (void)nonzero.world_rank(ranks); }, "is not a rank of");
  double x = 0;
  expect_error([&] { pgas::broadcast(&x, 1, ranks, world); }, "root");
  pgas::free_group(merged);
  if (nonzero) pgas::free_group(nonzero);
  if (created) pgas::free_group(created);
  pgas::barrier();
}

// Large collectives (a few MiB) compared element by element.
void scenario_collectives() {
  for (size_t count : {size_t{0}, size_t{1}, size_t{16384}, size_t{1} << 21}) {
    std::vector<double> data(count);
    if (me == 0)
      for (size_t i = 0; i < count; ++i) data[i] = static_cast<double>(i) * 0.5;
    pgas::broadcast(data.data(), count, 0);
    for (size_t i = 0; i < count; ++i) CHECK(data[i] == static_cast<double>(i) * 0.5);
    std::vector<double> sum(count);
    pgas::allreduce(data.data(), sum.data(), count, pgas::ReduceOp::sum);
    for (size_t i = 0; i < count; ++i) CHECK(sum[i] == static_cast<double>(i) * 0.5 * ranks);
  }
}

// Over 2 GiB in one put and one get (pieces of at most 1 GiB underneath).
void scenario_large() {
  const size_t bytes = (size_t{2} << 30) + 4099;
  pgas::Memory m = pgas::alloc(bytes);
  if (me == 0) {
    std::vector<unsigned char> buffer(bytes);
    for (size_t i = 0; i < bytes; ++i) buffer[i] = pattern(0, static_cast<int>(i >> 28), i);
    pgas::put(1, m, 0, buffer.data(), bytes);
    pgas::barrier();  // rank 1 checks its copy
    pgas::barrier();
    std::fill(buffer.begin(), buffer.end(), 0);
    pgas::Operation op = pgas::get_nb(buffer.data(), 1, m, 0, bytes);
    pgas::wait(op);
    for (size_t i = 0; i < bytes; ++i) CHECK(buffer[i] == pattern(0, static_cast<int>(i >> 28), i));
  } else {
    pgas::barrier();
    if (me == 1) {
      const auto* mine = pgas::local_as<unsigned char>(m);
      for (size_t i = 0; i < bytes; ++i) CHECK(mine[i] == pattern(0, static_cast<int>(i >> 28), i));
    }
    pgas::barrier();
  }
  pgas::barrier();
  pgas::free(m);
}

// PGAS inside TaskGrid tasks (spmd): a task puts into the next rank's memory
// without a fence of its own; the task that depends on it, on that rank,
// must see the data (the runtime fences before releasing outputs).
// Tasks that only read a handle do not hold back later writers (the runtime
// renames versions), so each round has its own slot and source buffer.
constexpr size_t kSlotBytes = 4096;
constexpr int kTaskRounds = 40;
pgas::Memory task_memory;

void put_to_next(taskgrid::TaskContext& ctx) {
  // The source must outlive the task: the operation completes after it returns.
  static unsigned char sources[kTaskRounds][kSlotBytes];
  const int round = ctx.arg<int>();
  const int next = (ctx.rank() + 1) % taskgrid::num_ranks();
  unsigned char* data = sources[round];
  fill(data, kSlotBytes, ctx.rank(), round);
  // Completed by the runtime's fence after the task, not here.
  [[maybe_unused]] pgas::Operation op =
      pgas::put_nb(next, task_memory, static_cast<size_t>(round) * kSlotBytes, data, kSlotBytes);
  *ctx.data_as<int>(0) = round;
}
TASKGRID_REGISTER(put_to_next);

void check_from_previous(taskgrid::TaskContext& ctx) {
  const int round = ctx.arg<int>();
  const int previous = (ctx.rank() + taskgrid::num_ranks() - 1) % taskgrid::num_ranks();
  if (*ctx.data_as<int>(0) != round) throw taskgrid::Error("token out of order");
  const auto* slot =
      pgas::local_as<unsigned char>(task_memory) + static_cast<size_t>(round) * kSlotBytes;
  if (!holds(slot, kSlotBytes, previous, round))
    throw taskgrid::Error("the put of round " + std::to_string(round) + " is not visible");
}
TASKGRID_REGISTER(check_from_previous);

void scenario_tasks() {
  task_memory = pgas::alloc(kTaskRounds * kSlotBytes);
  std::vector<int> tokens(static_cast<size_t>(ranks), -1);
  std::vector<taskgrid::DataHandle> handles;
  for (int r = 0; r < ranks; ++r)
    handles.push_back(taskgrid::enter_data(&tokens[static_cast<size_t>(r)], sizeof(int), r));
  for (int round = 0; round < kTaskRounds; ++round) {
    for (int r = 0; r < ranks; ++r) {
      const int next = (r + 1) % ranks;
      taskgrid::TaskOptions on_r;
      on_r.rank = r;
      taskgrid::submit(put_to_next, {taskgrid::out(handles[static_cast<size_t>(next)])}, on_r,
                       round);
      taskgrid::TaskOptions on_next;
      on_next.rank = next;
      taskgrid::submit(check_from_previous, {taskgrid::in(handles[static_cast<size_t>(next)])},
                       on_next, round);
    }
  }
  taskgrid::wait_all();
  // On shared memory a put lands at once, so the data check alone could not
  // tell a missing fence: the runtime must have run one after every put task.
  CHECK(pgas::task_epilogue_fences() == kTaskRounds);
  for (auto h : handles) taskgrid::release(h);
  pgas::barrier();
  pgas::free(task_memory);
}

// ------------------------------------------------------------- misuse ----

void misuse_out_of_bounds() {
  pgas::Memory m = pgas::alloc(100);
  char buffer[8] = {};
  pgas::put((me + 1) % ranks, m, 96, buffer, 8);  // 4 bytes past the end: throws
}

void misuse_unknown() {
  char buffer[8] = {};
  pgas::get(buffer, 0, pgas::Memory{7, 1}, 0, 8);
}

void misuse_double_free() {
  pgas::Memory m = pgas::alloc(64);
  pgas::free(m);
  pgas::free(m);
}

void misuse_use_after_free() {
  pgas::Memory m = pgas::alloc(64);
  pgas::free(m);
  char buffer[8] = {};
  pgas::put(0, m, 0, buffer, 8);
}

// The last rank skips a collective and goes on to finalize.
void misuse_mismatch() {
  pgas::Memory m = pgas::alloc(64);
  if (me != ranks - 1) pgas::barrier();
  pgas::free(m);
}

// The last rank never comes to the barrier (it is busy for longer than the timeout).
void misuse_absent() {
  if (me == ranks - 1) std::this_thread::sleep_for(std::chrono::seconds(60));
  pgas::barrier();
}

// Different arguments to the same collective.
void misuse_arguments() {
  std::vector<double> data(16);
  pgas::broadcast(data.data(), me == 0 ? 16 : 8, 0);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string scenario = argc > 1 ? argv[1] : "";
  const std::map<std::string, std::function<void()>> scenarios = {
      {"symmetric", scenario_symmetric},
      {"asymmetric", scenario_asymmetric},
      {"allocator", scenario_allocator},
      {"strided", scenario_strided},
      {"atomics", scenario_atomics},
      {"locks", [] { scenario_locks(true); }},
      {"locks-off", [] { scenario_locks(false); }},  // shows the check fails without locks
      {"groups", scenario_groups},
      {"collectives", scenario_collectives},
      {"large", scenario_large},
      {"tasks", scenario_tasks},
      {"tasks-pgas-first", scenario_tasks},  // pgas::init before taskgrid::start
      {"misuse-out-of-bounds", misuse_out_of_bounds},
      {"misuse-unknown", misuse_unknown},
      {"misuse-double-free", misuse_double_free},
      {"misuse-use-after-free", misuse_use_after_free},
      {"misuse-mismatch", misuse_mismatch},
      {"misuse-absent", misuse_absent},
      {"misuse-arguments", misuse_arguments},
      {"misuse-cluster-mode", [] {}},  // pgas::init after start() in cluster mode is refused
  };
  auto found = scenarios.find(scenario);
  if (found == scenarios.end()) {
    std::fprintf(stderr, "usage: taskgrid-pgas-check SCENARIO (one of:");
    for (const auto& [name, run] : scenarios) std::fprintf(stderr, " %s", name.c_str());
    std::fprintf(stderr, ")\n");
    return 2;
  }
  const bool with_tasks = scenario.rfind("tasks", 0) == 0 || scenario == "misuse-cluster-mode";
  const bool pgas_first = scenario == "tasks-pgas-first";
  try {
    // Either order works: the second to start adopts the MPI the first initialised.
    // TASKGRID_MODE picks (misuse-cluster-mode runs it in cluster mode).
    const auto mode = taskgrid::Mode::from_environment;
    if (with_tasks && !pgas_first) taskgrid::start(&argc, &argv, mode);
    pgas::init(&argc, &argv);
    if (pgas_first) taskgrid::start(&argc, &argv, mode);
    me = pgas::rank();
    ranks = pgas::num_ranks();
    found->second();
    pgas::finalize();
  } catch (const std::exception& error) {
    pgas::abort_job(error.what());
  }
  if (with_tasks) {
    const int status = taskgrid::finish();
    if (me == 0 && status == 0)
      std::printf("pgas_check %s: ok on %d ranks\n", scenario.c_str(), ranks);
    return status;
  }
  if (me == 0) std::printf("pgas_check %s: ok on %d ranks\n", scenario.c_str(), ranks);
  return 0;
}
