// What the three programs print, in the reference's words where the
// reference has them (so that a user can compare the outputs line by
// line), and the bookkeeping behind it: timers, block totals, the checksum
// test, the FLOP count.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "mesh.hpp"
#include "params.hpp"

namespace miniamr {

// Seconds on rank 0. The MPI programs time their phases; the TaskGrid
// program's phases overlap in tasks, so it times what its program thread
// does instead: submitting the stages, waiting for the checksums (the tasks
// run meanwhile, on this thread too), and refining (deciding and
// submitting).
struct Timers {
  double total = 0, calc = 0, comm = 0, checksum = 0, refine = 0;
  bool tasks = false;  // submit/wait instead of calc/comm/checksum
  double submit = 0, wait = 0;
};

class RunReport {
 public:
  RunReport(const Params& params, std::string variant, int ranks, int threads, bool prints);

  // Once per stage, before it runs.
  void count_stage(int64_t active_blocks);
  // After every refine(ts): the block counts per level (report_perf bit 8).
  void refined(const Mesh& mesh, int ts);
  void note_active(int64_t active_blocks);

  // The checksum test of variable v: false (and the reference's message on
  // stderr) when the sum moved more than the tolerance since the last one.
  bool check_sum(int ts, int stage, int v, double sum);
  void set_initial_sum(int v, double sum) { previous_[static_cast<size_t>(v)] = sum; }

  // --print_checksums: every checksum, bit for bit.
  bool print_checksums = false;

  void print_summary(const Mesh& mesh, const Timers& timers, int max_blocks_on_rank) const;
  // --print_block_sums: every block's sum of every variable (`sums`: leaves
  // x num_vars, in the mesh's order), bit for bit.
  void print_block_sums(const Mesh& mesh, const std::vector<double>& sums) const;

 private:
  Params params_;
  std::string variant_;
  int ranks_, threads_;
  bool prints_;
  int64_t total_blocks_ = 0, nb_min_ = -1, nb_max_ = 0;
  std::vector<double> previous_;
};

// Parses argv for all three programs. Returns -1 to run; otherwise the exit
// status, after rank 0 printed the usage (--help: 0) or the cause (2).
int parse_command_line(int argc, char** argv, int rank, int ranks, Params& params,
                       bool& print_checksums, bool& print_block_sums);

}  // namespace miniamr
