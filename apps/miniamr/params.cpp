#include "params.hpp"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace miniamr {
namespace {

class ArgReader {
 public:
  ArgReader(int argc, const char* const* argv) : argc_(argc), argv_(argv) {}
  bool done() const { return next_ >= argc_; }
  std::string_view flag() { return argv_[next_++]; }

  int integer(std::string_view flag) {
    const char* text = value(flag);
    char* end = nullptr;
    errno = 0;
    const long parsed = std::strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || errno != 0 || parsed < -1000000000 || parsed > 1000000000)
      throw std::invalid_argument(std::string(flag) + ": not an integer: '" + text + "'");
    return static_cast<int>(parsed);
  }

  double real(std::string_view flag) {
    const char* text = value(flag);
    char* end = nullptr;
    errno = 0;
    const double parsed = std::strtod(text, &end);
    if (*text == '\0' || *end != '\0' || errno != 0)
      throw std::invalid_argument(std::string(flag) + ": not a number: '" + text + "'");
    return parsed;
  }

 private:
  const char* value(std::string_view flag) {
    if (next_ >= argc_) throw std::invalid_argument(std::string(flag) + " needs a value");
    return argv_[next_++];
  }
  int argc_;
  const char* const* argv_;
  int next_ = 1;
};

}  // namespace

std::string usage_text() {
  return "miniAMR options (the reference's flags and defaults):\n"
         "  --nx --ny --nz N          cells per block and direction (even; 10)\n"
         "  --init_x --init_y --init_z N  level-0 blocks per rank and direction (1)\n"
         "  --npx --npy --npz N       ranks per direction (1; their product is the job's size)\n"
         "  --num_refine N            levels of refinement (5)\n"
         "  --block_change N          levels a block may change per refinement (num_refine)\n"
         "  --uniform_refine 0|1      refine every block to num_refine (0)\n"
         "  --max_blocks N            blocks per rank (500)\n"
         "  --num_vars N --comm_vars N  variables (40), exchanged together (0: all)\n"
         "  --num_tsteps N --stages_per_ts N  timesteps (20), stages per timestep (20)\n"
         "  --checksum_freq N         stages between checksums (5)\n"
         "  --refine_freq N           timesteps between refinements (5)\n"
         "  --stencil 7|27            averaging stencil (7)\n"
         "  --error_tol N             checksum tolerance 10^-N (8)\n"
         "  --lb_opt 0|1|2 --inbalance PCT  load balancing (1, 0)\n"
         "  --report_perf N --report_diffusion --refine_ghost --send_faces --separate_buffers\n"
         "  --num_objects N --object TYPE BOUNCE CX CY CZ MX MY MZ SX SY SZ IX IY IZ\n"
         "TaskGrid only: --max_comm_tasks N  communication tasks per neighbour and direction (8)\n";
}

