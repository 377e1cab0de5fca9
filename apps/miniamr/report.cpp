#include "report.hpp"

#include <cmath>
#include <stdexcept>

namespace miniamr {

RunReport::RunReport(const Params& params, std::string variant, int ranks, int threads, bool prints)
    : params_(params),
      variant_(std::move(variant)),
      ranks_(ranks),
      threads_(threads),
      prints_(prints),
      previous_(static_cast<size_t>(params.num_vars), 0.0) {}

void RunReport::count_stage(int64_t active_blocks) {
  total_blocks_ += active_blocks;
  note_active(active_blocks);
}

void RunReport::note_active(int64_t active_blocks) {
  nb_min_ = nb_min_ < 0 ? active_blocks : std::min(nb_min_, active_blocks);
  nb_max_ = std::max(nb_max_, active_blocks);
}

void RunReport::refined(const Mesh& mesh, int ts) {
  const auto counts = mesh.blocks_per_level();
  int64_t total = 0;
  for (size_t level = 0; level < counts.size(); ++level) {
    total += counts[level];
    if (prints_ && (params_.report_perf & 8))
      std::printf("Number of blocks at level %zu at timestep %d is %lld\n", level, ts,
                  static_cast<long long>(counts[level]));
  }
  if (prints_ && (params_.report_perf & 8))
    std::printf("Total number of blocks at timestep %d is %lld\n", ts,
                static_cast<long long>(total));
  note_active(total);
}

void RunReport::print_block_sums(const Mesh& mesh, const std::vector<double>& sums) const {
  const auto& blocks = mesh.blocks();
  const size_t vars = static_cast<size_t>(params_.num_vars);
  for (size_t n = 0; n < blocks.size(); ++n) {
    std::printf("block %lld level %d", static_cast<long long>(blocks[n].number),
                blocks[n].key.level);
    for (size_t v = 0; v < vars; ++v) std::printf(" %.17g", sums[n * vars + v]);
    std::printf("\n");
  }
}

bool RunReport::check_sum(int ts, int stage, int v, double sum) {
  double& old = previous_[static_cast<size_t>(v)];
  const double tolerance = std::pow(10.0, -params_.error_tol);
  const double change = std::fabs(sum - old) / old;
  if (prints_ && print_checksums)
    std::printf("checksum ts %d stage %d var %d %.17g\n", ts, stage, v, sum);
  if (prints_ && params_.report_diffusion)
    std::printf("%d var %d sum %lf old %lf diff %lf %lf tol %lf\n", ts, v, sum, old, sum - old,
                change, tolerance);
  const bool ok = !(change > tolerance);
  if (!ok && prints_)
    std::fprintf(stderr, "Time step %d sum %lf (old %lf) variable %d difference too large\n", ts,
                 sum, old, v);
  old = sum;
  return ok;
}

void RunReport::print_summary(const Mesh& mesh, const Timers& t, int max_blocks_on_rank) const {
  if (!prints_ || !(params_.report_perf & 4)) return;
  const MeshCounters& c = mesh.counters();
  const double stages = static_cast<double>(params_.num_tsteps) * params_.stages_per_ts;
  const double cells = static_cast<double>(params_.nx) * params_.ny * params_.nz;
  const double flops =
      params_.stencil * cells * params_.num_vars * static_cast<double>(total_blocks_);
  std::printf("\n ================ Start report ===================\n\n");
  std::printf("          TaskGrid miniAMR: %s\n\n", variant_.c_str());
  std::printf("Run on %d ranks arranged in a %d x %d x %d grid, %d thread(s) per rank\n", ranks_,
              params_.npx, params_.npy, params_.npz, threads_);
  std::printf("initial blocks per rank %d x %d x %d\n", params_.init_x, params_.init_y,
              params_.init_z);
  std::printf("block size %d x %d x %d\n", params_.nx, params_.ny, params_.nz);
  std::printf("Maximum number of levels of refinement is %d\n", params_.num_refine);
  std::printf("Number of timesteps is %d\n", params_.num_tsteps);
  std::printf("Communicaion/computation stages per timestep is %d\n", params_.stages_per_ts);
  std::printf("Will perform checksums every %d stages\n", params_.checksum_freq);
  std::printf("Will refine every %d timesteps\n", params_.refine_freq);
  std::printf("Calculate on %d variables with %d point stencil\n", params_.num_vars,
              params_.stencil);
  std::printf("Communicate %d variables at a time\n", params_.comm_group());
  std::printf("Error tolorance for variable sums is 10^(-%d)\n", params_.error_tol);
  std::printf("\nTotal time for test (sec): %lf\n\n", t.total);
  std::printf("     Time per timestep (sec): %lf\n", t.total / params_.num_tsteps);
  if (t.tasks)
    std::printf(
        "     Program thread (sec): submitting %lf, waiting for checksums %lf, refinement %lf "
        "(%.1f%%)\n",
        t.submit, t.wait, t.refine, t.total > 0 ? 100.0 * t.refine / t.total : 0.0);
  else
    std::printf(
        "     Time in stencil (sec): %lf, exchange %lf, checksums %lf, refinement %lf (%.1f%%)\n",
        t.calc, t.comm, t.checksum, t.refine, t.total > 0 ? 100.0 * t.refine / t.total : 0.0);
  std::printf("     Total floating point ops: %lf\n", flops);
  std::printf("     Throughput (FLOP / total time): %.6e FLOP/s\n",
              t.total > 0 ? flops / t.total : 0.0);
  std::printf("\n     Number of refinement steps: %d\n\n", c.refine_calls);
  std::printf("     Number of load balance steps: %d\n\n", c.load_balances);
  std::printf("     Total blocks           : %lld\n", static_cast<long long>(total_blocks_));
  std::printf("     Blocks/timestep ave, min, max : %lf %lld %lld\n",
              static_cast<double>(total_blocks_) / stages, static_cast<long long>(nb_min_),
              static_cast<long long>(nb_max_));
  std::printf("     Max blocks on a processor at any time: %d\n", max_blocks_on_rank);
  std::printf("     total blocks split     : %lf\n", static_cast<double>(c.splits));
  std::printf("     total blocks reformed  : %lf\n\n", static_cast<double>(c.reforms));
  std::printf("     total blocks moved     : %lf\n",
              static_cast<double>(c.moved_load_balance + c.moved_coarsening));
  std::printf("     total moved load bal   : %lf\n", static_cast<double>(c.moved_load_balance));
  std::printf("     total moved coasening  : %lf\n", static_cast<double>(c.moved_coarsening));
  std::printf("\n ================== End report ===================\n");
  std::printf("Summary: variant %s ranks %d threads %d ts %d time %lf ", variant_.c_str(), ranks_,
              threads_, params_.num_tsteps, t.total);
  if (t.tasks)
    std::printf("submit %lf wait %lf ", t.submit, t.wait);
  else
    std::printf("calc %lf comm %lf checksum %lf ", t.calc, t.comm, t.checksum);
  std::printf("refine %lf blocks/ts %lf flops %.6e throughput %.6e\n", t.refine,
              static_cast<double>(total_blocks_) / stages, flops,
              t.total > 0 ? flops / t.total : 0.0);
}

int parse_command_line(int argc, char** argv, int rank, int ranks, Params& params,
                       bool& print_checksums, bool& print_block_sums) {
  // Our two output switches are not the reference's: take them out first.
  std::vector<const char*> args;
  print_checksums = print_block_sums = false;
  for (int n = 0; n < argc; ++n) {
    const std::string arg = argv[n];
    if (arg == "--print_checksums")
      print_checksums = true;
    else if (arg == "--print_block_sums")
      print_block_sums = true;
    else
      args.push_back(argv[n]);
  }
  try {
    params = parse_params(static_cast<int>(args.size()), args.data());
    check_params(params, ranks);
    return -1;
  } catch (const std::invalid_argument& error) {
    if (rank == 0) {
      if (std::string(error.what()) == "usage")
        std::printf("%s", usage_text().c_str());
      else
        std::fprintf(stderr, "miniamr: rank 0: %s\n%s", error.what(), usage_text().c_str());
    }
    return std::string(error.what()) == "usage" ? 0 : 2;
  }
}

}  // namespace miniamr
