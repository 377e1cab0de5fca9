// Results back to any rank in spmd mode (docs/guide.md, section 4): a tiled
// matrix owned block-cyclically, updated by tasks on the tiles' owners, then
// gathered into rank 0's copy with exit_data(h, 0) and, for one tile, into
// every rank's with fetch(h, taskgrid::all_ranks). No copy tasks.
#include <cstdio>
#include <taskgrid/taskgrid.hpp>
#include <vector>

constexpr int T = 4;  // tiles per side
constexpr int B = 8;  // doubles per tile side

// tile(i, j) += tile(i - 1, j) + 1, element by element: a chain down each column.
void add_above(taskgrid::TaskContext& ctx) {
  double* tile = ctx.data_as<double>(0);
  const double* above = ctx.data_as<double>(1);
  for (int k = 0; k < B * B; ++k) tile[k] += above[k] + 1.0;
}
TASKGRID_REGISTER(add_above);

int program(int, char**) {
  const int ranks = taskgrid::num_ranks();
  std::vector<std::vector<double>> tile(T * T, std::vector<double>(B * B));
  std::vector<taskgrid::DataHandle> h(T * T);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) {
      for (double& x : tile[i * T + j]) x = j;
      // 2D block-cyclic owners over the ranks (a 1 x ranks grid here).
      h[i * T + j] =
          taskgrid::enter_data(tile[i * T + j].data(), B * B * sizeof(double), (i + j) % ranks);
    }
  for (int i = 1; i < T; ++i)
    for (int j = 0; j < T; ++j)
      taskgrid::submit(add_above,
                       {taskgrid::inout(h[i * T + j]), taskgrid::in(h[(i - 1) * T + j])});

  taskgrid::fetch(h[T * T - 1], taskgrid::all_ranks);    // one tile into every rank's copy
  for (auto handle : h) taskgrid::exit_data(handle, 0);  // every tile into rank 0's copy

  // Row i of column j holds (i + 1) * j + i.
  const auto expected = [](int i, int j) { return (i + 1.0) * j + i; };
  bool ok = tile[T * T - 1][0] == expected(T - 1, T - 1);
  if (taskgrid::rank() == 0)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j)
        for (double x : tile[i * T + j]) ok = ok && x == expected(i, j);
  std::printf("spmd_gather: rank %d of %d: %s\n", taskgrid::rank(), ranks,
              ok ? "correct" : "WRONG");
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  return taskgrid::run(argc, argv, program, {.mode = taskgrid::Mode::spmd});
}
