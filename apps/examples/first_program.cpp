// first_program: the README's first program. One task scales a vector, a
// second one sums it; the program prints the sum and exits 0 only when the
// vector and the sum are right.
//
//   build/bin/first_program                  one rank, tasks on local threads
//   mpiexec.mpich -n 4 build/bin/first_program
#include <cstdio>
#include <taskgrid/taskgrid.hpp>
#include <vector>

void scale(taskgrid::TaskContext& ctx) {  // a task: by-value args + data buffers
  double factor = ctx.arg<double>();
  double* v = ctx.data_as<double>(0);
  for (size_t i = 0; i < ctx.size(0) / sizeof(double); ++i) v[i] *= factor;
}
TASKGRID_REGISTER(scale);  // same identity on every rank

void sum(taskgrid::TaskContext& ctx) {  // in: the vector, out: one double
  const double* v = ctx.data_as<double>(0);
  double total = 0.0;
  for (size_t i = 0; i < ctx.size(0) / sizeof(double); ++i) total += v[i];
  *ctx.data_as<double>(1) = total;
}
TASKGRID_REGISTER(sum);

int main(int argc, char** argv) {
  taskgrid::start(&argc, &argv);  // cluster mode: ranks > 0 serve here
  const int n = 1000;
  std::vector<double> v(n, 1.0);
  double total = 0.0;
  auto vh = taskgrid::enter_data(v.data(), v.size() * sizeof(double));  // map(to:)
  auto th = taskgrid::enter_data(&total, sizeof total);
  taskgrid::submit(scale, {taskgrid::inout(vh)}, 2.0);           // depend(inout: v)
  taskgrid::submit(sum, {taskgrid::in(vh), taskgrid::out(th)});  // runs after scale
  taskgrid::exit_data(th);  // waits for sum, copies the result into total (map(from:))
  taskgrid::exit_data(vh);

  bool ok = total == 2.0 * n;
  for (double x : v) ok = ok && x == 2.0;
  std::printf("first_program: sum = %.1f (expected %.1f)\n", total, 2.0 * n);
  return taskgrid::finish(ok ? 0 : 1);  // the job's status: the largest of the ranks'
}
