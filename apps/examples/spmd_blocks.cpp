// spmd_blocks: the user guide's spmd example. Every rank runs the program and
// submits the same tasks; each block of a vector has an owner rank, and a task
// runs on the owner of the data it writes. Each round smooths every block with
// its neighbours' edge values (tasks read blocks owned by other ranks: the
// runtime moves them), then one task per block sums it and a last task adds
// the sums. The owner of the total prints it and checks it against the same
// computation done sequentially.
//
//   mpiexec.mpich -n 4 build/bin/spmd_blocks
#include <cstdio>
#include <cstring>
#include <vector>

#include "taskgrid/taskgrid.hpp"

constexpr int kBlocks = 8;
constexpr int kBlockSize = 1000;
constexpr int kRounds = 5;

// in: a block; out: its snapshot, which the neighbours read during a round.
void copy_block(taskgrid::TaskContext& ctx) { std::memcpy(ctx.data(1), ctx.data(0), ctx.size(0)); }
TASKGRID_REGISTER(copy_block);

// inout: this block; in: left and right neighbours' snapshots. Adds the mean of the
// neighbours' edge values to every element (integers stay exact).
void smooth(taskgrid::TaskContext& ctx) {
  long* block = ctx.data_as<long>(0);
  const long* left = ctx.data_as<long>(1);
  const long* right = ctx.data_as<long>(2);
  const long edge = (left[kBlockSize - 1] + right[0]) / 2;
  for (int i = 0; i < kBlockSize; ++i) block[i] += edge;
}
TASKGRID_REGISTER(smooth);

// in: a block; out: its sum.
void block_sum(taskgrid::TaskContext& ctx) {
  const long* block = ctx.data_as<long>(0);
  long sum = 0;
  for (int i = 0; i < kBlockSize; ++i) sum += block[i];
  *ctx.data_as<long>(1) = sum;
}
TASKGRID_REGISTER(block_sum);

// in: every block sum; out: the total (the last access).
void add_sums(taskgrid::TaskContext& ctx) {
  long total = 0;
  for (size_t i = 0; i + 1 < ctx.num_data(); ++i) total += *ctx.data_as<long>(i);
  *ctx.data_as<long>(ctx.num_data() - 1) = total;
}
TASKGRID_REGISTER(add_sums);

// The same computation on one thread.
long sequential_total(std::vector<std::vector<long>> blocks) {
  for (int round = 0; round < kRounds; ++round) {
    std::vector<long> edges(kBlocks);
    for (int b = 0; b < kBlocks; ++b)
      edges[b] =
          (blocks[(b + kBlocks - 1) % kBlocks][kBlockSize - 1] + blocks[(b + 1) % kBlocks][0]) / 2;
    for (int b = 0; b < kBlocks; ++b)
      for (long& value : blocks[b]) value += edges[b];
  }
  long total = 0;
  for (const auto& block : blocks)
    for (long value : block) total += value;
  return total;
}

int program(int, char**) {
  const int ranks = taskgrid::num_ranks();
  std::vector<std::vector<long>> blocks(kBlocks, std::vector<long>(kBlockSize));
  for (int b = 0; b < kBlocks; ++b)
    for (int i = 0; i < kBlockSize; ++i) blocks[b][i] = (b * kBlockSize + i) % 17;
  const long expected = sequential_total(blocks);

  // The same calls on every rank: block b lives on rank b % ranks.
  std::vector<taskgrid::DataHandle> block(kBlocks), sum(kBlocks);
  std::vector<long> sums(kBlocks);
  long total = 0;
  for (int b = 0; b < kBlocks; ++b) {
    block[b] = taskgrid::enter_data(blocks[b].data(), kBlockSize * sizeof(long), b % ranks);
    sum[b] = taskgrid::enter_data(&sums[b], sizeof(long), b % ranks);
  }
  const taskgrid::DataHandle total_handle = taskgrid::enter_data(&total, sizeof total, 0);

  // A round reads the neighbours as they were before it: from snapshots.
  std::vector<std::vector<long>> snapshots(kBlocks, std::vector<long>(kBlockSize));
  std::vector<taskgrid::DataHandle> snapshot(kBlocks);
  for (int b = 0; b < kBlocks; ++b)
    snapshot[b] = taskgrid::enter_data(snapshots[b].data(), kBlockSize * sizeof(long), b % ranks);
  for (int round = 0; round < kRounds; ++round) {
    for (int b = 0; b < kBlocks; ++b)
      taskgrid::submit(copy_block, {taskgrid::in(block[b]), taskgrid::out(snapshot[b])});
    for (int b = 0; b < kBlocks; ++b)
      taskgrid::submit(
          smooth, {taskgrid::inout(block[b]), taskgrid::in(snapshot[(b + kBlocks - 1) % kBlocks]),
                   taskgrid::in(snapshot[(b + 1) % kBlocks])});
  }
  std::vector<taskgrid::DataAccess> sum_accesses;
  for (int b = 0; b < kBlocks; ++b) {
    taskgrid::submit(block_sum, {taskgrid::in(block[b]), taskgrid::out(sum[b])});
    sum_accesses.push_back(taskgrid::in(sum[b]));
  }
  sum_accesses.push_back(taskgrid::out(total_handle));
  taskgrid::submit_packed(taskgrid::function_id(add_sums), sum_accesses.data(), sum_accesses.size(),
                          {}, nullptr, 0);
  taskgrid::fetch(total_handle);  // the owner (rank 0) gets the value; the others wait

  int status = 0;
  if (taskgrid::rank() == 0) {
    std::printf("spmd_blocks: %d ranks, total %ld (sequential %ld)\n", ranks, total, expected);
    status = total == expected ? 0 : 1;
  }
  return status;
}

int main(int argc, char** argv) {
  // The program is written for spmd mode: it says so, the environment can only confirm it.
  return taskgrid::run(argc, argv, program, {.mode = taskgrid::Mode::spmd});
}