Params parse_params(int argc, const char* const* argv) {
  Params params;
  ArgReader args(argc, argv);
  int declared_objects = -1;
  while (!args.done()) {
    const std::string_view flag = args.flag();
    auto set = [&](std::string_view name, int& field) {
      if (flag != name) return false;
      field = args.integer(flag);
      return true;
    };
    auto set_bool = [&](std::string_view name, bool& field) {
      if (flag != name) return false;
      const int value = args.integer(flag);
      if (value != 0 && value != 1)
        throw std::invalid_argument(std::string(flag) + ": must be 0 or 1");
      field = value != 0;
      return true;
    };
    auto set_switch = [&](std::string_view name, bool& field) {
      if (flag != name) return false;
      field = true;
      return true;
    };
    if (set("--max_blocks", params.max_blocks) || set("--num_refine", params.num_refine) ||
        set("--block_change", params.block_change) ||
        set_bool("--uniform_refine", params.uniform_refine) || set("--nx", params.nx) ||
        set("--ny", params.ny) || set("--nz", params.nz) || set("--num_vars", params.num_vars) ||
        set("--comm_vars", params.comm_vars) || set("--init_x", params.init_x) ||
        set("--init_y", params.init_y) || set("--init_z", params.init_z) ||
        set("--npx", params.npx) || set("--npy", params.npy) || set("--npz", params.npz) ||
        set("--inbalance", params.inbalance) || set("--lb_opt", params.lb_opt) ||
        set("--refine_freq", params.refine_freq) || set("--error_tol", params.error_tol) ||
        set("--num_tsteps", params.num_tsteps) || set("--stages_per_ts", params.stages_per_ts) ||
        set("--checksum_freq", params.checksum_freq) || set("--stencil", params.stencil) ||
        set("--report_perf", params.report_perf) ||
        set_switch("--report_diffusion", params.report_diffusion) ||
        set_switch("--refine_ghost", params.refine_ghost) ||
        set_switch("--send_faces", params.send_faces) ||
        set_switch("--separate_buffers", params.separate_buffers) ||
        set("--max_comm_tasks", params.max_comm_tasks))
      continue;
    if (flag == "--num_objects") {
      declared_objects = args.integer(flag);
      if (declared_objects < 0) throw std::invalid_argument("--num_objects: must be >= 0");
      params.objects.clear();
      continue;
    }
    if (flag == "--object") {
      if (declared_objects < 0 || static_cast<int>(params.objects.size()) >= declared_objects)
        throw std::invalid_argument("--object: more objects than --num_objects declares");
      Object object;
      object.type = args.integer(flag);
      object.bounce = args.integer(flag) != 0;
      for (auto* vec : {&object.center, &object.move, &object.size, &object.grow})
        for (double& component : *vec) component = args.real(flag);
      params.objects.push_back(object);
      continue;
    }
    if (flag == "--help" || flag == "-h") throw std::invalid_argument("usage");
    throw std::invalid_argument("unknown flag '" + std::string(flag) + "'");
  }
  if (declared_objects > 0 && static_cast<int>(params.objects.size()) != declared_objects)
    throw std::invalid_argument("--num_objects " + std::to_string(declared_objects) + " but " +
                                std::to_string(params.objects.size()) + " --object given");
  if (params.block_change == 0) params.block_change = params.num_refine;
  return params;
}

void check_params(const Params& p, int job_ranks) {
  auto fail = [](const std::string& why) { throw std::invalid_argument(why); };
  for (auto [name, value] : {std::pair{"--nx", p.nx}, {"--ny", p.ny}, {"--nz", p.nz}})
    if (value <= 0 || value % 2 != 0) fail(std::string(name) + " must be even and > 0");
  for (auto [name, value] : {std::pair{"--init_x", p.init_x},
                             {"--init_y", p.init_y},
                             {"--init_z", p.init_z},
                             {"--npx", p.npx},
                             {"--npy", p.npy},
                             {"--npz", p.npz},
                             {"--num_vars", p.num_vars},
                             {"--num_tsteps", p.num_tsteps},
                             {"--stages_per_ts", p.stages_per_ts},
                             {"--checksum_freq", p.checksum_freq},
                             {"--refine_freq", p.refine_freq},
                             {"--max_blocks", p.max_blocks},
                             {"--max_comm_tasks", p.max_comm_tasks}})
    if (value <= 0) fail(std::string(name) + " must be > 0");
  if (p.num_refine < 0) fail("--num_refine must be >= 0");
  if (p.block_change < 0) fail("--block_change must be >= 0");
  if (p.comm_vars < 0 || p.comm_vars > p.num_vars) fail("--comm_vars must be in [0, num_vars]");
  if (p.stencil != 7 && p.stencil != 27) fail("--stencil must be 7 or 27");
  if (p.stencil == 27 && p.num_refine > 0 && !p.uniform_refine)
    fail("--stencil 27 needs --num_refine 0 or --uniform_refine 1 (as in the reference)");
  if (p.lb_opt < 0 || p.lb_opt > 2) fail("--lb_opt must be 0, 1 or 2");
  if (p.error_tol < 0) fail("--error_tol must be >= 0");
  if (p.ranks() != job_ranks)
    fail("--npx * --npy * --npz = " + std::to_string(p.ranks()) + " but the job has " +
         std::to_string(job_ranks) + " rank(s)");
  for (const Object& object : p.objects)
    if (object.type < 0 || object.type > 25)
      fail("--object: type " + std::to_string(object.type) + " is not one of 0..25");
}

}  // namespace miniamr
