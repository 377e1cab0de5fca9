// Two task functions registered under one name at static initialisation (a
// mistake the program cannot catch): every rank must end with one whole line
// naming the clash and its rank, status 2, before main runs (no "terminate
// called after throwing ...", whose pieces ranks interleave).
#include <cstdio>
#include <taskgrid/taskgrid.hpp>

namespace first {
void work(taskgrid::TaskContext&) {}
TASKGRID_REGISTER(work);
}  // namespace first

namespace second {
void work(taskgrid::TaskContext&) {}
TASKGRID_REGISTER(work);
}  // namespace second

int main(int argc, char** argv) {
  std::printf("registration-clash: main ran\n");
  taskgrid::start(&argc, &argv);
  return taskgrid::finish();
}
